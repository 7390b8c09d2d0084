"""Shared metadata and helpers of the torch_xla family (NM3xx). Not a rule module (leading underscore).

Every torch_xla rule is scoped to Neuron projects: torch_xla code for TPUs (or GPUs) is left alone. The
engine decides that from ``MARKERS`` (any file of the run containing one) or ``--xla``.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterable, cast

import libcst as cst

from codemods._lib.cst import Import, string_value
from codemods._lib.imported_names import IMPORTED_NAMES, keep_imported_bindings

#: What shows that a project targets AWS Neuron: the project-wide table (anchor + precise regex per
#: file kind). Plain substrings were not enough: transformers names optimum.neuron / torch_neuronx in
#: availability checks and messages, and must not count as a Neuron project.
from codemods._tables.project_markers import MARKERS, NEURON_CODE, OTHER_ACCELERATOR  # noqa: E402
from migrate import cstwalk
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.notebook.magics import mask as mask_magics
from migrate.rule import ImportMap, PythonContext, PythonRule, Safety, dotted_name  # noqa: F401  (re-exported)
from migrate.snippets import parse_expression, parse_statement

#: Files are parsed only when they mention torch_xla or a literal xla device / env var.
TRIGGERS: tuple[str, ...] = ("torch_xla", '"xla"', "'xla'")

LEGACY: tuple[str, ...] = ("torch_xla",)
ACTIVE_RULES = "xla-active-rules"  # ctx.shared key: ids of the torch_xla rules running on the file
SPLIT_RULES = "xla-split-rules"  # ctx.shared key: the rule instances that judge statements of a line of several
SPLIT_LINES = "xla-split-lines"  # ctx.shared key: id -> the line of several statements those rules have judged

XM = "torch_xla.core.xla_model"
XR = "torch_xla.runtime"

RANK = 'int(os.environ.get("RANK", 0))'
LOCAL_RANK = 'int(os.environ.get("LOCAL_RANK", 0))'
WORLD_SIZE = 'int(os.environ.get("WORLD_SIZE", 1))'


#: torch_xla constructs no rule of the family ports (qualified prefix -> how the note names it). A file that keeps
#: one runs on the XLA stack only: porting its device or process group alone would leave code that runs on neither.
#: ``blockers`` adds the grouped xm calls (``GROUPED``) and NKI kernels launched on the XLA device (``NKI_ON_XLA``),
#: and a notebook's cells share what any of them keeps (``notebook_blockers``).
BLOCKERS: dict[str, str] = {
    "torch_xla.distributed.fsdp": "XLA FSDP",
    "torch_xla.distributed.zero_redundancy_optimizer": "XLA ZeroRedundancyOptimizer",
    "torch_xla.utils.serialization": "xser",
    "torch_xla.compile": "torch_xla.compile",
    "torch_xla.experimental.compile": "torch_xla.compile",
    "torch_xla.distributed.spmd": "torch_xla SPMD",
    "torch_xla.experimental.xla_sharding": "torch_xla SPMD",
    "torch_xla.runtime.use_spmd": "torch_xla SPMD",
    "libneuronxla": "libneuronxla",
    "neuronx_distributed": "neuronx_distributed",
}
#: what each blocker becomes by hand (the file's note names only those it has)
BLOCKER_HINTS: dict[str, str] = {
    "XLA FSDP": "XLA FSDP -> torch.distributed.fsdp.fully_shard per block and on the root",
    "XLA ZeroRedundancyOptimizer": "XLA ZeroRedundancyOptimizer -> torch.distributed.optim.ZeroRedundancyOptimizer or fully_shard",
    "xser": "xser.load, or an xser.save whose checkpoint a file of the project reads with xser.load -> torch.save + "
            "torch.load(path, map_location=\"cpu\") / torch.distributed.checkpoint (convert old xser checkpoints on "
            "the old stack)",
    "torch_xla.compile": "torch_xla.compile with name=, num_different_graphs_allowed= or below another decorator -> "
                         "call the function itself (TorchNeuron runs eagerly) or torch.compile(fn, backend=\"neuron\") "
                         "without those arguments (NM319 ports torch_xla.compile(fn) and an outermost decorator)",
    "torch_xla SPMD": "torch_xla SPMD -> DTensor (init_device_mesh, parallelize_module)",
    "libneuronxla": "libneuronxla (XLA-stack runtime hooks, e.g. HLO snapshots) -> remove it, or import and call it "
                    "only under the flag that enables it (if args.<flag>:), which neuron-migrate then ports around; "
                    "compiler artifacts: TORCH_NEURONX_DEBUG_DIR",
    "neuronx_distributed": "neuronx_distributed (no TorchNeuron build) -> DeviceMesh / DTensor / FSDP2 or transformers DistributedConfig",
    "NKI kernels on the XLA device": "NKI kernels launched on XLA tensors (@nki.jit, torch_neuronx.nki_jit, "
                                     "torch_neuronx.xla_impl ops) -> wrap each @nki.jit kernel with "
                                     "@torch_neuronx.nki_op(\"ns::name\", mutates_args=()) (register_autograd for a "
                                     "backward) and call that op on neuron tensors",
    "replica groups": "xm collectives with groups= -> dist.<collective>(..., group=dist.new_group(ranks)) (or a DeviceMesh dim group)",
    "gradient averaging over replica groups": "xm.optimizer_step / reduce_gradients with groups= -> average each gradient over that group only (dist.all_reduce(p.grad, group=dist.new_group(ranks)); p.grad /= len(ranks)) or DDP/FSDP2 on a device mesh",
}
#: xm calls whose ``groups=`` (replica groups) no rule ports: a native group needs dist.new_group(ranks) by hand
GROUPED = {"all_reduce": "replica groups", "all_gather": "replica groups", "reduce_scatter": "replica groups",
           "all_to_all": "replica groups", "optimizer_step": "gradient averaging over replica groups",
           "reduce_gradients": "gradient averaging over replica groups"}
#: where each of them takes ``groups`` positionally (the signatures in torch_xla/core/xla_model.py)
GROUPS_POSITION = {"all_reduce": 3, "all_gather": 2, "reduce_scatter": 5, "all_to_all": 4, "optimizer_step": 3,
                   "reduce_gradients": 1}
WORLD_SIZE_CALLS = frozenset({f"{XM}.xrt_world_size", f"{XM}.world_size", f"{XR}.world_size",
                              "torch.distributed.get_world_size"})


def replica_groups(ctx, call: cst.Call, name: str) -> cst.Arg | None:
    """The ``groups`` argument of the xm call ``name`` when it names replica groups: None for no groups,
    ``groups=None`` and one group of every rank (``[list(range(xr.world_size()))]``), which is the world."""
    groups = arg(call, GROUPS_POSITION[name], "groups")
    if groups is None or (isinstance(groups.value, cst.Name) and groups.value.value == "None"):
        return None
    return None if all_ranks(ctx, groups.value) else groups


def all_ranks(ctx, node: cst.BaseExpression) -> bool:
    """``[list(range(W))]`` / ``[list(range(0, W))]``, W a world-size call (``xr.world_size()``,
    ``xm.xrt_world_size()``, ``dist.get_world_size()``) or a name the file binds once, to such a call."""
    if not (isinstance(node, cst.List) and len(node.elements) == 1 and isinstance(node.elements[0], cst.Element)):
        return False
    ranks = node.elements[0].value
    if not (isinstance(ranks, cst.Call) and isinstance(ranks.func, cst.Name) and ranks.func.value == "list"
            and len(ranks.args) == 1 and not ranks.args[0].star and not ranks.args[0].keyword):
        return False
    span = ranks.args[0].value
    if not (isinstance(span, cst.Call) and isinstance(span.func, cst.Name) and span.func.value == "range"
            and not any(a.star or a.keyword for a in span.args)):
        return False
    bounds = [a.value for a in span.args]
    if len(bounds) == 2 and isinstance(bounds[0], cst.Integer) and bounds[0].value == "0":
        bounds = bounds[1:]
    return len(bounds) == 1 and _world_size(ctx, bounds[0])


def _world_size(ctx, node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Call):
        return not node.args and bool(ctx.matches(node.func, WORLD_SIZE_CALLS))
    if not isinstance(node, cst.Name):
        return False
    values = name_bindings(ctx).get(node.value, [])
    return len(values) == 1 and isinstance(values[0], cst.Call) and _world_size(ctx, values[0])


def name_bindings(ctx) -> dict[str, list[cst.BaseExpression | None]]:
    """Every binding of each name in the file's original tree (see ``_bindings``), computed once per file."""
    return ctx.memo("xla-name-bindings", lambda: _bindings(ctx.shared.get("module")))


