#!/usr/bin/env bash
set -e
MODEL=${MODEL:-meta-llama/Meta-Llama-3-8B-Instruct}
TP=2

export NEURON_RT_VISIBLE_CORES=0-1
export NEURON_CC_FLAGS="--model-type=transformer"

vllm serve "$MODEL" \
    --device neuron \
    --tensor-parallel-size $TP \
    --max-num-seqs 4 \
    --max-model-len 2048 \
    --block-size 2048 \
    --port 8000
