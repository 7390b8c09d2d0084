#!/bin/bash
set -ex
PP=${PP:-4}
TP=${TP:-8}
NUM_NEURONCORES=${NUM_NEURONCORES:-32}
MICRO=${MICRO:-1}
GA=${GA:-16}
BLOCK=${BLOCK:-4096}
OUT=${OUT:-runs/mistral-cpt}
MODEL=${MODEL:-mistralai/Mistral-7B-v0.3}

export NEURON_CC_FLAGS="--model-type transformer --distribution-strategy=llm-training"
export XLA_DOWNCAST_BF16=1
export NEURON_RT_STOCHASTIC_ROUNDING_EN=1
export MALLOC_ARENA_MAX=64

DISTRIBUTED_ARGS="--nproc_per_node $NUM_NEURONCORES --nnodes ${SLURM_NNODES:-1} --node_rank ${SLURM_NODEID:-0}"
if [ -n "$MASTER_ADDR" ]; then DISTRIBUTED_ARGS="$DISTRIBUTED_ARGS --master_addr $MASTER_ADDR --master_port 41000"; fi

TRAIN_ARGS="--model_name_or_path $MODEL \
  --train_file ${DATA:-data/corpus.txt} \
  --block_size $BLOCK \
  --bf16 \
  --per_device_train_batch_size $MICRO \
  --gradient_accumulation_steps $GA \
  --tensor_parallel_size $TP \
  --pipeline_parallel_size $PP \
  --pipeline_parallel_num_microbatches $GA \
  --zero_1 \
  --gradient_checkpointing \
  --learning_rate 2e-5 \
  --lr_scheduler_type cosine \
  --warmup_ratio 0.01 \
  --max_steps ${STEPS:-2000} \
  --save_steps 250 \
  --save_total_limit 3 \
  --logging_steps 5 \
  --output_dir $OUT \
  --dataloader_drop_last"

if [ "${COMPILE:-0}" = "1" ]; then
  neuron_parallel_compile torchrun $DISTRIBUTED_ARGS -m cpt.train $TRAIN_ARGS --max_steps 5
fi
torchrun $DISTRIBUTED_ARGS -m cpt.train $TRAIN_ARGS ${RESUME:+--resume_from_checkpoint $RESUME}
