"""Tiny random models for any causal-LM ``model_type``, built offline from the type's default config.

The builder shrinks the default config *by role*, and passes only the config's real (dataclass) fields to
``AutoConfig.for_model(model_type, **overrides)`` so the config class derives every dependent value itself:

* hidden size and attention heads are fixed (``TARGET_HIDDEN`` / ``TARGET_HEADS``);
* key/value heads keep the attention class (MHA stays MHA, MQA stays MQA, GQA becomes 2 kv heads);
* per-head dims (``head_dim``, ``qk_rope_head_dim``, ``v_head_dim``, linear-attention head dims ...) keep their ratio to
  the default head dim; FFN/expert/LoRA-rank sizes keep their ratio to the default hidden size;
* state-space blocks keep ``heads * head_dim == expand * hidden``; other head families (SSM, linear attention,
  indexers) keep their ratio to the attention heads;
* experts shrink to ``TARGET_EXPERTS`` with at most ``TARGET_TOPK`` per token;
* per-layer lists (``layer_types``, ``mlp_layer_types``, index lists, ``first_k_dense_replace`` ...) are compacted to
  one layer of each kind, and the layer count follows;
* special-token ids above the new vocabulary are remapped below it, consistently across sub-configs;
* sub-configs of multimodal models (``text_config``, ``vision_config`` ...) are shrunk the same way.

What the rules cannot express lives in ``data/overrides.yaml`` (one entry per architecture, each with a reason).

Public entry points: :func:`tiny_config`, :func:`build_tiny_model`, :func:`save_tiny_checkpoint`.
"""

from __future__ import annotations

import dataclasses
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence, TypeGuard

TARGET_HIDDEN = 64
TARGET_HEADS = 4
TARGET_HEAD_DIM = TARGET_HIDDEN // TARGET_HEADS
TARGET_VOCAB = 512
TARGET_EXPERTS = 4
TARGET_TOPK = 2
MIN_LAYERS = 1
MAX_SSM_STATE = 16

OVERRIDES_PATH = Path(__file__).with_name("data") / "overrides.yaml"

# --- roles, by field name --------------------------------------------------------------------------------------------
HIDDEN_KEYS = (
    "hidden_size",
    "n_embd",
    "d_model",
    "n_embed",
    "embed_dim",
    "model_dim",
    "hidden_dim",
    "dim",
)
HEAD_KEYS = (
    "num_attention_heads",
    "n_head",
    "n_heads",
    "num_heads",
    "attention_heads",
    "encoder_attention_heads",
    "decoder_attention_heads",
)
KV_HEAD_KEYS = (
    "num_key_value_heads",
    "n_kv_heads",
    "num_kv_heads",
    "n_head_kv",
    "multi_query_group_num",
)
LAYER_KEYS = (
    "num_hidden_layers",
    "n_layer",
    "n_layers",
    "num_layers",
    "decoder_layers",
    "encoder_layers",
    "depth",
)
# Sizes that scale with the hidden size (FFN, expert FFN, low-rank projections, recurrent widths).
HIDDEN_RATIO_KEYS = (
    "intermediate_size",
    "moe_intermediate_size",
    "shared_expert_intermediate_size",
    "shared_intermediate_size",
    "moe_shared_expert_intermediate_size",
    "ffn_dim",
    "encoder_ffn_dim",
    "decoder_ffn_dim",
    "n_inner",
    "d_inner",
    "ffn_hidden_size",
    "feed_forward_size",
    "intermediate_size_mlp",
    "lru_width",
    "attention_hidden_size",
    "kv_lora_rank",
    "q_lora_rank",
    "word_embed_proj_dim",
    "hidden_size_per_layer_input",
    "moe_latent_size",
    "mamba_d_ssm",
    "adapter_rank",
    "dense_intermediate_size",
    "expert_intermediate_size",
)
# Per-head sizes that keep their ratio to the default head dim.
HEAD_DIM_KEYS = (
    "head_dim",
    "d_head",
    "attention_head_size",
    "attention_head_dim",
    "kv_channels",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "v_head_dim",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_head_dim",
    "index_head_dim",
    "rotary_dim",
    "global_head_dim",
    "rope_head_dim",
)
# State-space (Mamba-style) blocks: heads, per-head dim, expansion, state.
SSM_HEAD_KEYS = (
    "mamba_n_heads",
    "mamba_num_heads",
    "n_mamba_heads",
)
SSM_HEAD_DIM_KEYS = (
    "mamba_d_head",
    "mamba_head_dim",
    "mamba_headdim",
)
SSM_EXPAND_KEYS = ("mamba_expand", "expand")
SSM_STATE_KEYS = (
    "state_size",
    "ssm_state_size",
    "mamba_d_state",
    "d_state",
)
SSM_GROUP_KEYS = (
    "n_groups",
    "mamba_n_groups",
    "mamba_ngroups",
)
SSM_RANK_KEYS = (
    "time_step_rank",
    "mamba_dt_rank",
)
# Other head families (linear attention, indexers): ratio to the attention heads.
OTHER_HEAD_KEYS = (
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_num_heads",
    "index_n_heads",
)
EXPERT_KEYS = (
    "num_experts",
    "num_local_experts",
    "n_routed_experts",
    "moe_num_experts",
)
TOPK_KEYS = (
    "num_experts_per_tok",
    "moe_k",
    "num_experts_per_token",
    "top_k_experts",
    "moe_topk",
)
SHARED_EXPERT_KEYS = (
    "n_shared_experts",
    "num_shared_experts",
    "moe_num_shared_experts",
)
EXPERT_GROUP_KEYS = (
    "n_group",
    "num_expert_group",
)
VOCAB_KEYS = (
    "vocab_size",
    "vocab_size_per_layer_input",
)
# Scalars that place MoE/dense layers by index: rewritten after compaction.
DENSE_PREFIX_KEYS = ("first_k_dense_replace", "num_dense_layers")
# Layer-kind lists whose entries are per layer (compacted), and lists of layer indices (remapped).
INDEX_LIST_KEYS = (
    "mlp_only_layers",
    "moe_layers",
    "full_attn_idxs",
    "attn_layer_indices",
    "hybrid_layer_ids",
)
SKIP_KEYS = (
    "id2label",
    "label2id",
    "architectures",
    "transformers_version",
    "dtype",
    "torch_dtype",
)


