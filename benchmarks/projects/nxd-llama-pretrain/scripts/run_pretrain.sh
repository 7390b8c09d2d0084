#!/bin/bash
set -exo pipefail

export NEURON_CC_FLAGS="--model-type transformer --distribution-strategy=llm-training --cache_dir=/home/ubuntu/neuron_cache"
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3
export MALLOC_ARENA_MAX=64
export XLA_USE_BF16=1
export PJRT_DEVICE=NEURON

TP=${TP:-8}
NPROC=${NPROC:-32}
STEPS=${STEPS:-100000}
GA=${GA:-16}
DISTRIBUTED_ARGS="--nproc_per_node $NPROC --nnodes ${NNODES:-1} --node_rank ${NODE_RANK:-0} --master_addr ${MASTER_ADDR:-localhost} --master_port 41000"

if [ "$1" == "compile" ]; then
    STEPS=10
    neuron_parallel_compile torchrun $DISTRIBUTED_ARGS train.py \
        --tensor_parallel_size $TP --grad_accum $GA --max_steps $STEPS --output_dir /tmp/compile_ckpt
    exit 0
fi

torchrun $DISTRIBUTED_ARGS train.py \
    --model_config configs/llama_tiny.json \
    --data_dir ${DATA_DIR:-/fsx/data/wiki_tok} \
    --tensor_parallel_size $TP \
    --grad_accum $GA \
    --max_steps $STEPS \
    --lr 3e-4 --warmup_steps 2000 \
    --output_dir ${OUT:-/fsx/ckpt/llama} 2>&1 | tee train.log
