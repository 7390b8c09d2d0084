"""NM410: the launch rules' edits on command strings inside Python, made by the rules the run selected, so that
``--select``/``--ignore`` mean the same for a command in a shell script and for the same command in a Python string."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.engine import RunOptions, run
from migrate.findings import FileStatus
from tests.rules.case import findings, migrate, unchanged

EXPORT = """\
import subprocess

subprocess.run("optimum-cli export neuron --model gpt2 --batch_size 1 --sequence_length 128 out/", shell=True)
"""
BF16 = """\
import os

os.system("XLA_USE_BF16=1 torchrun --nproc_per_node 2 train.py")
"""
TRAINER_SCRIPT = """\
from transformers import HfArgumentParser, TrainingArguments

(training_args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
"""


def _run(tmp_path: Path, source: str, **options):
    """The file after a real engine run (``xla``: a Neuron project without markers), and NM410's findings."""
    path = tmp_path / "launch.py"
    path.write_text(source)
    result = run([tmp_path], RunOptions(jobs=1, write=True, force=True, xla=True, **options))
    (file,) = [file for file in result.files if file.path.endswith("launch.py")]
    return file, path.read_text(), [finding for finding in file.findings if finding.rule == "NM410"]


def test_optimum_cli_export_string_gets_nm406s_todo_by_default(tmp_path: Path) -> None:
    file, text, nm410 = _run(tmp_path, EXPORT)
    assert file.status is FileStatus.CHANGED
    assert [finding.message.split(":")[0] for finding in nm410] == ["delete this export"]
    assert "# neuron-migrate: delete this export" in text


def test_ignore_nm406_leaves_the_optimum_cli_string_alone(tmp_path: Path) -> None:
    _, text, nm410 = _run(tmp_path, EXPORT, ignore=("NM406",))
    assert nm410 == []
    assert "delete this export" not in text  # (the end-of-run sweep, NM901, still names what is left)
    assert EXPORT.splitlines()[-1] in text.splitlines()


@pytest.mark.parametrize("ignore", [(), ("NM403",)])
def test_ignore_nm403_keeps_xla_use_bf16_in_a_command_string(tmp_path: Path, ignore: tuple[str, ...]) -> None:
    (tmp_path / "train.py").write_text(TRAINER_SCRIPT)  # a stock Trainer script: --bf16 true carries the precision
    _, text, nm410 = _run(tmp_path, BF16, ignore=ignore)
    if ignore:
        assert 'os.system("XLA_USE_BF16=1 torchrun' in text
        assert not any("XLA_USE_BF16" in finding.message for finding in nm410)
    else:
        assert 'os.system("torchrun --nproc_per_node 2 train.py --bf16 true")' in text
        assert any(finding.message.startswith("XLA_USE_BF16 made torch_xla") for finding in nm410)
        assert any(finding.message.startswith("--bf16 true added") for finding in nm410)


def test_xla_use_bf16_stays_where_the_script_may_not_take_bf16(tmp_path: Path) -> None:
    """train.py has its own argparse: --bf16 would make it exit, and dropping the variable alone would train in fp32."""
    (tmp_path / "train.py").write_text("import argparse\n\nparser = argparse.ArgumentParser()\nparser.parse_args()\n")
    _, text, nm410 = _run(tmp_path, BF16)
    assert 'os.system("XLA_USE_BF16=1 torchrun --nproc_per_node 2 train.py")' in text
    (todo,) = [finding for finding in nm410 if "XLA_USE_BF16" in finding.message]
    assert todo.message.startswith("XLA_USE_BF16 was left as it is") and "train.py is not known" in todo.message


def test_select_nm410_alone_applies_no_launch_edit(tmp_path: Path) -> None:
    """NM410 carries the launch rules' edits into Python; with none of them selected it has nothing to apply."""
    file, text, nm410 = _run(tmp_path, BF16, select=("NM410",))
    assert (file.status, nm410, text) == (FileStatus.UNCHANGED, [], BF16)


def test_string_edit_through_the_rule_test_helper() -> None:
    # the helper passes no selection to the rule: every launch edit applies
    result = migrate(BF16, "NM410", path="launch.py", project={"launch.py": BF16, "train.py": TRAINER_SCRIPT})
    assert 'os.system("torchrun --nproc_per_node 2 train.py --bf16 true")' in result.text
    assert findings(result, "NM410") == {(3, "todo"), (3, "fixed")}


def test_a_string_that_is_not_a_command_is_left_alone() -> None:
    unchanged('message = "set XLA_USE_BF16 in your environment to train in bf16"\n', "NM410")


ARGV = """\
import subprocess

subprocess.run(["env", "XLA_USE_BF16=1", "torchrun", "--nproc_per_node", "2", "train.py"], check=True)
"""


@pytest.mark.parametrize("ignore", [(), ("NM403",)])
def test_ignore_nm403_keeps_the_variable_of_an_argv_list(tmp_path: Path, ignore: tuple[str, ...]) -> None:
    (tmp_path / "train.py").write_text(TRAINER_SCRIPT)  # a stock Trainer script: --bf16 true carries the precision
    _, text, nm410 = _run(tmp_path, ARGV, ignore=ignore)
    assert ('"XLA_USE_BF16=1", ' in text) == bool(ignore)
    assert ('"train.py", "--bf16", "true"]' in text) != bool(ignore)
    assert any(finding.message.startswith("XLA_USE_BF16 made torch_xla") for finding in nm410) != bool(ignore)