class TinyConfigError(RuntimeError):
    """The tiny config for a model type could not be built."""


# --- overrides data ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def load_overrides(path: str | None = None) -> dict[str, dict[str, Any]]:
    """Per-architecture quirks: ``{model_type: {"config": {...}, "reason": str, "known_failure": {...}}}``."""
    from ruamel.yaml import YAML

    source = Path(path) if path else OVERRIDES_PATH
    if not source.exists():
        return {}
    data = YAML(typ="safe").load(source.read_text()) or {}
    for model_type, entry in data.items():
        if not isinstance(entry, dict) or not entry.get("reason"):
            raise TinyConfigError(f"{source}: override for {model_type!r} needs a 'reason'")
    return data


# --- helpers --------------------------------------------------------------------------------------------------
def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _round_to(value: float, multiple: int, minimum: int) -> int:
    return max(minimum, int(round(value / multiple)) * multiple)


def _field_names(config_class: type[Any]) -> set[str]:
    if dataclasses.is_dataclass(config_class):
        return {field.name for field in dataclasses.fields(config_class)}
    import inspect

    return set(inspect.signature(config_class.__init__).parameters) - {"self", "kwargs"}


def _as_dict(config: Any) -> dict[str, Any]:
    """Field values of a config object (dataclass fields, their attribute-map aliases, and ``model_type``)."""
    if config is None:
        return {}
    if isinstance(config, dict):
        return dict(config)
    values = {key: value for key, value in vars(config).items() if not key.startswith("_")}
    for name in _field_names(type(config)) | set(getattr(config, "attribute_map", {}) or {}):
        try:
            values[name] = getattr(config, name)
        except Exception:  # noqa: BLE001 - e.g. gemma4 refuses global reads of per-layer attributes
            pass
    values["model_type"] = getattr(config, "model_type", None)
    return values


def _to_fields(out: dict[str, Any], fields: set[str], attribute_map: dict[str, str]) -> dict[str, Any]:
    """Keep keys that are real fields; translate attribute-map aliases to the field they stand for."""
    reverse = {real: alias for alias, real in attribute_map.items()}
    kept: dict[str, Any] = {}
    for key, value in out.items():
        for name in (key, attribute_map.get(key), reverse.get(key)):
            if name and name in fields:
                kept.setdefault(name, value)
                break
    return kept


