"""NM330 adjacent-stacks: ``torch_neuronx.trace`` / NKI kernels are reported; an unused torch_neuronx import goes.

What it does:

The rule reports each use with its TorchNeuron counterpart and leaves it as it is:

* ``torch_neuronx.trace(model, example)`` -> ``torch.compile(model, backend="neuron", fullgraph=True,
  dynamic=False)`` (JIT, NEFF cache; no saved traced artifact); when its ``compiler_args`` (a literal, or a name
  bound once to one) carry ``--auto-cast`` / ``--auto-cast-type`` (neuronx-cc; the one not given takes its default,
  ``matmult`` / ``bf16``; ``matmul``, optimum's spelling, is read as ``matmult``; a mode that is none of
  ``none`` / ``matmult`` / ``all`` is named as such), the note says what dtype to load the eager model with:
  ``matmult`` kept the graph's outputs float32 (load float32; ``torch.autocast(..., dtype=torch.bfloat16)`` is the closest), ``all`` cast the whole
  graph (load with ``dtype=``), ``none`` cast nothing. ``torch_neuronx.DataParallel(model)`` -> one
  process per NeuronCore (torchrun) or DDP.
* The other XLA-era calls on traced artifacts: ``move_trace_to_device`` (-> one process per NeuronCore, or an eager
  model on ``torch.device("neuron", i)``), ``dynamic_batch``, ``lazy_load``, ``async_load``, ``replace_weights``,
  ``analyze``: each gets its note.
* ``torch.jit.load`` in a file that imports torch_neuronx for the XLA stack (an import whose names nothing uses, the
  "registers the neuron ops" one, or one used beyond TorchNeuron's own API) loads a torch_neuronx.trace artifact,
  which TorchNeuron cannot run: a todo says to load the eager model it was traced from, move it to the device and
  ``model.compile(backend="neuron", fullgraph=True, dynamic=False)`` (map B8), then drop the import. When the
  project shows the file that writes such an artifact (a Python file calling torch_neuronx.trace and
  ``torch.jit.save``: project fact ``xla.trace-artifact-writers``), the note names it, and the model class it loads
  the checkpoint with when it uses one ``*.from_pretrained``. ``torch.jit.save`` in a file that traces with
  torch_neuronx.trace (and imports it for the XLA stack) gets its own todo: drop the save, load the source
  checkpoint where the artifact was loaded. ``torch.jit.load`` / ``torch.jit.save`` elsewhere (no torch_neuronx
  import, or one used only for TorchNeuron's API) is ordinary TorchScript: no note.
* ``torch_neuronx.nki_jit`` / ``neuronxcc.nki.jit`` / ``nki.jit`` kernels -> ``@nki.jit`` +
  ``@torch_neuronx.nki_op(...)`` registration (TorchNeuron custom op). A kernel whose ``nki.jit`` pins a mode that
  runs it off the device (``mode="simulation"``, ``"baremetal"``, ``"benchmark"``, ``"jax"``) needs no port: no note.
* A file (or notebook) that launches NKI kernels on the XLA device is also left on torch_xla as a whole (``blockers``
  in ``codemods/xla/_base.py``; NM318 writes its note): this rule's per-kernel notes stay.

The one rewrite: a module-level ``import torch_neuronx`` / ``from torch_neuronx import ...`` of a Python file
whose names nothing in the file uses (the XLA-era "registers the neuron runtime" import) is removed, ``fixed``: on
TorchNeuron torch loads the package by itself (``torch.backends`` entry point), and without it installed (CPU) the
import raised ``ModuleNotFoundError``. It stays when the file also imports torch_neuronx inside a block (a probe:
an availability check), calls ``torch.jit.load`` (a ``torch_neuronx.trace`` artifact needs the import on the old
stack: a todo says so and points at the load's note) or is left on torch_xla as a whole; in a notebook, every cell counts (they share one kernel). An ``import torch_neuronx`` used
for the XLA-era API (anything but TorchNeuron's ``nki_op``, ``wrap_nki``, ``get_fallback_ops``,
``get_executed_ops``, ``clear_op_tracking``) stays with a ``todo`` naming those uses, the ones that have a note
of their own (a call or decorator of a name in ``MESSAGES``; an attribute only read is "has no note"), and their
replacements (map B8 / B9); one used only for TorchNeuron's API is TorchNeuron code: no finding.

It runs in projects that show Neuron markers (a real user of torch_neuronx imports it at module level).

Why:

``torch_neuronx.trace`` (ahead-of-time tracing to a TorchScript NEFF) and NKI kernels launched on the XLA device
belong to stacks next to torch_xla; half-migrating them would break them. A kernel called on tensors of the XLA
device is not a TorchNeuron call once the device is ported: on TorchNeuron it is registered as an op and called as
that op, so the file's device stays with it.

Before::

    traced = torch_neuronx.trace(model, example, compiler_args=["--auto-cast", "all", "--auto-cast-type", "bf16"])
    served = torch.jit.load("model_neuron.pt")

After::

    # neuron-migrate: torch_neuronx.trace is the XLA-era AOT tracer (left untouched): on TorchNeuron use torch.compile(...
    # ... Precision: compiler_args --auto-cast all --auto-cast-type bf16 cast the whole traced graph to torch.bfloat16: load the eager model with dtype=torch.bfloat16 ...
    traced = torch_neuronx.trace(model, example, compiler_args=["--auto-cast", "all", "--auto-cast-type", "bf16"])
    # neuron-migrate: torch.jit.load beside an XLA-era torch_neuronx import loads a torch_neuronx.trace artifact ...
    served = torch.jit.load("model_neuron.pt")

Safety: needs-review. The code is unchanged but for the removal of an unused import; an inline note above each
call names the counterpart.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/nki/index.html
"""

