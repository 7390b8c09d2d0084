"""StableHLO lowering check: does the model's graph legalise to StableHLO through torch-mlir, on CPU?

TorchNeuron's ``torch.compile(backend="neuron")`` hands every captured graph to torch-mlir, lowers it to StableHLO
and gives that to neuronx-cc. The first half of that pipeline runs anywhere: upstream ``torch-mlir`` (optional extra
``neuron-migrate[lowering]``) lowers a PyTorch program to StableHLO on CPU. A graph that does not legalise there is a
strong sign it will not compile on Neuron either, and the op that failed is what the user needs to know.

What :func:`check_lowering` does, per stage (``forward``, then one static-cache ``decode`` step):

1. ``torch.export`` (non-strict, static shapes, ``torch.no_grad``, eval mode) of a thin wrapper around the model;
2. ``run_decompositions`` with torch-mlir's FX decomposition table (what ``torch_mlir.fx.export_and_import`` does),
   then the ``aten._assert_tensor_metadata`` checks that ``torch.export`` inserts for ``.to()`` calls are dropped
   (a Dynamo/AOTAutograd capture, which is what TorchNeuron lowers, has none);
3. torch-mlir's ``FxImporter.import_stateless_graph``: parameters, buffers and lifted constants stay function
   arguments, as in the AOTAutograd graphs TorchNeuron lowers;
4. the torch-mlir pass pipelines FX IR -> Torch backend IR -> StableHLO, with MLIR diagnostics captured;
5. the ops of the result are counted (``op_histogram``); ops still in a ``torch.*`` dialect are ``unlowered_ops``.

Why not ``torch_mlir.fx.export_and_import(..., output_type="stablehlo")``, which freezes the weights into literals:

* non-persistent buffers (the rotary ``inv_freq`` of llama-like models) are kept by ``torch.export`` in
  ``ExportedProgram.constants``, not ``state_dict``, and the frozen importer only looks in ``state_dict``: a tiny
  llama fails with "Could not find state mapping for buffer" (pinned by the tests);
* frozen bfloat16 weights need the ``ml_dtypes`` package, which torch-mlir does not declare;
* frozen cache state trips the importer ("Heterogeneous lists are not supported") when a state-space layer
  concatenates it with a computed tensor;
* it runs the pipelines through ``run_pipeline_with_repro_report``, which swaps ``sys.stderr`` and writes a repro file
  into the temp folder on every failure; we attach our own MLIR diagnostic handler instead.

The decode stage runs an eager static-cache ``generate`` up to its first single-token step and exports that step with
the inputs generate gave it (attention mask, position ids, the prefilled cache, whose tensors are graph inputs that
the step mutates in place): the step compiled mode captures. If the model
cannot run that eager prefill (no ``cache`` argument, no static-cache support ...) the decode stage is not lowered and
the result says so in ``reason`` (with ``status`` from the forward stage): that is a static-cache problem, which the
scan reports on its own, not a lowering failure.

The result dict (``details["lowering"]`` of the row; the scan maps ``failed`` to ``fail_lowering``)::

    status              "lowered" | "failed" | "skipped"
    stage               "forward" | "decode" for the stage that failed, else None
    failed_ops          ["aten::histc", ...]: ops the pipeline reported it could not legalise (MLIR stops at the
                        first illegal op, so normally one; fixing it may reveal the next). Non-aten ops keep their
                        MLIR name (``torch.runtime.assert``: a data-dependent runtime check)
    unlowered_ops       ["aten::foo", ...]: ops left in the torch dialect after a pipeline that did not fail
    reason              one line, or None when everything lowered
    seconds             wall time of the whole check (export + lowering of every stage)
    op_histogram        {"stablehlo.dot_general": 12, ...}: op name -> count, summed over the lowered stages
                        (structural ops builtin.module / func.func / func.return are not counted)
    torch_mlir_version  installed torch-mlir distribution version, or None

:func:`check_lowering` never raises, and is importable without torch-mlir (``status: skipped``).
"""

from __future__ import annotations

import collections
import contextlib
import inspect
import re
import time
import types
import warnings
from typing import TYPE_CHECKING, Any, cast

import torch

from compat_matrix.common import one_line

if TYPE_CHECKING:
    from transformers import GenerationMixin

