#!/usr/bin/env bash
set -euo pipefail

# ---- Neuron / XLA environment ----
export NEURON_CC_FLAGS="--model-type=transformer --distribution-strategy=llm-training --cache_dir=$HOME/neuron_cache"
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3
export NEURON_RT_STOCHASTIC_ROUNDING_EN=1
export MALLOC_ARENA_MAX=64
export XLA_USE_BF16=1
export PJRT_DEVICE=NEURON

PROCS_PER_NODE=32
MODEL=${MODEL:-NousResearch/Llama-2-7b-hf}
DATA_DIR=${DATA_DIR:-./data}
OUT=${OUT:-./output}
STEPS=1000

if [ "${NEURON_EXTRACT_GRAPHS_ONLY:-0}" = "1" ]; then
    STEPS=10
fi

torchrun --nproc_per_node=$PROCS_PER_NODE src/train.py \
    --model_name_or_path $MODEL \
    --data_dir $DATA_DIR \
    --output_dir $OUT \
    --batch_size 1 \
    --seq_len 2048 \
    --lr 3e-5 \
    --max_steps $STEPS \
    --grad_accum 8 \
    --log_every 10
