#!/usr/bin/env bash
# Sweep batch sizes on an inf2.8xlarge (2 NeuronCores).
set -euo pipefail

MODEL_ID=${MODEL_ID:-meta-llama/Llama-2-7b-chat-hf}
SEQ_LEN=${SEQ_LEN:-2048}
NUM_CORES=${NUM_CORES:-2}
DTYPE=${DTYPE:-fp16}
export NEURON_RT_NUM_CORES=$NUM_CORES
export NEURON_CC_FLAGS="--model-type=transformer --enable-saturate-infinity"

for BS in 1 4 8; do
  python bench.py \
    --model-id "$MODEL_ID" \
    --export-dir "./llama-neuron-bs${BS}" \
    --batch-size $BS \
    --sequence-length $SEQ_LEN \
    --num-cores $NUM_CORES \
    --auto-cast-type $DTYPE \
    --csv results/sweep.csv
done
python report.py results/sweep.csv
