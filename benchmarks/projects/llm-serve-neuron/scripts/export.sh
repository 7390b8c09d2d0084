#!/usr/bin/env bash
# Compile the model once for fixed shapes; the app loads the result from $OUT_DIR.
set -euo pipefail

MODEL_ID=${MODEL_ID:-meta-llama/Meta-Llama-3-8B-Instruct}
BATCH_SIZE=${BATCH_SIZE:-4}
SEQ_LEN=${SEQUENCE_LENGTH:-2048}
NUM_CORES=${NUM_CORES:-2}
OUT_DIR=${OUT_DIR:-./compiled/llama3-8b-bs${BATCH_SIZE}}

optimum-cli export neuron \
  --model "$MODEL_ID" \
  --batch_size "$BATCH_SIZE" \
  --sequence_length "$SEQ_LEN" \
  --num_cores "$NUM_CORES" \
  --auto_cast_type bf16 \
  "$OUT_DIR"

echo "compiled model written to $OUT_DIR"
