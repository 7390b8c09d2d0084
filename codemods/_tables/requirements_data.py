"""What the optimum-neuron / PyTorch-XLA dependency stack becomes on TorchNeuron: versions, package groups and
messages read by the dependency rules (``codemods/deps/``). The decisions that use them are in
``codemods/deps/_plan.py``.

Versions are those of Neuron SDK 2.33 (TorchNeuron release notes,
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst, and the
component index https://awsdocs-neuron.readthedocs-hosted.com/en/v2.33.0/release-notes/components/index.html).
"""

from __future__ import annotations

#: The TorchNeuron line to move to: torch-neuronx X.Y.* must match torch X.Y.* (SDK 2.33: 2.13 or 2.14).
TORCH_LINE = "2.14"
TORCH_NEURONX_SPEC = f"torch-neuronx=={TORCH_LINE}.*"
TORCH_SPEC = f"torch=={TORCH_LINE}.*"
#: torchvision releases are built for exactly one torch line (0.N+15 <-> 2.N: the compatibility table of
#: https://github.com/pytorch/vision#installation); torchaudio's releases stopped at 2.11, so it has no entry
TORCHVISION_FOR_TORCH = {"2.13": "0.28", "2.14": "0.29"}
TORCHVISION_SPEC = f"torchvision=={TORCHVISION_FOR_TORCH[TORCH_LINE]}.*"
#: Native (TorchNeuron) torch-neuronx versions; XLA-era builds are 1.x and 2.x.y.2.z up to 2.9.
NATIVE_TORCH_NEURONX = ("2.13.3.0", "2.14.3.0")
NEURONX_CC_SDK = "2.28.7631.0"  # neuronx-cc shipped with Neuron SDK 2.33
NEURONX_CC_SPEC = "neuronx-cc==2.28.*"

#: Stock minimums verified in this project's environment (the versions the TorchNeuron port is tested with).
STOCK_MIN = {
    "transformers": "5.24",
    "accelerate": "1.15",
    "trl": "1.16",
    "peft": "0.21",
    "diffusers": "0.42",
    "sentence-transformers": "6.2",
}

#: optimum-neuron extra -> the stock packages it pulled in
EXTRA_PACKAGES = {
    "training": ["trl", "peft", "datasets"],
    "diffusers": ["diffusers", "peft"],
    "sentence-transformers": ["sentence-transformers"],
}

#: packages of the PyTorch/XLA stack -> why they go
XLA_ONLY = {
    "torch-xla": "torch-xla is the PyTorch/XLA runtime; TorchNeuron does not use it, and while it is installed "
                 "transformers still takes its XLA branches (removed)",
    "libneuronxla": "libneuronxla is the PyTorch/XLA Neuron plugin; not used by TorchNeuron (removed)",
    "neuronx-distributed": "neuronx-distributed (NxD) runs on PyTorch/XLA; TorchNeuron shards with DTensor / "
                           "transformers DistributedConfig (removed)",
    "neuronx-distributed-training": "neuronx-distributed-training runs on PyTorch/XLA (removed)",
    "neuronx-distributed-inference": "neuronx-distributed-inference runs on PyTorch/XLA (removed)",
    "transformers-neuronx": "transformers-neuronx runs on PyTorch/XLA; stock transformers runs on TorchNeuron "
                            "(removed)",
}

#: the Inf1 stack (no TorchNeuron path): torch-neuron, the neuron-cc compiler, tensorflow-neuron; optimum's and
#: optimum-neuron's ``[neuron]`` extra is Inf1 too (``[neuronx]`` is Inf2/Trn1)
INF1 = {"torch-neuron", "neuron-cc", "tensorflow-neuron"}

#: Packages that only a Neuron project depends on.
NEURON_PACKAGES = {"optimum-neuron", "torch-neuronx", "neuronx-cc", "libneuronxla", "neuronx-distributed",
                   "neuronx-distributed-training", "neuronx-distributed-inference", "transformers-neuronx", *INF1}

#: AWS's Neuron package repository (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/setup/index.html: every
#: ``pip install`` of the Neuron packages passes ``--extra-index-url=https://pip.repos.neuron.amazonaws.com``)
NEURON_REPOSITORY = "https://pip.repos.neuron.amazonaws.com"

REPOSITORY_NOTE = (
    "torch-neuronx (and neuronx-cc) are published in AWS's Neuron package repository, not on PyPI (PyPI only has "
    f"placeholders): install with pip's --extra-index-url {NEURON_REPOSITORY} (AWS's Neuron package repository), "
    "or use a Neuron DLAMI/DLC"
)

#: distributions that install a top-level module under another name than their own
MODULE_NAMES = {"pyyaml": "yaml", "scikit-learn": "sklearn", "pillow": "PIL"}
#: packages whose removal (XLA-era) or major-version bump (a floor of the stock stack) depends on whether the
#: project's own code imports them
WATCHED = ("neuronx-distributed", "neuronx-distributed-training", "neuronx-distributed-inference",
           "transformers-neuronx", "huggingface-hub", "tokenizers", "datasets", "safetensors", "numpy", "pyarrow",
           "pandas", "trl", "peft", "diffusers", "sentence-transformers")

#: The stock packages that optimum-neuron itself brought in (its extras): a project that imports one of them
#: still needs it once optimum-neuron is replaced
BROUGHT_BY_OPTIMUM_NEURON = ("trl", "peft", "datasets", "diffusers", "sentence-transformers")

#: package -> {CPython "3.N": the first release that publishes wheels for it}. The stack needs the highest Python
#: floor of its packages (``REQUIRES_PYTHON`` in stock_floors_data.py: transformers 5.24 needs 3.11); an older pin
#: has no wheel there and its source build fails. NumPy release notes:
#: https://numpy.org/doc/stable/release/1.21.3-notes.html, https://numpy.org/doc/stable/release/1.23.2-notes.html,
#: https://numpy.org/doc/stable/release/1.26.0-notes.html, https://numpy.org/doc/stable/release/2.1.0-notes.html
PYTHON_WHEELS = {
    "numpy": {"3.10": "1.21.3", "3.11": "1.23.2", "3.12": "1.26.0", "3.13": "2.1.0"},
}
