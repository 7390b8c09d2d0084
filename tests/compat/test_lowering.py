"""StableHLO lowering check (compat_matrix/checks/lowering.py): real torch, transformers and torch-mlir, tiny models.

Facts pinned here (torch 2.13 CPU, transformers 5.24, torch-mlir 20261001):
* a tiny llama lowers (forward and a static-cache decode step) with nothing left over, but only because the check
  makes its non-persistent buffers visible to the importer: plain ``torch_mlir.fx.export_and_import`` raises
  "Could not find state mapping for buffer";
* a tiny mixtral fails to legalise ``aten::histc`` (transformers' grouped-mm MoE path).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from compat_matrix.checks import lowering  # noqa: E402

needs_torch_mlir = pytest.mark.skipif(lowering.TORCH_MLIR is None, reason="torch-mlir is not installed")

RESULT_KEYS = {
    "status",
    "stage",
    "failed_ops",
    "unlowered_ops",
    "reason",
    "seconds",
    "op_histogram",
    "torch_mlir_version",
}


def tiny_model(model_type: str) -> torch.nn.Module:
    config = transformers.AutoConfig.for_model(
        model_type,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=128,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(config)


@pytest.fixture(scope="module")
def input_ids() -> torch.Tensor:
    return torch.randint(0, 128, (1, 8), generator=torch.Generator().manual_seed(0))


@pytest.fixture(scope="module")
def llama() -> torch.nn.Module:
    return tiny_model("llama")


@pytest.fixture(scope="module")
def llama_result(llama, input_ids) -> dict:
    return lowering.check_lowering(llama, input_ids)


def model_state(model: torch.nn.Module) -> dict:
    return {
        "state_dict": {name: tensor.clone() for name, tensor in model.state_dict().items()},
        "buffers": {name: tensor.clone() for name, tensor in model.named_buffers()},
        "non_persistent": {name: set(module._non_persistent_buffers_set) for name, module in model.named_modules()},
        "training": {name: module.training for name, module in model.named_modules()},
        "requires_grad": {name: param.requires_grad for name, param in model.named_parameters()},
    }


def assert_same_state(before: dict, after: dict) -> None:
    assert before["non_persistent"] == after["non_persistent"]
    assert before["training"] == after["training"]
    assert before["requires_grad"] == after["requires_grad"]
    for key in ("state_dict", "buffers"):
        assert before[key].keys() == after[key].keys()
        for name, tensor in before[key].items():
            assert torch.equal(tensor, after[key][name]), name


@needs_torch_mlir
def test_llama_lowers_forward_and_decode(llama_result):
    result = llama_result
    assert set(result) == RESULT_KEYS
    assert result["status"] == "lowered", result["reason"]
    assert result["stage"] is None
    assert result["reason"] is None  # the decode step ran too (a skipped decode step is noted in `reason`)
    assert result["failed_ops"] == [] and result["unlowered_ops"] == []
    assert result["torch_mlir_version"] == lowering.TORCH_MLIR.version
    assert 0 < result["seconds"] < 120
    histogram = result["op_histogram"]
    assert histogram["stablehlo.dot_general"] > 0
    assert histogram.get("stablehlo.scatter", 0) > 0  # the decode step writes its static KV cache in place
    assert not any(name.startswith("torch.") for name in histogram)
    json.dumps(result)  # goes into the result row as is


@needs_torch_mlir
def test_llama_needs_non_persistent_buffers_made_visible(llama, input_ids):
    """Upstream's one-call path fails on the rotary ``inv_freq`` buffer; the check must not."""
    from torch_mlir.fx import export_and_import

    with torch.no_grad(), pytest.raises(AssertionError, match="Could not find state mapping for buffer"):
        export_and_import(lowering._Forward(llama.eval()), input_ids, output_type="stablehlo")


@needs_torch_mlir
def test_check_does_not_mutate_the_model(input_ids):
    model = tiny_model("llama")
    model.train()  # eval() during the check, training mode must come back
    before = model_state(model)
    result = lowering.check_lowering(model, input_ids)
    assert result["status"] == "lowered", result["reason"]
    assert_same_state(before, model_state(model))


@needs_torch_mlir
def test_mixtral_fails_to_legalise_histc(input_ids):
    model = tiny_model("mixtral")
    before = model_state(model)
    result = lowering.check_lowering(model, input_ids)
    assert set(result) == RESULT_KEYS
    assert result["status"] == "failed"
    assert result["stage"] == "forward"
    assert result["failed_ops"] == ["aten::histc"]
    assert "aten::histc" in result["reason"] and "\n" not in result["reason"]
    assert result["seconds"] > 0
    assert_same_state(before, model_state(model))


@needs_torch_mlir
def test_never_raises_on_a_model_that_cannot_be_exported(input_ids):
    result = lowering.check_lowering(torch.nn.Linear(4, 4), input_ids)
    assert result["status"] == "failed"
    assert result["stage"] == "forward"
    assert result["reason"].startswith("torch.export failed: TypeError")
    assert "\n" not in result["reason"]


