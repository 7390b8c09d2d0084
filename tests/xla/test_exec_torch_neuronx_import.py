"""Execution proof for NM330's removal of an unused ``import torch_neuronx`` (final-AC rt3A 12d): the script raised
``ModuleNotFoundError`` on CPU before the run; migrated, it runs (TorchNeuron loads torch_neuronx by itself)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from migrate.testing import apply_rules

SCRIPT = """\
import torch
import torch_neuronx  # noqa: F401  (registers the neuron runtime)

model = torch.nn.Linear(4, 2).eval()
with torch.inference_mode():
    print("RESULT shape=%s" % list(model(torch.ones(3, 4)).shape))
"""


def _run(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=path.parent)


@pytest.mark.execution
def test_a_script_with_an_unused_torch_neuronx_import_runs_on_cpu_once_migrated(tmp_path: Path) -> None:
    before = tmp_path / "before.py"
    before.write_text(SCRIPT)
    if subprocess.run([sys.executable, "-c", "import torch_neuronx"], capture_output=True).returncode == 0:
        pytest.skip("torch_neuronx is installed here: the unmigrated script would run too")
    assert "No module named 'torch_neuronx'" in _run(before).stderr
    result = apply_rules(SCRIPT, select=["NM3"], path="bench.py")
    assert "torch_neuronx" not in result.text
    assert [(f.rule, f.severity.value) for f in result.findings] == [("NM330", "fixed")]
    after = tmp_path / "bench.py"
    after.write_text(result.text)
    completed = _run(after)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "RESULT shape=[3, 2]" in completed.stdout
