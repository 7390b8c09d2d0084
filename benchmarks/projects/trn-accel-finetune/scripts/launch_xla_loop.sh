#!/bin/bash
# throughput benchmark on one trn1.32xlarge
set -ex
NPROC=32
MAX_STEPS=${MAX_STEPS:-200}
export XLA_USE_BF16=1
export NEURON_RT_STOCHASTIC_ROUNDING_EN=1

if [ "${PRECOMPILE:-0}" = "1" ]; then
  neuron_parallel_compile torchrun --nproc_per_node=$NPROC train_xla_loop.py --train_file data/train.jsonl --max_steps 10
else
  torchrun --nproc_per_node=$NPROC train_xla_loop.py --train_file data/train.jsonl --max_steps $MAX_STEPS
fi
