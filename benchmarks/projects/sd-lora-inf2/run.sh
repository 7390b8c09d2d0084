#!/bin/bash
set -euo pipefail
CONFIG=${1:-configs/sdxl_lora.json}
export NEURON_FUSE_SOFTMAX=1
export NEURON_RT_NUM_CORES=2
[ -d sdxl_lora_neuron ] || python export_lora.py --config $CONFIG
python generate.py --config $CONFIG --prompts prompts.txt --out outputs
