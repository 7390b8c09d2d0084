"""Individual checks that `neuron-compat scan` runs on each architecture."""
