#!/usr/bin/env bash
# Single-node launcher for trn1.32xlarge (32 NeuronCores).
set -euo pipefail
cd "$(dirname "$0")/.."

export PJRT_DEVICE=NEURON
export NEURON_CC_FLAGS="--model-type transformer -O1"
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3
export MALLOC_ARENA_MAX=64   # keep host memory flat with 32 workers
export XLA_IR_DEBUG=0

NPROC=${NPROC:-32}
LAUNCH="torchrun --nproc_per_node=$NPROC --nnodes=1 --master_port=${MASTER_PORT:-29500}"

if [ "${PRECOMPILE:-0}" = "1" ]; then
    neuron_parallel_compile $LAUNCH cpt/train.py "$@"
else
    $LAUNCH cpt/train.py "$@"
fi
