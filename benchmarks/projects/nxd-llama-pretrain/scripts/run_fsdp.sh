#!/usr/bin/env bash
export XLA_DISABLE_FUNCTIONALIZATION=0
export NEURON_CC_FLAGS="--model-type=transformer"
torchrun --nproc_per_node=32 train_fsdp.py --steps ${STEPS:-200} --bs 2 --seq_len 1024
