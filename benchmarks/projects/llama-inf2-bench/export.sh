#!/bin/bash
# Pre-compile outside the benchmark (same shapes as sweep.sh, batch 4).
optimum-cli export neuron --model meta-llama/Llama-2-7b-chat-hf \
  --batch_size 4 --sequence_length 2048 \
  --num_cores 2 --auto_cast_type fp16 \
  ./llama-neuron-bs4
