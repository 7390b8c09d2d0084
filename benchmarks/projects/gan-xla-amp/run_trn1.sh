#!/usr/bin/env bash
# GAN training on a trn1.2xlarge (2 NeuronCores); xmp.spawn starts one process per core.
set -euo pipefail
export PJRT_DEVICE=NEURON
export NEURON_RT_NUM_CORES=${NEURON_RT_NUM_CORES:-2}
export XLA_DOWNCAST_BF16=0
export NEURON_CC_FLAGS="--retry_failed_compilation --cache_dir=$HOME/neuron-cache"
python train_gan.py configs/flags.json "$@"
