"""What shows that a project targets Neuron (so its torch_xla code is Neuron code, not TPU code).

A marker is a pair: a literal ANCHOR that makes it cheap to find (the engine's one-pass multi-string
scan) and a REGEX that makes it precise. Precision matters: libraries such as transformers NAME
Neuron packages in availability checks (``_is_package_available("optimum.neuron")``, ``import
torch_neuronx`` inside a function), in URLs and in error messages; none of that is usage. So in
Python only import statements, Neuron environment-variable keys and requirement-like strings count;
in launch files the Neuron tools and variables; in dependency files the Neuron packages.
"""

from __future__ import annotations

from migrate.filekinds import FileKind

_NEURON_VARS = r"NEURON_(?:CC_FLAGS|RT_[A-Z_]+|EXTRACT_GRAPHS_ONLY|PARALLEL_COMPILE|FUSE_SOFTMAX|COMPILE_CACHE_URL)"

PYTHON = (
    ("optimum.neuron", r"^[ \t]*(?:from|import)[ \t]+optimum\.neuron\b"),
    ("optimum.exporters.neuron", r"^[ \t]*(?:from|import)[ \t]+optimum\.exporters\.neuron\b"),
    ("neuronx_distributed", r"^[ \t]*(?:from|import)[ \t]+neuronx_distributed\b"),
    # module level only: libraries import torch_neuronx inside availability checks
    ("torch_neuronx", r"^(?:from|import)[ \t]+torch_neuronx\b"),
    ("NEURON_", rf"[\"']{_NEURON_VARS}[\"']"),
    ("PJRT_DEVICE", r"PJRT_DEVICE[\"']\]?\s*[=,]\s*[\"']NEURON"),
    ("neuron_parallel_compile", r"\bneuron_parallel_compile\b"),
    ("optimum-cli", r"optimum-cli\s+(?:export\s+)?neuron\b"),
    ("optimum-neuron", r"[\"']optimum-neuron(?:\[[^\]]*\])?\s*(?:[<>=!~;]|[\"'])"),  # a requirement string
)

LAUNCH = (
    ("neuron_parallel_compile", r"\bneuron_parallel_compile\b"),
    ("NEURON_", rf"\b{_NEURON_VARS}\b"),
    ("PJRT_DEVICE", r"PJRT_DEVICE\W{0,4}NEURON"),
    ("optimum-cli", r"optimum-cli\s+(?:export\s+)?neuron\b"),
    ("optimum-neuron", r"\boptimum-neuron\b"),
    ("optimum[neuron", r"optimum\[neuronx?\]"),
    ("torch-neuronx", r"\btorch-neuronx\b"),
    ("neuronx-cc", r"\bneuronx-cc\b"),
    ("aws-neuron", r"\baws-neuronx?-"),
)

DEPENDENCIES = (
    ("optimum-neuron", r"\boptimum-neuron\b"),
    ("optimum[neuron", r"optimum\[neuronx?\]"),
    ("torch-neuronx", r"\btorch-neuronx\b"),
    ("neuronx-cc", r"\bneuronx-cc\b"),
    ("neuronx-distributed", r"\bneuronx-distributed\b"),
    ("libneuronxla", r"\blibneuronxla\b"),
)

NOTEBOOK = (
    *LAUNCH,
    ("optimum.neuron", r"\"[ \t]*(?:from|import)[ \t]+optimum\.neuron\b"),
    ("neuronx_distributed", r"\"[ \t]*(?:from|import)[ \t]+neuronx_distributed\b"),
    ("torch_neuronx", r"\"(?:from|import)[ \t]+torch_neuronx\b"),
)

MARKERS: dict[FileKind, tuple[tuple[str, str], ...]] = {
    FileKind.PYTHON: PYTHON,
    FileKind.SHELL: LAUNCH,
    FileKind.DOCKERFILE: LAUNCH,
    FileKind.YAML: LAUNCH,
    FileKind.REQUIREMENTS: DEPENDENCIES,
    FileKind.PYPROJECT: DEPENDENCIES,
    FileKind.SETUP_CFG: DEPENDENCIES,
    FileKind.NOTEBOOK: NOTEBOOK,
}

#: Triggers for rules that rewrite optimum-neuron APIs. They resolve names through imports, so a file they
#: can change imports optimum-neuron in one of these forms; the bare dotted name would also wake them for
#: libraries that only mention the package in a string (transformers does, in 3,000-line files).
OPTIMUM_NEURON_IMPORTS = ("from optimum.neuron", "import optimum.neuron", "from optimum import neuron")

#: Scope per FILE (``Rule.other_accelerator``): code for another accelerator. A GPU baseline script beside the
#: Neuron code of a repository (``train_gpu.py`` with ``.cuda()`` / ``"cuda"`` / ``"nccl"``) is not Neuron code:
#: with none of a file's own Neuron evidence (a marker above or ``NEURON_CODE``) the Neuron-project rules skip it.
#: The quote may be JSON-escaped (notebooks).
_Q = r"""\\?["']"""
OTHER_ACCELERATOR_PYTHON = (
    ("cuda", rf"{_Q}cuda(?::\d+)?{_Q}"),
    (".cuda(", r"\.cuda\("),
    ("torch.cuda.", r"\btorch\.cuda\.(?!is_available\b)"),  # an availability check alone is portable code
    ("nccl", rf"{_Q}nccl{_Q}"),
)
#: Neuron evidence of a file beyond the project markers: in a Neuron project torch_xla code is Neuron code.
NEURON_CODE_PYTHON = (
    ("torch_xla", r"^[ \t]*(?:from|import)[ \t]+torch_xla\b"),
    ("xla", rf"{_Q}xla(?::\d+)?{_Q}"),
    ("neuron", rf"{_Q}neuron{_Q}"),
)
NEURON_CODE_NOTEBOOK = (("torch_xla", r"\"[ \t]*(?:from|import)[ \t]+torch_xla\b"), *NEURON_CODE_PYTHON[1:])

OTHER_ACCELERATOR: dict[FileKind, tuple[tuple[str, str], ...]] = {
    FileKind.PYTHON: OTHER_ACCELERATOR_PYTHON,
    FileKind.NOTEBOOK: OTHER_ACCELERATOR_PYTHON,
}
NEURON_CODE: dict[FileKind, tuple[tuple[str, str], ...]] = {
    FileKind.PYTHON: NEURON_CODE_PYTHON,
    FileKind.NOTEBOOK: NEURON_CODE_NOTEBOOK,
}
