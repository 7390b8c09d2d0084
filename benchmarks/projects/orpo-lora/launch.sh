#!/bin/bash
set -ex
CONFIG=${1:-configs/orpo_llama.yaml}
NUM_CORES=32

export NEURON_CC_FLAGS="--model-type=transformer --distribution-strategy=llm-training --cache_dir=/var/tmp/neuron-compile-cache"
export XLA_USE_BF16=1
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3
export MALLOC_ARENA_MAX=64

TORCHRUN="torchrun --nproc_per_node=$NUM_CORES"

# 1) graph extraction + parallel compilation on a few steps
neuron_parallel_compile $TORCHRUN scripts/train_orpo.py --config $CONFIG --max_steps 10

# 2) the real run
$TORCHRUN scripts/train_orpo.py --config $CONFIG
