"""NM203 trainer-constructors: Neuron trainer and accelerator constructor arguments become their stock forms.

What it does:

On the constructor call of a Neuron trainer (``NeuronTrainer``, ``NeuronSFTTrainer``, ``NeuronORPOTrainer``;
matched through its import, so ``NeuronTrainer as Trainer`` counts):

* ``tokenizer=`` -> ``processing_class=`` (transformers 5 / trl 1.x accept only the latter);
* ``NeuronSFTTrainer(model_init=...)`` -> removed with a todo (``SFTTrainer`` has no ``model_init``);
* a class deriving from a Neuron trainer gets a todo: overridden methods must be checked against the stock base.

The same keywords are changed at the call of a class of the file deriving from a Neuron trainer (through other
classes of the file) when each class of the chain has no ``__init__`` or one that passes ``**kwargs`` unchanged to
``super().__init__`` (``codemods/_lib/forwarded_init.py``): ``SmoothedTrainer(..., tokenizer=tok,
label_smoothing=0.1)`` with ``def __init__(self, *args, label_smoothing=0.0, **kwargs)`` gets
``processing_class=tok``, since the keyword reaches the stock base (which raises ``TypeError`` for ``tokenizer=``).
A keyword that a class of the chain takes itself (``def __init__(self, *args, tokenizer=None, **kwargs)``) stays.
Where a class reads, pops or rebuilds ``kwargs`` before passing it on (or calls ``super().__init__`` conditionally),
the keyword stays with a todo: whether it reaches the base is not known.

A subclass imported from another module of the project (``from trainers import PackedTrainer``, ``from .trainers
import ...``) is followed the same way, through a project fact (``training.trainer-subclasses``: the module-level
classes of each file, the base their chain reaches and the keywords it takes): the module is the file the import
names, looked up from the importing file's folder and each folder above it (a relative import: from its own
package; a dotted module found nowhere there: any folder of the project, for a package installed from ``src/``);
where two files of the project could be the module and they say different things, nothing is known and
the call is left as it is. A chain may cross several modules (``class A(NeuronTrainer)`` in one,
``class B(A)`` in another).

On ``NeuronAccelerator(...)``: the Neuron-only keywords ``mp_plugin``, ``zero_1``, ``autocast_backend``,
``trn_config`` and ``mixed_precision_config`` are removed with a todo naming the stock replacement
(``parallelism_config=ParallelismConfig(...)``, ``mixed_precision="bf16"``, bf16 weights).

A keyword whose value is a name bound, in the call's scope (its function, or the module for a name the function
only reads), to a construction of an optimum-neuron class (``plugin = ModelParallelismPlugin(tensor_parallel_size=8)``)
is followed to that binding, as the inline form (``mp_plugin=ModelParallelismPlugin(...)``) goes with its keyword:

* when it is the name's only binding, a plain (or annotated) assignment whose arguments only read values, and the
  keyword its only reader (a notebook's other cells included), the assignment is removed with the keyword, and the
  import it leaves unused with it: the file no longer imports optimum.neuron on that path. The todo names what the construction set:
  a tensor parallel degree is not applied any more and must reach the model load (``DistributedConfig(tp_size=...)``)
  and the Accelerator's mesh (``ParallelismConfig(tp_size=..., dp_shard_size=...)``); ParallelismConfig alone is not
  built, since accelerate's ``prepare`` raises for a model not loaded tensor-parallel;
* otherwise (the object is read elsewhere, bound twice, built by code that may do more) the object and its import stay,
  so the keyword stays too, with a todo: the stock ``Accelerator`` refuses it, so verification (NM702) withdraws the
  NM201 class move and the file stays on ``NeuronAccelerator`` as a whole, instead of a "fixed" ``Accelerator`` on
  a path that still imports optimum.neuron.

In a script that trained with an optimum-neuron trainer (it imports one, or a project class deriving from one),
``trainer.train(resume_from_checkpoint=X)`` (or ``trainer.train(X)`` on a trainer the file builds; not a literal
None / False) gets a todo: the stock Trainer cannot resume the ``checkpoint-*`` folders optimum-neuron wrote (a
sharded model's ``shards/`` and ``trn_config.json`` make ``train()`` raise ValueError "Can't find a valid
checkpoint"; the optimizer state is optimum's), so the note says to resume only from the migrated run's own
checkpoints and, to continue an old run, to consolidate on the old stack and start from ``from_pretrained(<dir>)``
with a new ``output_dir`` (``codemods/_tables/legacy_checkpoints.py``; for a project pinned to 0.4.x it adds that
0.4.x's NeuronTrainer refused any resume). NM408 says the same on a ``--resume_from_checkpoint`` launch flag.

Why:

The stock trainers and ``Accelerator`` do not accept the Neuron-only keywords, and transformers 5 removed the
trainers' ``tokenizer=`` argument in favour of ``processing_class=``.

Before::

    trainer = NeuronSFTTrainer(model=model, args=args, tokenizer=tok, model_init=None)

    plugin = ModelParallelismPlugin(tensor_parallel_size=8)
    accelerator = NeuronAccelerator(mp_plugin=plugin, gradient_accumulation_steps=4)

    class SmoothedTrainer(NeuronTrainer):
        def __init__(self, *args, label_smoothing=0.0, **kwargs):
            super().__init__(*args, **kwargs)

    SmoothedTrainer(model=model, args=args, tokenizer=tok, label_smoothing=0.1)

After::

    # neuron-migrate: model_init=None: SFTTrainer has no model_init ...
    trainer = SFTTrainer(model=model, args=args, processing_class=tok)
    # neuron-migrate: mp_plugin=plugin removed (NeuronAccelerator only), with `plugin = ModelParallelismPlugin(...)` ...
    accelerator = Accelerator(gradient_accumulation_steps=4)

    class SmoothedTrainer(Trainer):  # NM201 moves the base
        ...

    SmoothedTrainer(model=model, args=args, processing_class=tok, label_smoothing=0.1)

Safety: needs-review. Accelerator options have no one-to-one stock switch: a reviewer picks the replacement each
todo names.

References:

* https://huggingface.co/docs/transformers/main_classes/trainer
* https://huggingface.co/docs/accelerate/package_reference/accelerator
* https://github.com/huggingface/transformers/releases/tag/v5.0.0
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import libcst as cst

from codemods._lib.cst import find_keyword, set_args, source_of
from codemods._lib.forwarded_init import module_classes, route
from codemods._lib.optimum_version import PINS
from codemods._tables.legacy_checkpoints import resume_note
from codemods._tables.training_symbols import NEURON_TRAINERS, TRAINING_MOVES
from codemods.training._base import project_line, reported_keyword, tokenizer_to_processing_class
from migrate import cstwalk
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.rule import PythonRule, Safety

ACCELERATORS = {old for old, new in TRAINING_MOVES.items() if new == "accelerate.Accelerator"}
ACCELERATOR_KWARGS = {
    "mp_plugin": "model parallelism now comes from the model (from_pretrained distributed_config) or Accelerator(parallelism_config=ParallelismConfig(tp_size=..., dp_shard_size=...))",
    "zero_1": "no ZeRO-1 switch: shard with ParallelismConfig(dp_shard_size=...) (FSDP2) or keep plain data parallelism",
    "autocast_backend": 'use Accelerator(mixed_precision="bf16") for autocast on the neuron device',
    "trn_config": "pass the parallel layout as ParallelismConfig(tp_size=..., dp_shard_size=...) or load the model with distributed_config",
    "mixed_precision_config": 'FULL_BF16 -> load weights in bf16 (dtype=torch.bfloat16) with mixed_precision="no"; AUTOCAST_BF16 -> mixed_precision="bf16"',
}

#: trainer constructor keywords this rule changes -> why (for the todo where a subclass may not pass them on)
TRAINER_KEYWORDS = {
    "tokenizer": "transformers 5 / trl 1.x trainers take processing_class= instead of tokenizer=",
    "model_init": "trl SFTTrainer has no model_init",
}

#: calls that read a value and change nothing: an argument of a removable plugin construction may use them
_PURE_CALLS = frozenset({"int", "float", "bool", "str", "len", "min", "max", "os.environ.get", "os.getenv"})
_EFFECTS = (cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda)


@dataclass(frozen=True)
class PluginBinding:
    """The one binding, in the call's scope, of a name passed as a Neuron-only accelerator keyword to a construction
    of an optimum-neuron class (``mp_plugin = ModelParallelismPlugin(tensor_parallel_size=8)``)."""

    assign: cst.Assign | cst.AnnAssign
    cls: str  # the class it builds, as written
    removable: bool  # read nowhere but by this keyword: the assignment goes with the keyword
    why: str  # when not removable: what else reads or binds the name


def _occurrences(scope: cst.CSTNode, name: str) -> list[cst.Name]:
    """The ``Name`` nodes of ``name`` in ``scope`` (nested scopes included), an attribute's or keyword's name aside."""
    found: list[cst.Name] = []
    skip: set[int] = set()

    class Names(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            skip.add(id(node.attr))

        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None:
                skip.add(id(node.keyword))

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name and id(node) not in skip:
                found.append(node)

    cstwalk.visit(scope, Names())
    return found


def _pure(ctx, call: cst.Call) -> bool:
    """Whether building ``call`` does nothing but build it: its arguments read values (no call other than
    ``_PURE_CALLS``, no await, yield, walrus or lambda)."""

    def effect(node: cst.CSTNode) -> bool:
        if isinstance(node, _EFFECTS):
            return True
        if isinstance(node, cst.Call) and node is not call:
            written = source_of(node.func)
            return written not in _PURE_CALLS and not (ctx.qualnames(node.func) & _PURE_CALLS)
        return False

    return not any(cstwalk.find(arg.value, effect) for arg in call.args)


def plugin_bindings(ctx) -> dict[int, dict[str, PluginBinding]]:
    """id(accelerator call) -> keyword -> its ``PluginBinding``, for each Neuron-only keyword (``ACCELERATOR_KWARGS``)
    whose value is a name the call's scope (its function, or the module for a name the function only reads) binds to
    a call of an optimum-neuron class.
    Removable when that is the name's only binding, a plain ``name = Class(...)`` (or ``name: T = Class(...)``) in the
    same scope whose arguments
    only read values, and the keyword its only reader (in the file, and in the other cells of a notebook)."""
    module = ctx.shared.get("module")
    if not isinstance(module, cst.Module):
        return {}
    found: dict[int, dict[str, PluginBinding]] = {}
    scopes: list[cst.CSTNode] = [module]
    #: id(scope) -> its assignments (``name = ...``, ``name: T = ...``) and the names each binds
    assigns: dict[int, list[tuple[cst.Assign | cst.AnnAssign, list[cst.BaseExpression]]]] = {}
    calls: list[tuple[cst.Call, cst.CSTNode]] = []

    class Gather(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            scopes.append(node)

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            scopes.pop()

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            scopes.append(node)

        def leave_ClassDef(self, node: cst.ClassDef) -> None:
            scopes.pop()

        def visit_Assign(self, node: cst.Assign) -> None:
            assigns.setdefault(id(scopes[-1]), []).append((node, [target.target for target in node.targets]))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                assigns.setdefault(id(scopes[-1]), []).append((node, [node.target]))

        def visit_Call(self, node: cst.Call) -> None:
            if ctx.matches(node.func, ACCELERATORS) is not None:
                calls.append((node, scopes[-1]))

    cstwalk.visit(module, Gather())
    for call, scope in calls:
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value not in ACCELERATOR_KWARGS or not isinstance(arg.value, cst.Name):
                continue
            name = arg.value.value
            if scope is not module and len(_occurrences(scope, name)) == 1:
                scope = module  # read, never bound, in its function: the module's binding (a global) is the one
            built = [(assign, targets, assign.value) for assign, targets in assigns.get(id(scope), ())
                     if any(isinstance(target, cst.Name) and target.value == name for target in targets)
                     and isinstance(assign.value, cst.Call)
                     and any(q.startswith("optimum.neuron.") for q in ctx.qualnames(assign.value.func))]
            if not built:
                continue
            assign, targets, construction = built[0]
            assert isinstance(construction, cst.Call)
            uses = _occurrences(module if scope is module else scope, name)
            why = ""
            if len(targets) > 1:
                why = "the same object is bound to another name too"
            elif len(built) > 1 or len(uses) > 2:
                lines = len(uses) - 2
                why = (f"{name} is used {lines} more time{'s' if lines != 1 else ''} in this scope besides this "
                       "keyword" if lines > 0 else f"{name} is bound more than once")
            elif not _pure(ctx, construction):
                why = f"the arguments of {source_of(construction.func)}(...) call code that may do more than build it"
            elif scope is module and ctx.namespace is not None and _read_in_other_cells(ctx, name):
                why = f"another cell of the notebook reads {name}"
            found.setdefault(id(call), {})[arg.keyword.value] = PluginBinding(
                assign, source_of(construction.func), not why, why)
    return found


#: how a module of the project binds a name by import: (module as written, relative level, the name imported)
ImportRef = tuple[str, int, str]
#: what a class's chain reaches: ("trainer", qualified Neuron trainer) or ("import", module, level, name): a class
#: another module of the project may define
BaseRef = tuple


def _imported_names(tree: ast.Module) -> dict[str, ImportRef | str]:
    """The names of a module bound by one import and nothing else: local name -> ``(module, level, name)`` for
    ``from module import name``, the module's dotted name for ``import module`` / ``import module as local``."""
    found: dict[str, ImportRef | str] = {}
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    local = alias.asname or alias.name
                    names.append(local)
                    found[local] = (node.module or "", node.level, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                names.append(local)
                found[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.append(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.extend(node.names)
        for name in names:
            bound[name] = bound.get(name, 0) + 1
    return {name: ref for name, ref in found.items() if bound.get(name) == 1}


def _base_ref(base: ast.expr, imports: dict[str, ImportRef | str]) -> BaseRef | None:
    """What a base outside the file's classes is: a Neuron trainer, or a name imported from a module (perhaps the
    project's); None for anything else."""
    parts: list[str] = []
    node = base
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in imports:
        return None
    ref = imports[node.id]
    if isinstance(ref, str):  # import optimum.neuron as on; class X(on.NeuronTrainer)
        qualified = ".".join([ref, *reversed(parts)])
        return ("trainer", qualified) if qualified in NEURON_TRAINERS else None
    module, level, name = ref
    if parts:
        return None
    qualified = f"{module}.{name}"
    if not level and qualified in NEURON_TRAINERS:
        return ("trainer", qualified)
    return ("import", module, level, name)


def trainer_subclasses(text: str) -> dict[str, tuple[BaseRef, frozenset[str], str]] | None:
    """Project fact: the module-level classes of a file whose chain (through classes of the file,
    ``codemods/_lib/forwarded_init.route``) reaches a Neuron trainer or a class imported from a module -> (that
    base, the keywords a class of the chain takes itself, why the other keywords may not reach the base: "" when
    each ``__init__`` passes them on unchanged)."""
    if "Trainer" not in text:
        return None
    tree = ast.parse(text)
    classes = module_classes(tree)
    imports = _imported_names(tree)
    found = {}
    for name in classes:
        routed = route(classes, name)
        if routed is None:
            continue
        base, current, seen = routed.base, classes[routed.chain[-1]], set(routed.chain)
        while base is None:  # the keywords stop in the chain: the base it derives from, for the todo
            if len(current.bases) != 1:
                break
            base = current.bases[0]
            if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
                current, base = classes[base.id], None
                seen.add(current.name)
        ref = _base_ref(base, imports) if base is not None else None
        if ref is not None:
            found[name] = (ref, routed.own, routed.why)
    return found or None


TRAINER_SUBCLASSES = ProjectFact("training.trainer-subclasses", frozenset({FileKind.PYTHON}), ("Trainer",),
                                 trainer_subclasses)


def _module_files(origin: PurePosixPath, module: str, level: int) -> list[str]:
    """The project paths that ``from <module> import ...`` (``level`` dots) in the file at ``origin`` may load:
    a relative import from the file's own package; an absolute one from its folder or any folder above it (the
    script's folder, or the root a ``python -m`` runs in)."""
    tail = module.replace(".", "/")
    if level:
        folder = origin.parent
        for _ in range(level - 1):
            folder = folder.parent
        folders = [folder]
    else:
        folders = list(origin.parents)
    files = []
    for folder in folders:
        stem = folder / tail if tail else folder
        files += [f"{stem.as_posix()}.py"] if tail else []
        files.append((stem / "__init__.py").as_posix())
    return [file.removeprefix("./") for file in files]


def project_trainer(project: ProjectFacts, origin: str, ref: ImportRef, depth: int = 0
                    ) -> tuple[str, frozenset[str], str] | None:
    """For a class the file at ``origin`` imports (``ref``): the Neuron trainer its chain reaches across the
    project's modules, the keywords a class of the chain takes itself, and why the others may not reach the
    trainer ("" when they do); None when not known (no such class in the project, two candidate modules that
    disagree, a base that is no Neuron trainer)."""
    if depth > 8:
        return None
    values = project.of(TRAINER_SUBCLASSES.name)
    module, level, name = ref
    candidates = [path for path in _module_files(PurePosixPath(origin), module, level) if path in project.files]
    if not candidates and not level and "." in module:  # a package installed from another folder (src/ layout)
        tail = module.replace(".", "/")
        candidates = [path for path in project.files if path.endswith((f"/{tail}.py", f"/{tail}/__init__.py"))]
    records = {(path, values.get(path, {}).get(name)) for path in candidates}
    found = {record for _, record in records}
    if len(found) != 1 or None in found:
        return None
    (path, (base, own, why)), = [next(iter(records))]
    if base[0] == "trainer":
        return base[1], own, why
    inner = project_trainer(project, path, base[1:], depth + 1)
    if inner is None:
        return None
    trainer, inner_own, inner_why = inner
    return trainer, own | inner_own, why or inner_why


def _read_in_other_cells(ctx, name: str) -> bool:
    """Whether the name appears in the notebook's cells more often than in this one (another cell reads it)."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    cells = getattr(ctx.namespace, "cells", ()) or ()
    return sum(len(word.findall(cell)) for cell in cells) > len(word.findall(ctx.source))


class TrainerConstructors(PythonRule):
    """Neuron trainer and accelerator constructor arguments -> stock (tokenizer= -> processing_class=, ...)."""

    id = "NM203"
    name = "trainer-constructors"
    safety = Safety.NEEDS_REVIEW
    # "tokenizer" / "model_init": a call of a trainer subclass imported from the project may name no "Trainer"
    triggers = ("Trainer", "NeuronAccelerator", "tokenizer", "model_init")
    # stock names trigger it: only a project that targets Neuron is ours to change (and to parse)
    scope = "neuron-project"
    # the project's optimum-neuron line words the note on resuming a legacy checkpoint
    facts = (TRAINER_SUBCLASSES, PINS)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        #: names bound to a Neuron trainer (or a subclass reaching one) built in this file: ``trainer.train(ckpt)``
        self.trainer_names: set[str] = set()
        self._trainer_calls: set[int] = set()
        self.plugins = ctx.memo("training.accelerator-plugins", lambda: plugin_bindings(ctx))
        #: the assignments of plugins read only by a keyword this rule removes: they go with it
        self.removed = {id(binding.assign) for bindings in self.plugins.values() for binding in bindings.values()
                        if binding.removable}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            if self.ctx.matches(base.value, NEURON_TRAINERS) is not None:
                self.todo(node, "subclass of an optimum-neuron trainer: the base is now the stock one; check every overridden method against it (optimum 0.4.x re-implemented the training loop, XLA hooks such as _save_xla_checkpoint are gone)")

    def _subclass_route(self, name: str) -> tuple[str, frozenset[str], str] | None:
        """For a call of ``name``, a class of this file deriving (through classes of the file) from a Neuron trainer:
        (that trainer, the keywords a class of the chain takes itself, why the other keywords may not reach the
        trainer, "" when each ``__init__`` passes them on unchanged: ``codemods/_lib/forwarded_init.py``)."""
        classes = self.ctx.memo("training.module-classes", lambda: _module_classes(self.ctx.source))
        routed = route(classes, name)
        if routed is None:
            return self._imported_route(name) if name not in classes else None
        base, why = routed.base, routed.why
        current, seen = classes[routed.chain[-1]], set(routed.chain)
        while base is None:  # the keywords stop in the chain: which trainer it derives from, for the todo
            if len(current.bases) != 1:
                return None
            base = current.bases[0]
            if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
                current, base = classes[base.id], None
                seen.add(current.name)
        try:
            written = cst.parse_expression(ast.unparse(base))
        except cst.ParserSyntaxError:
            return None
        trainer = self.ctx.matches(written, NEURON_TRAINERS)
        if trainer is None and isinstance(base, ast.Name):  # class Mine(PackedTrainer), imported from the project
            imported = self._imported_route(base.id)
            if imported is not None:
                return imported[0], routed.own | imported[1], why or imported[2]
        return (trainer, routed.own, why) if trainer is not None else None

    def _imported_route(self, name: str) -> tuple[str, frozenset[str], str] | None:
        """``_subclass_route`` for a class the file imports from another module of the project (``project_trainer``)."""
        imports = self.ctx.memo("training.imported-names", lambda: _imported(self.ctx.source))
        ref = imports.get(name)
        if not isinstance(ref, tuple):
            return None
        return project_trainer(self.ctx.options.project, PurePosixPath(self.ctx.path).as_posix(), ref)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign | cst.RemovalSentinel:
        if id(original.value) in self._trainer_calls:
            self.trainer_names.update(t.target.value for t in original.targets if isinstance(t.target, cst.Name))
        return cst.RemoveFromParent() if id(original) in self.removed else updated

    def _trains_with_neuron(self) -> bool:
        """Whether this script trained with an optimum-neuron trainer (NM201 rewrites it): it imports one, directly,
        through its module (``import optimum.neuron as on``) or as a project class deriving from one."""
        def found() -> bool:
            bindings = [q for qs in self.ctx.imports.bindings.values() for q in qs]
            if any(q in NEURON_TRAINERS or any(t.startswith(q + ".") for t in NEURON_TRAINERS) and
                   re.search(r"\b(?:%s)\b" % "|".join(sorted({t.rsplit(".", 1)[1] for t in NEURON_TRAINERS})),
                             self.ctx.source) for q in bindings):
                return True
            imports = self.ctx.memo("training.imported-names", lambda: _imported(self.ctx.source))
            return any(isinstance(ref, tuple) and self._imported_route(name) is not None for name, ref in imports.items())
        return self.ctx.memo("training.trains-with-neuron", found)

    def _resume(self, original: cst.Call) -> None:
        """``trainer.train(resume_from_checkpoint=X)`` (or ``trainer.train(X)`` on a trainer built here) in a script
        that trained with an optimum-neuron trainer: the checkpoints its old runs wrote cannot be resumed (trap T23,
        ``codemods/_tables/legacy_checkpoints.py``). A literal None / False resumes nothing."""
        func = original.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "train":
            return
        arg = find_keyword(original, "resume_from_checkpoint")
        if arg is None and original.args and original.args[0].keyword is None and not original.args[0].star \
                and isinstance(func.value, cst.Name) and func.value.value in self.trainer_names:
            arg = original.args[0]
        if arg is None or (isinstance(arg.value, cst.Name) and arg.value.value in ("None", "False")):
            return
        if not self._trains_with_neuron():
            return
        self.todo(original, resume_note(project_line(self.ctx), f"resume_from_checkpoint={source_of(arg.value)}"))

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign | cst.RemovalSentinel:
        return cst.RemoveFromParent() if id(original) in self.removed else updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        self._resume(original)
        trainer = self.ctx.matches(original.func, NEURON_TRAINERS)
        own: frozenset[str] = frozenset()  # keywords a subclass of the file takes itself: they never reach the base
        called = original.func.value if trainer is None and isinstance(original.func, cst.Name) else None
        routed = self._subclass_route(called) if called is not None else None
        if trainer is not None or routed is not None:
            self._trainer_calls.add(id(original))
        if routed is not None:
            trainer, own, why = routed
            if why:
                for keyword in TRAINER_KEYWORDS:
                    if keyword == "model_init" and NEURON_TRAINERS[trainer] != "trl.SFTTrainer":
                        continue
                    if keyword not in own and (arg := find_keyword(original, keyword)) is not None:
                        self.todo(arg, f"{keyword}={source_of(arg.value)}: {called} derives from "
                                       f"{trainer.rsplit('.', 1)[-1]}, which becomes {NEURON_TRAINERS[trainer]}, "
                                       f"and {TRAINER_KEYWORDS[keyword]}; whether this keyword reaches it is not "
                                       f"known ({why}): make the change where it does")
                return updated
        if trainer is not None:
            if "tokenizer" not in own:
                updated = tokenizer_to_processing_class(self, updated, original)
            if (NEURON_TRAINERS[trainer] == "trl.SFTTrainer" and "model_init" not in own
                    and (arg := find_keyword(updated, "model_init")) is not None):
                self.todo(reported_keyword(original, "model_init"), f"model_init={source_of(arg.value)}: trl SFTTrainer has no model_init; build the model yourself (or pass the model id) and pass it as model=")
                updated = set_args(updated, [a for a in updated.args if a is not arg])
            return updated
        if self.ctx.matches(original.func, ACCELERATORS) is not None:
            plugins = self.plugins.get(id(original), {})
            keep = []
            for arg, original_arg in zip(updated.args, original.args):
                name = arg.keyword.value if arg.keyword is not None else None
                if name is None or name not in ACCELERATOR_KWARGS:
                    keep.append(arg)
                    continue
                given = f"{name}={source_of(arg.value)}"
                binding = plugins.get(name)
                if binding is None:
                    self.todo(original_arg, f"{given} removed (NeuronAccelerator only): {ACCELERATOR_KWARGS[name]}")
                    continue
                built = source_of(binding.assign).strip()
                if not binding.removable:
                    # the optimum-neuron object stays (and its import): the stock class would refuse the keyword,
                    # so it is kept and the class moves are withdrawn for this file (verification, NM702)
                    self.todo(original_arg, f"{given} kept: `{built}` builds it with optimum-neuron's {binding.cls} "
                                            f"and {binding.why}, so this code still needs optimum.neuron and "
                                            f"NeuronAccelerator (stock Accelerator takes no {name}); to port it: "
                                            f"{ACCELERATOR_KWARGS[name]}, then remove {binding.cls} and its import")
                    keep.append(arg)
                    continue
                self.todo(original_arg, f"{given} removed (NeuronAccelerator only), with `{built}`, which built "
                                        f"it for this call alone: {_carried(binding.assign, name)}")
            if len(keep) != len(updated.args):
                return set_args(updated, keep)
        return updated


def _imported(source: str) -> dict[str, ImportRef | str]:
    try:
        return _imported_names(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError):
        return {}


def _module_classes(source: str) -> dict[str, ast.ClassDef]:
    try:
        return module_classes(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError):
        return {}


def _carried(assign: cst.Assign | cst.AnnAssign, keyword: str) -> str:
    """What to do with the settings of a removed plugin construction: they are not applied any more. A tensor
    parallel degree is named with where it goes (the model load and the Accelerator's mesh; ParallelismConfig alone
    is not enough: accelerate's prepare raises for a model not loaded tensor-parallel)."""
    call = assign.value
    settings = {(arg.keyword.value if arg.keyword is not None else None): source_of(arg.value)
                for arg in (call.args if isinstance(call, cst.Call) else ())}
    degree = settings.pop("tensor_parallel_size", None)
    others = ", ".join(f"{key}={value}" if key else value for key, value in settings.items())
    if degree is None:
        applied = f"its settings ({others}) are not applied now: " if others else ""
        return applied + ACCELERATOR_KWARGS[keyword]
    rest = f"; its other settings ({others}) have no stock Accelerator switch" if others else ""
    return (f"its tensor parallel degree `{degree}` is not applied now (this trains without tensor parallelism): to "
            f"keep it, load the model tensor-parallel (from_pretrained(..., distributed_config=DistributedConfig("
            f"tp_size={degree}, ...))) and give Accelerator a mesh with the same tp_size (parallelism_config="
            f"ParallelismConfig(tp_size={degree}, dp_shard_size=WORLD_SIZE // {degree})): accelerate's prepare raises "
            "unless the model's tp size equals tp_size, refuses tp_size above 1 with pure replication "
            "(dp_replicate_size), and needs sizes that multiply to the process count"
            f"{rest}")
