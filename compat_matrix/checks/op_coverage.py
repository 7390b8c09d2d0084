"""TorchNeuron op coverage: which ATen ops the model runs that would fall back to CPU on a Neuron device.

Off Neuron the answer is *predicted*: the ops seen by a ``TorchDispatchMode`` while the model runs (forward and a short
static-cache generate) are compared with ``data/torchneuron_aten_ops.txt``, a list derived from the registrations of a
pre-release (April 2026) TorchNeuron source tree, not the official 2.33 table. On a Neuron device the answer is
*measured*: ``torch_neuronx.clear_op_tracking()`` before and ``torch_neuronx.get_fallback_ops()`` after.

Calibration (see docs/compat-scan.md): a naive comparison flags ops that can never fall back, so before comparing

1. view and alias ops are dropped: every op whose schema returns an alias of an input without writing it (``t``,
   ``transpose``, ``unsqueeze``, ``slice``, ``alias``, ``expand``, ``view`` ...) plus the metadata/alias helpers in
   ``NO_KERNEL_OPS`` (``_unsafe_view`` ...): they need no kernel and TorchNeuron does not report them as fallbacks;
2. CPU-only kernel variants are mapped to the op the device dispatches instead (``CPU_VARIANTS``: SDPA's
   ``_scaled_dot_product_flash_attention_for_cpu`` -> ``_scaled_dot_product_fused_attention_overrideable``);
3. ops with a ``CompositeExplicitAutograd`` kernel and no Neuron kernel run that composite kernel on the device (the
   dispatcher prefers it to the backend's boxed CPU fallback), so the op the composite calls is judged instead
   (``COMPOSITE_CALLS``: ``index_put_`` -> ``_index_put_impl_``, which has a kernel: no fallback; ``sort`` ->
   ``sort.stable``, which has none: fallback). Unmapped composites are judged by their own name. All are listed in
   ``composite_ops``.

What is left (``sort`` and ``argmax`` in routing and sampling, ``cumsum`` variants ...) is the signal.
float64 and complex tensors seen by any op are reported too (Neuron computes float64 as float32).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

OPS_FILE = Path(__file__).resolve().parent.parent / "data" / "torchneuron_aten_ops.txt"

#: Ops without an alias annotation that still need no device kernel (metadata, aliasing helpers).
NO_KERNEL_OPS = frozenset(
    {
        "_unsafe_view",
        "_reshape_alias",
        "lift_fresh",
        "detach",
        "alias",
        "view_as_real",
        "view_as_complex",
        "conj",
        "_conj",
        "_neg_view",
        "t",
        "movedim",
        "swapaxes",
        "sym_size",
        "sym_stride",
        "sym_numel",
        "sym_storage_offset",
        "size",
        "stride",
        "numel",
        "dim",
        "is_same_size",
        "_nested_tensor_size",
        "resolve_conj",
        "resolve_neg",
        "lift_fresh_copy",
        "set_",
        "record_stream",
        "_version",
        "output_nr",
        "is_contiguous",
        "storage_offset",
    }
)

#: CPU (or CUDA) specific kernels -> the op the Neuron device dispatches to instead.
CPU_VARIANTS = {
    "_scaled_dot_product_flash_attention_for_cpu": "_scaled_dot_product_fused_attention_overrideable",
    "_scaled_dot_product_flash_attention_for_cpu_backward": "_scaled_dot_product_fused_attention_overrideable_backward",
    "_scaled_dot_product_flash_attention": "_scaled_dot_product_fused_attention_overrideable",
    "_scaled_dot_product_efficient_attention": "_scaled_dot_product_fused_attention_overrideable",
    "_scaled_dot_product_cudnn_attention": "_scaled_dot_product_fused_attention_overrideable",
    "_efficient_attention_forward": "_scaled_dot_product_fused_attention_overrideable",
    "_flash_attention_forward": "_scaled_dot_product_fused_attention_overrideable",
}


#: CompositeExplicitAutograd ops -> the op their composite kernel calls on a backend without its own kernel.
#: (Reading the PyTorch sources; composites not listed here are judged by their own name, i.e. conservatively.)
COMPOSITE_CALLS = {
    "index_put_": "_index_put_impl_",
    "index_put": "_index_put_impl_",
    "sort": "sort.stable",
    "empty_like": "empty_strided",
    "zeros_like": "zero_",
    "ones_like": "fill_",
    "full_like": "fill_",
    "new_zeros": "zero_",
    "new_ones": "fill_",
    "new_full": "fill_",
    "new_empty": "empty",
    "new_empty_strided": "empty_strided",
    "zeros": "zero_",
    "ones": "fill_",
    "full": "fill_",
    "fill": "fill_",
    "rsub.Scalar": "sub",
    "argsort": "argsort.stable",
}


@lru_cache(maxsize=4)
def supported_ops(path: str | None = None) -> frozenset[str]:
    """Base op names (``add``, ``index_select`` ...) with a Neuron kernel in the op list."""
    names = set()
    for line in Path(path or OPS_FILE).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        names.add(line.split("::", 1)[-1].split(".", 1)[0])
    return frozenset(names)


def op_source(path: str | None = None) -> str:
    """The provenance header of the op list (first comment line)."""
    for line in Path(path or OPS_FILE).read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def _is_view(func) -> bool:
    for ret in func._schema.returns:
        info = ret.alias_info
        if info is not None and not info.is_write:
            return True
    return False


@lru_cache(maxsize=None)
def _has_composite_explicit(qualified: str) -> bool:
    import torch

    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CompositeExplicitAutograd"))
    except Exception:  # noqa: BLE001
        return False


def make_recorder(ops_file: str | None = None):
    """A ``TorchDispatchMode`` that counts ops (``name`` or ``name.overload``) and float64/complex use."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    wide = (torch.float64, torch.complex64, torch.complex128, torch.complex32)

    class OpRecorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: Counter[str] = Counter()
            self.funcs: dict[str, Any] = {}
            self.float64: set[str] = set()
            self.complex: set[str] = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func.namespace != "aten":
                return func(*args, **kwargs)
            base = func._schema.name.split("::", 1)[-1]
            key = base if func._overloadname == "default" else f"{base}.{func._overloadname}"
            self.ops[key] += 1
            self.funcs.setdefault(key, func)
            out = func(*args, **kwargs)
            for leaf in tree_leaves((args, kwargs, out)):
                if isinstance(leaf, torch.Tensor) and leaf.dtype in wide:
                    (self.float64 if leaf.dtype == torch.float64 else self.complex).add(key)
            return out

    return OpRecorder()


