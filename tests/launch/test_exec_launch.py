"""Execution proof for the launch layer: a legacy Neuron launcher (neuron_parallel_compile, XLA env vars,
optimum-neuron trainer flags) is migrated, then RUN with bash: torchrun starts 2 CPU workers (gloo), the
training script parses its flags with the stock, strict HfArgumentParser (unknown flags abort it:
parse_args_into_dataclasses raises on leftover arguments) and all-reduces across the workers. The same for a Python launcher that runs an argv list (NM410)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.torchrun_exit import assert_ok_or_teardown_abort

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

TRAIN = textwrap.dedent(
    '''
    import json, os, sys
    from dataclasses import dataclass, field

    import torch
    import torch.distributed as dist
    from transformers import HfArgumentParser
    from trl import SFTConfig


    @dataclass
    class ScriptArguments:
        model_id: str = field(default="tiny")


    script_args, training_args = HfArgumentParser((ScriptArguments, SFTConfig)).parse_args_into_dataclasses()
    if not dist.is_initialized():  # TrainingArguments may have set it up already
        dist.init_process_group("gloo")
    value = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(value)
    if dist.get_rank() == 0:
        with open(os.path.join(training_args.output_dir, "runs.log"), "a") as handle:
            handle.write("run\\n")
        with open(os.path.join(training_args.output_dir, "result.json"), "w") as handle:
            json.dump({
                "world_size": dist.get_world_size(),
                "sum": value.item(),
                "max_length": training_args.max_length,
                "eval_strategy": str(training_args.eval_strategy.value),
                "train_sampling_strategy": getattr(training_args, "train_sampling_strategy", None),
                "env_bf16": os.environ.get("XLA_USE_BF16"),
                "model_id": script_args.model_id,
                "torch_compile": training_args.torch_compile,
            }, handle)
    dist.barrier()  # leave together: a rank that exits early tears down gloo under its peer
    dist.destroy_process_group()
    '''
)

_FLAGS = """ \\
    --model_id tiny-llama \\
    --output_dir "$OUT" \\
    --tensor_parallel_size 1 \\
    --zero_1 true \\
    --max_seq_length 256 \\
    --evaluation_strategy steps \\
    --group_by_length \\
    --overwrite_output_dir \\
    --bf16 false \\
    --report_to none
"""
# the optimum-neuron recipe: a neuron_parallel_compile pass, then the real run of the same command
LAUNCHER = textwrap.dedent(
    """\
    #!/bin/bash
    set -euo pipefail
    export XLA_USE_BF16=1
    export PJRT_DEVICE=NEURON
    export NEURON_CC_FLAGS="--model-type=transformer --cache_dir=$OUT/neuron-cache"
    """
) + "neuron_parallel_compile --num_parallel 2 torchrun --nproc_per_node=2 --master_port=$PORT train.py" + _FLAGS \
    + "torchrun --nproc_per_node=2 --master_port=$PORT train.py" + _FLAGS


#: the script as it was before migration: the launch rules map its flags because it parses NeuronSFTConfig
#: (its env_bf16 probe is this test's observation, not project code: a project that reads XLA_USE_BF16 keeps the
#: export, see tests/fixtures/launch/env_read_by_project)
LEGACY_PROJECT = {"train.py": TRAIN.replace("from trl import SFTConfig", "from optimum.neuron import NeuronSFTConfig as SFTConfig")
                  .replace('os.environ.get("XLA_USE_BF16")', "None")}


def _env(tmp_path: Path, port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OUT=str(tmp_path / "out"), PORT=str(port), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", OMP_NUM_THREADS="1",
        USE_TORCH_XLA="0",
    )
    return env


def _check(tmp_path: Path) -> None:
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["world_size"] == 2
    assert result["sum"] == 3.0  # 1 + 2: the all-reduce ran across both workers
    assert result["max_length"] == 256  # --max_seq_length was renamed, not dropped
    assert result["eval_strategy"] == "steps"
    assert result["train_sampling_strategy"] == "group_by_length"
    assert result["env_bf16"] is None  # the XLA_USE_BF16 export is gone
    assert result["model_id"] == "tiny-llama"
    assert result["torch_compile"] is True  # the migrated launch line turns compilation on
    assert (tmp_path / "out" / "runs.log").read_text() == "run\n"  # one training run: the compile pass is gone


@pytest.mark.execution
def test_migrated_shell_launcher_runs_under_torchrun(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "out").mkdir()
    migrated = apply_rules(LAUNCHER, FileKind.SHELL, select=["NM4"], path="run.sh", project=LEGACY_PROJECT)
    code = "\n".join(line for line in migrated.text.splitlines() if not line.lstrip().startswith("#"))
    assert "neuron_parallel_compile" not in code and "--tensor_parallel_size" not in code and "XLA_USE_BF16" not in code
    (tmp_path / "run.sh").write_text(migrated.text)
    (tmp_path / "legacy.sh").write_text(LAUNCHER)
    legacy = subprocess.run(["bash", "legacy.sh"], cwd=tmp_path, env=_env(tmp_path, 29531), capture_output=True, text=True)
    assert legacy.returncode != 0  # the legacy launcher cannot run here (no neuron_parallel_compile)
    run = subprocess.run(["bash", "run.sh"], cwd=tmp_path, env=_env(tmp_path, 29532), capture_output=True, text=True, timeout=300)
    assert_ok_or_teardown_abort(run)  # the ranks' outputs are checked below
    _check(tmp_path)


PY_LAUNCHER = textwrap.dedent(
    '''\
    import subprocess
    import sys

    cmd = ["XLA_USE_BF16=1", "torchrun", "--nproc_per_node=2", "--master_port=29533", "train.py",
           "--output_dir", sys.argv[1], "--zero_1", "true", "--max_seq_length=256", "--evaluation_strategy", "steps",
           "--group_by_length", "--model_id", "tiny-llama", "--bf16", "false", "--report_to", "none"]
    subprocess.run(["env", *cmd], check=True)
    '''
)


@pytest.mark.execution
def test_migrated_python_launcher_runs_its_argv_list(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "out").mkdir()
    migrated = apply_rules(PY_LAUNCHER, FileKind.PYTHON, select=["NM4"], path="launch.py", project=LEGACY_PROJECT)
    code = "\n".join(line for line in migrated.text.splitlines() if not line.lstrip().startswith("#"))
    assert '"XLA_USE_BF16=1"' not in code and '"--zero_1"' not in code
    (tmp_path / "launch.py").write_text(migrated.text)
    env = _env(tmp_path, 29533)
    env.pop("XLA_USE_BF16", None)
    run = subprocess.run([sys.executable, "launch.py", str(tmp_path / "out")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert_ok_or_teardown_abort(run)  # the ranks' outputs are checked below
    _check(tmp_path)
