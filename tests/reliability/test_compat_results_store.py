"""neuron-compat results.jsonl under damage and under a changed resume: repair keeps every valid row and sets the
rest aside (and says so), and --resume never counts a row of other settings as done."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compat_matrix import store
from compat_matrix.rows import harness_row
from reports.compat.results import load_results

CLI = [str(Path(sys.executable).with_name("neuron-compat"))]


def _job(model_type, mode="eager", **settings):
    return {"model_type": model_type, "mode": mode, "device": "cpu", "backend": "aot_eager", "dtype": "float32",
            **settings}


def _line(model_type, **settings) -> str:
    return json.dumps(harness_row(_job(model_type, **settings), "crash", "worker died with SIGSEGV"), sort_keys=True)


def _resume(out: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "scan", "--mode", "eager", "--device", "cpu", "--out", str(out), "--resume",
                           "--no-progress", "--no-lowering", *argv], capture_output=True, text=True, timeout=120)


def test_repair_keeps_every_valid_row_and_sets_bad_lines_aside(tmp_path):
    out = tmp_path / "out"
    results = store.prepare(out)
    garbage = "this line is not a row {"
    foreign = json.dumps({"model_type": "llama", "mode": "eager"})  # JSON, but not a result row
    results.write_text(f"{_line('llama')}\n{garbage}\n{_line('gpt2')}\n{foreign}\n{_line('opt')}")  # no final newline
    moved, aside = store.repair(results)
    assert moved == 2 and aside == out / store.REJECTED
    assert aside.read_text().splitlines() == [garbage, foreign]
    assert [row["model_type"] for row in store.read_rows(results)] == ["llama", "gpt2", "opt"]
    assert results.read_text().endswith("\n")
    loaded = load_results(out)
    assert not loaded.errors and len(loaded.rows) == 3  # the gate and report accept the folder again
    assert store.repair(results) == (0, None)  # a clean file is left alone


def test_resume_says_what_it_set_aside_and_runs_nothing_done(tmp_path):
    out = tmp_path / "out"
    results = store.prepare(out)
    results.write_text(f"{_line('llama')}\nnot json\n{_line('gpt2')}")
    done = _resume(out, "--arch", "llama,gpt2")
    assert done.returncode == 0, done.stderr
    assert "1 line(s) that are not valid rows moved to" in done.stderr and store.REJECTED in done.stderr
    assert "2 already done" in done.stdout
    assert len(list(store.read_rows(results))) == 2


def test_resume_with_another_dtype_does_not_count_old_rows_as_done(tmp_path):
    out = tmp_path / "out"
    store.prepare(out).write_text(f"{_line('llama')}\n{_line('gpt2')}\n")
    done = _resume(out, "--arch", "llama,gpt2", "--dtype", "bfloat16")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and "already done" not in done.stdout
    assert "dtype 'float32' (asked 'bfloat16')" in lines[-1] and "--resume" in lines[-1]


def test_resume_with_a_checkpoint_over_tiny_model_rows(tmp_path):
    out = tmp_path / "out"
    store.prepare(out).write_text(f"{_line('gpt2')}\n")
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    done = _resume(out, "--model-path", str(checkpoint))
    assert done.returncode == 2 and "model_path None" in done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("settings", [{"device": "cuda"}, {"backend": "inductor", "mode": "compiled"}])
def test_run_key_tells_settings_apart(settings):
    from compat_matrix.schema import run_key

    mode = settings.pop("mode", "eager")
    assert run_key(_job("llama", mode)) != run_key(_job("llama", mode, **settings))
    # eager rows carry no compile backend: the backend is not part of an eager job's identity
    assert run_key(_job("llama", backend="inductor")) == run_key(_job("llama"))
