#!/usr/bin/env bash
# SFT with NeuronSFTTrainer on one trn1.32xlarge
export NEURON_CC_FLAGS="--model-type transformer --retry_failed_compilation"
export XLA_DOWNCAST_BF16=1
export MALLOC_ARENA_MAX=64

NPROC=32
TP=8

CMD="torchrun --nproc_per_node $NPROC src/sft_train.py \
    --model_id meta-llama/Llama-3.2-1B \
    --tensor_parallel_size $TP \
    --max_seq_length 2048 \
    --packing true \
    --bf16 true \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --gradient_checkpointing true \
    --num_train_epochs 1 \
    --learning_rate 2e-4 \
    --evaluation_strategy no \
    --output_dir output_sft"

if [ "$1" == "compile" ]; then
  NEURON_EXTRACT_GRAPHS_ONLY=1 $CMD --max_steps 5
else
  $CMD
fi
