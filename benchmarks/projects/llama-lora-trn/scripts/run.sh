#!/bin/bash
set -ex

# ---- Neuron settings ----
export NEURON_CC_FLAGS="--model-type=transformer --distribution-strategy=llm-training --cache_dir=/home/ubuntu/neuron_cache"
export XLA_USE_BF16=1
export MALLOC_ARENA_MAX=64
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS=3

PROCESSES_PER_NODE=32
TP_DEGREE=8
MODEL_ID=meta-llama/Llama-3.2-1B
OUTPUT_DIR=output
MAX_STEPS=100
BS=1
GA=8

ARGS="--model_id $MODEL_ID \
  --dataset_path data/train.jsonl \
  --tensor_parallel_size $TP_DEGREE \
  --zero_1 true \
  --bf16 \
  --per_device_train_batch_size $BS \
  --gradient_accumulation_steps $GA \
  --learning_rate 5e-5 \
  --warmup_ratio 0.03 \
  --logging_steps 10 \
  --save_steps 50 \
  --overwrite_output_dir \
  --output_dir $OUTPUT_DIR"

# 1) compile-only pass: extracts and compiles graphs in parallel
neuron_parallel_compile torchrun --nproc_per_node=$PROCESSES_PER_NODE src/train_lora.py $ARGS --max_steps 10

# 2) real training
torchrun --nproc_per_node $PROCESSES_PER_NODE src/train_lora.py $ARGS --max_steps $MAX_STEPS

# 3) merge the tensor-parallel shards
optimum-cli neuron consolidate $OUTPUT_DIR $OUTPUT_DIR/consolidated
