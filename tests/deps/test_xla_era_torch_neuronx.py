"""rt8Q-03: an XLA-era torch-neuronx pin stays while code the run leaves still uses the XLA-era torch_neuronx API."""

from __future__ import annotations

import json

from codemods.deps._plan import xla_era_torch_neuronx
from migrate.filekinds import FileKind
from migrate.testing import apply_rules

REQUIREMENTS = "torch-neuronx==2.1.2.2.3.0\ntorch==2.1.2\n"


def test_xla_era_uses_are_found() -> None:
    assert xla_era_torch_neuronx("import torch_neuronx as tnx\nm = tnx.trace(model, x)\n") == ("torch_neuronx.trace",)
    assert xla_era_torch_neuronx("from torch_neuronx import DataParallel\nDataParallel(m)\n") == (
        "torch_neuronx.DataParallel",)
    # the side-effect import beside a torch.jit.load: the load reads a torch_neuronx.trace artifact
    assert xla_era_torch_neuronx("import torch\nimport torch_neuronx\nm = torch.jit.load('m.pt')\n") == (
        "torch.jit.load of a torch_neuronx.trace artifact",)


def test_torchneuron_api_comments_and_probes_are_no_xla_use() -> None:
    assert xla_era_torch_neuronx("import torch_neuronx\nprint(torch_neuronx.get_fallback_ops())\n"
                                 "m = torch.jit.load('scripted.pt')\n") == ()
    assert xla_era_torch_neuronx("import torch\n# torch_neuronx.trace(model, x) was the old way\n"
                                 "x = 1  # neuron-migrate: torch_neuronx.DataParallel ...\n") == ()
    assert xla_era_torch_neuronx("try:\n    import torch_neuronx\nexcept ImportError:\n    pass\n") == ()


def test_a_notebook_is_read_as_its_kernel_runs_it() -> None:
    cells = [{"cell_type": "code", "source": ["%pip install torch-neuronx\n", "import torch_neuronx\n"]},
             {"cell_type": "markdown", "source": ["torch_neuronx.analyze(model) in prose\n"]},
             {"cell_type": "code",
              "source": ["# torch_neuronx.analyze(model)\n", "m = torch_neuronx.trace(model, x)\n"]}]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    assert xla_era_torch_neuronx(text) == ("torch_neuronx.trace",)


def _run(project: dict[str, str]) -> tuple[str, list]:
    result = apply_rules(REQUIREMENTS, FileKind.REQUIREMENTS, path="requirements.txt", select=["NM5"],
                         neuron_project=True, project={"requirements.txt": REQUIREMENTS, **project})
    return result.text, result.findings


def test_kept_xla_use_holds_the_pins_and_a_second_run_changes_nothing() -> None:
    text, findings = _run({"serve.py": "import torch_neuronx\nm = torch_neuronx.DataParallel(model)\n"})
    assert [line for line in text.splitlines() if not line.startswith("#")] == REQUIREMENTS.splitlines()
    assert "serve.py still uses the XLA-era torch_neuronx API (serve.py: torch_neuronx.DataParallel" in text
    assert {finding.severity.value for finding in findings} == {"todo"}
    again = apply_rules(text, FileKind.REQUIREMENTS, path="requirements.txt", select=["NM5"], neuron_project=True,
                        project={"requirements.txt": text,
                                 "serve.py": "import torch_neuronx\nm = torch_neuronx.DataParallel(model)\n"})
    assert again.text == text


def test_a_moved_file_beside_the_kept_one_gets_the_split_advice() -> None:
    text, _ = _run({"serve.py": "import torch_neuronx\nm = torch_neuronx.trace(model, x)\n",
                    "train.py": "import torch\ndevice = torch.accelerator.current_accelerator()\n"})
    assert "torch-neuronx==2.1.2.2.3.0\n" in text
    assert "Split it: give train.py a requirements file of its own (torch-neuronx==2.14.*, torch==2.14.*" in text


def test_without_xla_use_the_pins_move() -> None:
    text, _ = _run({"kernels.py": "import torch_neuronx\n\n@torch_neuronx.nki_op('a::b', mutates_args=())\n"
                                  "def k(a):\n    return a\n"})
    assert "torch-neuronx==2.14.*" in text and "torch==2.14.*" in text and "2.1.2" not in text
