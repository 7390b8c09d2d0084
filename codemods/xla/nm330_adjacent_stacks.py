"""NM330 adjacent-stacks: ``torch_neuronx.trace`` / NKI kernels are reported; an unused torch_neuronx import goes.

What it does:

The rule reports each use with its TorchNeuron counterpart and leaves it as it is:

* ``torch_neuronx.trace(model, example)`` -> ``torch.compile(model, backend="neuron", fullgraph=True,
  dynamic=False)`` (JIT, NEFF cache; no saved traced artifact); ``torch_neuronx.DataParallel(model)`` -> one
  process per NeuronCore (torchrun) or DDP.
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
stack) or is left on torch_xla as a whole; in a notebook, every cell counts (they share one kernel). An ``import torch_neuronx`` used
for the XLA-era API (anything but TorchNeuron's ``nki_op``, ``wrap_nki``, ``get_fallback_ops``,
``get_executed_ops``, ``clear_op_tracking``) stays with a ``todo`` naming those uses and their replacements (map
B8 / B9); one used only for TorchNeuron's API is TorchNeuron code: no finding.

It runs in projects that show Neuron markers (a real user of torch_neuronx imports it at module level).

Why:

``torch_neuronx.trace`` (ahead-of-time tracing to a TorchScript NEFF) and NKI kernels launched on the XLA device
belong to stacks next to torch_xla; half-migrating them would break them. A kernel called on tensors of the XLA
device is not a TorchNeuron call once the device is ported: on TorchNeuron it is registered as an op and called as
that op, so the file's device stays with it.

Before::

    traced = torch_neuronx.trace(model, example)

After::

    # neuron-migrate: torch_neuronx.trace is the XLA-era AOT tracer (left untouched): on TorchNeuron use torch.compile(...
    traced = torch_neuronx.trace(model, example)

Safety: needs-review. The code is unchanged but for the removal of an unused import; an inline note above each
call names the counterpart.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/nki/index.html
"""

from __future__ import annotations

import re

import libcst as cst

from codemods.xla._base import NKI_JIT, Safety, XlaRule, nki_host_mode
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
}
#: in a notebook's other cells: an import of torch_neuronx inside a block, and ``name.attribute`` reads
NESTED_IMPORT = re.compile(r"(?m)^[ \t]+(?:import|from)[ \t]+torch_neuronx\b")
ATTRIBUTE_READ = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)")
#: what TorchNeuron's torch_neuronx itself offers (an import used only for these is TorchNeuron code: nothing to say)
TORCHNEURON_API = frozenset({"nki_op", "wrap_nki", "get_fallback_ops", "get_executed_ops", "clear_op_tracking"})
#: the replacement of each XLA-era use, for the note at the import it keeps (optimum-neuron migration map B8 / B9)
XLA_ERA = {
    "trace": 'torch_neuronx.trace -> torch.compile(model, backend="neuron", fullgraph=True, dynamic=False)',
    "DataParallel": "torch_neuronx.DataParallel -> one process per NeuronCore (torchrun) or DDP",
}
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
            else:  # from torch_neuronx[.sub] import name: the top-level API it comes from
                base = dotted_name(node.module).split(".")[1:]
                used = {(base or [dotted_name(alias.name)])[0] for alias in names if bound_name(alias) in uses.names}
            used = {attribute for attribute in used if not attribute.startswith("__")}  # __version__: either stack
            if not bound & uses.names:
                removable = not uses.nested_imports and not uses.jit_load
                out.append((statement, text, "removed" if removable else "", ""))
            elif used and not used <= TORCHNEURON_API:
                replacements = [XLA_ERA[attribute] for attribute in sorted(used) if attribute in XLA_ERA]
                note = (f"`{text}` kept: this file uses the XLA-era torch_neuronx API "
                        f"({', '.join('torch_neuronx.' + a for a in sorted(used - TORCHNEURON_API))}; see the notes at "
                        "those uses)" + (f": {'; '.join(replacements)}" if replacements else "")
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
            for prefix, message in MESSAGES.items():
                if qualified == prefix or qualified.startswith(prefix + "."):
                    self.todo(node, message)
                    return

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.matches(node.func, NKI_JIT) and nki_host_mode(node):
            return  # the simulator, NumPy arrays, a profiling run: no XLA device, nothing to port
        self._report(node, node.func)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if not isinstance(node.decorator, cst.Call):
            self._report(node, node.decorator)


class _Uses(cst.CSTVisitor):
    """The names a module uses outside its imports (``attributes``: name -> the attributes read on it), whether it
    imports torch_neuronx inside a block (a probe: not this rule's to remove) and whether it calls
    ``torch.jit.load`` (a TorchScript artifact, maybe a torch_neuronx.trace NEFF that needs the import)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.names: set[str] = set()
        self.attributes: dict[str, set[str]] = {}
        self.nested_imports = False
        self.jit_load = False
        self._depth = 0

    def visit_Import(self, node: cst.Import) -> bool:
        if self._depth and any(dotted_name(alias.name).split(".")[0] == "torch_neuronx" for alias in node.names):
            self.nested_imports = True
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if self._depth and node.module is not None and dotted_name(node.module).split(".")[0] == "torch_neuronx":
            self.nested_imports = True
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

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # a keyword's name is not a use either
        return False
