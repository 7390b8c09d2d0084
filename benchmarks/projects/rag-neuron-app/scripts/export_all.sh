#!/usr/bin/env bash
# Compile both models for inf2.xlarge. Shapes must match settings.py.
set -e
EMBED_ID=${EMBED_ID:-BAAI/bge-small-en-v1.5}
LLM_ID=${LLM_ID:-TinyLlama/TinyLlama-1.1B-Chat-v1.0}
OUT=${OUT:-/models}

optimum-cli export neuron -m $EMBED_ID --library-name sentence_transformers --task feature-extraction \
  --batch_size 8 --sequence_length 256 --auto_cast matmul --auto_cast_type bf16 $OUT/embed-neuron

optimum-cli export neuron -m $LLM_ID --batch_size 1 --sequence_length 2048 \
  --num_cores 2 --auto_cast_type bf16 $OUT/llm-neuron
