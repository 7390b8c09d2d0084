#!/usr/bin/env bash
# Usage: ./launch.sh [sft|reward] [accelerate|torchrun]
set -euo pipefail
STAGE=${1:-sft}
LAUNCHER=${2:-accelerate}
NPROC=${NPROC:-32}
CONFIG=configs/qwen2_pref.yaml

export XLA_USE_BF16=1
export NEURON_CC_FLAGS="--model-type=transformer --retry_failed_compilation"
export NEURON_FUSE_SOFTMAX=1
export MALLOC_ARENA_MAX=64

if [[ "$STAGE" == "sft" ]]; then SCRIPT=train_sft.py; else SCRIPT=train_reward.py; fi

if [[ "${PRECOMPILE:-0}" == "1" ]]; then
  neuron_parallel_compile torchrun --nproc_per_node $NPROC $SCRIPT --config $CONFIG --max_steps 10
fi

if [[ "$LAUNCHER" == "accelerate" ]]; then
  accelerate launch --config_file accelerate_trn.yaml --num_processes $NPROC $SCRIPT --config $CONFIG
else
  torchrun --nproc_per_node=$NPROC --master_port=29500 $SCRIPT --config $CONFIG
fi
