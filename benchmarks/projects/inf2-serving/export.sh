#!/bin/bash
# Compile the sentiment classifier ahead of time.
MODEL=distilbert-base-uncased-finetuned-sst-2-english
export NEURON_RT_NUM_CORES=1

optimum-cli export neuron \
  --model $MODEL \
  --task text-classification \
  --batch_size 1 \
  --sequence_length 128 \
  --auto_cast matmul --auto_cast_type bf16 \
  distilbert_neuron/
