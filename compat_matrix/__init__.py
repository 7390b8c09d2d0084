"""neuron-compat: which text-generation architectures run on a device, eager and compiled."""
