#!/bin/bash
set -euo pipefail
# Trainium trn1.32xlarge launcher
export NEURON_CC_FLAGS="--model-type transformer --cache_dir=/fsx/neuron_cache"
export XLA_USE_BF16=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3
export MALLOC_ARENA_MAX=64
NPROC=${NPROC:-32}
STEPS=${STEPS:-1000}

if [ "${COMPILE:-0}" = "1" ]; then
  neuron_parallel_compile torchrun --nproc_per_node=$NPROC train.py --steps 10 "$@"
fi
torchrun --nproc_per_node=$NPROC --master_port=29500 train.py --steps $STEPS "$@"
