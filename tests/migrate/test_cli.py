"""`neuron-migrate` options and exit codes. Uses the sweep rules (NM9xx), whose behaviour is stable:
they report leftovers and write inline notes, so a file with one changes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate import __version__
from migrate.cli import main

LEFTOVER = "from optimum.neuron.utils import private_helper\n\nprivate_helper()\n"
CLEAN = "import torch\n\nprint(torch.ones(2))\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "legacy.py").write_text(LEFTOVER)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(main, [*args, "--force", "--jobs", "1"] if "--list-rules" not in args else list(args))


def test_rewrites_in_place_with_notes_and_summary(project: Path) -> None:
    result = invoke(str(project), "--select", "NM9")
    assert result.exit_code == 0, result.output
    text = (project / "legacy.py").read_text()
    assert text.startswith("# neuron-migrate: optimum-neuron API `optimum.neuron` is still used")
    assert "legacy.py:1:5: NM901 [todo]" in result.stdout
    assert "2 files scanned" in result.stderr and "1 changed" in result.stderr


def test_diff_prints_patch_and_writes_nothing(project: Path) -> None:
    result = invoke(str(project), "--diff", "--select", "NM9")
    assert result.exit_code == 0
    assert result.stdout.startswith("--- a/legacy.py\n+++ b/legacy.py\n")
    assert "NM901 [todo]" not in result.stdout  # findings go to stderr so the patch stays applicable
    assert (project / "legacy.py").read_text() == LEFTOVER


def test_check_exit_codes(project: Path, tmp_path_factory) -> None:
    result = invoke(str(project), "--check", "--select", "NM9")
    assert result.exit_code == 1 and "legacy.py: would be rewritten" in result.stdout
    assert (project / "legacy.py").read_text() == LEFTOVER
    clean = tmp_path_factory.mktemp("clean")
    (clean / "clean.py").write_text(CLEAN)
    assert invoke(str(clean), "--check").exit_code == 0


def test_check_fails_on_todos_even_without_inline_notes(project: Path) -> None:
    result = invoke(str(project), "--check", "--no-inline-notes", "--select", "NM9")
    assert result.exit_code == 1 and "would be rewritten" not in result.stdout and "NM901 [todo]" in result.stdout


def test_no_inline_notes_leaves_file_alone(project: Path) -> None:
    assert invoke(str(project), "--no-inline-notes", "--select", "NM9").exit_code == 0
    assert (project / "legacy.py").read_text() == LEFTOVER


def test_select_and_ignore(project: Path) -> None:
    ignored = invoke(str(project), "--check", "--select", "NM9", "--ignore", "NM901")
    assert ignored.exit_code == 0 and "NM901" not in ignored.stdout
    listed = invoke(str(project), "--check", "--select", "NM1,NM9", "--ignore", "NM901,NM902")
    assert listed.exit_code == 0 and "NM901" not in listed.stdout
    assert invoke(str(project), "--check", "--select", "NM1,NM777").exit_code == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["--select", "NM777", "x"], "unknown rule or prefix 'NM777'"),
        (["missing/path"], "missing/path: no such file or directory"),
        ([], "give at least one file or folder"),
        (["--explain", "NM000x"], "unknown rule 'NM000x'"),
        ([".", "--report", "out.pdf"], "unknown report format '.pdf'"),
        ([".", "--report", "no/such/dir/r.json"], "folder no/such/dir does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"neuron-migrate: error: {result.stderr.strip().split('error: ', 1)[1]}"]
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_error_file_gives_exit_1(project: Path) -> None:
    # the torch_xla rules parse Python (the sweep alone only tokenizes)
    (project / "broken.py").write_text("import torch_xla.core.xla_model as xm\ndef f(:\n    xm.mark_step()\n")
    result = invoke(str(project), "--select", "NM9", "--select", "NM3")
    assert result.exit_code == 1 and "broken.py:3:0: NM000 [error] does not parse" in result.stdout


def test_list_rules_and_explain() -> None:
    listing = CliRunner().invoke(main, ["--list-rules"])
    assert listing.exit_code == 0
    line = next(line for line in listing.stdout.splitlines() if line.startswith("NM901"))
    assert "optimum-neuron-leftovers" in line and "manual-only" in line
    explain = CliRunner().invoke(main, ["--explain", "NM901"])
    assert explain.exit_code == 0 and "Before:\n" in explain.stdout and "After" in explain.stdout
    assert "``" not in explain.stdout and "::\n" not in explain.stdout  # plain text, not reST
    assert CliRunner().invoke(main, ["--explain", "optimum-neuron-leftovers"]).exit_code == 0


def test_reports_in_three_formats(project: Path, tmp_path_factory) -> None:
    out = tmp_path_factory.mktemp("reports")
    result = invoke(str(project), "--check", "--select", "NM9", "--report", str(out / "r.json"),
                    "--report", str(out / "r.md"), "--report", str(out / "r.html"))
    assert result.exit_code == 1
    data = json.loads((out / "r.json").read_text())
    assert data["schema_version"] == 2 and data["tool_version"] == __version__ and data["mode"] == "check"
    assert data["summary"]["changed"] == 1 and data["summary"]["findings"]["todo"] == 1
    legacy = next(f for f in data["files"] if f["path"] == "legacy.py")
    assert legacy["status"] == "changed" and legacy["findings"][0]["rule"] == "NM901"
    assert legacy["findings"][0]["line"] == 1
    markdown = (out / "r.md").read_text()
    assert "## What a human must do" in markdown and "- [ ] line 1: **NM901**" in markdown
    html = (out / "r.html").read_text()
    assert html.index('id="todos"') < html.index('id="changes"') and 'href="#file-legacy-py-L1"' in html


def test_version_and_quiet(project: Path) -> None:
    assert __version__ in CliRunner().invoke(main, ["--version"]).stdout
    quiet = invoke(str(project), "-q", "--check", "--select", "NM9")
    assert quiet.stdout == "" and "files scanned" in quiet.stderr


def test_verbose_lists_rewritten_files(project: Path) -> None:
    result = invoke(str(project), "-v", "--select", "NM9")
    assert "legacy.py: rewritten" in result.stdout


def test_console_script_runs_as_a_process(project: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "migrate", "--check", "--jobs", "2", str(project)], capture_output=True, text=True
    )
    assert completed.returncode == 1 and "would be rewritten" in completed.stdout
