"""Helpers shared by bench.py and latency_only.py."""
import statistics

WORDS = "the quick brown fox jumps over the lazy dog while the benchmark keeps running".split()


def compiled_batch_sizes(model):
    """Batch sizes to time: every power of two up to the compiled batch size, and the compiled one."""
    neuron_cfg = getattr(model, "neuron_config", None)
    if neuron_cfg is not None:
        max_bs = neuron_cfg.batch_size
    else:
        max_bs = model.config.neuron["batch_size"]
    sizes, bs = [], 1
    while bs < max_bs:
        sizes.append(bs)
        bs *= 2
    sizes.append(max_bs)
    return sizes


def make_prompts(batch_size, prompt_length):
    text = " ".join(WORDS[i % len(WORDS)] for i in range(prompt_length))
    return [text] * batch_size


def percentile(values, q):
    values = sorted(values)
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]
