"""Tiny-config builder: role-based shrinking, overrides as data, eager forward on CPU."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from compat_matrix import registry, tiny_configs  # noqa: E402
from compat_matrix.checks.inputs import prompt_ids  # noqa: E402


@pytest.mark.parametrize("model_type", ["llama", "gpt2", "qwen3_moe", "mamba", "gemma3_text"])
def test_tiny_model_builds_and_runs(model_type):
    model = tiny_configs.build_tiny_model(model_type)
    assert tiny_configs.count_parameters(model) < 500_000
    ids = prompt_ids(model.config)
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    assert logits.shape[:2] == ids.shape and torch.isfinite(logits).all()


def test_kv_heads_keep_attention_class():
    assert tiny_configs.tiny_config("llama").num_key_value_heads == tiny_configs.TARGET_HEADS  # MHA stays MHA
    assert tiny_configs.tiny_config("mistral").num_key_value_heads == 2  # GQA (32/8) stays GQA
    assert tiny_configs.tiny_config("gpt_bigcode").multi_query is True  # MQA stays MQA
    assert tiny_configs._shrink_level({"hidden_size": 2048, "num_attention_heads": 8, "num_key_value_heads": 1},
                                      {"hidden_size", "num_attention_heads", "num_key_value_heads"})[
        "num_key_value_heads"] == 1


def test_per_head_dims_keep_their_ratio_and_derived_values_follow():
    config = tiny_configs.tiny_config("deepseek_v3")  # qk_nope 128 : qk_rope 64 : v 128 at head_dim 64 (hidden/heads 56)
    assert config.hidden_size == tiny_configs.TARGET_HIDDEN and config.num_attention_heads == tiny_configs.TARGET_HEADS
    assert config.qk_nope_head_dim == 2 * config.qk_rope_head_dim
    assert config.qk_head_dim == config.qk_nope_head_dim + config.qk_rope_head_dim  # derived by the config itself
    assert config.n_routed_experts == tiny_configs.TARGET_EXPERTS and config.num_experts_per_tok <= 2


def test_layer_lists_compacted_to_one_layer_of_each_kind():
    config = tiny_configs.tiny_config("gemma3_text")  # 5 sliding : 1 full
    assert sorted(config.layer_types) == ["full_attention", "sliding_attention"]
    assert config.num_hidden_layers == 2
    kimi = tiny_configs.tiny_config("kimi_linear")  # linear/full attention x dense/sparse MLP
    kinds = set(zip(kimi.layer_types, kimi.mlp_layer_types))
    assert len(kinds) == kimi.num_hidden_layers == 3


def test_special_tokens_remapped_below_the_vocabulary():
    config = tiny_configs.tiny_config("kimi_linear")  # pad/bos/eos around 163_584 by default
    ids = [config.pad_token_id, config.bos_token_id, config.eos_token_id]
    assert all(0 <= i < config.vocab_size for i in ids) and len(set(ids)) == 3


def test_overrides_are_data_with_reasons_and_few():
    data = tiny_configs.load_overrides()
    assert all(entry.get("reason") for entry in data.values())
    config_overrides = [mt for mt, entry in data.items() if entry.get("config")]
    assert len(config_overrides) < 10, config_overrides
    listed = {arch.model_type for arch in registry.shipped()}
    assert set(data) <= listed


def test_save_tiny_checkpoint_round_trips(tmp_path):
    from transformers import AutoModelForCausalLM

    path = tiny_configs.save_tiny_checkpoint("gpt2", tmp_path / "gpt2")
    loaded = AutoModelForCausalLM.from_pretrained(path)
    reference = tiny_configs.build_tiny_model("gpt2")
    ids = prompt_ids(reference.config)
    with torch.no_grad():
        assert torch.equal(loaded(input_ids=ids).logits, reference(input_ids=ids).logits)


def test_shipped_list_reads_at_run_time():
    top = registry.select(top=100)
    assert len(top) == 100 and top[0].model_type == "llama" and top[0].rank == 1
    assert registry.METHOD_NOTE.exists() and top[0].evidence
    with pytest.raises(registry.RegistryError):
        registry.select(arch=["not_a_model"])


@pytest.mark.slow
def test_all_top100_build_and_run_eager():
    failures = {}
    for arch in registry.select(top=100):
        try:
            model = tiny_configs.build_tiny_model(arch.model_type)
            assert tiny_configs.count_parameters(model) < 600_000
            with torch.no_grad():
                model(input_ids=prompt_ids(model.config))
        except Exception as exc:  # noqa: BLE001
            failures[arch.model_type] = repr(exc)[:200]
    assert not failures, failures
