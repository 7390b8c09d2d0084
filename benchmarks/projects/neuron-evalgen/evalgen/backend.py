from optimum.neuron.utils import is_neuronx_available


def pick_backend(requested=None):
    """Return "neuron" when a Neuron runtime is present, else "cpu"."""
    if requested:
        return requested
    if is_neuronx_available():
        return "neuron"
    return "cpu"