def _bindings(module: cst.Module | None) -> dict[str, list[cst.BaseExpression | None]]:
    """Every binding of each name in the file: the value of a plain ``name = value``, None for any other binding
    (a parameter, a loop target, an augmented assignment, an import, a def)."""
    found: dict[str, list[cst.BaseExpression | None]] = {}

    def bind(target: cst.CSTNode, value: cst.BaseExpression | None = None) -> None:
        if isinstance(target, cst.Name):
            found.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                bind(element.value)
        elif isinstance(target, cst.StarredElement):
            bind(target.value)

    class Bindings(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                bind(target.target, node.value if len(node.targets) == 1 else None)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            bind(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            bind(node.target)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            bind(node.target)

        def visit_For(self, node: cst.For) -> None:
            bind(node.target)

        def visit_CompFor(self, node: cst.CompFor) -> None:
            bind(node.target)

        def visit_AsName(self, node: cst.AsName) -> None:  # import ... as, with ... as, except ... as
            bind(node.name)

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            if node.asname is None:
                bind(cst.Name(dotted_name(node.name).split(".")[0]))

        def visit_Param(self, node: cst.Param) -> None:
            bind(node.name)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            bind(node.name)

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            bind(node.name)

        def visit_Global(self, node: cst.Global) -> None:
            for item in node.names:
                bind(item.name)

    if module is not None:
        cstwalk.visit(module, Bindings())
    return found
#: the rules that stay active in a blocked file: they only report (the file's one note is NM318's)
REPORT_ONLY = frozenset({"NM318", "NM320", "NM330"})
BLOCKED_NOTE = "this file keeps torch_xla constructs that no rule ports"


def blocked_note(labels: Iterable[str]) -> str:
    """The one note of a blocked file (no line numbers: a second run must find the same text)."""
    return (
        f"{BLOCKED_NOTE} ({', '.join(labels)}), so it was left on torch_xla as a whole (device, process group, "
        "loaders, steps, env vars): porting only those would leave a file that runs on neither stack. Port by hand: "
        + "; ".join(BLOCKER_HINTS.get(label) or unported_hint(label) for label in labels)
        + "; then run neuron-migrate again on this file"
    )


def _imports_torch_xla(node: cst.Import | cst.ImportFrom) -> bool:
    if isinstance(node, cst.Import):
        return any(dotted_name(alias.name).split(".")[0] == "torch_xla" for alias in node.names)
    return node.module is not None and not node.relative and dotted_name(node.module).split(".")[0] == "torch_xla"


def top_level_torch_xla(module: cst.Module | None) -> bool:
    """A torch_xla import at module level, outside any if/try: the file needs torch_xla on every run."""
    return module is not None and any(
        isinstance(small, (cst.Import, cst.ImportFrom)) and _imports_torch_xla(small)
        for line in module.body if isinstance(line, cst.SimpleStatementLine) for small in line.body)


VERSION = "torch_xla.__version__"


def version_port(ctx) -> bool:
    """Whether NM314 reads ``torch_xla.__version__`` as ``torch.__version__`` in this file: one that imports
    torch_xla at module level outside if/try (it needs torch_xla on every run, so the version tells the PyTorch
    release: torch_xla X.Y ships for torch X.Y, and TorchNeuron has no torch_xla). A guarded import (``try: import
    torch_xla``) may test for the XLA stack itself: left to NM317 and NM318's note."""
    return (ctx.options.rules is None or "NM314" in ctx.options.rules) and top_level_torch_xla(ctx.shared.get("module"))


def unported_hint(qualified: str) -> str:
    """The hint for a torch_xla call no rule ports (``unported_call``), named by its qualified name."""
    if qualified == f"{XR}.using_pjrt":
        return (f"{qualified}() (True on every PJRT runtime; TorchNeuron has no XLA runtime) -> the branch it selects, "
                "without the test")
    if qualified in CPU_COPY:
        return ("xm._maybe_convert_to_cpu with convert=False or other arguments (it only waited for the XLA device "
                "and returned the XLA tensors) -> the data itself (TorchNeuron runs eagerly); to move the tensors to "
                "the CPU: torch.utils._pytree.tree_map_only(torch.Tensor, torch.Tensor.cpu, data)")
    return f"{qualified} -> plain torch / torch.distributed (NM318's report line names the replacement)"


def unported_call(qualified: str) -> bool:
    """A torch_xla call that no rule of the family ports (NM318 reports it, and its import stays): it keeps the
    file on torch_xla as a whole, as ``BLOCKERS`` do. Porting the rest would leave a module-level torch_xla import
    (ModuleNotFoundError on the migrated stack) and new-stack calls the kept XLA stack lacks."""
    from codemods.xla.nm318_xla_unsupported import HANDLED, _handled  # late: that module imports this one

    if not (qualified == "torch_xla" or qualified.startswith("torch_xla.")) or "__" in qualified:
        return False  # torch_xla.__version__.split(...) is a str method
    if any(qualified == prefix or qualified.startswith(prefix + ".") for prefix in BLOCKERS):
        return False  # a blocker of its own label
    return not any(_handled(qualified, name) for name in HANDLED)


_MAIN_BLOCK = re.compile(r"""__name__\s*==\s*["']__main__["']""")


def kept_importers(ctx) -> tuple[str, ...]:
    """The project files that import this module when every one of them stays on torch_xla as a whole (NM318's
    blockers, followed through modules kept the same way: ``codemods/xla/_importers.py``); empty for a file kept by
    its own constructs, a script (``__main__``), a notebook, or a module some ported file imports.

    Such a module runs on the XLA stack with them (``xmp.spawn`` workers, no torchrun environment, no
    torch.distributed group): ported alone, its ranks would read torchrun's unset ``RANK`` / ``WORLD_SIZE`` (0 and 1
    on every worker) and its collectives and barriers would be skipped, silently changing what the kept files
    compute. So the family leaves it on torch_xla as a whole too, with one note naming those importers (NM318)."""

    def scan() -> tuple[str, ...]:
        from codemods.xla._importers import kept_with_importers  # late: that module imports this one

        project = ctx.options.project
        if ctx.namespace is not None or project is None or _MAIN_BLOCK.search(ctx.source) or blockers(ctx):
            return ()
        return kept_with_importers(project, str(ctx.path).replace("\\", "/"))

    return ctx.memo("xla-kept-importers", scan)


def blockers(ctx) -> tuple[str, ...]:
    """The constructs (``BLOCKERS``, grouped xm calls, NKI kernels on the XLA device) that keep this file on
    torch_xla, in a stable order. A notebook's code cells run in one kernel: what keeps one cell on torch_xla keeps
    them all (``notebook_blockers``)."""

    def scan() -> tuple[str, ...]:
        found = _scan(ctx)
        if nki_uses(ctx).on_xla():
            found.add(NKI_ON_XLA)
        if ctx.namespace is not None:
            found |= notebook_blockers(ctx)
        return tuple(sorted(found))

    return ctx.memo("xla-blockers", scan)


def _scan(ctx) -> set[str]:
    """``BLOCKERS`` and grouped xm calls in the file's tree (``ctx.shared["module"]``); records the file's
    libneuronxla imports under a flag (``guarded_hooks``)."""
    module = ctx.shared.get("module")
    found: set[str] = set()
    ported: set[int] = set()  # ids of callee nodes a rule of the family ports (torch_xla.compile(fn))
    guarded_bodies: set[int] = set()  # ids of the bodies of `if <flag>:` blocks
    hooks: dict[int, set[str]] = {}  # id(innermost `if <flag>:` body) -> the libneuronxla names used in it
    hook_imports: dict[int, int] = {}  # id(libneuronxla import under a flag) -> id(its innermost flag body)
    bodies: list[int] = []  # ids of the `if <flag>:` bodies enclosing the node visited
    compile_port = ctx.options.rules is None or "NM319" in ctx.options.rules  # not under --ignore NM319
    # xser.save -> torch.save (NM307) unless a file of the run reads the checkpoint back with xser.load
    save_port = ctx.options.rules is None or "NM307" in ctx.options.rules  # not under --ignore NM307
    xser_port = save_port and not ctx.options.project.of(XSER_LOADS.name)
    statement_calls: set[int] = set()  # ids of calls that are a statement line of their own
    # a torch_xla import at module level, outside any if/try: only then does an unported call keep the file (a
    # guarded dual-path file imports without torch_xla; NM317 notes its unported XLA branch)
    top_level_import = top_level_torch_xla(module)

    # libneuronxla used only to register pure HLO snapshot callbacks: NM313 removes them (not a blocker, no hook note)
    snapshot_port = module is not None and (ctx.options.rules is None or "NM313" in ctx.options.rules) \
        and "libneuronxla" in module.code and _snapshot_hooks_only(module.code)
    ctx.shared[SNAPSHOT_HOOKS] = snapshot_port

    def note(node: cst.CSTNode) -> None:
        if id(node) in ported:
            return
        for qualified in ctx.qualnames(node):
            for prefix, label in BLOCKERS.items():
                if qualified == prefix or qualified.startswith(prefix + "."):
                    if label == "libneuronxla" and snapshot_port:
                        continue
                    if label == "libneuronxla" and bodies:
                        hooks.setdefault(bodies[-1], set()).add(qualified)
                    else:
                        found.add(label)

    def imported(node: cst.CSTNode, module_name: str) -> None:
        if module_name.split(".")[0] != "libneuronxla" or snapshot_port:
            return
        if bodies:
            hook_imports[id(node)] = bodies[-1]
        else:
            found.add("libneuronxla")  # imported at module level or outside a flag: the file needs it

    class _Scan(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            if flag_guard(ctx, node.test):
                guarded_bodies.add(id(node.body))  # the body only: `else:` runs when the flag is off

        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
            if id(node) in guarded_bodies:
                bodies.append(id(node))

        def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
            if id(node) in guarded_bodies:
                bodies.pop()

        def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
            if id(node) in guarded_bodies:
                bodies.append(id(node))

        def leave_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
            if id(node) in guarded_bodies:
                bodies.pop()

        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            statement = node.body[0] if len(node.body) == 1 else None
            if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
                statement_calls.add(id(statement.value))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if compile_port and compile_decorator(ctx, node) is not None:
                decorator = node.decorators[0].decorator  # NM319 moves it below the def as torch.compile
                ported.add(id(decorator.func if isinstance(decorator, cst.Call) else decorator))

        def visit_Call(self, node: cst.Call) -> None:
            if compile_port and compile_target(ctx, node) is not None:
                ported.add(id(node.func))  # NM319 rewrites it
            if xser_port and (id(node) in statement_calls and xser_save(ctx, node) or xser_load(ctx, node)):
                ported.update((id(node.func), id(getattr(node.func, "value", node.func))))  # NM307 rewrites it
            if save_port and cpu_copy(ctx, node) is not None:
                ported.add(id(node.func))  # NM307 rewrites it
            note(node.func)
            if id(node.func) not in ported and top_level_import:
                found.update(q for q in ctx.qualnames(node.func) if unported_call(q))
            qualified = ctx.matches(node.func, {f"{XM}.{name}" for name in GROUPED})
            if qualified and replica_groups(ctx, node, qualified.rsplit(".", 1)[-1]) is not None:
                found.add(GROUPED[qualified.rsplit(".", 1)[-1]])

        def visit_Attribute(self, node: cst.Attribute) -> None:
            note(node)  # ZeroRedundancyOptimizer._clip_grad_norm = ..., FSDP used as a base class

        def visit_Name(self, node: cst.Name) -> None:
            note(node)

        def visit_Import(self, node: cst.Import) -> bool:
            for alias in node.names:
                imported(node, dotted_name(alias.name))
            return False  # otherwise an import alone runs nothing: the uses count

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            if node.module is not None and not node.relative:
                imported(node, dotted_name(node.module))
            return False

    if module is not None:
        cstwalk.visit(module, _Scan())
    ctx.shared[GUARDED_HOOKS] = {} if "libneuronxla" in found else {
        node: tuple(sorted(hooks.get(body, ()))) for node, body in hook_imports.items()}
    return found


#: NKI kernels launched on tensors of the XLA device: a blocker (NM330 also notes each kernel). On TorchNeuron a kernel
#: is registered with ``@torch_neuronx.nki_op("ns::op", mutates_args=...)`` around the ``@nki.jit`` kernel and called
#: as that op: the kernel's call on XLA tensors is no port of its own.
NKI_ON_XLA = "NKI kernels on the XLA device"
NKI_PACKAGES = ("neuronxcc.nki", "nki")  # neuronx-cc's NKI and the newer standalone package
NKI_JIT = frozenset(f"{package}.jit" for package in NKI_PACKAGES)
#: XLA-stack kernel wrappers (``torch_neuronx.nki_jit``, the ``torch_neuronx.xla_impl`` custom ops): XLA tensors only
XLA_KERNELS = ("torch_neuronx.nki_jit", "torch_neuronx.xla_impl")
#: ``nki.jit(mode=...)`` values that run a kernel off the XLA device (the simulator, NumPy arrays on the NeuronCore,
#: a profiling run, JAX arrays); ``"auto"`` (the default) follows its inputs, ``"torchxla"`` is the XLA device
HOST_MODES = frozenset({"simulation", "baremetal", "benchmark", "jax"})
#: calls that run a kernel off the XLA device: ``nki.simulate_kernel(kernel, *inputs)``, ``nki.baremetal(kernel)``
HOST_RUNS = frozenset(f"{package}.{name}" for package in NKI_PACKAGES
                      for name in ("simulate_kernel", "simulate", "baremetal", "benchmark", "profile"))
XLA_DEVICE_CALLS = frozenset({f"{XM}.xla_device", "torch_xla.device"})


def nki_host_mode(call: cst.Call) -> bool:
    """Whether an ``nki.jit(...)`` call pins a mode that runs the kernel off the XLA device (``mode="simulation"``,
    ``"baremetal"``, ``"benchmark"``, ``"jax"``; ``jit(kernel, mode)`` takes it second). A mode that is not a literal
    may be the device: not a host mode."""
    mode = arg(call, 1, "mode")
    return mode is not None and string_value(mode.value) in HOST_MODES


class NkiUses:
    """What a file (or the cells of a notebook, tree by tree) does with NKI: its kernels in a device mode (bound to
    a name: ``@nki.jit def k``, ``k = nki.jit(f)``, ``k = nki.jit()(f)``), how each name is used, the other device
    kernels (``torch_neuronx.nki_jit``, ``xla_impl`` ops, an unnamed ``nki.jit(f)``), and whether the XLA device is
    used (``xm.xla_device()``, ``torch_xla.device()``, ``torch.device("xla")``, ``.to("xla")``)."""

    def __init__(self) -> None:
        self.kernels: set[str] = set()
        self.host_uses: dict[str, int] = {}  # name -> uses as the kernel of a host run (nki.simulate_kernel(k, ...))
        self.other_uses: dict[str, int] = {}  # name -> any other use (a call, k[grid](...), passed on)
        self.unnamed = False  # a device kernel that is not bound to a name of its own
        self.xla_device = False

    def on_xla(self) -> bool:
        """NKI kernels launched on the XLA device: a device kernel in a file that uses the XLA device, unless every
        use of it is a host run (a kernel never used in the file may be launched by its importer: it counts)."""
        launched = self.unnamed or any(self.other_uses.get(k) or not self.host_uses.get(k) for k in self.kernels)
        return self.xla_device and launched

    def add(self, ctx, module: cst.Module | None) -> "NkiUses":
        """The uses in ``module`` (names resolved with ``ctx``'s imports)."""
        if module is None:
            return self
        uses = self
        bindings: set[int] = set()  # ids of the Name nodes that bind a kernel (def name, assignment target)
        host_arguments: set[int] = set()  # ids of the kernels a host run or a host-mode jit takes
        seen: set[int] = set()  # ids of the jit calls already accounted for (a decorator, a bound value)

        def jit_call(node: cst.BaseExpression) -> cst.Call | None:
            """``nki.jit(...)`` itself, or the ``nki.jit(...)`` of ``nki.jit(...)(f)``."""
            if isinstance(node, cst.Call) and ctx.matches(node.func, NKI_JIT):
                return node
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Call) and ctx.matches(node.func.func, NKI_JIT):
                return node.func
            return None

        def xla_kernel(node: cst.CSTNode) -> bool:
            return any(q == prefix or q.startswith(prefix + ".") for q in ctx.qualnames(node) for prefix in XLA_KERNELS)

        class _Nki(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                for decorator in node.decorators:
                    expression = decorator.decorator
                    call = expression if isinstance(expression, cst.Call) else None
                    if call is not None:
                        seen.add(id(call))
                    if ctx.matches(call.func if call is not None else expression, NKI_JIT):
                        if call is None or not nki_host_mode(call):
                            uses.kernels.add(node.name.value)
                            bindings.add(id(node.name))

            def visit_Assign(self, node: cst.Assign) -> None:
                call = jit_call(node.value)
                if call is None:
                    return
                seen.add(id(call))
                if nki_host_mode(call):
                    return
                if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                    uses.kernels.add(node.targets[0].target.value)
                    bindings.add(id(node.targets[0].target))
                else:
                    uses.unnamed = True

            def visit_Call(self, node: cst.Call) -> None:
                if ctx.matches(node.func, XLA_DEVICE_CALLS):
                    uses.xla_device = True
                elif (ctx.matches(node.func, {"torch.device"}) or (
                        isinstance(node.func, cst.Attribute) and node.func.attr.value == "to")) and any(
                        is_xla_string(a.value) for a in node.args if a.keyword is None or a.keyword.value == "device"):
                    uses.xla_device = True
                if ctx.matches(node.func, HOST_RUNS) or (ctx.matches(node.func, NKI_JIT) and nki_host_mode(node)):
                    kernel = arg(node, 0, "kernel" if ctx.matches(node.func, HOST_RUNS) else "func")
                    if kernel is not None:
                        host_arguments.add(id(kernel.value))
                if ctx.matches(node.func, NKI_JIT) and id(node) not in seen and not nki_host_mode(node):
                    uses.unnamed = True  # nki.jit(f)(x) inline, nki.jit(mode=m) kept for later
                if xla_kernel(node.func):
                    uses.unnamed = True

            def visit_Decorator(self, node: cst.Decorator) -> None:
                if xla_kernel(node.decorator):
                    uses.unnamed = True  # @torch_neuronx.nki_jit

            def visit_Name(self, node: cst.Name) -> None:
                if id(node) in bindings:
                    return
                counts = uses.host_uses if id(node) in host_arguments else uses.other_uses
                counts[node.value] = counts.get(node.value, 0) + 1

            def visit_Import(self, node: cst.Import) -> bool:
                return False

            def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
                return False

        cstwalk.visit(module, _Nki())
        return uses


def nki_uses(ctx) -> NkiUses:
    """The file's ``NkiUses`` (its original tree), computed once per file."""
    return ctx.memo("xla-nki-uses", lambda: NkiUses().add(ctx, ctx.shared.get("module")))


NOTEBOOK_MEMO = "_xla_notebook"  # the attribute of a notebook's SharedNamespace that holds its blockers


def notebook_blockers(ctx) -> set[str]:
    """What keeps a notebook's code on torch_xla, over every code cell (``ctx.namespace.trigger_text``): the cells run
    in one kernel, so a kernel defined in one cell and launched on the device of another keeps both, and porting one
    cell's device while another keeps XLA FSDP would leave a notebook that runs on neither stack. Cells (or lines,
    shell cell bodies) that do not parse as Python are left out. Computed once per notebook."""
    memo = vars(ctx.namespace).setdefault(NOTEBOOK_MEMO, {})
    if "blockers" not in memo:
        trees = python_chunks(ctx.namespace.trigger_text)
        imports = ImportMap()
        for tree in trees:
            imports = imports.merged_with(ImportMap.from_module(tree))
        found: set[str] = set()
        uses = NkiUses()
        for tree in trees:
            whole = PythonContext(path=ctx.path, source=tree.code, options=ctx.options, imports=imports)
            whole.shared["module"] = tree
            found |= _scan(whole)
            uses.add(whole, tree)
        memo["blockers"] = found | ({NKI_ON_XLA} if uses.on_xla() else set())
    return set(memo["blockers"])


def python_chunks(text: str, attempts: int = 100) -> list[cst.Module]:
    """The parts of ``text`` (a notebook's code cells, joined) that parse as Python, in order: IPython lines are
    masked; the statement holding a line that does not parse (a ``%%bash`` cell's body, a broken cell) is dropped,
    and the scan goes on at the next line that starts a statement (at most ``attempts`` parses)."""
    lines = mask_magics(text)[0].splitlines(keepends=True)

    def top_level(k: int) -> bool:  # a line that may start a module-level statement
        return lines[k][:1] not in ("", " ", "\t", "\r", "\n")

    chunks: list[cst.Module] = []
    start = 0
    while start < len(lines) and attempts > 0:
        attempts -= 1
        try:
            ast.parse("".join(lines[start:]))
        except (SyntaxError, ValueError) as error:  # ValueError: a NUL byte
            bad = min(max(start + (getattr(error, "lineno", None) or 1) - 1, start), len(lines) - 1)
            end = bad
            while end > start and attempts > 0:  # the statements before the bad line, when they parse on their own
                attempts -= 1
                if _parses("".join(lines[start:end])):
                    chunks.extend(_cst("".join(lines[start:end])))
                    break
                end = next((k for k in range(end - 1, start - 1, -1) if top_level(k)), start)
            start = next((k for k in range(bad + 1, len(lines)) if top_level(k)), len(lines))
            continue
        chunks.extend(_cst("".join(lines[start:])))
        break
    return chunks


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _cst(source: str) -> list[cst.Module]:
    try:
        return [cst.parse_module(source)]
    except cst.ParserSyntaxError:
        return []


GUARDED_HOOKS = "xla-guarded-libneuronxla"
SNAPSHOT_HOOKS = "xla-snapshot-hooks-only"  # ctx.shared key: NM313 removes the file's libneuronxla snapshot hooks


def _snapshot_hooks_only(code: str) -> bool:
    from codemods._lib.launch_targets import snapshot_hooks_only  # the project scan's own test, on the same text

    try:
        return snapshot_hooks_only(ast.parse(code))
    except (SyntaxError, ValueError):
        return False


def snapshot_hooks(ctx) -> bool:
    """Whether this file uses libneuronxla only to register HLO snapshot callbacks that only compute their answer
    (``snapshot_hooks_only`` in ``codemods/_lib/launch_targets.py``): NM313 removes those lines."""
    blockers(ctx)
    return bool(ctx.shared.get(SNAPSHOT_HOOKS))


def guarded_hooks(ctx, node: cst.CSTNode) -> tuple[str, ...] | None:
    """For an ``import libneuronxla`` in an ``if <flag>:`` body of a file that uses libneuronxla only in such bodies
    (a debug hook such as ``register_hlo_snapshot_callback`` under a command-line flag: not a blocker), the
    libneuronxla names that body uses; None for any other import. NM318 notes the branch there."""
    blockers(ctx)
    return ctx.shared.get(GUARDED_HOOKS, {}).get(id(node))


#: reads that say "a flag is set": the environment (a local object's attribute, ``args.debug``, is the other kind)
ENV_READS = frozenset({"os.environ", "os.environ.get", "os.getenv"})


def flag_guard(ctx, test: cst.BaseExpression) -> bool:
    """Whether ``if test:`` runs its body only when a command-line or environment flag is set: ``args.x``,
    ``args.x == "y"``, ``os.environ.get("X")``, ``"X" in os.environ``, ``a and <flag>``. A version test
    (``is_pt21_plus``), a negation or an ``or`` with a non-flag is not: that body runs by default."""
    if isinstance(test, cst.BooleanOperation):
        left, right = flag_guard(ctx, test.left), flag_guard(ctx, test.right)
        return (left or right) if isinstance(test.operator, cst.And) else (left and right)
    if isinstance(test, cst.Comparison):
        if len(test.comparisons) != 1:
            return False
        comparison = test.comparisons[0]
        if isinstance(comparison.operator, cst.In):  # "X" in os.environ
            return isinstance(test.left, cst.SimpleString) and bool(ctx.matches(comparison.comparator, ENV_READS))
        operator, value = comparison.operator, comparison.comparator
        if isinstance(operator, cst.IsNot):  # args.x is not None
            return isinstance(value, cst.Name) and value.value == "None" and flag_guard(ctx, test.left)
        if not isinstance(operator, (cst.Equal, cst.NotEqual, cst.GreaterThan, cst.GreaterThanEqual)):
            return False
        falsy = value.value in ("False", "None") if isinstance(value, cst.Name) else (
            isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) and not ast.literal_eval(value.value))
        # `args.x == "on"` runs only when set; `args.x == 0` may be the default: not a flag test
        return (isinstance(value, (cst.SimpleString, cst.Integer, cst.Float, cst.Name)) and flag_guard(ctx, test.left)
                and not (falsy and isinstance(operator, cst.Equal))
                and (not isinstance(value, cst.Name) or value.value in ("True", "False", "None")))
    if isinstance(test, cst.Call):
        return bool(ctx.matches(test.func, ENV_READS)) and not any(a.star for a in test.args)
    if isinstance(test, cst.Subscript):
        return bool(ctx.matches(test.value, ENV_READS))
    if isinstance(test, cst.Attribute):
        root: cst.BaseExpression = test
        while isinstance(root, cst.Attribute):
            root = root.value
        # an attribute of a local object (args, flags, self.config), not of an imported module (sys.version_info)
        return isinstance(root, cst.Name) and not ctx.qualnames(test) and not ctx.qualnames(root)
    return False


XSER = "torch_xla.utils.serialization"
XSER_SAVE = frozenset({f"{XSER}.save"})
XSER_LOAD = frozenset({f"{XSER}.load"})


CPU_COPY = frozenset({f"{XM}._maybe_convert_to_cpu"})


def cpu_copy(ctx, call: cst.Call) -> cst.Arg | None:
    """The data of ``xm._maybe_convert_to_cpu(data)`` (``convert=True`` literal at most beside it): the shape NM307
    ports to ``torch.utils._pytree.tree_map_only(torch.Tensor, torch.Tensor.cpu, data)``; None for any other call."""
    if not ctx.matches(call.func, CPU_COPY) or has_star(call):
        return None
    data, convert = arg(call, 0, "data"), arg(call, 1, "convert")
    if data is None or len(call.args) != 1 + (convert is not None):
        return None
    if convert is not None and not (isinstance(convert.value, cst.Name) and convert.value.value == "True"):
        return None  # convert=False only waited for the device: it returned the XLA tensors themselves
    return data


def xser_load(ctx, call: cst.Call) -> bool:
    """``xser.load(path)`` (its one parameter): the shape NM307 ports to ``torch.load(path, map_location="cpu")``
    where the project's xser.save calls are ported too (no file keeps an xser.load: ``XSER_LOADS``)."""
    if not ctx.matches(call.func, XSER_LOAD) or len(call.args) != 1 or call.args[0].star:
        return False
    keyword = call.args[0].keyword
    return keyword is None or keyword.value == "path"


def xser_save(ctx, call: cst.Call) -> bool:
    """``xser.save(data, path[, master_only, global_master])`` with literal options: the shape NM307 ports (to a
    rank-0 ``torch.save``) where nothing in the project reads the checkpoint back with ``xser.load``."""
    if not ctx.matches(call.func, XSER_SAVE) or any(a.star for a in call.args):
        return False
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if keywords - {"data", "path", "master_only", "global_master"} or len(call.args) > 4:
        return False
    options = [arg(call, 2, "master_only"), arg(call, 3, "global_master")]
    literal = all(o is None or (isinstance(o.value, cst.Name) and o.value.value in ("True", "False")) for o in options)
    return literal and arg(call, 0, "data") is not None and arg(call, 1, "path") is not None


_XSER_IMPORT = re.compile(r"import\s+torch_xla\.utils\.serialization\s+as\s+(\w+)")
_XSER_LOAD_IMPORT = re.compile(r"from\s+torch_xla\.utils\.serialization\s+import\s+[^\n]*\bload\b")


#: what may keep a file on torch_xla besides xser (``BLOCKERS``, replica groups, NKI kernels), as text: a file
#: with one of them keeps its xser.load, so the project's xser.save calls keep the format it reads
_OTHER_BLOCKERS = re.compile(r"fsdp|zero_redundancy|torch_xla\.compile|experimental\.compile|spmd|xla_sharding"
                             r"|libneuronxla|neuronx_distributed|\bnki\b|nki_jit|\bgroups\b|\[\s*\[")


def loads_with_xser(text: str) -> bool | None:
    """Whether a file keeps reading checkpoints with ``xser.load`` (the project fact ``XSER_LOADS``): it calls it
    in a shape NM307 does not port (anything but ``<alias>.load(path)`` of an ``import ... as`` alias), or it has
    something else that may keep it on torch_xla (read from the text: conservative)."""
    aliases = set(_XSER_IMPORT.findall(text)) | {"serialization", "torch_xla.utils.serialization"}
    uses = [a for a in aliases if re.search(rf"\b{re.escape(a)}\.load\b", text)]
    if _XSER_LOAD_IMPORT.search(text) or any(re.search(rf"\b{re.escape(a)}\.load\s*\(", text) for a in aliases):
        if _XSER_LOAD_IMPORT.search(text) or _OTHER_BLOCKERS.search(text) \
                or not set(uses) <= set(_XSER_IMPORT.findall(text)):
            return True
        try:
            tree = ast.parse(text)
        except SyntaxError:  # a notebook's JSON, a file that does not parse: keep the format
            return True
        from codemods._lib.launch_targets import XSER_SAVE_ONLY, xla_blockers  # late: it imports this module

        if (xla_blockers(text) or frozenset()) - {XSER_SAVE_ONLY}:
            return True  # a torch_xla call no rule ports keeps the file, and its xser.load, on torch_xla
        portable = 0
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in uses:
                one = len(node.args) + len(node.keywords) == 1
                if not one or any(isinstance(a, ast.Starred) for a in node.args) \
                        or any(k.arg != "path" for k in node.keywords):
                    return True
                portable += 1
        mentions = sum(len(re.findall(rf"\b{re.escape(a)}\.load\b", text)) for a in uses)
        return True if mentions != portable else None  # `loader = xser.load`, a load in a comment or string
    return None


#: files of the run that load xser checkpoints: an xser.save they read stays (its format is xser's)
XSER_LOADS = ProjectFact("xla-xser-load", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}),
                         ("torch_xla.utils.serialization", "torch_xla.utils import serialization"), loads_with_xser)


