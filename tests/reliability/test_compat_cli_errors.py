"""neuron-compat command lines that used to start the wrong work or print a traceback: each is one line and an
exit status, and nothing is written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compat_matrix import store
from compat_matrix.rows import harness_row

CLI = [str(Path(sys.executable).with_name("neuron-compat"))]


def _results(tmp_path: Path) -> Path:
    out = tmp_path / "scan"
    row = harness_row({"model_type": "llama", "mode": "eager", "device": "cpu", "backend": "aot_eager",
                       "dtype": "float32"}, "crash", "worker died with SIGSEGV")
    store.prepare(out).write_text(json.dumps(row) + "\n")
    return out


def _one_line_error(done: subprocess.CompletedProcess, status: int, text: str) -> None:
    assert done.returncode == status, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0] and "Traceback" not in done.stderr


@pytest.mark.parametrize("value", [",", "", " , "])
def test_an_empty_arch_list_is_an_error_not_the_whole_list(tmp_path, value):
    out = tmp_path / "out"
    done = subprocess.run([*CLI, "scan", "--arch", value, "--device", "cpu", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=60)
    _one_line_error(done, 2, "names no architecture")
    assert not (out / "results.jsonl").exists()


@pytest.mark.parametrize("command", ["report", "baseline"])
def test_output_that_is_a_folder(tmp_path, command):
    folder = tmp_path / ("report.html" if command == "report" else "baseline")
    folder.mkdir()
    done = subprocess.run([*CLI, command, str(_results(tmp_path)), "-o", str(folder)], capture_output=True,
                          text=True, timeout=60)
    _one_line_error(done, 1, "is a folder")
    assert list(folder.iterdir()) == []


def test_output_below_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = subprocess.run([*CLI, "merge", str(_results(tmp_path)), "-o", str(blocker / "merged")],
                          capture_output=True, text=True, timeout=60)
    _one_line_error(done, 1, "is not a folder")
