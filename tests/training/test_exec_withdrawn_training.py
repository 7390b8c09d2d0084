"""Execution proof (rt3A 1-3): a training script whose class move verification withdraws (it reads
``training_args.zero_1``, which stock TrainingArguments lacks, and its dataclass lives in another module, so the
field cannot move there) is left on its old stack as a whole: its arguments still parse with a stand-in for
optimum-neuron whose NeuronTrainingArguments declares the Neuron fields. Before, the rules that assume the move
stayed applied (``tensor_parallel_size`` declared again in ModelArguments) and the parser raised "conflicting option
strings"; that half-migrated shape is run here too. The same script without the read migrates and parses on the
stock classes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import imported_from

pytestmark = pytest.mark.execution

CASES = Path(__file__).parents[1] / "fixtures" / "training"
WITHDRAWN = CASES / "zero_1_read_imported_dataclass_withdraws" / "before" / "train.py"
#: the dataclass of the script above, in its own module
SCRIPT_ARGUMENTS = CASES / "zero_1_read_imported_dataclass_withdraws" / "project" / "script_arguments.py"
#: the same reads with the dataclass in the script: the fields move into it (NM208), nothing is withdrawn
MOVED = CASES / "zero_1_read_moved_into_script_dataclass" / "before" / "train.py"
MIGRATED = CASES / "zero_1_read_absent_classes_move" / "before" / "train.py"
# optimum-neuron's argument classes as the old stack had them: the stock ones plus the Neuron fields
STAND_IN = textwrap.dedent('''
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser as NeuronHfArgumentParser
    from transformers import Trainer as NeuronTrainer
    from transformers import TrainingArguments


    @dataclass
    class NeuronTrainingArguments(TrainingArguments):
        tensor_parallel_size: int = field(default=1)
        zero_1: bool = field(default=False)
    ''')
ARGS = ["--output_dir", "out", "--tensor_parallel_size", "2", "--parse_only", "true", "--report_to", "none"]


def _migrate(source: Path, **options) -> str:
    text = source.read_text()
    return apply_rules(text, path="train.py", project={"train.py": text}, **options).text


def _parse(tmp_path: Path, script: str, *extra: str, old_stack: bool) -> subprocess.CompletedProcess:
    (tmp_path / "train.py").write_text(script)
    (tmp_path / "script_arguments.py").write_text(SCRIPT_ARGUMENTS.read_text())
    if old_stack:
        (tmp_path / "optimum" / "neuron").mkdir(parents=True, exist_ok=True)
        (tmp_path / "optimum" / "__init__.py").write_text("")
        (tmp_path / "optimum" / "neuron" / "__init__.py").write_text(STAND_IN)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(tmp_path)}
    return subprocess.run([sys.executable, "train.py", *ARGS, *extra], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=240)


def _parsed(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [json.loads(line[len("PARSED="):]) for line in done.stdout.splitlines() if line.startswith("PARSED=")][0]


def test_withdrawn_script_parses_on_its_old_stack(tmp_path: Path) -> None:
    script = _migrate(WITHDRAWN, select=["NM2", "NM6", "NM7"])
    assert "from optimum.neuron import NeuronTrainingArguments as TrainingArguments" in script
    assert "tokenizer=tokenizer)" in script and "    tensor_parallel_size: int" not in script
    assert _parsed(_parse(tmp_path, script, "--zero_1", "true", old_stack=True)) == {"tp": 2, "zero_1": True}


def test_the_half_migrated_shape_fails_on_the_old_stack(tmp_path: Path) -> None:
    # the class move alone withdrawn, the rules that assume it kept: what one run left before (rt3A 3)
    script = _migrate(MOVED, select=["NM2", "NM6"], ignore=["NM201"])
    assert "    tensor_parallel_size: int = 1" in script
    done = _parse(tmp_path, script, old_stack=True)
    assert done.returncode != 0 and "conflicting option strings" in done.stderr


def test_the_script_without_the_read_parses_on_the_stock_classes(tmp_path: Path) -> None:
    script = _migrate(MIGRATED, select=["NM2", "NM6", "NM7"])
    assert "TrainingArguments" in imported_from(script, "transformers")
    assert _parsed(_parse(tmp_path, script, old_stack=False)) == {"tp": 2}
