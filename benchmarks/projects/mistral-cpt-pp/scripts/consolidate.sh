#!/bin/bash
# Merge the newest sharded checkpoint for evaluation / upload.
set -e
OUT=${OUT:-runs/mistral-cpt}
CKPT=$(ls -d $OUT/checkpoint-* | sort -t- -k2 -n | tail -1)
optimum-cli neuron consolidate $CKPT/shards $OUT/consolidated
# python variant
# python -m cpt.consolidate $CKPT