def classify(recorder, ops_file: str | None = None) -> dict[str, Any]:
    """Turn the recorded ops into the op-coverage details (predicted fallbacks after calibration)."""
    supported = supported_ops(ops_file)
    views: set[str] = set()
    mapped: dict[str, str] = {}  # op -> the CPU variant's device name
    composite: dict[str, str | None] = {}  # composite op -> the op it calls (None: not mapped)
    fallback: Counter[str] = Counter()
    for key, count in recorder.ops.items():
        func = recorder.funcs[key]
        base = key.split(".", 1)[0]
        if base in NO_KERNEL_OPS or _is_view(func):
            views.add(base)
            continue
        target = CPU_VARIANTS.get(base, base)
        if target != base:
            mapped[base] = target
        if target in supported:
            continue
        if target == base and _has_composite_explicit(func._schema.name):
            inner = COMPOSITE_CALLS.get(key) or COMPOSITE_CALLS.get(base)
            if inner is not None:
                composite[key] = inner
                if inner.split(".", 1)[0] in supported:
                    continue
                target = inner.split(".", 1)[0]
            else:
                composite[key] = None  # composite kernel not mapped: judged by its own name (conservative)
        fallback[target] += count
    return {
        "fallback_ops": sorted(fallback),
        "fallback_op_calls": dict(sorted(fallback.items())),
        "fallback_ops_source": "predicted",
        "excluded_view_ops": sorted(views),
        "mapped_variants": mapped,
        "composite_ops": dict(sorted(composite.items())),
        "float64_ops": sorted(recorder.float64),
        "complex_ops": sorted(recorder.complex),
        "distinct_ops": len(recorder.ops),
    }


def predicted(forward, generate=None, ops_file: str | None = None) -> dict[str, Any]:
    """Run ``forward()`` (the model) and ``generate()`` (the generation loop) under recorders; classify what ran.

    ``fallback_ops`` is the union; ``fallback_ops_forward`` the part the model's own forward needs, so the
    generation loop's ops (``argmax`` of greedy decoding, ``isin`` of the stopping criteria) can be told apart."""
    recorder = make_recorder(ops_file)
    with recorder:
        forward()
    result = classify(recorder, ops_file)
    result["fallback_ops_forward"] = list(result["fallback_ops"])
    if generate is not None:
        with recorder:
            generate()
        merged = classify(recorder, ops_file)
        merged["fallback_ops_forward"] = result["fallback_ops_forward"]
        result = merged
    result["fallback_ops_generation"] = sorted(set(result["fallback_ops"]) - set(result["fallback_ops_forward"]))
    return result


def measured_on_neuron(forward, generate=None) -> dict[str, Any]:
    """On a Neuron device: TorchNeuron's own op tracking (deduplicated op names that ran on CPU)."""
    import torch_neuronx  # noqa: PLC0415 - only importable on a Neuron host

    recorder = make_recorder()
    torch_neuronx.clear_op_tracking()
    with recorder:
        forward()
        if generate is not None:
            generate()
    fallback = sorted(str(op).split("::", 1)[-1] for op in torch_neuronx.get_fallback_ops())
    return {
        "fallback_ops": fallback,
        "fallback_ops_source": "torch_neuronx",
        "float64_ops": sorted(recorder.float64),
        "complex_ops": sorted(recorder.complex),
        "distinct_ops": len(recorder.ops),
    }
