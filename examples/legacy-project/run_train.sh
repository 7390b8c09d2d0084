#!/bin/bash
set -ex

export NEURON_CC_FLAGS="--model-type=transformer --distribution-strategy=llm-training --cache_dir=/home/ubuntu/cache"
export XLA_USE_BF16=1
export MALLOC_ARENA_MAX=64
export NEURON_RT_STOCHASTIC_ROUNDING_EN=1

PROCESSES_PER_NODE=32
TP_DEGREE=8

if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then
    MAX_STEPS=10
else
    MAX_STEPS=-1
fi

neuron_parallel_compile torchrun --nproc_per_node $PROCESSES_PER_NODE train.py \
    --output_dir llama-dolly \
    --tensor_parallel_size $TP_DEGREE \
    --zero_1 \
    --bf16 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --max_steps $MAX_STEPS \
    --logging_steps 10

torchrun --nproc_per_node $PROCESSES_PER_NODE train.py \
    --output_dir llama-dolly \
    --tensor_parallel_size $TP_DEGREE \
    --zero_1 \
    --bf16 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --max_steps $MAX_STEPS \
    --logging_steps 10

optimum-cli neuron consolidate llama-dolly llama-dolly/consolidated
