"""Execution proof for NM319: the migrated torch_xla.compile script runs on CPU (portable style), where the
device test keeps the step uncompiled (the neuron dynamo backend exists only with torch-neuronx), and trains the
same with and without --compile."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.testing import apply_rules

CASE = Path(__file__).resolve().parents[1] / "fixtures" / "xla" / "compile_ported"


@pytest.mark.execution
def test_migrated_compile_script_trains_on_cpu(tmp_path: Path) -> None:
    migrated = apply_rules((CASE / "before" / "train_step.py").read_text(), select=["NM3"], path="train_step.py").text
    assert migrated == (CASE / "after" / "train_step.py").read_text()
    script = tmp_path / "train_step.py"
    script.write_text(migrated)
    launcher = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    env = {k: v for k, v in os.environ.items() if k not in launcher}
    outputs = []
    for flags in ([], ["--compile"]):
        completed = subprocess.run([sys.executable, str(script), *flags], capture_output=True, text=True, timeout=120,
                                   env={**env, "OMP_NUM_THREADS": "1"})
        assert completed.returncode == 0, completed.stderr[-3000:]
        outputs.append(completed.stdout.strip())
    first, last = (float(value) for value in outputs[0].split(",")[0].removeprefix("loss ").split(" -> "))
    assert last < first / 2  # the step trains
    assert outputs[0] == outputs[1]  # off-neuron --compile runs the same eager step
