"""Execution proof for flags kept in bash arrays (rtE: ``FLAGS=(--zero_1 --overwrite_output_dir ...)`` run as
``torchrun train.py "${FLAGS[@]}"``): the migrated launcher is RUN with bash, a stand-in ``torchrun`` on PATH parses
the argv it receives with the stock, strict HfArgumentParser (leftover arguments raise), so every Neuron-only flag
of the array must be mapped and ``--torch_compile true`` added once. The launcher is migrated twice (idempotent)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

NEURON_SCRIPT = textwrap.dedent(
    """\
    from dataclasses import dataclass, field

    from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
    from optimum.neuron import NeuronTrainer, NeuronTrainingArguments


    @dataclass
    class ScriptArguments:
        model_id: str = field(default="tiny")


    parser = HfArgumentParser((ScriptArguments, NeuronTrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()
    NeuronTrainer(args=training_args).train()
    """
)
# what torchrun would start, reduced to the stock parse of the argv (no training)
STOCK_PARSE = textwrap.dedent(
    """\
    import json, sys
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser, TrainingArguments


    @dataclass
    class ScriptArguments:
        model_id: str = field(default="tiny")


    script, training = HfArgumentParser((ScriptArguments, TrainingArguments)).parse_args_into_dataclasses(sys.argv[1:])
    with open(sys.argv[sys.argv.index("--output_dir") + 1] + "/parsed.json", "w") as handle:
        json.dump({"model_id": script.model_id, "torch_compile": training.torch_compile,
                   "warmup_steps": training.warmup_steps, "logging_steps": training.logging_steps}, handle)
    """
)
LAUNCHER = textwrap.dedent(
    """\
    #!/usr/bin/env bash
    set -euo pipefail
    OUT="$1"
    ARGS=(
      --model_id tiny-llama
      --output_dir "$OUT"
      # shard the optimizer state
      --zero_1 true
      --warmup_ratio 0.1
      '--logging_steps' 7
      --overwrite_output_dir
    )
    torchrun --nproc_per_node 1 train.py "${ARGS[@]}" 2>&1
    """
)


def _migrate(text: str, project: dict[str, str]) -> str:
    return apply_rules(text, FileKind.SHELL, path="run.sh", select=["NM4"], project=project).text


def test_array_flags_are_mapped_and_the_stock_parser_takes_them(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    project = {"train.py": NEURON_SCRIPT, "run.sh": LAUNCHER}
    migrated = _migrate(LAUNCHER, project)
    assert _migrate(migrated, {**project, "run.sh": migrated}) == migrated
    code = "\n".join(line for line in migrated.splitlines() if not line.lstrip().startswith("#"))
    assert "--zero_1" not in code and code.count("--torch_compile true") == 1
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "parse.py").write_text(STOCK_PARSE)
    torchrun = bin_dir / "torchrun"  # `torchrun --nproc_per_node N train.py ARGS...` -> the stock parse of ARGS
    torchrun.write_text(f'#!/usr/bin/env bash\nshift 3\nexec {sys.executable} {tmp_path / "parse.py"} "$@"\n')
    torchrun.chmod(0o755)
    (tmp_path / "run.sh").write_text(migrated)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(["bash", str(tmp_path / "run.sh"), str(out)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    parsed = json.loads((out / "parsed.json").read_text())
    assert parsed == {"model_id": "tiny-llama", "torch_compile": True, "warmup_steps": 0.1, "logging_steps": 7}
