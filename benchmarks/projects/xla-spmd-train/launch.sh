#!/bin/bash
# usage: ./launch.sh spmd|dp|fsdp
set -e
export PJRT_DEVICE=NEURON
export XLA_USE_BF16=1
export NEURON_CC_FLAGS="--model-type=transformer --retry_failed_compilation"
export NEURON_RT_NUM_CORES=${NEURON_RT_NUM_CORES:-2}
MODE=${1:-spmd}

if [ "$MODE" = "spmd" ]; then
  export XLA_USE_SPMD=1
  python train_spmd.py --config config.yaml
elif [ "$MODE" = "dp" ]; then
  torchrun --nproc_per_node=$NEURON_RT_NUM_CORES train_dp.py --config config.yaml
else
  torchrun --nproc_per_node=$NEURON_RT_NUM_CORES train_fsdp.py --config config.yaml
fi
