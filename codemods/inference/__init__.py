"""Inference family (NM1xx): optimum-neuron inference classes, export and pipelines -> stock HF on TorchNeuron."""
