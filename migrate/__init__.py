"""neuron-migrate: rewrite optimum-neuron / torch_xla projects into stock Hugging Face + PyTorch for TorchNeuron."""

__version__ = "0.1.0"
