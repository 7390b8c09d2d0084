#!/bin/bash
set -euo pipefail

# ---- knobs (override from the environment) ----
TP_DEGREE=${TP_DEGREE:-8}
PP_DEGREE=${PP_DEGREE:-1}
MAX_STEPS=${MAX_STEPS:--1}
PROCESSES_PER_NODE=32
MODEL_ID=${MODEL_ID:-meta-llama/Meta-Llama-3-8B}
OUTPUT_DIR=output/llama3-dolly

export NEURON_CC_FLAGS="--model-type transformer --distribution-strategy=llm-training --cache_dir=/var/tmp/neuron-compile-cache"
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3
export MALLOC_ARENA_MAX=64
export XLA_USE_BF16=1

if [ "${1:-}" == "compile" ]; then
    LAUNCHER="neuron_parallel_compile"
    MAX_STEPS=10
else
    LAUNCHER=""
fi

$LAUNCHER torchrun --nproc_per_node $PROCESSES_PER_NODE src/train_sft.py \
    --model_id $MODEL_ID \
    --dataset_name databricks/databricks-dolly-15k \
    --output_dir $OUTPUT_DIR \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --gradient_checkpointing \
    --learning_rate 5e-5 \
    --bf16 \
    --tensor_parallel_size $TP_DEGREE \
    --pipeline_parallel_size $PP_DEGREE \
    --sequence_parallel_enabled \
    --zero_1 \
    --max_steps $MAX_STEPS \
    --num_train_epochs 3 \
    --max_seq_length 1024 \
    --packing True \
    --logging_steps 10 \
    --save_steps 200 \
    --overwrite_output_dir

if [ "${1:-}" != "compile" ]; then
    # merge the TP shards into a regular safetensors checkpoint
    optimum-cli neuron consolidate $OUTPUT_DIR $OUTPUT_DIR/consolidated
fi
