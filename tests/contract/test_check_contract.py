"""`--check` is what CI runs: it fails while anything is left to do, and says where.

A `# neuron-migrate:` note is work until a human deletes it, whether or not a rule would find its code again;
report lines point into the files as they stand after the run (the rewritten file in write mode), with the
line before the run beside them in the JSON report (reports/schemas/migrate-report.schema.json).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import nbformat
import pytest
from click.testing import CliRunner

from migrate.cli import main
from reports.schemas import MIGRATE_REPORT

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "legacy-project"
NOTE = "# neuron-migrate: tensor parallel degree 2: launch with `torchrun --nproc_per_node 2`"


def invoke(*args: str):
    return CliRunner().invoke(main, [*args, "--jobs", "1"])


def schema_valid(report: Path) -> dict:
    data = json.loads(report.read_text())
    jsonschema.validate(data, json.loads(MIGRATE_REPORT.read_text()))
    return data


@pytest.mark.parametrize("name, text, line", [
    ("infer.py", f"import torch\n\n{NOTE}\nmodel = torch.nn.Linear(2, 2)\n", 3),
    ("infer_indented.py", f"def main():\n    {NOTE}\n    return 1\n", 2),
    ("run.sh", f"#!/bin/bash\n{NOTE}\ntorchrun --nproc_per_node 2 infer.py\n", 2),
    ("job.yaml", f"steps:\n  {NOTE}\n  - run: python infer.py\n", 2),
    ("Dockerfile", f"FROM python:3.12\n{NOTE}\nCMD [\"python\", \"infer.py\"]\n", 2),
    ("requirements.txt", f"{NOTE}\ntransformers>=5\n", 1),
])
def test_check_fails_on_a_note_left_by_an_earlier_run_and_says_where(tmp_path: Path, name: str, text: str, line: int) -> None:
    (tmp_path / name).write_text(text)
    result = invoke(str(tmp_path), "--check")
    assert result.exit_code == 1, result.output
    assert f"{name}:{line}:0: NM001 [todo] unresolved note: tensor parallel degree 2" in result.stdout
    (tmp_path / name).write_text(text.replace(NOTE + "\n", ""))  # the human did it and deleted the note
    assert invoke(str(tmp_path), "--check").exit_code == 0


def test_a_note_in_a_notebook_cell_is_work_too(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"{NOTE}\nimport torch")])
    nbformat.write(notebook, tmp_path / "demo.ipynb")
    result = invoke(str(tmp_path), "--check")
    assert result.exit_code == 1 and "NM001 [todo] unresolved note: tensor parallel degree 2" in result.stdout


@pytest.mark.parametrize("name, text", [
    ("docs.py", f'"""How a note looks:\n\n{NOTE}\n"""\nimport torch\n'),  # shown in a docstring
    ("docs.py", f'MESSAGE = "{NOTE}"\n'),  # inside a string
    ("docs.py", "# see the neuron-migrate: notes of the README\nimport torch\n"),  # does not start the comment
    ("README.md", f"Notes look like this:\n\n```python\n{NOTE}\n```\n"),  # the tool writes no notes in Markdown
])
def test_text_that_only_quotes_a_note_is_not_work(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    result = invoke(str(tmp_path), "--check")
    assert result.exit_code == 0, result.output


def test_a_note_whose_code_a_rule_finds_again_is_reported_once(tmp_path: Path) -> None:
    (tmp_path / "legacy.py").write_text("from optimum.neuron.utils import private_helper\n\nprivate_helper()\n")
    assert invoke(str(tmp_path), "--select", "NM9", "--force").exit_code == 0
    result = invoke(str(tmp_path), "--check", "--select", "NM9")
    assert result.exit_code == 1
    assert result.stdout.count("[todo]") == 1 and "NM901 [todo]" in result.stdout and "NM001" not in result.stdout


@pytest.fixture(scope="module")
def migrated_example(tmp_path_factory):
    target = tmp_path_factory.mktemp("contract") / "legacy-project"
    shutil.copytree(EXAMPLE, target)
    report = target.parent / "write.json"
    result = CliRunner().invoke(main, [str(target), "--force", "--report", str(report)])
    assert result.exit_code == 0, result.output
    return target, schema_valid(report)


def test_after_a_migration_check_finds_every_todo_it_left(migrated_example) -> None:
    target, written = migrated_example
    report = target.parent / "check.json"
    result = CliRunner().invoke(main, [str(target), "--check", "--report", str(report)])
    assert result.exit_code == 1
    checked = schema_valid(report)
    assert checked["summary"]["changed"] == 0  # the migration is idempotent: what remains is for a human
    notes = sum(path.read_text().count("# neuron-migrate:") for path in target.iterdir() if path.is_file())
    assert checked["summary"]["findings"]["todo"] >= notes > 0
    assert checked["summary"]["findings"]["todo"] == written["summary"]["findings"]["todo"]


def test_write_mode_reports_the_lines_of_the_written_file(migrated_example) -> None:
    target, written = migrated_example
    moved = 0
    for file in written["files"]:
        if file["kind"] == "notebook":
            continue
        lines = (target / file["path"]).read_text().splitlines()
        for finding in file["findings"]:
            if finding["severity"] != "todo" or finding["line"] == 0:
                continue
            moved += finding["line"] != finding["original_line"]
            note = f"# neuron-migrate: {finding['message']}"
            near = [text.strip() for text in lines[max(0, finding["line"] - 2):finding["line"] + 1]]
            assert note in near, (file["path"], finding)
    assert moved  # the notes moved lines: the old numbers would be wrong
