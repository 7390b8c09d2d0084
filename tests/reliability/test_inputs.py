"""Odd trees, bad reports and broken notebooks: a one-line message or an `error` result, never a
traceback, and a report target is checked before any file is touched."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.reliability.conftest import LEGACY, as_unprivileged, cli

LEGACY_CELL = LEGACY.decode()


def test_a_folder_that_cannot_be_listed_is_skipped(shared_tmp: Path) -> None:
    tree = shared_tmp / "tree"
    (tree / "locked").mkdir(parents=True)
    (tree / "a.py").write_bytes(LEGACY)
    for path in (tree, tree / "a.py"):
        path.chmod(0o777)
    (tree / "locked").chmod(0)
    completed = cli("--check", tree, "--report", shared_tmp / "r.json", user=as_unprivileged())
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.returncode == 1  # a.py would change
    files = {f["path"]: f for f in json.loads((shared_tmp / "r.json").read_text())["files"]}
    assert files["locked"]["status"] == "skipped" and "cannot list folder" in files["locked"]["reason"]


def test_a_gitignore_line_git_accepts_is_not_fatal(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("!\nignored.py\n")
    (tmp_path / "a.py").write_bytes(LEGACY)
    (tmp_path / "ignored.py").write_bytes(LEGACY)
    completed = cli("--check", tmp_path)
    assert "Traceback" not in completed.stderr
    assert "a.py: would be rewritten" in completed.stdout and "ignored.py" not in completed.stdout


def test_an_invalid_exclude_pattern_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(LEGACY)
    completed = cli("--exclude", "!", tmp_path)
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines()[-1] == "neuron-migrate: error: --exclude '!': not a valid gitignore pattern"
    assert "Traceback" not in completed.stderr
    assert (tmp_path / "a.py").read_bytes() == LEGACY


def test_a_report_target_that_is_a_folder_fails_before_any_file_is_touched(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(LEGACY)
    (tmp_path / "out.json").mkdir()
    completed = cli("--force", tmp_path / "a.py", "--report", tmp_path / "out.json")
    assert completed.returncode == 2 and "is a folder" in completed.stderr and "Traceback" not in completed.stderr
    assert (tmp_path / "a.py").read_bytes() == LEGACY


def test_a_report_in_a_read_only_folder_fails_before_any_file_is_touched(shared_tmp: Path) -> None:
    (shared_tmp / "a.py").write_bytes(LEGACY)
    (shared_tmp / "a.py").chmod(0o666)
    (shared_tmp / "reports").mkdir()
    (shared_tmp / "reports").chmod(0o555)
    completed = cli("--force", shared_tmp / "a.py", "--report", shared_tmp / "reports" / "r.md", user=as_unprivileged())
    assert completed.returncode == 2 and "cannot write there" in completed.stderr
    assert (shared_tmp / "a.py").read_bytes() == LEGACY


def test_a_report_replaces_the_old_one_in_one_rename(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(LEGACY)
    report = tmp_path / "r.html"
    report.write_text("old")
    os.link(report, tmp_path / "old-link")  # a rename leaves the old inode (and this link) as it was
    assert cli("--check", tmp_path / "a.py", "--report", report).returncode == 1
    assert (tmp_path / "old-link").read_text() == "old" and "<html" in report.read_text()
    assert [path.name for path in tmp_path.iterdir() if path.name.endswith(".neuron-migrate")] == []


def _notebook(source: str, nbformat: int = 4) -> str:
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
    if nbformat == 3:
        return json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                           "worksheets": [{"cells": [{**cell, "input": source, "language": "python"}]}]})
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})


@pytest.mark.parametrize("text, reason", [
    (_notebook(LEGACY_CELL)[:-2], "not a valid notebook"),
    (_notebook(LEGACY_CELL, nbformat=3), "nbformat 4 expected"),
    (_notebook(LEGACY_CELL + "def broken(:\n"), "does not parse"),
], ids=["invalid-json", "nbformat-3", "cell-does-not-parse"])
def test_check_on_a_broken_notebook_is_an_error(tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / "nb.ipynb").write_text(text)
    completed = cli("--check", tmp_path, "--report", tmp_path / "r.json")
    assert completed.returncode == 1
    assert reason in completed.stdout and re.search(r"\b1 errors?\b", completed.stderr)
    assert json.loads((tmp_path / "r.json").read_text())["files"][0]["status"] == "error"


def test_check_on_a_valid_notebook_with_nothing_to_do_passes(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(_notebook("import torch\nprint(torch.ones(1))\n"))
    assert cli("--check", tmp_path).returncode == 0
