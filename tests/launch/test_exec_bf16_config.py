"""Execution proof for NM403 on a launcher whose script reads its arguments from a JSON config (rt3A #4): the
migrated launcher is RUN with bash, and the script (stock HfArgumentParser, the `len(sys.argv) == 2 and
sys.argv[1].endswith(".json")` idiom) still takes the config branch. Before, `--bf16 true` was added after the
config, the script parsed flags alone and aborted on its required --model_name_or_path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

SCRIPT = textwrap.dedent(
    '''
    import json, os, sys
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser, TrainingArguments


    @dataclass
    class ModelArguments:
        model_name_or_path: str = field(metadata={"help": "model id or path"})


    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    else:
        model_args, training_args = parser.parse_args_into_dataclasses()
    with open(os.path.join(training_args.output_dir, "result.json"), "w") as handle:
        json.dump({"model": model_args.model_name_or_path, "bf16": training_args.bf16}, handle)
    '''
)
LAUNCHER = "#!/bin/bash\nexport XLA_USE_BF16=1\n{python} finetune.py sst2.json\n"


def test_migrated_launcher_keeps_the_config_as_the_only_argument(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    config = json.dumps({"model_name_or_path": "tiny-bert", "output_dir": str(out), "use_cpu": True, "bf16": True})
    launcher = LAUNCHER.format(python=sys.executable)
    project = {"run.sh": launcher, "finetune.py": SCRIPT, "sst2.json": config}
    migrated = apply_rules(launcher, FileKind.SHELL, select=["NM403"], path="run.sh", project=project).text
    assert "export XLA_USE_BF16" not in migrated and "--bf16" not in migrated
    for name, text in {"run.sh": migrated, "finetune.py": SCRIPT, "sst2.json": config}.items():
        (tmp_path / name).write_text(text)
    env = {key: value for key, value in os.environ.items() if not key.startswith("XLA_")}
    run = subprocess.run(["bash", "run.sh"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads((out / "result.json").read_text()) == {"model": "tiny-bert", "bf16": True}