from __future__ import annotations

import re

import libcst as cst

from codemods._lib.cst import string_value
from codemods.inference._casting import matmul_note
from codemods.xla._base import NKI_JIT, Safety, XlaRule, name_bindings, nki_host_mode
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.imports import bound_name
from migrate.rule import dotted_name

MESSAGES = {
    "torch_neuronx.trace": "torch_neuronx.trace is the XLA-era AOT tracer (left untouched): on TorchNeuron use torch.compile(model, backend=\"neuron\", fullgraph=True, dynamic=False); there is no saved traced artifact",
    "torch_neuronx.xla_impl": "torch_neuronx.xla_impl is XLA-only (left untouched): replace with TorchNeuron APIs",
    "torch_neuronx.nki_jit": "NKI kernel via torch_neuronx.nki_jit (left untouched): on TorchNeuron register it with @torch_neuronx.nki_op(\"ns::op\", mutates_args=...) around an @nki.jit kernel",
    "neuronxcc.nki.jit": "NKI kernel (left untouched): on TorchNeuron register it with @torch_neuronx.nki_op(\"ns::op\", mutates_args=...) and call the op",
    "nki.jit": "NKI kernel (left untouched): on TorchNeuron register it with @torch_neuronx.nki_op(\"ns::op\", mutates_args=...) and call the op",
    "torch_neuronx.experimental": "torch_neuronx.experimental (XLA-era, left untouched): check the TorchNeuron equivalent",
    "torch_neuronx.DataParallel": "torch_neuronx.DataParallel is the XLA-era data-parallel wrapper of a traced model (left untouched): on TorchNeuron run one process per NeuronCore (torchrun --nproc_per_node <cores>) or wrap the model with DistributedDataParallel",
    "torch_neuronx.move_trace_to_device": "torch_neuronx.move_trace_to_device places a torch_neuronx.trace artifact on one NeuronCore (left untouched): TorchNeuron has no traced artifact; run one process per NeuronCore (torchrun --nproc_per_node <cores>, each on torch.device(\"neuron\", LOCAL_RANK)), or move an eager model to a core with model.to(torch.device(\"neuron\", i)) and compile it there (model.compile(backend=\"neuron\", fullgraph=True, dynamic=False))",
    "torch_neuronx.dynamic_batch": "torch_neuronx.dynamic_batch lets a traced model take other batch sizes by running the traced one in pieces (left untouched): TorchNeuron has no traced artifact; a model compiled with torch.compile(backend=\"neuron\", dynamic=False) compiles again for each new batch size: split or pad the inputs to the one batch size yourself",
    "torch_neuronx.lazy_load": "torch_neuronx.lazy_load defers loading a traced model onto the NeuronCores (left untouched): TorchNeuron has no traced artifact; remove the call (a compiled model loads its graph on the first call)",
    "torch_neuronx.async_load": "torch_neuronx.async_load loads a traced model onto the NeuronCores in the background (left untouched): TorchNeuron has no traced artifact; remove the call (a compiled model loads its graph on the first call)",
    "torch_neuronx.replace_weights": "torch_neuronx.replace_weights puts new weights into a traced model (left untouched): TorchNeuron has no traced artifact; load the weights into the eager model (model.load_state_dict(...)) before compiling it",
    "torch_neuronx.analyze": "torch_neuronx.analyze reports the ops the XLA-era tracer supports (left untouched): on TorchNeuron run the model on the neuron device; torch_neuronx.get_fallback_ops() lists the ops that ran on the CPU",
}
#: ``torch.jit.load`` / ``torch.jit.save`` in a file that imports torch_neuronx for the XLA stack (map B8)
JIT_LOAD = frozenset({"torch.jit.load"})
JIT_SAVE = frozenset({"torch.jit.save"})
JIT_LOAD_NOTE = ("torch.jit.load beside an XLA-era torch_neuronx import loads a torch_neuronx.trace artifact "
                 "(TorchScript with a NEFF compiled for the XLA stack{writer}), which TorchNeuron cannot run (left untouched). "
                 "TorchNeuron has no serialized traced artifact: load the eager model the artifact was traced from "
                 "(its source checkpoint, e.g. {loader}.from_pretrained(<id>), in the dtype the model had when it was "
                 "traced: float32 unless cast before; the note at torch_neuronx.trace says what its compiler_args "
                 "cast), move it to the device and compile it: model.to(device).compile(backend=\"neuron\", fullgraph=True, "
                 "dynamic=False), then call it once with inputs of the traced shapes (the NEFF cache takes the "
                 "artifact's place; map B8); then remove the torch_neuronx import")
