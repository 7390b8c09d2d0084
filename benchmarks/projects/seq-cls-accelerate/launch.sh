#!/bin/bash
# Launch on trn1 with accelerate's XLA backend.
set -e
MODEL=${MODEL:-bert-base-uncased}
NPROC=${NPROC:-2}
export PJRT_DEVICE=NEURON
export XLA_USE_BF16=1
export NEURON_RT_STOCHASTIC_ROUNDING_EN=1
export MALLOC_ARENA_MAX=64
ACCEL_ARGS="--config_file configs/accelerate_trn.yaml --num_processes $NPROC"
accelerate launch $ACCEL_ARGS train_seq_cls.py \
  --model_name_or_path "$MODEL" --per_device_batch_size 8 --gradient_accumulation_steps 2 --max_length 128 "$@"
