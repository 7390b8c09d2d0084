"""Op coverage: calibrated prediction of CPU fallbacks against the TorchNeuron op list."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from compat_matrix.checks import op_coverage  # noqa: E402


class Router(torch.nn.Module):
    """Uses ops the list has (linear, softmax, topk), views (t, transpose, unsqueeze, expand), SDPA, a composite
    that maps to a listed op (index_put_ -> _index_put_impl_), and ops it lacks (sort via composite, cumprod, float64)."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.proj(x).softmax(-1)
        q = h.unsqueeze(1).expand(2, 2, 4, 8)
        a = torch.nn.functional.scaled_dot_product_attention(q, q, q)
        order = torch.sort(h, dim=-1).indices
        buf = torch.zeros(2, 4, 8)
        buf.index_put_((torch.tensor([0]),), torch.ones(4, 8))
        scale = torch.cumprod(h.double(), dim=-1).float()
        return a.sum() + order.float().mean() + buf.sum() + scale.transpose(-1, -2).sum() + self.proj.weight.t().sum()


def test_model_with_op_outside_the_list():
    model = Router().eval()
    x = torch.randn(2, 4, 8)
    with torch.no_grad():
        result = op_coverage.predicted(lambda: model(x))
    fallback = set(result["fallback_ops"])
    assert "cumprod" in fallback  # not in the list
    assert "sort" in fallback  # composite sort -> sort.stable, which has no kernel
    assert result["composite_ops"].get("sort") == "sort.stable"
    assert "index_put_" not in fallback and result["composite_ops"].get("index_put_") == "_index_put_impl_"
    # view / alias ops need no kernel and are never reported
    assert not fallback & {"t", "transpose", "unsqueeze", "expand", "view", "slice", "alias", "_unsafe_view"}
    # the CPU-only SDPA kernel is judged as the op the Neuron device dispatches to
    assert "_scaled_dot_product_flash_attention_for_cpu" not in fallback
    assert result["mapped_variants"]["_scaled_dot_product_flash_attention_for_cpu"] == (
        "_scaled_dot_product_fused_attention_overrideable")
    assert "cumprod" in result["float64_ops"] and result["fallback_ops_source"] == "predicted"
    for op in ("linear", "addmm", "mm", "_softmax", "topk"):
        assert op not in fallback


def test_custom_op_list(tmp_path):
    ops = tmp_path / "ops.txt"
    ops.write_text("# test list\naten::addmm\naten::cumprod\n")
    model = Router().eval()
    with torch.no_grad():
        result = op_coverage.predicted(lambda: model(torch.randn(2, 4, 8)), ops_file=str(ops))
    assert "cumprod" not in result["fallback_ops"] and "_softmax" in result["fallback_ops"]