JIT_SAVE_NOTE = ("torch.jit.save in a file that traces with torch_neuronx.trace writes the XLA-era traced artifact "
                 "(TorchScript with a NEFF compiled for the XLA stack), which TorchNeuron cannot run (left untouched): "
                 "TorchNeuron has no serialized traced artifact; drop the save, and have the files that torch.jit.load "
                 "it load the source checkpoint{loader} and compile it with backend=\"neuron\" instead (the NEFF cache "
                 "takes the artifact's place; map B8)")
#: in a Python file: a torch_neuronx.trace call (``torch_neuronx.trace(`` or a ``trace`` imported from torch_neuronx)
TRACE_CALL = re.compile(r"\btorch_neuronx\.trace\s*\(|^[ \t]*from[ \t]+torch_neuronx[ \t]+import[^\n]*\btrace\b", re.M)
#: the class a file loads its eager model with (``AutoModelForSequenceClassification.from_pretrained(...)``)
MODEL_LOAD = re.compile(r"\b(AutoModel\w*|[A-Z]\w*For[A-Z]\w*)\.from_pretrained\s*\(")


def trace_artifact_writers(text: str) -> tuple[str, ...] | None:
    """Project fact: a Python file that traces with torch_neuronx.trace and writes the result with torch.jit.save
    (the XLA-era artifact other files torch.jit.load) -> the model classes it loads with from_pretrained."""
    if "torch.jit.save" not in text or not TRACE_CALL.search(text):
        return None
    return tuple(sorted(set(MODEL_LOAD.findall(text))))


TRACE_WRITERS = ProjectFact("xla.trace-artifact-writers", frozenset({FileKind.PYTHON}), ("torch.jit.save",),
                            trace_artifact_writers)
