#!/bin/bash
# Pre-compile the model for inference (2 NeuronCores, bf16)
optimum-cli export neuron --model meta-llama/Llama-3.2-1B \
  --batch_size 1 --sequence_length 2048 \
  --num_cores 2 --auto_cast_type bf16 \
  llama_neuron/
