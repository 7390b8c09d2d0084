#!/usr/bin/env bash
# Compile-cache helpers: look up, then warm and push the shared cache.
set -euo pipefail
source "$(dirname "$0")/env.sh"

MODEL=${MODEL:-bert-base-uncased}

case "${1:-lookup}" in
  lookup)
    optimum-cli neuron cache lookup "$MODEL" ;;
  warm)
    python tools/launch.py --model "$MODEL" --precompile --max_steps 10 --out /tmp/warm ;;
  sync)
    optimum-cli neuron cache synchronize --repo_id "$CUSTOM_CACHE_REPO" --cache_dir "$NEURON_CACHE_DIR" ;;
  *)
    echo "usage: $0 {lookup|warm|sync}"; exit 2 ;;
esac
