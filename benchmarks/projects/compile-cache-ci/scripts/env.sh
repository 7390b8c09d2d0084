export CUSTOM_CACHE_REPO=${CUSTOM_CACHE_REPO:-my-org/neuron-cache}
export NEURON_COMPILE_CACHE_URL=${NEURON_COMPILE_CACHE_URL:-s3://my-org-neuron-cache/clf}
export NEURON_CACHE_DIR=/var/tmp/neuron-compile-cache
export NEURON_CC_FLAGS="--model-type=transformer --cache_dir=${NEURON_CACHE_DIR}"
export HF_HUB_ENABLE_HF_TRANSFER=1
