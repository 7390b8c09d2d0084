"""Verdicts that must be the model's, not the scanner's (issue 17, item 6): status precedence between a failed chunked
prefill and what the compiled fallback found, recompiles past Dynamo's recompile_limit with the remedy named, and the
generation step of every graph break. Tiny models from configs, CPU, stand-in backend."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from compat_matrix.checks.inputs import NEW_TOKENS  # noqa: E402
from compat_matrix.worker import run_job  # noqa: E402


def _compiled(model_type: str, **job) -> dict:
    return run_job({"model_type": model_type, "mode": "compiled", "device": "cpu", "backend": "aot_eager",
                    "dtype": "float32", "lowering": False, **job})


def _tiny_model(model_type: str, **config_values):
    import torch
    from transformers import AutoModelForCausalLM

    from compat_matrix.tiny_configs import tiny_config

    config = tiny_config(model_type)
    for key, value in config_values.items():
        setattr(config, key, value)
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(config).eval()


def test_a_failed_chunked_prefill_is_the_status_and_the_fallback_starts_from_a_clean_dynamo():
    # recurrent_gemma: chunked prefill fails (the recurrent block's output has no .cache), plain generate works and
    # recompiles on its sliding-window layer. The failure comes first; the recompiles stay visible.
    row = _compiled("recurrent_gemma")
    assert row["status"] == "fail_generate"
    assert row["reasons"][0].startswith("chunked prefill fails")
    assert row["verdict"] == "unsupported"  # the worse of fail_generate (partial) and the fallback's recompiles
    details = row["details"]
    assert any(note.startswith("plain-generate fallback: ") and "recompile" in note for note in details["notes"])
    # Without a Dynamo reset the fallback's first decode step hit the chunked attempt's prefill graph (guarded on 4
    # input ids) and was counted as a recompile.
    assert not any("input_ids" in reason for reason in details["recompile_reasons"])
    assert "prefill" not in details["graphs_by_step"]
    assert details["chunked_prefill_compile"]["graphs_by_step"] == {"prefill": 1}


def test_recompiles_past_the_limit_report_the_eager_fallback_and_the_remedy(tmp_path):
    # A mistral checkpoint with a sliding window (mistral-7b-v0.1 has 4096): one graph per decode step until Dynamo's
    # recompile_limit, then eager decoding.
    _tiny_model("mistral", sliding_window=4096).save_pretrained(tmp_path)
    row = _compiled("mistral", model_path=str(tmp_path))
    assert NEW_TOKENS - 1 > 8
    assert row["status"] == "recompiles" and row["verdict"] == "unsupported"
    limit = row["details"]["recompile_limit"]
    assert limit["limit"] == 8 and limit["decode_steps"] == NEW_TOKENS - 1 and limit["hit_at_step"] < NEW_TOKENS - 1
    reason = row["reasons"][0]
    assert "recompile_limit (8)" in reason and "eager decoding" in reason
    assert "sliding_window=None" in reason and "dynamic_sources = '.*cumulative_length_int'" in reason
    assert "(scanned sliding_window=4096)" in reason and row["details"]["scanned_config"]["sliding_window"] == 4096


def test_the_default_tiny_mistral_is_shaped_like_the_registry_checkpoint():
    # MistralConfig's class default is 4096 (v0.1); the registry's example checkpoint, Mistral-7B-Instruct-v0.2, has
    # no window. The choice is data with a reason (overrides.yaml), and the row names the value it scanned.
    from compat_matrix import registry
    from compat_matrix.tiny_configs import load_overrides, tiny_config

    assert registry.select(arch=["mistral"])[0].example_checkpoint == "mistralai/Mistral-7B-Instruct-v0.2"
    assert "Mistral-7B-Instruct-v0.2" in load_overrides()["mistral"]["reason"]
    assert tiny_config("mistral").sliding_window is None
    row = _compiled("mistral")
    assert row["details"]["scanned_config"]["sliding_window"] is None
    assert row["status"] == "pass" and row["details"]["recompiles"] == 0


_ONE_DECODE_GRAPH = """
import json, sys, torch
from transformers import AutoModelForCausalLM
from compat_matrix.tiny_configs import tiny_config
from compat_matrix.checks.compile import compiled_generate
from compat_matrix.checks.inputs import prompt_ids
config = tiny_config("mistral")
config.sliding_window = json.loads(sys.argv[1])
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(config).eval()
found = compiled_generate(model, prompt_ids(config), backend="aot_eager", fullgraph=False)["compile"]
print(json.dumps({k: found.get(k) for k in ("recompiles", "graphs_by_step", "recompile_limit")}))
"""


@pytest.mark.parametrize("sliding_window, dynamic_sources", [(None, ""), (4096, ".*cumulative_length_int")])
def test_each_named_remedy_compiles_one_decode_graph(sliding_window, dynamic_sources):
    # A subprocess: Dynamo reads dynamic_sources once and keeps it, so it would leak into the other tests' compiles.
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "TORCH_COMPILE_DYNAMIC_SOURCES": dynamic_sources}
    done = subprocess.run([sys.executable, "-c", _ONE_DECODE_GRAPH, json.dumps(sliding_window)], env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["recompiles"] == 0 and found["graphs_by_step"]["decode_1"] == 1
    assert found["recompile_limit"] is None


@pytest.mark.parametrize("model_type", ["opt", "biogpt"])
def test_graph_breaks_name_the_generation_step(model_type):
    # The first prefill chunk arrives without an attention mask: the breaks are in chunked prefill; decode is one graph.
    row = _compiled(model_type)
    assert row["status"] == "graph_breaks"
    breaks = row["details"]["graph_breaks"]
    assert breaks and all(b["steps"] == {"prefill": b["count"]} for b in breaks)
    assert row["details"]["graphs_by_step"]["decode_1"] == 1
    assert " in prefill: " in row["reasons"][0]


def _eager(model_type: str) -> dict:
    return run_job({"model_type": model_type, "mode": "eager", "device": "cpu", "backend": "aot_eager",
                    "dtype": "float32"})


def test_mpt_says_its_cache_is_disabled_by_config_and_the_named_fix_works():
    import torch

    from compat_matrix.checks.generate import cache_used
    from compat_matrix.checks.inputs import prompt_ids
    from compat_matrix.tiny_configs import build_tiny_model

    row = _eager("mpt")
    assert row["status"] == "no_static_cache"
    assert "cache disabled by config: MptConfig.use_cache=False" in row["reasons"][0]
    assert "shapes change every step" not in row["reasons"][0]
    model = build_tiny_model("mpt")
    ids = prompt_ids(model.config)
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=3, do_sample=False,
                             cache_implementation="static", use_cache=True, return_dict_in_generate=True,
                             disable_compile=True, pad_token_id=0)
    assert cache_used(out.past_key_values)["used"] == "StaticCache"


def test_rwkv_is_a_recurrent_state_not_growing_shapes():
    row = _eager("rwkv")
    assert row["status"] == "no_static_cache"
    assert "recurrent state of fixed size" in row["reasons"][0] and "does not auto-compile" in row["reasons"][0]
    assert "shapes change every step" not in row["reasons"][0]


@pytest.mark.parametrize("model_type", ["qwen3_5", "qwen3_5_moe"])
def test_mrope_sections_are_shrunk_with_the_head_dim(model_type):
    # The modeling code falls back to [11, 11, 10] (32 frequencies of the full head dim); the tiny head dim has 2.
    from compat_matrix.tiny_configs import tiny_config

    text = tiny_config(model_type).get_text_config()
    rope = text.rope_parameters
    frequencies = int(text.head_dim * rope.get("partial_rotary_factor", 1.0)) // 2
    assert sum(rope["mrope_section"]) == frequencies and len(rope["mrope_section"]) == 3


def test_qwen3_5_forward_lowers_once_its_mrope_section_fits():
    from compat_matrix.checks import lowering
    from compat_matrix.checks.inputs import prompt_ids
    from compat_matrix.tiny_configs import build_tiny_model

    if lowering.TORCH_MLIR is None:
        pytest.skip("torch-mlir is not installed")
    model = build_tiny_model("qwen3_5")
    result = lowering.check_lowering(model, prompt_ids(model.config), decode_step=False)
    assert result["status"] == "lowered", result["reason"]


@pytest.mark.parametrize("model_type", ["mixtral", "qwen3_moe"])
def test_moe_rows_say_histc_is_the_default_experts_path_and_name_the_setting_that_lowers(model_type):
    from compat_matrix.checks import lowering

    if lowering.TORCH_MLIR is None:
        pytest.skip("torch-mlir is not installed")
    row = _compiled(model_type, lowering=True)
    proxy = row["details"]["lowering"]
    assert proxy["failed_ops"] == ["aten::histc"] and proxy["outcome"] == "inconclusive"
    alternative = proxy["experts_alternative"]
    assert alternative["status"] == "lowered" and alternative["max_abs_logit_diff"] < 1e-5
    note = next(n for n in row["details"]["notes"] if n.startswith("aten::histc comes from"))
    assert "experts_implementation='grouped_mm'" in note and "experts_implementation='batched_mm'" in note


def test_every_known_failure_has_a_standalone_reproduction_that_still_reproduces():
    import json
    import subprocess
    import sys
    from pathlib import Path

    from compat_matrix.tiny_configs import load_overrides

    script = Path(__file__).resolve().parents[2] / "docs" / "known-failures" / "reproduce.py"
    known = {name: entry["known_failure"] for name, entry in load_overrides().items() if entry.get("known_failure")}
    assert known
    for name, entry in known.items():
        assert entry["reproduction"] == f"docs/known-failures/reproduce.py {name}"
    done = subprocess.run([sys.executable, str(script), *known], capture_output=True, text=True, timeout=300)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert {r["model_type"] for r in results} == set(known)
    assert done.returncode == 0, [r for r in results if not r["reproduces"]]
