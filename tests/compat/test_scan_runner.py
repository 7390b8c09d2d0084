"""The runner: reusable workers, crash / hang / exception isolation, resume after kill, the CLI's bad-input contract,
and the seams to the lowering check and tensor-parallel mode. Tiny models, CPU, offline."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from compat_matrix import registry, store, worker  # noqa: E402
from compat_matrix.runner import ScanOptions, run_scan  # noqa: E402
from compat_matrix.schema import check_row  # noqa: E402

CLI = [str(Path(sys.executable).with_name("neuron-compat"))]


def _archs(*names):
    return registry.select(arch=list(names))


def _options(out, **kw):
    base = dict(out=str(out), modes=("eager",), device="cpu", backend="aot_eager", dtype="float32", jobs=2,
                timeout=120.0, lowering=False)
    base.update(kw)
    return ScanOptions(**base)


def test_crash_hang_and_exception_become_rows_and_the_rest_survives(tmp_path):
    inject = "gpt2:eager:crash,opt:eager:hang,gpt_neox:eager:raise"
    options = _options(tmp_path, timeout=20.0, extra_env={worker.INJECT_ENV: inject})
    result = run_scan(_archs("gpt2", "opt", "gpt_neox", "llama"), options)
    rows = {row["model_type"]: row for row in store.read_rows(store.results_path(tmp_path))}
    assert len(rows) == 4 and len(result.rows) == 4
    assert rows["gpt2"]["status"] == "crash" and "SIGSEGV" in rows["gpt2"]["error"]
    assert rows["opt"]["status"] == "timeout"
    assert rows["gpt_neox"]["status"] == "fail_forward" and "injected" in rows["gpt_neox"]["error"]
    assert rows["llama"]["status"] == "pass" and rows["llama"]["verdict"] == "supported"
    llama = rows["llama"]
    for key in ("load", "first_call", "steady_decode_step", "total"):
        assert key in llama["timings"]
    assert llama["details"]["parity"]["forward"]["ok"] and llama["details"]["cache"]["used"] == "StaticCache"
    assert llama["versions"]["torch"] and llama["tool_version"] and llama["backend"] is None
    assert llama["reasons"] == []  # nothing decided against it; evidence lives in the notes
    assert any("generation loop" in note and "argmax" in note for note in llama["details"]["notes"])
    for row in rows.values():
        check_row(row)
        assert row["device"] == "cpu" and row["dtype"] == "float32" and row["verdict"]


def test_no_static_cache_is_detected_not_passed(tmp_path):
    from compat_matrix.worker import run_job

    row = run_job({"model_type": "rwkv", "mode": "eager", "device": "cpu", "backend": "aot_eager", "dtype": "float32"})
    assert row["status"] == "no_static_cache" and row["verdict"] == "partial"
    assert row["details"]["cache"]["requested"] == "static" and row["details"]["cache"]["used"] != "StaticCache"


def test_compiled_mode_counts_graphs_and_the_lowering_seam(monkeypatch):
    from compat_matrix.worker import run_job

    seen = {}

    def fake_lowering(model, input_ids):  # the seam's contract; the real check has its own tests
        seen["shape"] = tuple(input_ids.shape)
        return {"status": "failed", "failed_ops": [seen["op"]], "reason": "illegal op", "seconds": 0.01,
                "op_histogram": {}}

    import compat_matrix.checks.lowering as lowering

    monkeypatch.setattr(lowering, "check_lowering", fake_lowering)
    job = {"model_type": "gpt2", "mode": "compiled", "device": "cpu", "backend": "aot_eager", "dtype": "float32"}
    seen["op"] = "aten::_fft_r2c"  # not in TorchNeuron's op list: a predicted failure, named
    row = run_job(job)
    details = row["details"]
    assert row["backend"] == "aot_eager"
    assert details["graphs"] >= 2 and details["recompiles"] == 0 and details["graphs_by_step"]["decode_1"] == 1
    assert details["parity"]["generate"]["tokens_match"]
    assert row["status"] == "fail_lowering" and row["verdict"] == "partial" and seen["shape"][0] == 1
    assert row["evidence"] == "proxy" and "predicted" in row["reasons"][0] and "aten::_fft_r2c" in row["reasons"][0]
    assert details["lowering"]["outcome"] == "predicted_failure" and details["lowering"]["failed_ops"] == ["aten::_fft_r2c"]
    seen["op"] = "aten::histc"  # TorchNeuron implements it: the proxy is inconclusive and the row stands
    row = run_job(job)
    assert row["status"] == "pass" and row["verdict"] == "supported" and row["evidence"] == "stand-in"
    assert row["details"]["lowering"]["outcome"] == "inconclusive"
    assert any("inconclusive" in note and "aten::histc" in note for note in row["details"]["notes"])
    row = run_job({**job, "lowering": False})
    assert row["status"] == "pass" and "lowering" not in row["details"]


def test_tp_mode_calls_the_tp_seam(monkeypatch):
    import compat_matrix.tp as tp
    from compat_matrix.worker import run_job

    calls = []

    def fake_run_tp_job(model_dir, model_type, tp_size, device, dtype, timeout):
        calls.append((Path(model_dir, "config.json").is_file(), model_type, tp_size, device, dtype, timeout > 0))
        return {"status": "no_tp_plan", "verdict": "partial", "reasons": ["no plan"], "error": None,
                "timings": {"probe": 0.1}, "details": {"tp": {"tp_size": tp_size, "has_tp_plan": False}}}

    monkeypatch.setattr(tp, "run_tp_job", fake_run_tp_job)
    row = run_job({"model_type": "gpt2", "mode": "tp", "device": "cpu", "backend": "aot_eager", "dtype": "float32",
                   "tp_size": 4, "timeout": 60})
    assert calls == [(True, "gpt2", 4, "cpu", "float32", True)]
    assert row["status"] == "no_tp_plan" and row["details"]["tp"]["tp_size"] == 4
    check_row(row)


def test_resume_after_kill_has_no_lost_or_duplicated_rows(tmp_path):
    out = tmp_path / "out"
    args = [*CLI, "scan", "--arch", "llama,gpt2,opt", "--mode", "eager", "--jobs", "1", "--out", str(out),
            "--no-progress", "--no-lowering"]
    # opt hangs in the first run, so the kill always lands before the last row (tiny jobs can all finish
    # between two polls otherwise); the resumed run has no injection
    env = {**os.environ, worker.INJECT_ENV: "opt:eager:hang"}
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (results.exists() and results.read_text().count("\n") >= 1):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the runner; its worker is in its own session and exits on EOF
    proc.wait()
    with results.open("a") as handle:
        handle.write('{"model_type": "opt", "mode": "eag')  # torn last line
    before = {(r["model_type"], r["mode"]) for r in store.read_rows(results)}
    assert 1 <= len(before) < 3
    done = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr
    keys = [(r["model_type"], r["mode"]) for r in store.read_rows(results)]
    assert Counter(keys) == Counter({(m, "eager"): 1 for m in ("llama", "gpt2", "opt")})
    for line in results.read_text().splitlines():
        json.loads(line)  # the torn line is gone
    summary = json.loads((out / "scan-summary.json").read_text())
    assert summary["already_done"] == len(before) and summary["jobs_run"] == 3 - len(before)


@pytest.mark.parametrize("argv, message", [
    (["--arch", "llama,not_a_model"], "unknown architecture not_a_model"),
    (["--shard", "5/4"], "bad --shard"),
    (["--shard", "x"], "bad --shard"),
    (["--mode", "eager,fast"], "bad --mode"),
    (["--dtype", "int3"], "unknown dtype"),
    (["--backend", "nope", "--arch", "llama"], "unknown compile backend"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, argv, message):
    done = subprocess.run([*CLI, "scan", *argv, "--out", str(tmp_path / "o")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr


def test_unwritable_out_and_existing_results(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = subprocess.run([*CLI, "scan", "--arch", "llama", "--out", str(blocker / "out")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "not writable" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "results.jsonl").write_text('{"x": 1}\n')
    done = subprocess.run([*CLI, "scan", "--arch", "llama", "--out", str(tmp_path / "o")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "--resume" in done.stderr


def test_list():
    done = subprocess.run([*CLI, "scan", "--list"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert "llama" in done.stdout and "mimo_v2_flash" in done.stdout and "known upstream failure" in done.stdout


def test_local_checkpoint_via_model_path(tmp_path):
    from compat_matrix.tiny_configs import save_tiny_checkpoint

    folder = save_tiny_checkpoint("gpt2", tmp_path / "ckpt")
    out = tmp_path / "out"
    done = subprocess.run([*CLI, "scan", "--model-path", folder, "--mode", "eager", "--out", str(out),
                           "--no-progress", "--jobs", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (row,) = list(store.read_rows(out / "results.jsonl"))
    assert row["model_type"] == "gpt2" and row["model_path"] == str(Path(folder).resolve())
    assert row["status"] == "pass" and row["details"]["parity"]["generate"]["tokens_match"]
