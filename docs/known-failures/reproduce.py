"""Standalone reproductions of the upstream failures listed as ``known_failure`` in compat_matrix/data/overrides.yaml.

No scanner code: each case builds a tiny model from its config class (random weights, CPU, fp32) and runs the two
generate calls the scan runs: static cache with chunked prefill (expected to fail) and plain static cache (expected to
work). Run: ``python docs/known-failures/reproduce.py [model_type ...]``; prints one JSON line per case and exits 1 if
a case no longer reproduces (the upstream bug was fixed: drop its known_failure entry).
"""

from __future__ import annotations

import json
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM

#: model_type -> (tiny config values, the error text the chunked-prefill failure shows).
CASES = {
    # get_head_shapes (configuration_utils.py) reads num_key_value_heads, which FalconConfig does not define (it has
    # num_kv_heads), and falls back to num_attention_heads (4); in the multi-query layout (multi_query=True,
    # new_decoder_architecture=False) the attention writes one key/value head (modeling_falcon.py).
    "falcon": ({"hidden_size": 64, "num_attention_heads": 4, "ffn_hidden_size": 256, "vocab_size": 512,
                "num_hidden_layers": 1}, "index_copy_"),
    # head_dim (16) != v_head_dim (12): the pre-allocated cache values use head_dim.
    "mimo_v2_flash": ({"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 256,
                       "moe_intermediate_size": 32, "head_dim": 16, "v_head_dim": 12, "n_routed_experts": 4,
                       "num_experts_per_tok": 2, "vocab_size": 512, "num_hidden_layers": 3,
                       "layer_types": ["full_attention", "sliding_attention", "full_attention"],
                       "mlp_layer_types": ["dense", "sparse", "sparse"]}, "index_copy_"),
    # The static-cache init shape reads num_attention_heads, which the state-space configs do not have.
    "mamba": ({"hidden_size": 64, "time_step_rank": 4, "vocab_size": 512, "num_hidden_layers": 1},
              "num_attention_heads"),
    "falcon_mamba": ({"hidden_size": 64, "time_step_rank": 4, "vocab_size": 512, "num_hidden_layers": 1},
                     "num_attention_heads"),
    "mamba2": ({"hidden_size": 64, "num_heads": 4, "time_step_rank": 4, "head_dim": 32, "n_groups": 2,
                "state_size": 16, "vocab_size": 512, "num_hidden_layers": 1}, "num_attention_heads"),
}


def _generate(model, ids, **kwargs):
    with torch.no_grad():
        return model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=3, do_sample=False,
                              cache_implementation="static", disable_compile=True, pad_token_id=0, **kwargs)


def reproduce(model_type: str) -> dict:
    values, expected = CASES[model_type]
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **values)).eval()
    ids = torch.randint(3, 500, (1, 8))
    result = {"model_type": model_type, "expected_error": expected}
    try:
        _generate(model, ids, prefill_chunk_size=4)
        result["chunked_prefill"] = "works"
    except Exception as exc:  # noqa: BLE001 - the failure is what is being reproduced
        result["chunked_prefill"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    try:
        _generate(model, ids)
        result["plain_static"] = "works"
    except Exception as exc:  # noqa: BLE001
        result["plain_static"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    result["reproduces"] = expected in result["chunked_prefill"] and result["plain_static"] == "works"
    return result


def main(argv: list[str]) -> int:
    results = [reproduce(model_type) for model_type in (argv or CASES)]
    for result in results:
        print(json.dumps(result))
    return 0 if all(result["reproduces"] for result in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
