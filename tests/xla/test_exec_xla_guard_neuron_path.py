"""Execution proof for NM317's native Neuron check: a dual-path script whose is_torch_xla_available() guards pick
the Trainium device or the CPU is migrated with the NM3 rules and RUN on this host (no accelerator, or a GPU): the
guards now test torch.accelerator, so the script takes the CPU / other side here, as the original did off XLA, and
the test expression evaluates without error where no accelerator is present."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codemods._lib.device import ON_NEURON
from migrate.testing import apply_rules

SCRIPT = textwrap.dedent(
    '''
    import torch
    from transformers.utils import is_torch_xla_available

    if is_torch_xla_available():
        import torch_xla.core.xla_model as xm


    def get_device():
        if is_torch_xla_available():
            return xm.xla_device()
        else:
            return torch.device("cpu")


    def placement():
        if not is_torch_xla_available():
            return "host"
        else:
            xm.mark_step()


    model = torch.nn.Linear(2, 2).to(get_device())
    print("device", next(model.parameters()).device.type, "placement", placement())
    '''
).lstrip("\n")


def _run(path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "PJRT_DEVICE")}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                          env={**env, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""})


@pytest.mark.execution
@pytest.mark.parametrize("check", ["is_torch_xla_available", "is_torch_tpu_available"])
def test_migrated_dual_path_script_takes_the_cpu_side_here(tmp_path: Path, check: str) -> None:
    """Also with transformers' older name of the check (is_torch_tpu_available: False on TorchNeuron as well)."""
    script = SCRIPT.replace("is_torch_xla_available", check)
    migrated = apply_rules(script, select=["NM3"], path="dev.py").text
    assert check not in migrated and "torch_xla" not in migrated
    assert migrated.count(ON_NEURON) == 2  # both guards kept, behind the native check
    assert 'return torch.accelerator.current_accelerator() or torch.device("cpu")' in migrated  # the Neuron path
    (tmp_path / "before.py").write_text(script)
    (tmp_path / "dev.py").write_text(migrated)
    before, after = _run(tmp_path / "before.py"), _run(tmp_path / "dev.py")
    assert before.returncode == 0, before.stderr[-3000:]
    assert after.returncode == 0, after.stderr[-3000:]
    assert after.stdout == before.stdout == "device cpu placement host\n"


@pytest.mark.execution
def test_the_native_check_evaluates_without_an_accelerator() -> None:
    code = f"import torch\nprint({ON_NEURON}, not ({ON_NEURON}))\n"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                               env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout == "False True\n"
