#!/usr/bin/env bash
# optimum-neuron variant: compile the same classifier with the CLI, then serve it with optimum_infer.py
set -euo pipefail
MODEL=${MODEL:-bert-base-cased-finetuned-mrpc}
BS=${BS:-4}
SEQ=${SEQ:-128}
OUT=${OUT:-artifacts/optimum_bert}

optimum-cli export neuron \
  --model "$MODEL" \
  --task text-classification \
  --batch_size $BS \
  --sequence_length $SEQ \
  --auto_cast matmul --auto_cast_type bf16 \
  "$OUT"

python optimum_infer.py --model-dir "$OUT" --batch-size $BS
