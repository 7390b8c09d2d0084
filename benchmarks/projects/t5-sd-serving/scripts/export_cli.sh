#!/usr/bin/env bash
set -e
optimum-cli export neuron --model google/flan-t5-base --task text2text-generation \
  --batch_size 1 --sequence_length 128 --num_beams 4 --auto_cast matmul --auto_cast_type bf16 compiled/t5
optimum-cli export neuron --model stabilityai/stable-diffusion-2-1-base --batch_size 1 --height 512 --width 512 \
  --num_images_per_prompt 1 compiled/sd
