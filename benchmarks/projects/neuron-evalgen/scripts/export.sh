#!/usr/bin/env bash
# AOT-compile a decoder for inf2.8xlarge / trn1
MODEL=${1:-meta-llama/Llama-2-7b-hf}
OUT=${2:-llama2-neuron}
optimum-cli export neuron \
  --model "$MODEL" \
  --batch_size 4 \
  --sequence_length 2048 \
  --num_cores 24 \
  --auto_cast_type fp16 \
  "$OUT"
