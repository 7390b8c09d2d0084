#!/bin/bash
# Export with the CLI instead of Python (same static shapes).
MODEL=sentence-transformers/all-MiniLM-L6-v2
BATCH=16
SEQ=128
optimum-cli export neuron --model $MODEL --task feature-extraction \
    --batch_size $BATCH --sequence_length $SEQ \
    --auto_cast matmul --auto_cast_type bf16 compiled/minilm_cli/