#: neuronx-cc's casting options in torch_neuronx.trace's compiler_args, and their defaults when only one is given
AUTO_CAST_DEFAULT = "matmult"
AUTO_CAST_TYPE_DEFAULT = "bf16"
#: neuronx-cc's --auto-cast modes, and the spellings taken for them (optimum's auto_cast="matmul" is matmult)
AUTO_CAST_MODES = ("none", "matmult", "all")
AUTO_CAST_ALIASES = {"matmul": "matmult"}
CAST_TYPES = {"bf16": "torch.bfloat16", "fp16": "torch.float16", "tf32": "torch.float32"}
#: in a notebook's other cells: an import of torch_neuronx inside a block, and ``name.attribute`` reads
NESTED_IMPORT = re.compile(r"(?m)^[ \t]+(?:import|from)[ \t]+torch_neuronx\b")
IMPORT_ANYWHERE = re.compile(r"(?m)^[ \t]*(?:import|from)[ \t]+torch_neuronx\b")
ATTRIBUTE_READ = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)")
ATTRIBUTE_CALL = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*\(")
#: what TorchNeuron's torch_neuronx itself offers (an import used only for these is TorchNeuron code: nothing to say)
TORCHNEURON_API = frozenset({"nki_op", "wrap_nki", "get_fallback_ops", "get_executed_ops", "clear_op_tracking"})
#: the replacement of each XLA-era use, for the note at the import it keeps (optimum-neuron migration map B8 / B9)
XLA_ERA = {
    "trace": 'torch_neuronx.trace -> torch.compile(model, backend="neuron", fullgraph=True, dynamic=False)',
    "DataParallel": "torch_neuronx.DataParallel -> one process per NeuronCore (torchrun) or DDP",
    "move_trace_to_device": "torch_neuronx.move_trace_to_device -> one process per NeuronCore (torchrun) or an eager "
                            "model on torch.device(\"neuron\", i)",
}
JIT_LOAD_IMPORT = ("`{statement}` kept: on the old stack it registers the neuron ops that the torch_neuronx.trace "
                   "artifact this file loads with torch.jit.load needs (see the note there). Once that load is ported "
                   "to the eager model compiled with backend=\"neuron\", remove this import: TorchNeuron loads "
                   "torch_neuronx by itself")
IMPORT_REMOVED = ("`{statement}` removed: its name is used nowhere, and on TorchNeuron torch loads torch_neuronx by "
                  "itself (the torch.backends entry point); the import is needed only for its NKI helpers (nki_op, "
                  "wrap_nki). Without torch-neuronx installed (CPU) it raised ModuleNotFoundError")


class AdjacentStacks(XlaRule):
    """Report torch_neuronx.trace / NKI kernels (adjacent stacks) without changing them; remove an unused import."""

    id = "NM330"
    name = "adjacent-stacks"
    safety = Safety.NEEDS_REVIEW  # the removal of an unused import; the rest is reported
    # a project that really uses torch_neuronx imports it at module level, which marks it as a Neuron project;
    # libraries that only probe for it (transformers' availability check) are left alone, and unparsed
    scope = "neuron-project"
    triggers = ("torch_neuronx", "neuronxcc", "import nki", "from nki")
    legacy_modules = ()
    facts = (TRACE_WRITERS,)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._imports = [] if self.blocked else self._torch_neuronx_imports()  # blocked: NM318's note says it all
        if any(verdict == "removed" for _, _, verdict, _ in self._imports):
            setattr(self, "legacy_modules", ("torch_neuronx",))  # the unused-import pass removes them

    def _torch_neuronx_imports(self) -> list[tuple[cst.CSTNode, str, str, str]]:
        """(import statement, its text, verdict, note) of each module-level import of torch_neuronx of a Python
        file: "removed" (no name it binds is used, and nothing in the file may need its side effect), "kept" (used
        for the XLA-era API: the note names the replacements) or "" (TorchNeuron code, or not decidable here)."""
        module = self.ctx.shared.get("module")
        if not isinstance(module, cst.Module):
            return []
        uses = _Uses(self.ctx)
        module.visit(uses)
        namespace = self.ctx.namespace
        if namespace is not None:  # a notebook: the other cells run in the same kernel
            uses.names |= namespace.names  # identifiers outside import lines of every cell (a superset)
            uses.jit_load |= {"jit", "load"} <= namespace.names
            uses.nested_imports |= any(NESTED_IMPORT.search(cell) for cell in namespace.cells)
            for cell in namespace.cells:
                for name, attribute in ATTRIBUTE_READ.findall(cell):
                    uses.attributes.setdefault(name, set()).add(attribute)
                for name, attribute in ATTRIBUTE_CALL.findall(cell):
                    uses.called.setdefault(name, set()).add(attribute)
        out: list[tuple[cst.CSTNode, str, str, str]] = []
        for statement in module.body:
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
                continue
            node = statement.body[0]
            if isinstance(node, cst.Import):
                names = [alias for alias in node.names if dotted_name(alias.name).split(".")[0] == "torch_neuronx"]
                if len(names) != len(node.names):
                    continue
            elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative \
                    and dotted_name(node.module).split(".")[0] == "torch_neuronx" \
                    and not isinstance(node.names, cst.ImportStar):
                names = list(node.names)
            else:
                continue
            bound = {bound_name(alias) for alias in names}
            text = cst.Module(body=[]).code_for_node(node)
            if isinstance(node, cst.Import):  # torch_neuronx.<what the file reads>
                used = {attribute for name in bound for attribute in uses.attributes.get(name, set())}
                called = {attribute for name in bound for attribute in uses.called.get(name, set())}
            else:  # from torch_neuronx[.sub] import name: the top-level API it comes from
                base = dotted_name(node.module).split(".")[1:]
                used = {(base or [dotted_name(alias.name)])[0] for alias in names if bound_name(alias) in uses.names}
                called = used  # the per-use note is at each call of the name (what else it does: by hand)
            used = {attribute for attribute in used if not attribute.startswith("__")}  # __version__: either stack
            if not bound & uses.names:
                if uses.jit_load:  # the side-effect import a torch_neuronx.trace artifact needs (map B8)
                    out.append((statement, text, "kept", JIT_LOAD_IMPORT.format(statement=text)))
                else:
                    out.append((statement, text, "" if uses.nested_imports else "removed", ""))
            elif used and not used <= TORCHNEURON_API:
                xla_era = sorted(used - TORCHNEURON_API)
                # a per-use note is written at a call (or decorator): an attribute only read has none to point at
                noted = [a for a in xla_era if _message("torch_neuronx." + a) is not None and a in called]
                bare = [a for a in xla_era if a not in noted]
                replacements = [XLA_ERA[attribute] for attribute in xla_era if attribute in XLA_ERA]
                note = (f"`{text}` kept: this file uses the XLA-era torch_neuronx API "
                        f"({', '.join('torch_neuronx.' + a for a in xla_era)}"
                        + ("; see the notes at those uses" if noted and not bare else
                           f"; see the notes at the uses of {', '.join(noted)}" if noted else "")
                        + (f"; {', '.join(bare)} {'has' if len(bare) == 1 else 'have'} no note: find the TorchNeuron "
                           "counterpart by hand" if bare else "")
                        + ")" + (f": {'; '.join(replacements)}" if replacements else "")
                        + (". The torch.jit.load of this file loads a torch_neuronx.trace artifact (see the note there)"
                           if uses.jit_load else "")
                        + ". Once they are ported, remove this import: TorchNeuron loads torch_neuronx by itself")
                out.append((statement, text, "kept", note))
        return out

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        super().visit_SimpleStatementLine(node)
        for statement, text, verdict, note in self._imports:
            if statement is node:
                if verdict == "removed":
                    self.fixed(node, IMPORT_REMOVED.format(statement=text))
                elif verdict == "kept":
                    self.todo(node, note)

    def _report(self, node: cst.CSTNode, target: cst.CSTNode) -> None:
        for qualified in sorted(self.ctx.qualnames(target)):
            message = _message(qualified)
            if message is not None:
                if qualified == "torch_neuronx.trace" and isinstance(node, cst.Call):
                    message += self._trace_casting(node)
                self.todo(node, message)
                return

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.matches(node.func, NKI_JIT) and nki_host_mode(node):
            return  # the simulator, NumPy arrays, a profiling run: no XLA device, nothing to port
        if self.ctx.matches(node.func, JIT_LOAD):
            if self._xla_era_file():
                writer, loader = self._writers()
                self.todo(node, JIT_LOAD_NOTE.format(writer=writer, loader=loader or "<AutoModelClass>"))
            return
        if self.ctx.matches(node.func, JIT_SAVE):
            if self._xla_era_file() and TRACE_CALL.search(self.ctx.source):
                loader = self._writers()[1]
                self.todo(node, JIT_SAVE_NOTE.format(loader=f" ({loader}.from_pretrained)" if loader else ""))
            return
        self._report(node, node.func)

    def _writers(self) -> tuple[str, str]:
        """The files of the run that write a torch_neuronx.trace artifact with torch.jit.save, as " (<file>'s
        torch.jit.save)" ("" when none shows), and the one model class they load it from ("" unless exactly one)."""
        here = str(self.ctx.path).replace("\\", "/")
        found = dict(self.ctx.options.project.of(TRACE_WRITERS.name))
        if here not in found and TRACE_CALL.search(self.ctx.source) and "torch.jit.save" in self.ctx.source:
            found[here] = trace_artifact_writers(self.ctx.source) or ()  # this file writes one (a single-file run)
        if not found:
            return "", ""
        names = ["this file" if path == here else path for path in sorted(found)]
        classes = {cls for values in found.values() for cls in values}
        writer = f"; {', '.join(names)} writes one with torch.jit.save, maybe this one"
        if names == ["this file"]:
            writer = "; this file writes one with torch.jit.save, maybe this one"
        return writer, (next(iter(classes)) if len(classes) == 1 else "")

    def _xla_era_file(self) -> bool:
        """Whether the file (a notebook: any cell) imports torch_neuronx for the XLA stack: an import whose names
        nothing uses (the side-effect import a traced artifact needs) or one used beyond TorchNeuron's own API."""
        def decide() -> bool:
            module = self.ctx.shared.get("module")
            if not isinstance(module, cst.Module):
                return False
            uses = _Uses(self.ctx)
            module.visit(uses)
            texts = [self.ctx.source]
            namespace = self.ctx.namespace
            if namespace is not None:
                texts.extend(namespace.cells)
            if not any(IMPORT_ANYWHERE.search(text) for text in texts):
                return False
            names = uses.neuronx_names | {"torch_neuronx"}
            read = {a for text in texts for name, a in ATTRIBUTE_READ.findall(text) if name in names}
            read = {a for a in read if not a.startswith("__")} | uses.neuronx_from
            if not read:  # imported for its side effect only: the XLA-era registration of the neuron ops
                return True
            return not read <= TORCHNEURON_API
        return self.ctx.memo("nm330-xla-era-file", decide)

    def _trace_casting(self, call: cst.Call) -> str:
        """The precision a ``compiler_args=`` of torch_neuronx.trace carried (``--auto-cast`` /
        ``--auto-cast-type``, given as a literal or a name bound once to one), as a sentence for the note."""
        value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "compiler_args"), None)
        if isinstance(value, cst.Name):
            bound = name_bindings(self.ctx).get(value.value, [])
            value = bound[0] if len(bound) == 1 else None
        tokens = _string_tokens(value)
        if not tokens:
            return ""
        mode = type_ = None
        for i, token in enumerate(tokens):
            option, _, inline = token.partition("=")
            if option in ("--auto-cast", "--auto-cast-type"):
                given = inline or (tokens[i + 1] if i + 1 < len(tokens) else "")
                if option == "--auto-cast":
                    mode = given
                else:
                    type_ = given
        if mode is None and type_ is None:
            return ""
        mode = mode or AUTO_CAST_DEFAULT
        type_ = type_ or AUTO_CAST_TYPE_DEFAULT
        written = f"compiler_args --auto-cast {mode} --auto-cast-type {type_}"
        mode = AUTO_CAST_ALIASES.get(mode, mode)  # optimum's spelling of matmult, often copied into compiler_args
        dtype = CAST_TYPES.get(type_)
        if mode not in AUTO_CAST_MODES:
            return (f". Precision: {written}: {mode!r} is none of neuronx-cc's --auto-cast modes "
                    f"({', '.join(AUTO_CAST_MODES)}); check what the trace really cast before choosing the eager "
                    "model's dtype (float32 unless it was cast)")
        if mode == "none":
            return f". Precision: {written} cast nothing: keep the eager model in float32"
        if dtype is None:
            return (f". Precision: {written} cast to {type_}, which has no torch autocast dtype: keep the eager model "
                    "in float32, or load it in torch.bfloat16")
        if dtype == "torch.float32":
            return f". Precision: {written} ran float32 matmuls as tf32: keep the eager model in float32"
        if mode == "matmult":
            return ". Precision: " + matmul_note(dtype, written).replace(
                "stock transformers has no matmul-only cast, so the model is loaded",
                "an eager model has no matmul-only cast, so load it")
        return (f". Precision: {written} cast the whole traced graph to {dtype}: load the eager model with "
                f"dtype={dtype} (or model.to({dtype})) before compiling it")

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if not isinstance(node.decorator, cst.Call):
            self._report(node, node.decorator)


