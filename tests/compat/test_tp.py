"""Tensor-parallel mode: real 2-process gloo groups on tiny checkpoints (no mocks of torch or transformers).

Run: .venv/bin/pytest tests/compat/test_tp.py   (8 tests, ~30 s CPU: 40 s wall idle, 90 s on a loaded 2-core box)
"""

from __future__ import annotations

import os
import time

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from compat_matrix import schema  # noqa: E402
from compat_matrix.evidence import row_evidence  # noqa: E402
from compat_matrix.tp import probe_tp_plan, run_tp_job  # noqa: E402

TIMEOUT = 180.0


def _save(folder, model_type, **overrides):
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    config = AutoConfig.for_model(model_type, **overrides)
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    return str(folder)


def _llama(folder, kv_heads=2):
    return _save(folder, "llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=kv_heads, vocab_size=256, max_position_embeddings=128)


def _gpt2(folder):
    return _save(folder, "gpt2", n_embd=64, n_layer=2, n_head=4, vocab_size=256, n_positions=128,
                 bos_token_id=1, eos_token_id=2)


def _full_row(result, model_type):
    """The runner's bookkeeping fields + what run_tp_job measured must make a valid schema row."""
    row = {
        "schema_version": schema.SCHEMA_VERSION,
        "tool_version": "test",
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        **result,
    }
    row.setdefault("evidence", row_evidence(row["device"], row["status"]))  # the worker's part
    schema.check_row(row)
    assert row["mode"] == "tp" and row["model_type"] == model_type
    return row


def _job_processes(marker: str) -> list[int]:
    """Live processes whose command line mentions ``marker`` (the job's unique checkpoint folder)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def test_llama_shards_over_two_gloo_ranks_and_matches(tmp_path):
    model_dir = _llama(tmp_path / "llama")
    result = run_tp_job(model_dir, "llama", 2, "cpu", "float32", TIMEOUT)
    _full_row(result, "llama")
    tp = result["details"]["tp"]
    assert result["status"] == "pass", result
    assert result["verdict"] == "supported" and result["error"] is None
    assert tp["has_tp_plan"] is True and tp["plan_scope"] == "layers"
    assert tp["backend"] == "gloo" and tp["tp_size"] == 2
    assert tp["mesh"]["device_type"] == "cpu" and tp["mesh"]["shape"][-1] == 2
    # q/k/v/gate/up colwise + o/down rowwise in 2 layers, embeddings and head: 16 DTensor weights.
    assert tp["dtensor_params"] == 16
    assert "model.layers.*.self_attn.q_proj" in tp["sharded_modules"]
    assert tp["placements"]["model.layers.*.self_attn.o_proj"] == "S(1)"
    assert 0.45 < tp["local_param_fraction"] < 0.55
    parity = tp["parity"]
    assert parity["cache"] == "static" and parity["tokens_match"] is True
    assert parity["max_abs_diff"] <= parity["tolerance"] == 1e-4
    assert result["details"]["parity"] == parity
    assert {"load", "first_call", "total"} <= set(result["timings"])
    assert len(tp["peak_rss_mb"]) == 2 and result["peak_memory_mb"] > 0


def test_gpt2_has_no_plan_and_no_process_is_started(tmp_path):
    model_dir = _gpt2(tmp_path / "gpt2")
    start = time.monotonic()
    result = run_tp_job(model_dir, "gpt2", 2, "cpu", "float32", TIMEOUT)
    _full_row(result, "gpt2")
    assert result["status"] == "no_tp_plan" and result["verdict"] == "unsupported"
    assert "GPT2LMHeadModel" in result["error"] and "no `tp_plan`" in result["error"]
    tp = result["details"]["tp"]
    assert tp["has_tp_plan"] is False and tp["stage"] == "probe" and tp["launcher"] is None
    assert time.monotonic() - start < 30


def test_gpt2_real_sharded_load_agrees_with_the_probe(tmp_path):
    """The fast path is only a shortcut: a real 2-rank sharded load of gpt2 reaches the same verdict."""
    model_dir = _gpt2(tmp_path / "gpt2")
    result = run_tp_job(model_dir, "gpt2", 2, "cpu", "float32", TIMEOUT, probe=False)
    _full_row(result, "gpt2")
    assert result["status"] == "no_tp_plan", result
    assert "no `tp_plan`" in result["error"]
    tp = result["details"]["tp"]
    assert tp["plan_source"] == "loaded model" and tp["stage"] == "shard_load"
    # The unsharded reference ran fine on rank 0 before the sharded load was refused.
    assert "reference_generate" in tp["timings"]


def test_kv_heads_not_divisible_is_a_fail_shard_with_the_exact_error(tmp_path):
    model_dir = _llama(tmp_path / "llama_kv1", kv_heads=1)
    result = run_tp_job(model_dir, "llama", 2, "cpu", "float32", TIMEOUT)
    _full_row(result, "llama")
    tp = result["details"]["tp"]
    assert result["status"] == "fail_shard", result
    assert tp["not_divisible"] == ["num_key_value_heads=1"]
    assert tp["stage"] == "forward" and tp["dtensor_params"] > 0
    assert result["error"].startswith("RuntimeError: shape")
    assert "num_key_value_heads=1 not divisible by tp_size=2" in result["reasons"][0]


def test_timeout_kills_the_whole_group(tmp_path):
    model_dir = _llama(tmp_path / "llama_timeout")
    result = run_tp_job(model_dir, "llama", 2, "cpu", "float32", 2.0)
    _full_row(result, "llama")
    assert result["status"] == "timeout", result
    assert result["timings"]["total"] < 30
    time.sleep(0.5)
    assert _job_processes(model_dir) == []


def test_probe_reads_composite_and_partial_plans(tmp_path):
    from transformers import AutoConfig

    cases = {
        # composite config: the plan lives on text_config and reaches the model through its child
        "gemma3": ({"text_config": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                                    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                                    "vocab_size": 256}}, True, "layers"),
        # only `embed_tokens` (+ lm_head): decoder layers stay replicated
        "gpt_oss": ({"hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 4, "vocab_size": 256},
                    True, "embeddings_and_head"),
        "gpt2": ({"n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 256}, False, None),
    }
    for model_type, (overrides, has_plan, scope) in cases.items():
        folder = tmp_path / model_type
        AutoConfig.for_model(model_type, **overrides).save_pretrained(folder)
        probe = probe_tp_plan(str(folder), 2)
        assert probe["probe_error"] is None, (model_type, probe)
        assert probe["has_tp_plan"] is has_plan, (model_type, probe)
        assert probe["plan_scope"] == scope, (model_type, probe)


def test_bad_inputs_return_rows_instead_of_raising(tmp_path):
    missing = run_tp_job(str(tmp_path / "nothing"), "llama", 2, "cpu", "float32", 10)
    assert missing["status"] == "fail_load" and "config.json" in missing["error"]
    one = run_tp_job(str(tmp_path), "llama", 1, "cpu", "float32", 10)
    assert one["status"] == "skipped" and "at least 2" in one["reasons"][0]
    unknown = run_tp_job(str(tmp_path), "llama", 2, "tpu", "float32", 10)
    assert unknown["status"] == "skipped"
    for result in (missing, one, unknown):
        _full_row(result, "llama")


def test_killed_caller_takes_the_group_down(tmp_path):
    """The scan runner may SIGKILL the process that called run_tp_job; the group (own sessions) must not outlive it."""
    import signal
    import subprocess
    import sys

    model_dir = _llama(tmp_path / "llama_orphan")
    code = (
        "from compat_matrix.tp import run_tp_job\n"
        f"run_tp_job({model_dir!r}, 'llama', 2, 'cpu', 'float32', 300)\n"
    )
    # A SIGKILLed caller cannot remove its job folder (a few KB): keep it inside tmp_path.
    caller = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(tmp_path)})
    deadline = time.monotonic() + 60
    # Wait until the ranks exist (their command line names the checkpoint), then kill the caller only.
    while time.monotonic() < deadline and len([p for p in _job_processes(model_dir) if p != caller.pid]) < 3:
        time.sleep(0.2)
    assert len(_job_processes(model_dir)) >= 3, "the group never started"
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _job_processes(model_dir):
        time.sleep(0.5)
    assert _job_processes(model_dir) == []
