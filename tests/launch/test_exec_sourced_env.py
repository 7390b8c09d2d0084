"""Execution check for a launcher and the environment file it sources (``source "$(dirname "$0")/env.sh"``): both are
migrated with the project, checked with ``bash -n``, then the migrated launcher is RUN with bash. ``torchrun`` on PATH
is a stub that records the argv and environment it is started with (the launcher's own logic, the sourcing included,
runs for real); the recorded script arguments are then parsed by the stock, strict HfArgumentParser.

* A shared env file whose launcher runs a script that moves to TorchNeuron: the XLA-era variables are gone from the
  environment torchrun gets, ``--nproc_per_node`` still gets the env file's count, and the flags parse.
* The same env file also sourced by a launcher of a script that stays on torch_xla: what that script reads
  (PJRT_DEVICE) is still exported to it.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest
from transformers import HfArgumentParser, TrainingArguments

from migrate.filekinds import FileKind, kind_from_name
from migrate.testing import apply_rules

ENV = textwrap.dedent(
    """\
    # settings every job of this repository sources
    export XLA_USE_BF16=1
    export PJRT_DEVICE=NEURON
    export NEURON_FUSE_SOFTMAX=1
    export MALLOC_ARENA_MAX=64
    NPROC=2
    """
)
LAUNCHER = textwrap.dedent(
    """\
    #!/bin/bash
    set -euo pipefail
    source "$(dirname "$0")/env/neuron.sh"
    torchrun --nproc_per_node "$NPROC" train.py --output_dir "$OUT" --zero_1 true --bf16 true --report_to none
    """
)
TRAIN = textwrap.dedent(
    """\
    from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
    from transformers import HfArgumentParser


    def main():
        (args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()
        NeuronTrainer(model=None, args=args).train()


    if __name__ == "__main__":
        main()
    """
)
OLD_LAUNCHER = textwrap.dedent(
    """\
    #!/bin/bash
    . "$(dirname "$0")/env/neuron.sh"
    torchrun --nproc_per_node "$NPROC" pretrain_fsdp.py
    """
)
OLD_SCRIPT = textwrap.dedent(
    """\
    import torch
    import torch_xla.core.xla_model as xm
    from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel


    def main():
        model = XlaFullyShardedDataParallel(torch.nn.Linear(4, 4).to(xm.xla_device()))
        xm.mark_step()


    if __name__ == "__main__":
        main()
    """
)
#: the stand-in for torchrun: it records what the launcher started it with
STUB = textwrap.dedent(
    """\
    #!/usr/bin/env python3
    import json, os, sys
    with open(os.environ["RECORD"], "w") as handle:
        json.dump({"argv": sys.argv[1:], "env": dict(os.environ)}, handle)
    """
)


def _migrate(tmp_path: Path, files: dict[str, str]) -> None:
    """Write the project migrated file by file (each file sees the others as its project)."""
    for name, text in files.items():
        kind = kind_from_name(Path(name)) or FileKind.SHELL
        migrated = apply_rules(text, kind, select=["NM4"], path=name, project=files)
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(migrated.text)
        if kind is FileKind.SHELL:
            assert subprocess.run(["bash", "-n", str(tmp_path / name)], capture_output=True).returncode == 0


def _run(tmp_path: Path, launcher: str) -> dict:
    stub = tmp_path / "bin" / "torchrun"
    stub.parent.mkdir(exist_ok=True)
    stub.write_text(STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    env = {key: value for key, value in os.environ.items() if key not in ("XLA_USE_BF16", "PJRT_DEVICE")}
    env.update(PATH=f"{stub.parent}{os.pathsep}{env.get('PATH', '')}", RECORD=str(tmp_path / "record.json"),
               OUT=str(tmp_path / "out"))
    run = subprocess.run(["bash", launcher], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads((tmp_path / "record.json").read_text())


@pytest.mark.execution
def test_sourced_env_of_a_ported_script(tmp_path: Path) -> None:
    _migrate(tmp_path, {"env/neuron.sh": ENV, "train.sh": LAUNCHER, "train.py": TRAIN})
    record = _run(tmp_path, "train.sh")
    for name in ("XLA_USE_BF16", "PJRT_DEVICE", "NEURON_FUSE_SOFTMAX"):
        assert name not in record["env"], name  # removed from the sourced file: TorchNeuron ignores them
    assert record["env"]["MALLOC_ARENA_MAX"] == "64"
    argv = record["argv"]
    assert argv[:3] == ["--nproc_per_node", "2", "train.py"]  # the count still comes from the sourced file
    assert "--zero_1" not in argv  # the optimum-neuron flag went with the port
    # strict: leftovers raise (--use_cpu: this test parses on a host without bf16 hardware)
    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(args=[*argv[3:], "--use_cpu", "true"])
    assert args.bf16 is True and args.torch_compile is True


@pytest.mark.execution
def test_sourced_env_shared_with_a_script_left_on_torch_xla(tmp_path: Path) -> None:
    files = {"env/neuron.sh": ENV, "train.sh": LAUNCHER, "train.py": TRAIN, "pretrain.sh": OLD_LAUNCHER,
             "pretrain_fsdp.py": OLD_SCRIPT}
    _migrate(tmp_path, files)
    record = _run(tmp_path, "pretrain.sh")
    assert record["argv"] == ["--nproc_per_node", "2", "pretrain_fsdp.py"]
    # the torch_xla script still gets its device and precision: the shared file keeps them (with todos)
    assert record["env"]["PJRT_DEVICE"] == "NEURON" and record["env"]["XLA_USE_BF16"] == "1"
    assert "NEURON_FUSE_SOFTMAX" in record["env"]
    assert "neuron-migrate:" in (tmp_path / "env" / "neuron.sh").read_text()
    assert "--torch_compile true" in (tmp_path / "train.sh").read_text()  # the ported one's launcher is still migrated