def _per_layer_lists(values: dict[str, Any], num_layers: int) -> dict[str, list]:
    """Fields that hold one entry per layer."""
    found = {}
    for key, value in values.items():
        if key in SKIP_KEYS or key in INDEX_LIST_KEYS or not isinstance(value, (list, tuple)):
            continue
        if any(isinstance(v, (list, dict)) for v in value) or num_layers <= 1 or not value:
            continue
        if len(value) == num_layers:
            found[key] = list(value)
        elif len(value) < num_layers and key.endswith("types") and all(isinstance(v, str) for v in value):
            # A cycled pattern (e.g. recurrent_gemma block_types = [recurrent, recurrent, attention]).
            found[key] = [value[i % len(value)] for i in range(num_layers)]
    return found


def _layer_plan(values: dict[str, Any], num_layers: int, layer_key: str) -> tuple[list[int], dict[str, Any]]:
    """Choose one layer of each kind; return the chosen default-layer indices and the rewritten layer fields."""
    lists = _per_layer_lists(values, num_layers)
    index_lists = {
        key: list(values[key])
        for key in INDEX_LIST_KEYS
        if isinstance(values.get(key), (list, tuple)) and all(_is_int(v) for v in values[key])
    }
    dense_prefix = {key: values[key] for key in DENSE_PREFIX_KEYS if _is_int(values.get(key))}
    sparse_step = values.get("decoder_sparse_step") if _is_int(values.get("decoder_sparse_step")) else None

    def signature(i: int) -> tuple:
        sig: list[Any] = [lists[key][i] for key in sorted(lists)]
        sig += [i in index_lists[key] for key in sorted(index_lists)]
        sig += [i < dense_prefix[key] for key in sorted(dense_prefix)]
        if sparse_step and sparse_step > 1:
            sig.append((i + 1) % sparse_step == 0)
        return tuple(sig)

    chosen: list[int] = []
    seen: set[tuple] = set()
    for i in range(num_layers):
        sig = signature(i)
        if sig not in seen:
            seen.add(sig)
            chosen.append(i)
    # One layer of each kind (MIN_LAYERS raises the floor for homogeneous stacks if ever needed).
    extra = [i for i in range(num_layers) if i not in chosen]
    while len(chosen) < min(MIN_LAYERS, num_layers) and extra:
        chosen.append(extra.pop(0))
    chosen.sort()
    out: dict[str, Any] = {layer_key: len(chosen)}
    for key, full in lists.items():
        out[key] = [full[i] for i in chosen]
    for key, members in index_lists.items():
        out[key] = [new for new, old in enumerate(chosen) if old in members]
    for key, k in dense_prefix.items():
        out[key] = sum(1 for old in chosen if old < k)
    if sparse_step and sparse_step > 1:
        # Rebuild a step that reproduces the chosen sparse/dense pattern when possible.
        pattern = [(old + 1) % sparse_step == 0 for old in chosen]
        for step in range(1, len(chosen) + 2):
            if [(new + 1) % step == 0 for new in range(len(chosen))] == pattern:
                out["decoder_sparse_step"] = step
                break
    return chosen, out


