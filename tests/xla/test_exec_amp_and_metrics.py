"""Execution proofs for two small NM3 rewrites, run on CPU after migration:

* NM313 x NM305: ``if DEBUG: xm.master_print(met.metrics_report())`` printed on global rank 0 only; the print that
  takes its place must too (rank 1 prints nothing, rank 0 the note), while a plain ``print`` report prints on every
  rank as before (rt7M-M13).
* NM315: ``torch.amp.GradScaler("xla", ...)`` / ``GradScaler(device="xla")`` take the accelerator's device type, so
  a scaled fp16 step runs (on this CPU host the type is "cpu") (rt7M-M14).
* NM315: an XLA autocast without a dtype computed in bfloat16; the migrated ``torch.autocast`` carries
  ``dtype=torch.bfloat16``, so it still does on a device whose autocast default is another dtype (neuron's is
  float16, as cuda's; here the CPU default is set to float16 to stand for it) (rt8Q-01)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from migrate.testing import apply_rules

LOGGING = textwrap.dedent(
    '''
    import os

    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met

    DEBUG = os.environ.get("TRAINKIT_DEBUG", "0") == "1"


    def log_step(step):
        if DEBUG:
            xm.master_print(met.metrics_report())
        if os.environ.get("TRAINKIT_ALL_RANKS"):
            print(met.short_metrics_report())


    log_step(0)
    '''
).lstrip("\n")

AMP = textwrap.dedent(
    '''
    import torch
    import torch_xla.core.xla_model as xm

    device = xm.xla_device()
    model = torch.nn.Linear(4, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("xla", init_scale=1024.0)
    idle = torch.amp.GradScaler(device="xla", enabled=False)
    with torch.autocast("xla", dtype=torch.bfloat16):
        loss = model(torch.randn(2, 4, device=device)).float().sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print("scale", scaler.get_scale(), idle.is_enabled())
    '''
).lstrip("\n")

AUTOCAST = textwrap.dedent(
    '''
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm
    from torch_xla.amp import autocast

    device = xm.xla_device()
    model = torch.nn.Linear(4, 4).to(device)
    x = torch.randn(2, 4, device=device)


    @torch_xla.amp.autocast(device)
    def step(inp):
        return model(inp)


    with autocast(device):
        a = model(x)
    with torch.autocast("xla"):
        b = model(x)
    with autocast(xm.xla_device(), True):
        c = model(x)
    print(a.dtype, b.dtype, c.dtype, step(x).dtype)
    '''
).lstrip("\n")

#: runs the script after making float16 the CPU autocast default, as it is on neuron
FP16_DEFAULT = ('import runpy, sys, torch; torch.set_autocast_dtype("cpu", torch.float16); '
                'runpy.run_path(sys.argv[1], run_name="__main__")')


def _run(path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "TRAINKIT_DEBUG",
                                                             "TRAINKIT_ALL_RANKS")}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                          env={**base, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore", **env})


@pytest.mark.execution
def test_the_metrics_note_of_a_master_print_prints_on_rank_zero_only(tmp_path: Path) -> None:
    migrated = apply_rules(LOGGING, select=["NM3"], path="logutil.py").text
    assert "torch_xla" not in migrated.replace("torch_xla debug metrics", "")
    script = tmp_path / "logutil.py"
    script.write_text(migrated)
    ranks = {rank: _run(script, RANK=rank, TRAINKIT_DEBUG="1") for rank in ("0", "1")}
    for completed in ranks.values():
        assert completed.returncode == 0, completed.stderr[-3000:]
    assert ranks["0"].stdout.count("no XLA metrics report on TorchNeuron") == 1
    assert ranks["1"].stdout == ""  # master_print printed nothing there
    every = {rank: _run(script, RANK=rank, TRAINKIT_ALL_RANKS="1") for rank in ("0", "1")}
    assert all(c.stdout.count("no XLA metrics report on TorchNeuron") == 1 for c in every.values())  # as print did


@pytest.mark.execution
def test_a_grad_scaler_made_for_xla_runs_on_the_accelerator_type(tmp_path: Path) -> None:
    migrated = apply_rules(AMP, select=["NM3"], path="train.py")
    assert "torch_xla" not in migrated.text and '"xla"' not in migrated.text
    assert {f.severity.value for f in migrated.findings} == {"fixed"}
    script = tmp_path / "train.py"
    script.write_text(migrated.text)
    completed = _run(script)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout == "scale 1024.0 False\n"


@pytest.mark.execution
def test_a_migrated_xla_autocast_without_dtype_computes_in_bfloat16(tmp_path: Path) -> None:
    migrated = apply_rules(AUTOCAST, select=["NM3"], path="train.py")
    assert "torch_xla" not in migrated.text and '"xla"' not in migrated.text
    assert {f.severity.value for f in migrated.findings} == {"fixed"}
    script = tmp_path / "train.py"
    script.write_text(migrated.text)
    bf16 = "torch.bfloat16 torch.bfloat16 torch.bfloat16 torch.bfloat16\n"
    completed = _run(script)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout == bf16
    base = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    other_default = subprocess.run([sys.executable, "-c", FP16_DEFAULT, str(script)], capture_output=True, text=True,
                                   timeout=120, env={**base, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})
    assert other_default.returncode == 0, other_default.stderr[-3000:]
    assert other_default.stdout == bf16  # the dtype is the XLA one, not the device's default
