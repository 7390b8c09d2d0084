"""Execution proof: a script that reads training_args.overwrite_output_dir (removed in transformers 5), migrated
with its launcher, still parses ``--overwrite_output_dir --output_dir <existing dir>`` with the stock
HfArgumentParser and decides as before: with the flag it starts over, without it it resumes from the last
checkpoint. The unmigrated pair fails on transformers 5 (the parser rejects the flag)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

pytestmark = pytest.mark.execution

SCRIPT = textwrap.dedent('''
    import json
    import os
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser, TrainingArguments
    from transformers.trainer_utils import get_last_checkpoint


    @dataclass
    class ModelArguments:
        model_name_or_path: str = field(default="tiny")


    def main():
        parser = HfArgumentParser((ModelArguments, TrainingArguments))
        model_args, training_args = parser.parse_args_into_dataclasses()
        last_checkpoint = None
        if os.path.isdir(training_args.output_dir) and not training_args.overwrite_output_dir:
            last_checkpoint = get_last_checkpoint(training_args.output_dir)
        print("RESULT=" + json.dumps({"resume": last_checkpoint and os.path.basename(last_checkpoint)}))


    if __name__ == "__main__":
        main()
    ''')
LAUNCHER = textwrap.dedent('''\
    #!/bin/bash
    set -euo pipefail
    python run_trainer.py --output_dir "$OUT" --overwrite_output_dir --do_train --report_to none
    python run_trainer.py --output_dir "$OUT" --do_train --report_to none
    ''')
PROJECT = {"run_trainer.py": SCRIPT, "run.sh": LAUNCHER, "requirements.txt": "torch-neuronx==2.1.2.2.1.0\n"}


def _run(tmp_path: Path, script: str, launcher: str) -> subprocess.CompletedProcess:
    (tmp_path / "run_trainer.py").write_text(script)
    (tmp_path / "run.sh").write_text(launcher)
    out = tmp_path / "out"
    (out / "checkpoint-5").mkdir(parents=True, exist_ok=True)  # an earlier run's checkpoint in the output dir
    env = {**os.environ, "OUT": str(out), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "run.sh"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)


def test_migrated_script_parses_the_flag_and_keeps_its_decision(tmp_path: Path) -> None:
    script = apply_rules(SCRIPT, select=["NM2", "NM6"], path="run_trainer.py", project=PROJECT).text
    launcher = apply_rules(LAUNCHER, FileKind.SHELL, select=["NM4"], path="run.sh", project=PROJECT).text
    ast.parse(script)
    assert "training_args.overwrite_output_dir" not in script and "model_args.overwrite_output_dir" in script
    assert launcher.count("--overwrite_output_dir") == 1  # kept, without a note: the flag is the script's now
    done = _run(tmp_path, script, launcher)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = [json.loads(line[len("RESULT="):]) for line in done.stdout.splitlines() if line.startswith("RESULT=")]
    assert results == [{"resume": None}, {"resume": "checkpoint-5"}]


def test_unmigrated_script_fails_on_transformers_5(tmp_path: Path) -> None:
    done = _run(tmp_path, SCRIPT, LAUNCHER)
    assert done.returncode != 0
    assert "overwrite_output_dir" in done.stderr
