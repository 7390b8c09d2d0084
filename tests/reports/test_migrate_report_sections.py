"""The migrate report separates what will fail at run time (error findings: verification, files left untouched)
from what to review (TODOs), and lists what the run did not scan and why. Real runs of the CLI on small trees
(docs/migrate-report.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from migrate.cli import main
from migrate.discovery import NotScanned

SCHEMA = Path(__file__).parents[2] / "reports" / "schemas" / "migrate-report.schema.json"


def _project(root: Path) -> Path:
    """A Neuron training script with a stock import transformers 5 lacks (a verification error, NM701) and an XLA
    precision setting left with a TODO (NM316); a data file, a gitignored script and a gitignored folder beside it.
    (A file kept on torch_xla as a whole runs on the old stack: its NM701 findings are infos, 86831db.)"""
    root.mkdir()
    (root / "train.py").write_text(
        "import torch_xla.core.xla_model as xm\n"
        "from transformers.deepspeed import is_deepspeed_zero3_enabled\n"
        "import os\n\n"
        'os.environ["XLA_USE_BF16"] = "1"\n'
        "device = xm.xla_device()\n"
    )
    (root / "data").mkdir()
    (root / "data" / "train.csv").write_text("text,label\nhello,1\n")
    (root / ".gitignore").write_text("scratch.py\nlogs/\n")
    (root / "scratch.py").write_text("import torch_xla\n")
    (root / "logs").mkdir()
    (root / "logs" / "old_run.py").write_text("import torch_xla\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _run(tmp_path: Path, *extra: str):
    project = _project(tmp_path / "project")
    reports = {fmt: tmp_path / f"run.{fmt}" for fmt in ("json", "md", "html")}
    args = [str(project), "--check", "--xla", "--jobs", "1", "--force", *extra]
    for path in reports.values():
        args += ["--report", str(path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    return result, json.loads(reports["json"].read_text()), reports["md"].read_text(), reports["html"].read_text()


def test_verification_error_and_todo_are_in_separate_sections(tmp_path):
    result, data, md, html = _run(tmp_path)
    findings = data["files"][0]["findings"]
    errors = [f for f in findings if f["severity"] == "error"]
    todos = [f for f in findings if f["severity"] == "todo"]
    assert [f["rule"] for f in errors] == ["NM701"] and todos  # JSON: the error apart from the TODOs, by severity
    assert data["summary"]["findings"]["error"] == 1
    fail = md[md.index("**❌ Will fail at run time: 1 error**"):md.index("**🟡 Review:")]
    review = md[md.index("**🟡 Review:"):md.index("### Changes")]
    assert "**NM701** (error)" in fail and "- [ ] line 2:" in fail and "NM316" not in fail
    assert "**NM316**" in review and "NM701" not in review and "(error)" not in review
    # the HTML's will-fail table comes before the panels and links to the error's line there
    assert html.index('id="will-fail"') < html.index('id="todos"')
    will_fail = html[html.index('id="will-fail"'):html.index('id="todos"')]
    assert 'href="#file-train-py-L2"' in will_fail and "NM316" not in will_fail
    assert 'id="file-train-py-L2"' in html
    assert "will fail at run time: 1 error (1 found by verification, 0 left a file untouched)" in result.stderr
    assert f"to review: {len(todos)} TODO{'' if len(todos) == 1 else 's'}\n" in result.stderr


def test_unknown_kind_and_gitignored_files_are_listed_as_not_scanned(tmp_path):
    result, data, md, html = _run(tmp_path)
    jsonschema.validate(data, json.loads(SCHEMA.read_text()))
    listed = {entry["path"]: entry["reason"] for entry in data["not_scanned"]["files"]}
    assert listed["data/train.csv"] == "unknown kind"
    assert listed["scratch.py"] == "ignored by .gitignore"
    assert listed["logs/"] == "ignored by .gitignore"  # the folder, not each file in it
    assert ".git/" not in listed  # version-control folders say nothing
    assert data["not_scanned"]["count"] == len(listed)
    assert [f["path"] for f in data["files"]] == ["train.py"]
    assert "| `data/train.csv` | unknown kind |" in md and "| `scratch.py` | ignored by .gitignore |" in md
    assert 'id="not-scanned"' in html and "<code>logs/</code>" in html
    assert "not scanned: " in result.stderr and "ignored by .gitignore" in result.stderr


def test_excluded_files_say_so(tmp_path):
    _, data, _, _ = _run(tmp_path, "--exclude", "data/")
    listed = {entry["path"]: entry["reason"] for entry in data["not_scanned"]["files"]}
    assert listed["data/"] == "excluded by --exclude" and "data/train.csv" not in listed


def test_not_scanned_keeps_the_first_entries_and_counts_all():
    passed_over = NotScanned(limit=2)
    for name in ("a.csv", "b.csv", "c.csv"):
        passed_over.add(name, "unknown kind")
    assert passed_over.count == 3 and passed_over.entries == [("a.csv", "unknown kind"), ("b.csv", "unknown kind")]


def test_a_run_with_nothing_passed_over_shows_no_section(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "train.py").write_text("print('hi')\n")
    report = tmp_path / "r.md"
    result = CliRunner().invoke(main, [str(project), "--check", "--jobs", "1", "--force", "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "Not scanned" not in report.read_text() and "not scanned" not in result.stderr
    assert "Will fail at run time" not in report.read_text() and "will fail at run time" not in result.stderr
