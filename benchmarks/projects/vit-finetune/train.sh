#!/usr/bin/env bash
set -euo pipefail

NUM_CORES=${NUM_CORES:-32}
MODEL=${MODEL:-google/vit-base-patch16-224-in21k}
DATA_DIR=${DATA_DIR:-./data}
OUT=${OUT:-./outputs/vit}
EPOCHS=3
BS=16

export NEURON_CC_FLAGS="--model-type=cnn-training --cache_dir=./neuron_cache"
export XLA_USE_BF16=1
export MALLOC_ARENA_MAX=64

# 1) compile pass: extract and compile the graphs in parallel with only a few steps
MAX_STEPS=10 neuron_parallel_compile torchrun --nproc_per_node=$NUM_CORES -m vitft.train \
    --model_name $MODEL --data_dir $DATA_DIR --output_dir $OUT \
    --batch_size $BS --epochs $EPOCHS --max_steps 10

# 2) real run
torchrun --nproc_per_node=$NUM_CORES -m vitft.train \
    --model_name $MODEL --data_dir $DATA_DIR --output_dir $OUT \
    --batch_size $BS --epochs $EPOCHS --bf16