def _shrink_level(
    values: dict[str, Any], fields: set[str], parent_hidden: int | None = None, attribute_map: dict | None = None
) -> dict[str, Any]:
    """Shrunk values for one (sub-)config level, real fields only."""
    out: dict[str, Any] = {}
    hidden_key = next((k for k in HIDDEN_KEYS if _is_int(values.get(k))), None)
    hidden = values.get(hidden_key) if hidden_key else None
    heads_key = next((k for k in HEAD_KEYS if _is_int(values.get(k))), None)
    heads = values.get(heads_key) if heads_key else None

    if hidden_key:
        out[hidden_key] = TARGET_HIDDEN
    for key in HEAD_KEYS:
        if _is_int(values.get(key)):
            out[key] = TARGET_HEADS
    new_heads = TARGET_HEADS
    ref_head_dim = values.get("head_dim") if _is_int(values.get("head_dim")) else None
    if ref_head_dim is None and hidden and heads:
        ref_head_dim = hidden / heads
    for key in KV_HEAD_KEYS:
        kv = values.get(key)
        if _is_int(kv) and heads:
            out[key] = new_heads if kv >= heads else (1 if kv == 1 else 2)
        elif kv is None and key in fields and heads:
            out[key] = new_heads  # None means "same as attention heads" (MHA) in every config that has it
    if "head_dim" in fields and values.get("head_dim") is None and heads and hidden:
        out["head_dim"] = TARGET_HEAD_DIM  # some defaults leave it None and the model divides by it
    if hidden:
        for key in HIDDEN_RATIO_KEYS:
            v = values.get(key)
            if _is_int(v) and v > 0:
                out[key] = _round_to(v / hidden * TARGET_HIDDEN, 8, 8)
        for key in SSM_RANK_KEYS:
            v = values.get(key)
            if _is_int(v) and v > 0:
                out[key] = max(1, math.ceil(v / hidden * TARGET_HIDDEN))
        if parent_hidden and _is_int(values.get("out_hidden_size")):
            out["out_hidden_size"] = TARGET_HIDDEN  # projector output feeds the text model
        if _is_int(values.get("input_size")) and parent_hidden:
            out["input_size"] = TARGET_HIDDEN  # e.g. moshi depth decoder reads the main decoder's hidden states
    if ref_head_dim:
        for key in HEAD_DIM_KEYS:
            v = values.get(key)
            if _is_int(v) and v > 0:
                out[key] = _round_to(v / ref_head_dim * TARGET_HEAD_DIM, 4, 4)
    if heads:
        for key in OTHER_HEAD_KEYS:
            v = values.get(key)
            if _is_int(v) and v > 0:
                out[key] = min(16, max(1, round(v / heads * new_heads)))
    # State-space blocks.
    ssm_heads_key = next((k for k in SSM_HEAD_KEYS if _is_int(values.get(k))), None)
    if ssm_heads_key is None and values.get("model_type") in ("mamba2",) and _is_int(values.get("num_heads")):
        ssm_heads_key = "num_heads"
    if ssm_heads_key and hidden:
        expand = next((values[k] for k in SSM_EXPAND_KEYS if isinstance(values.get(k), (int, float))), 2)
        inner = out.get("mamba_d_ssm") or int(expand * TARGET_HIDDEN)
        ssm_heads = values[ssm_heads_key]
        base = heads or ssm_heads
        if ssm_heads_key == "num_heads":
            new_ssm_heads = TARGET_HEADS
        else:
            new_ssm_heads = min(8, max(2, round(ssm_heads / base * new_heads)))
        while inner % new_ssm_heads:
            new_ssm_heads -= 1
        out[ssm_heads_key] = new_ssm_heads
        for key in SSM_HEAD_DIM_KEYS + (("head_dim",) if ssm_heads_key == "num_heads" else ()):
            if _is_int(values.get(key)):
                out[key] = inner // new_ssm_heads
        for key in SSM_GROUP_KEYS:
            v = values.get(key)
            if _is_int(v) and v > 0:
                groups = min(v, 2)
                while new_ssm_heads % groups:
                    groups -= 1
                out[key] = groups
    for key in SSM_STATE_KEYS:
        v = values.get(key)
        if _is_int(v) and v > MAX_SSM_STATE:
            out[key] = MAX_SSM_STATE
    # Experts.
    for key in EXPERT_KEYS:
        v = values.get(key)
        if _is_int(v) and v > TARGET_EXPERTS:
            out[key] = TARGET_EXPERTS
    for key in TOPK_KEYS:
        v = values.get(key)
        if _is_int(v) and v > TARGET_TOPK:
            out[key] = TARGET_TOPK
    for key in SHARED_EXPERT_KEYS:
        v = values.get(key)
        if _is_int(v) and v > 1:
            out[key] = 1
    expert_groups = next((values[k] for k in EXPERT_GROUP_KEYS if _is_int(values.get(k))), None)
    if expert_groups and expert_groups > 1:
        for key in EXPERT_GROUP_KEYS:
            if _is_int(values.get(key)):
                out[key] = 2
        if _is_int(values.get("topk_group")):
            out["topk_group"] = 1
    # MoE fields some defaults leave None although the model indexes them (deepseek_v2 top-k, dots1 experts).
    moe_sized = _is_int(values.get("moe_intermediate_size"))
    for key in EXPERT_KEYS:
        if moe_sized and key in fields and values.get(key, 0) is None:
            out[key] = TARGET_EXPERTS
    has_experts = any(_is_int(values.get(k)) and values[k] > 0 for k in EXPERT_KEYS) or any(
        k in out for k in EXPERT_KEYS
    )
    for key in TOPK_KEYS:
        if has_experts and key in fields and values.get(key, 0) is None:
            out[key] = TARGET_TOPK
    for key in SHARED_EXPERT_KEYS:
        if has_experts and moe_sized and key in fields and values.get(key, 0) is None:
            out[key] = 1
    # Encoder types used as causal LMs (bert, roberta, reformer ...) only run causally with is_decoder=True.
    if "is_decoder" in fields and values.get("is_decoder") is False:
        out["is_decoder"] = True
    # Vocabulary.
    for key in VOCAB_KEYS:
        v = values.get(key)
        if _is_int(v) and v > TARGET_VOCAB:
            out[key] = TARGET_VOCAB
    # Layers: one of each kind.
    layer_key = next((k for k in LAYER_KEYS if _is_int(values.get(k))), None)
    if layer_key:
        _, layer_fields = _layer_plan(values, values[layer_key], layer_key)
        out.update(layer_fields)
        for key in LAYER_KEYS:  # encoder/decoder stacks of the same model get the same count
            if key != layer_key and _is_int(values.get(key)) and values[key] == values[layer_key]:
                out[key] = layer_fields[layer_key]
    return _to_fields(out, fields, attribute_map or {})