def test_missing_torch_mlir_is_skipped(monkeypatch, input_ids):
    monkeypatch.setattr(lowering, "TORCH_MLIR", None)
    result = lowering.check_lowering(torch.nn.Linear(4, 4), input_ids)
    assert result == {
        "status": "skipped",
        "stage": None,
        "failed_ops": [],
        "unlowered_ops": [],
        "reason": "torch-mlir is not installed (pip install 'neuron-migrate[lowering]')",
        "seconds": 0.0,
        "op_histogram": {},
        "torch_mlir_version": None,
    }


def test_module_imports_without_torch_mlir():
    """A real import with torch_mlir blocked: the module loads and the check reports ``skipped``."""
    code = (
        "import sys, json\n"
        "sys.modules['torch_mlir'] = None\n"
        "import torch\n"
        "from compat_matrix.checks import lowering\n"
        "assert lowering.TORCH_MLIR is None\n"
        "print(json.dumps(lowering.check_lowering(torch.nn.Linear(2, 2), torch.zeros(1, 2, dtype=torch.long))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == "skipped"
    assert result["reason"] == lowering.INSTALL_HINT


def test_aten_names_from_diagnostics():
    text = (
        "failed to legalize operation 'torch.operator' that was explicitly marked illegal: "
        '%262 = "torch.operator"(%261) <{name = "torch.aten.histc"}> ...\n'
        "note: see torch.aten.add.Tensor and torch.aten.histc again; torch.prim.ListConstruct"
    )
    assert lowering.aten_names(text) == ["aten::histc", "aten::add", "prim::ListConstruct"]
    assert lowering.aten_names('torch.operator "aten.foo.default"') == ["aten::foo"]
    assert lowering.aten_names('torch.operator "torch.aten.foo.default"') == ["aten::foo"]
    assert lowering.aten_names("nothing here") == []


class NoCacheLM(torch.nn.Module):
    """A real (tiny) language model without a ``cache`` argument: the decode step cannot be set up."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(128, 16)
        self.head = torch.nn.Linear(16, 128)

    def forward(self, input_ids, use_cache=False):
        return self.head(torch.tanh(self.embed(input_ids)))


@needs_torch_mlir
def test_decode_step_that_cannot_be_set_up_is_reported_not_hidden(input_ids):
    result = lowering.check_lowering(NoCacheLM(), input_ids)
    assert result["status"] == "lowered"  # the forward graph did lower
    assert result["reason"].startswith("decode step not checked: static-cache prefill failed: TypeError")
    assert result["op_histogram"]["stablehlo.dot_general"] >= 1

    skipped = lowering.check_lowering(NoCacheLM(), input_ids, decode_step=False)
    assert skipped["status"] == "lowered" and skipped["reason"] is None


class OpenSliceScatter(torch.nn.Module):
    def forward(self, x, y):
        return torch.slice_scatter(x, y, dim=1, start=4)  # x[:, 4:] = y, end left open


@needs_torch_mlir
def test_open_ended_slice_scatter_is_named_without_running_the_pipeline():
    x, y = torch.zeros(2, 8), torch.ones(2, 4)
    program = torch.export.export(OpenSliceScatter(), (x, y), strict=False)
    with pytest.raises(lowering.LoweringFailed) as failure:
        lowering._lower_program(lowering.TORCH_MLIR, program)
    assert failure.value.failed_ops == ["aten::slice_scatter"]
    assert "open end" in failure.value.reason


class PastTheEndSliceScatter(torch.nn.Module):
    def forward(self, x, y):
        out = x.clone()
        out[:, 2:10] = y  # a finite end past the size (4): clamped like any slice, not the open end
        return out * 2


@needs_torch_mlir
def test_a_finite_end_past_the_size_runs_the_pipeline():
    x, y = torch.zeros(3, 4), torch.ones(3, 2)
    program = torch.export.export(PastTheEndSliceScatter(), (x, y), strict=False)
    assert lowering._open_slice_scatter(program.run_decompositions(lowering.TORCH_MLIR.get_decomposition_table())
                                        .graph) is None
    with pytest.raises(lowering.LoweringFailed) as failure:  # upstream's own verdict, whatever it is, is the one shown
        lowering._lower_program(lowering.TORCH_MLIR, program)
    assert "open end" not in failure.value.reason and "pipeline not run" not in failure.value.reason


@needs_torch_mlir
@pytest.mark.parametrize("model_type", ["opt", "biogpt", "xglm"])
def test_the_decode_step_is_exported_with_the_inputs_generate_passes(model_type):
    # Without generate's attention mask and position ids, the decode step of these models does not export
    # (a data-dependent guard in their position/mask code).
    from compat_matrix.checks.inputs import prompt_ids
    from compat_matrix.tiny_configs import build_tiny_model

    model = build_tiny_model(model_type)
    result = lowering.check_lowering(model, prompt_ids(model.config))
    assert result["status"] == "lowered", result["reason"]
    assert result["reason"] is None  # the decode step ran
    cache, inputs = lowering._first_decode_step(model, prompt_ids(model.config))
    assert {"attention_mask", "position_ids"} <= set(inputs) and inputs["input_ids"].shape == (1, 1)
