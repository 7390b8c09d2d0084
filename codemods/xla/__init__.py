"""torch_xla idioms -> native torch / torch.distributed (NM300-NM399), scoped to Neuron projects."""