def _collect_token_ids(values: Any, found: set[int]) -> None:
    if isinstance(values, dict):
        for key, value in values.items():
            if not isinstance(key, str) or key in SKIP_KEYS:
                continue
            if key.endswith(("token_id", "token_index", "token_ids")):
                if _is_int(value):
                    found.add(value)
                elif isinstance(value, (list, tuple)):
                    found.update(v for v in value if _is_int(v))
            elif isinstance(value, dict):
                _collect_token_ids(value, found)


def _token_remap(ids: set[int], vocab: int) -> dict[int, int]:
    """Map ids >= vocab to distinct free ids counted down from the top of the new vocabulary."""
    taken = {i for i in ids if 0 <= i < vocab}
    mapping: dict[int, int] = {}
    slot = vocab - 1
    for old in sorted(i for i in ids if i >= vocab):
        while slot in taken:
            slot -= 1
        mapping[old] = slot
        taken.add(slot)
        slot -= 1
    return mapping


def _apply_token_remap(
    values: dict[str, Any], full: dict[str, Any], mapping: dict[int, int], fields: set[str], out: dict[str, Any]
) -> None:
    for key, value in full.items():
        if key not in fields or not key.endswith(("token_id", "token_index", "token_ids")):
            continue
        if _is_int(value) and value in mapping:
            out[key] = mapping[value]
        elif isinstance(value, (list, tuple)) and any(_is_int(v) and v in mapping for v in value):
            out[key] = [mapping.get(v, v) if _is_int(v) else v for v in value]


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _split(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` split in proportion to ``weights`` (largest remainder), so the parts still sum to ``total``."""
    scale = sum(weights) or 1
    raw = [w / scale * total for w in weights]
    parts = [int(x) for x in raw]
    for i in sorted(range(len(raw)), key=lambda i: parts[i] - raw[i])[: total - sum(parts)]:
        parts[i] += 1
    return parts


def _scale_mrope_section(values: dict[str, Any], out: dict[str, Any], config_class: type) -> None:
    """Multimodal RoPE splits the rotary frequencies into (temporal, height, width) sections that must sum to the
    number of frequencies. Left at the checkpoint's value over a shrunk head dim they index past it (qwen3_5's
    [11, 11, 10] over 2 frequencies); scaled with the head dim, the model computes what the full-size one does.
    Applies where the config carries ``mrope_section`` or its class declares the key (the model code then reads its
    own default: :func:`_model_code_mrope_default`)."""
    rope_key = next((k for k in ("rope_parameters", "rope_scaling") if isinstance(values.get(k), dict)), None)
    if rope_key is None:
        return
    rope = values[rope_key]
    declared = "mrope_section" in (getattr(config_class, "ignore_keys_at_rope_validation", None) or ())
    if not (isinstance(rope.get("mrope_section"), list) or declared):
        return
    hidden = next((values[k] for k in HIDDEN_KEYS if _is_int(values.get(k))), None)
    heads = next((values[k] for k in HEAD_KEYS if _is_int(values.get(k))), None)
    head_dim = out.get("head_dim") or (TARGET_HEAD_DIM if hidden and heads else None)
    if not head_dim:
        return
    frequencies = int(head_dim * float(rope.get("partial_rotary_factor", 1.0))) // 2
    section = rope.get("mrope_section") or _model_code_mrope_default(config_class) or [1, 1, 1]
    out[rope_key] = {**rope, **(out.get(rope_key) or {}), "mrope_section": _split(frequencies, section)}


def _model_code_mrope_default(config_class: type) -> list[int] | None:
    """The split the modeling file falls back to (``rope_parameters.get("mrope_section", [16, 24, 24])`` in qwen2_vl),
    read from the source of the modeling module next to the configuration module."""
    import importlib.util
    import re

    spec = importlib.util.find_spec(config_class.__module__.replace(".configuration_", ".modeling_"))
    if spec is None or not spec.origin:
        return None
    match = re.search(r'\.get\(\s*"mrope_section"\s*,\s*\[([\d,\s]+)\]', Path(spec.origin).read_text(encoding="utf-8"))
    return [int(x) for x in match.group(1).split(",") if x.strip()] if match else None


def shrink_overrides(model_type: str, *, use_overrides: bool = True) -> dict[str, Any]:
    """The keyword arguments passed to ``AutoConfig.for_model(model_type, **kwargs)`` for the tiny model."""
    from transformers import CONFIG_MAPPING, AutoConfig

    if model_type not in CONFIG_MAPPING:
        raise TinyConfigError(f"unknown model_type {model_type!r} for this transformers")
    config_class = CONFIG_MAPPING[model_type]
    default = AutoConfig.for_model(model_type)
    top = _as_dict(default)
    out = _shrink_level(top, _field_names(config_class), attribute_map=getattr(config_class, "attribute_map", {}))
    all_ids: set[int] = set()
    _collect_token_ids(default.to_dict(), all_ids)
    mapping = _token_remap(all_ids, TARGET_VOCAB)
    _apply_token_remap(top, top, mapping, _field_names(config_class), out)
    _scale_mrope_section(top, out, config_class)
    hidden = next((top[k] for k in HIDDEN_KEYS if _is_int(top.get(k))), None)
    for name, sub_class in (getattr(config_class, "sub_configs", None) or {}).items():
        sub = getattr(default, name, None)
        if sub is None:
            continue
        sub_values = _as_dict(sub)
        sub_fields = _field_names(type(sub)) if not isinstance(sub, dict) else set(sub_values)
        sub_out = _shrink_level(
            sub_values, sub_fields, parent_hidden=hidden, attribute_map=getattr(sub, "attribute_map", {}) or {}
        )
        _apply_token_remap(sub_values, sub_values, mapping, sub_fields, sub_out)
        if not isinstance(sub, dict):
            _scale_mrope_section(sub_values, sub_out, type(sub))
        if sub_out:
            out[name] = sub_out
    if use_overrides:
        extra = (load_overrides().get(model_type) or {}).get("config") or {}
        out = _deep_merge(out, extra)
        # An override that spells out the layer kinds also fixes the layer count, unless it sets it itself.
        layer_key = next((k for k in LAYER_KEYS if _is_int(top.get(k))), None)
        kinds = next(
            (
                v
                for k, v in extra.items()
                if k.endswith("types") and isinstance(v, list) and all(isinstance(x, str) for x in v)
            ),
            None,
        )
        if layer_key and kinds and layer_key not in extra:
            out[layer_key] = len(kinds)
    return out


def tiny_config(model_type: str, *, use_overrides: bool = True):
    """The tiny ``PreTrainedConfig`` for ``model_type`` (random weights, offline)."""
    from transformers import AutoConfig

    kwargs = shrink_overrides(model_type, use_overrides=use_overrides)
    config = AutoConfig.for_model(model_type, **kwargs)
    # Deterministic, single-path runs: no dropout in the tiny model.
    return config


def build_tiny_model(model_type: str, *, seed: int = 0, use_overrides: bool = True):
    """Instantiate ``AutoModelForCausalLM`` from the tiny config with a fixed seed, in eval mode, fp32."""
    import torch
    from transformers import AutoModelForCausalLM

    config = tiny_config(model_type, use_overrides=use_overrides)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.eval()
    return model


def save_tiny_checkpoint(model_type: str, folder: str | os.PathLike[str], *, seed: int = 0) -> str:
    """Build the tiny model for ``model_type`` and ``save_pretrained`` it (safetensors) into ``folder``; return the
    path.

    Used by the scan worker and by tensor-parallel mode (``compat_matrix/tp.py``)."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    model = build_tiny_model(model_type, seed=seed)
    model.save_pretrained(path)
    return str(path)


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())
