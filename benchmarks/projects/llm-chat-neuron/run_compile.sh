#!/usr/bin/env bash
# compile once with the CLI, then serve the web app
MODEL=${MODEL_ID:-TinyLlama/TinyLlama-1.1B-Chat-v1.0}
export NEURON_RT_NUM_CORES=2
optimum-cli export neuron -m $MODEL --batch_size 4 --sequence_length 2048 --num_cores 2 --auto_cast_type bf16 compiled/
python app/web.py