COMPILE = frozenset({"torch_xla.compile", "torch_xla.experimental.compile"})


def compile_decorator(ctx, function: cst.FunctionDef) -> bool | None:
    """``full_graph`` of a ``@torch_xla.compile`` / ``@torch_xla.compile(full_graph=...)`` that is the outermost
    decorator of ``function`` (applied last, so ``name = torch.compile(name, ...)`` after the def is the same),
    else None."""
    if not function.decorators:
        return None
    decorator = function.decorators[0].decorator
    if isinstance(decorator, (cst.Name, cst.Attribute)):
        return False if ctx.matches(decorator, COMPILE) else None
    if not (isinstance(decorator, cst.Call) and ctx.matches(decorator.func, COMPILE)):
        return None
    if any(a.keyword is None or a.keyword.value != "full_graph" for a in decorator.args):
        return None
    value = decorator.args[0].value if decorator.args else None
    if value is None:
        return False
    return value.value == "True" if isinstance(value, cst.Name) and value.value in ("True", "False") else None


def compile_target(ctx, call: cst.Call) -> cst.Arg | None:
    """The function argument of a ``torch_xla.compile(fn)`` NM319 ports (``full_graph=`` a literal bool; ``fn`` a
    name, an attribute or a lambda), else None. ``name=`` / ``num_different_graphs_allowed=`` have no exact
    torch.compile counterpart: such a call stays (a blocker)."""
    if not ctx.matches(call.func, COMPILE) or any(a.star for a in call.args):
        return None
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    function = positional[0] if len(positional) == 1 else keywords.get("f") if not positional else None
    if function is None or set(keywords) - {"f", "full_graph"} or len(call.args) != 1 + ("full_graph" in keywords):
        return None
    full_graph = keywords.get("full_graph")
    if full_graph is not None and not (isinstance(full_graph.value, cst.Name)
                                       and full_graph.value.value in ("True", "False")):
        return None
    return function if isinstance(function.value, (cst.Name, cst.Attribute, cst.Lambda)) else None