INSTALL_HINT = "torch-mlir is not installed (pip install 'neuron-migrate[lowering]')"

#: FX IR -> Torch backend IR (same pipeline as ``torch_mlir.fx._module_lowering``).
TORCH_BACKEND_PIPELINE = (
    "builtin.module(func.func(torch-match-quantized-custom-ops), torchdynamo-export-to-torch-backend-pipeline)"
)
#: Torch backend IR -> StableHLO (same pipeline as ``torch_mlir.compiler_utils.lower_mlir_module``).
STABLEHLO_PIPELINE = "builtin.module(torch-backend-to-stablehlo-backend-pipeline{allow-non-finites=true})"

#: Ops that only give the module its shape; not counted in ``op_histogram``.
STRUCTURAL_OPS = frozenset({"builtin.module", "func.func", "func.return"})

#: ``x[a:]`` traces as ``slice_scatter(..., end=INT64_MAX)``: the open end.
INT64_MAX = 2**63 - 1

#: Extra cache slots after the prompt for the decode stage.
DECODE_HEADROOM = 8


def _load_torch_mlir() -> types.SimpleNamespace | None:
    try:  # torch-mlir is the optional `lowering` extra: without it the check reports INSTALL_HINT
        from torch_mlir import ir, passmanager
        from torch_mlir.dialects import torch as torch_dialect
        from torch_mlir.extras.fx_decomp_util import get_decomposition_table
        from torch_mlir.extras.fx_importer import FxImporter
    except ImportError:
        return None
    try:
        from importlib.metadata import version

        torch_mlir_version = version("torch-mlir")
    except Exception:  # noqa: BLE001 - a missing dist-info must not disable the check
        torch_mlir_version = None
    return types.SimpleNamespace(
        ir=ir,
        PassManager=passmanager.PassManager,
        torch_dialect=torch_dialect,
        get_decomposition_table=get_decomposition_table,
        FxImporter=FxImporter,
        version=torch_mlir_version,
    )


#: The torch-mlir pieces this check uses, or ``None`` when torch-mlir cannot be imported (tests monkeypatch this).
TORCH_MLIR: types.SimpleNamespace | None = _load_torch_mlir()