def _message(qualified: str) -> str | None:
    """The per-use note of a torch_neuronx / NKI name (``MESSAGES``), None when it has none."""
    for prefix, message in MESSAGES.items():
        if qualified == prefix or qualified.startswith(prefix + "."):
            return message
    return None


def _string_tokens(value: cst.BaseExpression | None) -> list[str]:
    """The whitespace-separated words of a string literal, or of a list / tuple of string literals."""
    if value is None:
        return []
    if isinstance(value, (cst.List, cst.Tuple)):
        parts = [string_value(element.value) for element in value.elements]
    else:
        parts = [string_value(value)]
    return [word for part in parts if part is not None for word in part.split()]


class _Uses(cst.CSTVisitor):
    """The names a module uses outside its imports (``attributes``: name -> the attributes read on it), whether it
    imports torch_neuronx inside a block (a probe: not this rule's to remove) and whether it calls
    ``torch.jit.load`` (a TorchScript artifact, maybe a torch_neuronx.trace NEFF that needs the import)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.names: set[str] = set()
        self.attributes: dict[str, set[str]] = {}
        self.called: dict[str, set[str]] = {}  # name -> the attributes called on it (name.attribute(...))
        self.nested_imports = False
        self.jit_load = False
        self.neuronx_names: set[str] = set()  # the names `import torch_neuronx [as x]` binds
        self.neuronx_from: set[str] = set()  # what `from torch_neuronx[.sub] import ...` takes (sub, or the names)
        self._depth = 0

    def visit_Import(self, node: cst.Import) -> bool:
        neuronx = [alias for alias in node.names if dotted_name(alias.name).split(".")[0] == "torch_neuronx"]
        if self._depth and neuronx:
            self.nested_imports = True
        self.neuronx_names |= {bound_name(alias) for alias in neuronx}
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.module is not None and not node.relative and dotted_name(node.module).split(".")[0] == "torch_neuronx":
            if self._depth:
                self.nested_imports = True
            base = dotted_name(node.module).split(".")[1:]
            if base:
                self.neuronx_from.add(base[0])
            elif not isinstance(node.names, cst.ImportStar):
                self.neuronx_from |= {dotted_name(alias.name) for alias in node.names}
        return False

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._depth += 1

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._depth -= 1

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._depth += 1

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self._depth -= 1

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)
        if "torch.jit.load" in self.ctx.qualnames(node):
            self.jit_load = True

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if isinstance(node.value, cst.Name):
            self.attributes.setdefault(node.value.value, set()).add(node.attr.value)
        if "torch.jit.load" in self.ctx.qualnames(node):
            self.jit_load = True
        node.value.visit(self)  # `torch.save` uses `torch`, not an imported `save`
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self._called(node.func)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if not isinstance(node.decorator, cst.Call):  # a call decorator is a Call: visit_Call sees it
            self._called(node.decorator)

    def _called(self, target: cst.BaseExpression) -> None:
        """name.attribute[.more](...) or @name.attribute: the attribute of the name the rule notes there."""
        if not isinstance(target, cst.Attribute):
            return
        while isinstance(target.value, cst.Attribute):
            target = target.value
        if isinstance(target.value, cst.Name):
            self.called.setdefault(target.value.value, set()).add(target.attr.value)

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # a keyword's name is not a use either
        return False
