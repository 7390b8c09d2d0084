#!/bin/bash
# CI smoke test on trn1.2xlarge (2 NeuronCores)
export NEURON_CC_FLAGS="--model-type=transformer"
export XLA_DOWNCAST_BF16=1
cd scripts
NEURON_EXTRACT_GRAPHS_ONLY=1 torchrun --nproc_per_node 2 orpo_quick.py --steps 3
torchrun --nproc_per_node 2 orpo_quick.py --steps 20