NXD = "neuronx_distributed"
WHOLESALE = 6  # NxD calls in a file that defines classes: a modeling file, to replace rather than port
WHOLESALE_NOTE = "neuronx-distributed modeling file (its classes are built on NxD layers and parallel_state)"


def nxd_modeling_file(ctx) -> int:
    """How many NxD calls the file makes when it is a modeling file (classes built on NxD layers), else 0.
    NM320 gives such a file one note (replace it wholesale); NM318 then adds no note of its own."""

    def count() -> int:
        module = ctx.shared.get("module")
        calls: list[cst.Call] = []

        class Calls(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                if any(q == NXD or q.startswith(NXD + ".") for q in ctx.qualnames(node.func)):
                    calls.append(node)

        for statement in module.body if module is not None else ():
            if isinstance(statement, cst.ClassDef):  # layers built in model classes, not a training loop
                cstwalk.visit(statement, Calls())
        if len(calls) < WHOLESALE and WHOLESALE_NOTE in ctx.source:
            return WHOLESALE  # an earlier run said so, then rewrote some of those calls: the file is what it was
        return len(calls) if len(calls) >= WHOLESALE else 0

    return ctx.memo("nxd-modeling-file", count)


def names(*pairs: tuple[str, Iterable[str]]) -> frozenset[str]:
    """``names((XM, ["mark_step"]), ("torch_xla", ["sync"]))`` -> qualified names."""
    return frozenset(f"{module}.{name}" for module, members in pairs for name in members)


class XlaRule(PythonRule):
    """Base of the family: scope, markers, triggers, legacy import cleanup. Not a rule itself (no id)."""

    scope = "neuron-project"
    markers = MARKERS
    other_accelerator = OTHER_ACCELERATOR  # a CUDA baseline file in a Neuron project is left alone
    neuron_code = NEURON_CODE
    triggers = TRIGGERS
    legacy_modules = LEGACY

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # every rule of the family may leave a torch_xla import unused: the import stays while another module of
        # the project imports its name from this file (``from xla_utils import xm``); NM321 says so at both ends
        if IMPORTED_NAMES not in cls.facts:
            cls.facts = (*cls.facts, IMPORTED_NAMES)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        ctx.shared.setdefault(ACTIVE_RULES, set()).add(self.id)  # see codemods/xla/_values.py
        keep_imported_bindings(ctx)  # a name another module imports from this file is no unused import
        self._statement_values: set[int] = set()  # ids of the calls that are a statement of their own
        self._fstrings: list[str] = []  # the quote of each f-string the visit is inside (see quote_safe)
        if self.blocked:
            # the file keeps using torch_xla: its imports (side-effect ones too) stay (a per-instance override of
            # the ClassVar table, as _withdraw does for moves)
            setattr(self, "legacy_modules", ())
            # NM316 judges a module kept with its importers itself (its settings stay, with that note)
            if self.id not in REPORT_ONLY and not (self.id == "NM316" and not blockers(ctx)):
                self._withdraw()
        elif type(self).small_statement is not XlaRule.small_statement:
            ctx.shared.setdefault(SPLIT_RULES, []).append(self)

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statement_values.add(id(node.value))

    def used_as_value(self, call: cst.Call) -> bool:
        """Whether ``call``'s result is used (``ok = xm.save(...)``, ``f(xm.rendezvous(t))``): visited calls only."""
        return id(call) not in self._statement_values

    @property
    def blocked(self) -> bool:
        """The file keeps torch_xla constructs no rule ports, or is a module whose importers all do (``kept_importers``):
        it stays on torch_xla as a whole (NM318 says why)."""
        return bool(blockers(self.ctx)) or bool(kept_importers(self.ctx))

    def _withdraw(self) -> None:
        """Make this rule's callbacks and symbol moves pass-throughs for this file: no rewrite, no finding."""
        setattr(self, "moves", {})  # a per-instance override of the ClassVar table
        for attribute in dir(type(self)):
            if attribute.startswith("visit_") and attribute.count("_") == 1:
                setattr(self, attribute, lambda node: None)
            elif attribute.startswith("leave_") and attribute.count("_") == 1:
                setattr(self, attribute, lambda original, updated: updated)

    @property
    def module(self) -> cst.Module | None:
        """The file's original tree."""
        return self.ctx.shared.get("module")

    # ------------------------------------------------------------------ helpers
    # f-strings: before Python 3.12 an expression inside f"..." cannot use the same quote character.
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._fstrings = []  # f-strings never span statements: resets a stack another rule's leave may have skipped

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._fstrings.append(node.start[-1:])

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.FormattedString:
        if self._fstrings:
            self._fstrings.pop()
        return updated

    def code_text(self) -> str:
        """The file's source without comment lines (notes mention the APIs they recommend)."""
        return "\n".join(line for line in self.ctx.source.splitlines() if not line.lstrip().startswith("#"))

    def quote_safe(self, source: str) -> str:
        quotes = self._fstrings
        if '"' in quotes and "'" not in quotes:
            return source.replace('"', "'")
        return source

    def expr(self, source: str, *imports: Import) -> cst.BaseExpression:
        for module, name, asname in imports:
            self.ctx.add_import(module, name, asname)
        return parse_expression(self.quote_safe(source))

    def emit(self, code) -> cst.BaseExpression:
        """``codemods._lib.device.emit`` made safe inside f-strings."""
        return self.expr(code.source, *code.imports)

    def statement(self, source: str, *imports: Import) -> cst.BaseStatement:
        for module, name, asname in imports:
            self.ctx.add_import(module, name, asname)
        return parse_statement(source)

    def call_of(self, statement: cst.CSTNode, names_: Iterable[str]) -> cst.Call | None:
        """The call of a one-expression statement line when it calls one of ``names_``."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        expr = statement.body[0]
        if isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call) and self.ctx.matches(expr.value.func, names_):
            return expr.value
        return None

    def line_call(self, original: cst.CSTNode, updated: cst.CSTNode, names_: Iterable[str]) -> cst.Call | None:
        """Like ``call_of`` but None when another rule already emptied or reshaped the line."""
        if not isinstance(updated, cst.SimpleStatementLine) or len(updated.body) != 1:
            return None
        return self.call_of(original, names_)

    def suite_todo(self, node: cst.SimpleStatementSuite, names_: Iterable[str], message: str) -> None:
        """One-line suites (``if x: xm.save(...)``) are not rewritten: say so."""
        for stmt in node.body:
            if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and self.ctx.matches(stmt.value.func, names_):
                self.todo(stmt.value, message)

    def replace_line(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, new: cst.BaseStatement | list
    ):
        """Replace a statement line by one or more statements, keeping its comments above."""
        statements = new if isinstance(new, list) else [new]
        if not statements:
            return cst.RemoveFromParent()
        statements[0] = statements[0].with_changes(leading_lines=updated.leading_lines)
        last = statements[-1]
        if isinstance(last, cst.SimpleStatementLine):  # a trailing comment stays on the line that does the work
            statements[-1] = last.with_changes(trailing_whitespace=updated.trailing_whitespace)
        return statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)

    def split_line(
        self,
        original: cst.SimpleStatementLine,
        updated: cst.SimpleStatementLine,
        decide: Callable[[int, cst.BaseSmallStatement], list[cst.BaseStatement] | None],
    ):
        """A line of several small statements (``opt.step(); xm.mark_step()``), each judged on its own:
        ``decide(index, small)`` (the original small statement) returns None to keep it, ``[]`` to remove it, or the
        statements that replace it. The kept ones stay together on their line, in order (a simple replacement joins
        them; a compound one, ``if ...: dist.barrier()``, splits the line around it); the line goes when all of them
        go. None when the line holds one statement, another rule changed how many it holds, or nothing is decided."""
        if len(original.body) < 2 or len(updated.body) != len(original.body):
            return None
        out: list[cst.BaseStatement] = []
        current: list[cst.BaseSmallStatement] = []
        changed = False

        def flush() -> None:
            if current:
                last = current[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)  # `a();` is legal, `a()` is clean
                out.append(cst.SimpleStatementLine(body=[*current[:-1], last]))
                current.clear()

        for index, (old, new) in enumerate(zip(original.body, updated.body)):
            replacement = decide(index, old)
            if replacement is None:
                current.append(new)
                continue
            changed = True
            for statement in replacement:
                if isinstance(statement, cst.SimpleStatementLine):
                    current.extend(statement.body)
                else:
                    flush()
                    out.append(statement)
        if not changed:
            return None
        flush()
        if not out:
            return cst.RemoveFromParent()
        leading = list(updated.leading_lines)
        lines = [k for k, statement in enumerate(out) if isinstance(statement, cst.SimpleStatementLine)]
        if lines:  # a trailing comment stays with the line's last kept statements
            last_line = cast(cst.SimpleStatementLine, out[lines[-1]])
            out[lines[-1]] = last_line.with_changes(trailing_whitespace=updated.trailing_whitespace)
        elif updated.trailing_whitespace.comment is not None:  # only compound statements left: the comment goes above
            leading.append(cst.EmptyLine(comment=updated.trailing_whitespace.comment))
        out[0] = out[0].with_changes(leading_lines=leading)
        return out[0] if len(out) == 1 else cst.FlattenSentinel(out)

    def small_statement(
        self, line: cst.SimpleStatementLine, index: int, small: cst.BaseSmallStatement
    ) -> list[cst.BaseStatement] | None:
        """A rule that rewrites whole statement lines judges here the ``index``-th statement of a line of several
        (``opt.step(); xm.mark_step()``): None to leave it, ``[]`` to remove it, or the statements that replace it
        (the rule reports it). See ``split_statements``."""
        return None

    def split_statements(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        """The rewrite of a line of several statements by every rule of the family that judges them
        (``small_statement``), done once, by the first of them whose ``leave_SimpleStatementLine`` reaches the line
        (the traversal gives a line one leave per rule, and a line a rule replaced reaches the later ones as it
        was: so one of them decides for all). The later ones get ``updated`` back."""
        done = self.ctx.shared.setdefault(SPLIT_LINES, {})
        if done.get(id(original)) is original:
            return updated
        done[id(original)] = original
        rules = self.ctx.shared.get(SPLIT_RULES, [])

        def decide(index: int, small: cst.BaseSmallStatement) -> list[cst.BaseStatement] | None:
            for rule in rules:
                replacement = rule.small_statement(original, index, small)
                if replacement is not None:
                    return replacement
            return None

        split = self.split_line(original, updated, decide)
        return updated if split is None else split

    def small_call(self, small: cst.CSTNode, names_: Iterable[str]) -> cst.Call | None:
        """The call of an expression statement (one small statement of a line) when it calls one of ``names_``."""
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self.ctx.matches(small.value.func, names_):
            return small.value
        return None


def arg(call: cst.Call, position: int | None, keyword: str | None) -> cst.Arg | None:
    """The argument at ``position`` (positional) or named ``keyword``."""
    if keyword is not None:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a
    if position is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position < len(positional):
            return positional[position]
    return None


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def is_xla_string(node: cst.CSTNode | None) -> bool:
    """``"xla"`` or ``"xla:N"`` (a device), not ``"xla://"`` (an init_method)."""
    value = string_value(node)
    return value is not None and _XLA_DEVICE.fullmatch(value) is not None


_XLA_DEVICE = re.compile(r"xla(:\d+)?")


def walk(node: cst.CSTNode, test: Callable[[cst.CSTNode], bool]) -> bool:
    """True if ``test`` holds for ``node`` or any node below it."""
    return cstwalk.find(node, test)


def subtree(tree: cst.CSTNode) -> list[cst.CSTNode]:
    """``tree`` and every node below it (whitespace and punctuation excepted), in walk order."""
    found: list[cst.CSTNode] = []

    def note(node: cst.CSTNode) -> bool:
        found.append(node)
        return False

    cstwalk.find(tree, note)
    return found


def module_uses(module: cst.Module, name: str) -> bool:
    """Whether ``module`` may use ``name`` outside import statements: a name, an attribute ``x.name`` or a string
    holding it (``__all__``). Callers remove an import only when this is False, so it errs towards a use: an import
    kept is never wrong."""
    found = False

    class Uses(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Name(self, node: cst.Name) -> None:
            nonlocal found
            found = found or node.value == name

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            nonlocal found
            found = found or name in node.value

    cstwalk.visit(module, Uses())
    return found
