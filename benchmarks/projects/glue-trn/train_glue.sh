#!/usr/bin/env bash
# Fine-tune BERT on several GLUE tasks on one trn1.32xlarge.
# Usage: ./train_glue.sh [model]
set -euo pipefail

MODEL=${1:-bert-base-uncased}
TASKS="sst2 mrpc rte"
NUM_CORES=32
TP_DEGREE=1
BS=8
LR=2e-5
EPOCHS=3
MAX_LEN=128

export XLA_USE_BF16=1
export NEURON_CC_FLAGS="--model-type=transformer --retry_failed_compilation"
export MALLOC_ARENA_MAX=64

DISTRIBUTED_ARGS="--nproc_per_node $NUM_CORES"
COMMON_ARGS="--model_name_or_path $MODEL \
  --do_train --do_eval \
  --bf16 \
  --zero_1 \
  --tensor_parallel_size $TP_DEGREE \
  --per_device_train_batch_size $BS \
  --per_device_eval_batch_size $BS \
  --learning_rate $LR \
  --num_train_epochs $EPOCHS \
  --max_seq_length $MAX_LEN \
  --overwrite_output_dir \
  --logging_steps 10 \
  --save_strategy no"

for TASK in $TASKS; do
  OUT=output/$TASK
  echo "== $TASK: precompiling graphs =="
  # a short run so that neuron_parallel_compile extracts every graph
  neuron_parallel_compile torchrun $DISTRIBUTED_ARGS run_glue.py \
    --task_name $TASK $COMMON_ARGS --output_dir $OUT --max_steps 10

  echo "== $TASK: training =="
  torchrun $DISTRIBUTED_ARGS run_glue.py --task_name $TASK $COMMON_ARGS --output_dir $OUT
done