class LoweringFailed(Exception):
    """A stage did not lower; carries the parsed op names."""

    def __init__(self, reason: str, failed_ops: list[str] | None = None, unlowered_ops: list[str] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.failed_ops = failed_ops or []
        self.unlowered_ops = unlowered_ops or []


# ---------------------------------------------------------------------------------------------------------------------
# diagnostics -> aten names

_TORCH_OP_RE = re.compile(r"\btorch\.aten\.([A-Za-z0-9_]+)")
_TORCH_OPERATOR_RE = re.compile(r"torch\.operator\s+\"(?:torch\.)?([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)")
_TORCH_PRIM_RE = re.compile(r"\btorch\.(prim|prims)\.([A-Za-z0-9_]+)")


def aten_names(text: str) -> list[str]:
    """``aten::op`` names mentioned in MLIR text or diagnostics, first-seen order, overloads dropped.

    ``torch.aten.histc`` -> ``aten::histc``; ``torch.aten.add.Tensor`` -> ``aten::add``;
    ``torch.operator "aten.foo.default"`` -> ``aten::foo``; ``torch.prim.ListConstruct`` -> ``prim::ListConstruct``.
    """
    found: list[tuple[int, str]] = []
    for match in _TORCH_OP_RE.finditer(text):
        found.append((match.start(), f"aten::{match.group(1)}"))
    for match in _TORCH_OPERATOR_RE.finditer(text):
        found.append((match.start(), f"{match.group(1)}::{match.group(2)}"))
    for match in _TORCH_PRIM_RE.finditer(text):
        found.append((match.start(), f"prim::{match.group(2)}"))
    return list(dict.fromkeys(name for _, name in sorted(found)))


def _op_to_name(op: Any) -> str | None:
    """aten-style name of an op still in the torch dialect, else ``None``."""
    name = op.name
    if name == "torch.operator":
        try:
            target = str(op.attributes["name"]).strip('"')
        except Exception:  # noqa: BLE001
            return "torch.operator"
        parts = target.removeprefix("torch.").split(".")
        return f"{parts[0]}::{parts[1]}" if len(parts) >= 2 else target
    if name.startswith("torch.aten."):
        return "aten::" + name[len("torch.aten.") :].split(".")[0]
    if name.startswith(("torch.prim.", "torch.prims.")):
        return "prim::" + name.split(".", 2)[2].split(".")[0]
    if name.startswith("torch.") and not name.startswith(("torch.constant.", "torch_c.")):
        return name
    return None


def _walk(operation: Any):
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                yield op
                yield from _walk(op)


# ---------------------------------------------------------------------------------------------------------------------
# torch side: the two stages as exportable modules


class _Forward(torch.nn.Module):
    """The model's plain forward (no cache), returning the logits."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        out = self.model(input_ids=input_ids, use_cache=False)
        return _first_tensor(out)


def _first_tensor(out: Any) -> torch.Tensor:
    logits = getattr(out, "logits", None)
    if isinstance(logits, torch.Tensor):
        return logits
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        return out[0]
    if isinstance(out, dict):
        for value in out.values():
            if isinstance(value, torch.Tensor):
                return value
    raise TypeError(f"model output {type(out).__name__} has no logits tensor")


class _DecodeStep(torch.nn.Module):
    """One single-token step on a prefilled ``StaticCache``, with the cache state as explicit graph inputs.

    Every tensor the cache layers hold (keys, values, cumulative lengths, and the per-layer dicts/lists of state-space
    and linear-attention layers) becomes a program input that the step mutates in place, as in a compiled decode step
    (where the cache tensors are static-address graph inputs). Left as attributes of the cache object, they would be
    captured as constants that the graph mutates, which ``run_decompositions`` rejects. The other tensors generate
    passes to the step (``attention_mask``, ``position_ids`` ...) are program inputs too, placed before the state.
    """

    def __init__(self, model: torch.nn.Module, cache: Any, inputs: dict[str, Any]):
        super().__init__()
        self.model = model
        self.cache = cache
        self.tensor_names = [name for name, value in inputs.items() if isinstance(value, torch.Tensor)]
        self.tensors = [inputs[name] for name in self.tensor_names]
        self.constants = {name: value for name, value in inputs.items() if name not in self.tensor_names}
        self.slots: list[tuple[Any, Any]] = []  # (holder, key); holder is a layer object, a dict or a list
        self.state: list[torch.Tensor] = []
        for layer in cache.layers:
            for attr, value in list(vars(layer).items()):
                if isinstance(value, torch.Tensor):
                    self.slots.append((layer, attr))
                    self.state.append(value)
                elif isinstance(value, (dict, list)):
                    items = value.items() if isinstance(value, dict) else enumerate(value)
                    for key, item in list(items):
                        if isinstance(item, torch.Tensor):
                            self.slots.append((value, key))
                            self.state.append(item)

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        named, state = tensors[: len(self.tensor_names)], tensors[len(self.tensor_names) :]
        for (holder, key), tensor in zip(self.slots, state):
            if isinstance(holder, (dict, list)):
                holder[key] = tensor
            else:
                setattr(holder, key, tensor)
        out = self.model(**dict(zip(self.tensor_names, named)), **self.constants, cache=self.cache)
        return _first_tensor(out)


class _DecodeInputsSeen(Exception):
    """Stops generate at its first decode step, once that step's inputs are recorded."""


def _first_decode_step(model: torch.nn.Module, input_ids: torch.Tensor) -> tuple[Any, dict[str, Any]]:
    """The prefilled ``StaticCache`` and the keyword arguments of generate's first single-token decode step.

    What generate passes is what compiled mode captures: besides the token and the cache, a decode step gets the
    attention mask generate built for the whole cache and the position ids (without them opt, biogpt and xglm do not
    export). Raises when the model cannot prefill a static cache."""
    if "cache" not in inspect.signature(model.forward).parameters:
        raise TypeError(f"{type(model).__name__}.forward takes no `cache` argument")
    seen: dict[str, Any] = {}

    def record(module, args, kwargs):
        ids = kwargs.get("input_ids")
        if isinstance(ids, torch.Tensor) and ids.shape[1] == 1 and kwargs.get("cache") is not None:
            seen.update(kwargs)
            raise _DecodeInputsSeen

    handle = model.register_forward_pre_hook(record, with_kwargs=True)
    pad = getattr(model.generation_config, "pad_token_id", None)
    generate = cast("GenerationMixin", model).generate  # a *ForCausalLM: a module with GenerationMixin
    try:
        generate(
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=DECODE_HEADROOM,
            do_sample=False,
            cache_implementation="static",
            disable_compile=True,
            pad_token_id=pad if pad is not None else 0,
        )
    except _DecodeInputsSeen:
        pass
    finally:
        handle.remove()
    if not seen:
        raise RuntimeError("generate ran no single-token decode step on a static cache")
    cache = seen.pop("cache")
    if type(cache).__name__ != "StaticCache":
        raise TypeError(f"generate used {type(cache).__name__}, not the requested StaticCache")
    return cache, seen


# ---------------------------------------------------------------------------------------------------------------------
# torch-mlir side


def _export(module: torch.nn.Module, args: tuple) -> torch.export.ExportedProgram:
    return torch.export.export(module, args, strict=False)


#: Nodes ``torch.export`` inserts to check ``.to()`` metadata; not part of the model's computation (a Dynamo/AOTAutograd
#: capture, which is what TorchNeuron lowers, has none), and torch-mlir cannot canonicalise them on complex tensors.
EXPORT_ONLY_TARGETS = ("aten._assert_tensor_metadata",)

_LEGALIZE_RE = re.compile(r"failed to legalize operation '([^']+)'")
_OP_ERROR_RE = re.compile(r"^'([^']+)' op ")
_OPERATOR_NAME_RE = re.compile(r'name = "(?:torch\.)?([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)')
_SOURCE_RE = re.compile(r'"([^"]+)":(\d+):\d+')


def _mlir_op_to_aten(mlir_name: str, text: str) -> str:
    """``torch.aten.add.Tensor`` -> ``aten::add``; ``torch.operator`` -> its ``name`` attribute; others unchanged."""
    if mlir_name == "torch.operator":
        match = _OPERATOR_NAME_RE.search(text)
        return f"{match.group(1)}::{match.group(2)}" if match else mlir_name
    if mlir_name.startswith("torch.aten."):
        return "aten::" + mlir_name[len("torch.aten.") :].split(".")[0]
    return mlir_name


def _source_of(location: str) -> str | None:
    """Innermost ``file:line`` of an MLIR location, shortened to the package path."""
    match = _SOURCE_RE.search(location)
    if not match:
        return None
    return f"{_short_path(match.group(1))}:{match.group(2)}"


def _short_path(path: str) -> str:
    for anchor in ("site-packages/", "dist-packages/"):
        if anchor in path:
            return path.split(anchor, 1)[1]
    return path


def _diagnosed_failure(label: str, diagnostics: list[tuple[str, str, str]], error: Exception | None) -> LoweringFailed:
    """Turn the MLIR error diagnostics of a failed pipeline into ``LoweringFailed`` with aten names."""
    failed: list[str] = []
    for message, notes, _ in diagnostics:
        match = _LEGALIZE_RE.search(message) or _OP_ERROR_RE.search(message)
        if match:
            failed.append(_mlir_op_to_aten(match.group(1), message + notes))
    if not failed:
        failed = aten_names("\n".join(message + "\n" + notes for message, notes, _ in diagnostics))
    failed = list(dict.fromkeys(failed))
    # The most telling diagnostic: a legalisation failure, else an op's own error, else the first one.
    headline = next(
        (diag for diag in diagnostics if _LEGALIZE_RE.search(diag[0])),
        next((diag for diag in diagnostics if _OP_ERROR_RE.search(diag[0])), diagnostics[0] if diagnostics else None),
    )
    if headline is None:  # no diagnostic: the pipeline raised
        cause = one_line(error, first_line=True) if error is not None else "no diagnostic"
        return LoweringFailed(f"torch-mlir lowering to {label} failed: {cause}", failed)
    message, notes, location = headline
    detail = message.split(": %", 1)[0].split(': "torch.', 1)[0]  # drop the dumped op, the names are in `failed`
    subject = f"could not legalise {', '.join(failed)}" if failed else "failed"
    if "complex<" in message + notes:
        subject += " (complex dtype)"
    source = _source_of(location)
    where = f" (at {source})" if source else ""
    return LoweringFailed(one_line(f"torch-mlir lowering to {label} {subject}: {detail}{where}"), failed)


def _open_slice_scatter(graph: torch.fx.Graph) -> LoweringFailed | None:
    """The failure to report for an ``aten.slice_scatter`` with an open end (``x[..., a:] = y``: end None / INT64_MAX).

    torch-mlir 20261001 does not legalise such a node: in a small graph it reports "failed to legalize operation
    'torch.aten.slice_scatter'", but in tiny ``youtu`` the StableHLO pipeline instead grew past 17 GB of resident memory
    and ended in ``std::bad_alloc`` after two minutes. That is not an acceptable way to find out on a shared machine,
    so the node is reported as an op that does not lower without running the StableHLO pipeline (the Torch backend
    pipeline still runs first, so that its own failures, e.g. ``aten::histc``, are reported too). With the end
    clamped to the dimension size, youtu's graph still fails, on the stablehlo.scatter verifier, like qwen3_5: the
    fix belongs in torch-mlir.
    """
    for node in graph.nodes:
        if node.op != "call_function" or not str(node.target).startswith("aten.slice_scatter"):
            continue
        base = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
        dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
        end = node.args[4] if len(node.args) > 4 else node.kwargs.get("end")
        if not (isinstance(base, torch.Tensor) and isinstance(dim, int)):
            continue
        # Only the open end is known to break torch-mlir; a finite end past the size is clamped like any slice and
        # goes through the pipeline.
        if end is None or (isinstance(end, int) and end >= INT64_MAX):
            end = "None" if end is None else end
            source = (node.meta.get("stack_trace") or "").strip().splitlines()
            where = ""
            if len(source) >= 2:
                match = re.search(r'File "([^"]+)", line (\d+)', source[-2])
                if match:
                    where = f" (at {_short_path(match.group(1))}:{match.group(2)})"
            return LoweringFailed(
                f"torch-mlir lowering to StableHLO could not legalise aten::slice_scatter: open end ({end}) on a "
                f"dimension of size {base.shape[dim]} (pipeline not run: it can allocate for the whole int64 "
                f"range){where}",
                ["aten::slice_scatter"],
            )
    return None


def _lower_program(mlir: types.SimpleNamespace, program: torch.export.ExportedProgram) -> collections.Counter:
    """Lower one exported program to StableHLO; return its op histogram or raise ``LoweringFailed``."""
    try:
        program = program.run_decompositions(mlir.get_decomposition_table())
    except Exception as exc:  # noqa: BLE001
        raise LoweringFailed(f"decomposition failed: {one_line(exc, first_line=True)}", aten_names(str(exc))) from exc

    graph = program.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and str(node.target).startswith(EXPORT_ONLY_TARGETS) and not node.users:
            graph.erase_node(node)

    open_slice_scatter = _open_slice_scatter(graph)

    # Stateless import: parameters, buffers and lifted constants stay function arguments, as in the AOTAutograd
    # graphs TorchNeuron lowers. (A frozen import would inline them as literals: it needs ml_dtypes for bfloat16
    # weights, and misses non-persistent buffers, see the module docstring.)
    context = mlir.ir.Context()
    mlir.torch_dialect.register_dialect(context)
    importer = mlir.FxImporter(context=context)
    try:
        importer.import_stateless_graph(graph)
    except Exception as exc:  # noqa: BLE001
        message = f"torch-mlir import failed: {one_line(exc, first_line=True)}"
        raise LoweringFailed(message, aten_names(str(exc))) from exc
    module = importer.module

    for label, pipeline in (("Torch backend IR", TORCH_BACKEND_PIPELINE), ("StableHLO", STABLEHLO_PIPELINE)):
        diagnostics: list[tuple[str, str, str]] = []  # (message, notes, location)

        def handler(diagnostic, sink=diagnostics):
            if diagnostic.severity == mlir.ir.DiagnosticSeverity.ERROR:
                notes = "\n".join(str(note.message) for note in diagnostic.notes)
                sink.append((str(diagnostic.message), notes, str(diagnostic.location)))
            return True  # handled: keep it off stderr

        with context:
            context.emit_error_diagnostics = True
            handle = context.attach_diagnostic_handler(handler)
            try:
                mlir.PassManager.parse(pipeline).run(module.operation)
                error = None
            except Exception as exc:  # noqa: BLE001
                error = exc
                for info in getattr(exc, "error_diagnostics", ()) or ():
                    diagnostics.append((str(getattr(info, "message", info)), "", str(getattr(info, "location", ""))))
            finally:
                handle.detach()
        if error is not None or diagnostics:
            failure = _diagnosed_failure(label, diagnostics, error)
            if open_slice_scatter is not None:
                failure.failed_ops.append("aten::slice_scatter")
                failure.reason = one_line(f"{failure.reason}; and {open_slice_scatter.reason}")
            raise failure
        if open_slice_scatter is not None:
            raise open_slice_scatter  # before the StableHLO pipeline, see _open_slice_scatter

    histogram: collections.Counter = collections.Counter()
    unlowered: list[str] = []
    for op in _walk(module.operation):
        name = op.name
        if name not in STRUCTURAL_OPS:
            histogram[name] += 1
        torch_name = _op_to_name(op)
        if torch_name is not None:
            unlowered.append(torch_name)
    if unlowered:
        unlowered = list(dict.fromkeys(unlowered))
        raise LoweringFailed(
            one_line(f"{len(unlowered)} op(s) left in the torch dialect: {', '.join(unlowered)}"),
            unlowered_ops=unlowered,
        )
    return histogram


@contextlib.contextmanager
def _inference_state(model: torch.nn.Module):
    """eval() and no_grad for the duration; restores every module's ``training`` flag afterwards."""
    flags = [(module, module.training) for module in model.modules()]
    try:
        model.eval()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for module, training in flags:
            module.training = training


def check_lowering(model: torch.nn.Module, input_ids: torch.Tensor, *, decode_step: bool = True) -> dict:
    """Lower ``model``'s forward (and one static-cache decode step) to StableHLO through torch-mlir on CPU.

    Never raises; see the module docstring for the result keys.
    """
    start = time.perf_counter()
    mlir = TORCH_MLIR
    result: dict[str, Any] = {
        "status": "skipped",
        "stage": None,
        "failed_ops": [],
        "unlowered_ops": [],
        "reason": None,
        "seconds": 0.0,
        "op_histogram": {},
        "torch_mlir_version": None,
    }
    if mlir is None:
        result["reason"] = INSTALL_HINT
        return result
    result["torch_mlir_version"] = mlir.version

    histogram: collections.Counter = collections.Counter()
    notes: list[str] = []
    stage = "forward"
    try:
        with _inference_state(model):
            try:
                program = _export(_Forward(model), (input_ids,))
            except Exception as exc:  # noqa: BLE001
                message = f"torch.export failed: {one_line(exc, first_line=True)}"
                raise LoweringFailed(message, aten_names(str(exc))) from exc
            histogram.update(_lower_program(mlir, program))

            if decode_step:
                stage = "decode"
                try:
                    cache, inputs = _first_decode_step(model, input_ids)
                except Exception as exc:  # noqa: BLE001
                    cache = None
                    reason = one_line(exc, first_line=True)
                    notes.append(f"decode step not checked: static-cache prefill failed: {reason}")
                if cache is not None:
                    try:
                        step = _DecodeStep(model, cache, inputs)
                        program = _export(step, (*step.tensors, *step.state))
                    except Exception as exc:  # noqa: BLE001
                        raise LoweringFailed(
                            f"torch.export failed: {one_line(exc, first_line=True)}", aten_names(str(exc))
                        ) from exc
                    histogram.update(_lower_program(mlir, program))
        result["status"] = "lowered"
        result["reason"] = one_line("; ".join(notes)) if notes else None
    except LoweringFailed as failure:
        result.update(
            status="failed",
            stage=stage,
            failed_ops=failure.failed_ops,
            unlowered_ops=failure.unlowered_ops,
            reason=one_line(failure.reason),
        )
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"
        result.update(status="failed", stage=stage, reason=one_line(exc, first_line=True))
    result["op_histogram"] = dict(sorted(histogram.items(), key=lambda item: (-item[1], item[0])))
    result["seconds"] = round(time.perf_counter() - start, 3)
    return result
