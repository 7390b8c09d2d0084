"""A notebook is one program: what keeps one of its cells on optimum-neuron keeps them all (rt8Q-02).

The code cells of a notebook run in one kernel, in order, and one requirements file serves them all. An inference
rule decides per file whether the file stays on optimum-neuron (``InferenceRule.kept_uses``: a compiled-folder load
whose source is not known, an unread ``**splat``, an optimum-only attribute, a producer of a folder another load
reads). The engine migrates a notebook cell by cell, so taken per cell that decision would port the export cell
(and drop the ``from optimum.neuron import`` it holds, and NM501 the optimum-neuron pin) while a later cell still
loads with the Neuron class: ``NameError`` when the notebook runs top to bottom.

``notebook_kept`` takes it over the whole notebook: the rule's ``kept_uses`` over every cell on its own (what the
engine's pass of that cell will find) and over the cells joined into one module (what only the kernel sees: an
export bound in one cell and saved in another). Each kept use found in the cell being migrated gets its own todo
there; a cell with none of its own whose notebook is kept gets one todo at each of its loads naming the use that
keeps it. A cell of a kept notebook with no load of the rule is kept too (rtD D1): the notebooks' usual first cell,
``from optimum.neuron import NeuronModelForX`` and nothing else, was ported on its own (the import moved to the stock
class) while the later cells still loaded ``NeuronModelForX``: NameError, and NM501 then dropped the optimum-neuron
requirement. Its import of a class the rule moves gets the todo (at the import's module name); a cell that only
names such a class otherwise (``isinstance(m, NeuronModelForX)``) keeps it unrenamed, with no note of its own.
Computed once per notebook and rule (``SharedNamespace`` attribute ``NOTEBOOK_KEPT``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import libcst as cst

from codemods._lib.cst import source_of
from codemods._lib.kernel_values import kernel_code
from migrate.rule import ImportMap, PythonContext, PythonRule

_CELL_PATH = re.compile(r"(.+)\.cell\d+\.(?:py|sh)")
#: the ``SharedNamespace`` attribute holding, per rule id, the kept uses of the notebook (``_Kept`` list)
NOTEBOOK_KEPT = "_inference_notebook_kept"


@dataclass(frozen=True)
class _Kept:
    cell: int  # the index of the code cell among the kernel's cells
    position: int  # the node's index among that cell's ``Attribute`` nodes (visit order)
    use: str  # its source (`NeuronModelForCausalLM.from_pretrained("x")`), for the note of another cell
    message: str


class _Attributes(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Attribute] = []

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.found.append(node)


class _Imports(cst.CSTVisitor):
    """The import statements of a cell (nested ones too), with the module node a todo is keyed on."""

    def __init__(self) -> None:
        self.found: list[tuple[cst.Attribute, list[str]]] = []  # the module node -> the qualified names bound

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.module, cst.Attribute) and not node.relative:
            module = source_of(node.module)
            if isinstance(node.names, cst.ImportStar):
                self.found.append((node.module, [f"{module}.*"]))
            else:
                self.found.append((node.module, [f"{module}.{source_of(alias.name)}" for alias in node.names]))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if isinstance(alias.name, cst.Attribute):
                self.found.append((alias.name, [f"{source_of(alias.name)}.*"]))


def _moved_imports(module: cst.Module, moved: set[str]) -> list[cst.Attribute]:
    """The module nodes of ``module``'s imports that bind a name of ``moved`` (a star or module import: one under
    it)."""
    walk = _Imports()
    module.visit(walk)
    out = []
    for node, names in walk.found:
        for name in names:
            if name in moved or (name.endswith(".*") and any(old.startswith(name[:-1]) for old in moved)):
                out.append(node)
                break
    return out


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: dict[int, cst.Call] = {}  # id(the function) -> the call

    def visit_Call(self, node: cst.Call) -> None:
        self.found[id(node.func)] = node


def _attributes(module: cst.Module) -> list[cst.Attribute]:
    walk = _Attributes()
    module.visit(walk)
    return walk.found


def file_path(ctx: Any) -> PurePath:
    """The path of the file ``ctx`` is a part of: a notebook's for one of its cells (the engine names cell 3 of
    ``nb.ipynb`` ``nb.cell3.py``, ``migrate/notebook/cells.py``), else its own."""
    cell = _CELL_PATH.fullmatch(ctx.path.name) if ctx.namespace is not None else None
    return ctx.path.with_name(f"{cell.group(1)}.ipynb") if cell is not None else ctx.path


def _probe(rule: Any, module: cst.Module, source: str, imports: ImportMap) -> dict[int, str]:
    """``rule``'s kept uses (id of the node -> todo) in ``module``, read by a fresh instance of the rule that runs
    nothing else (no rewrite, no finding)."""
    ctx = PythonContext(path=file_path(rule.ctx), source=source, options=rule.ctx.options, imports=imports)
    ctx.shared["module"] = module
    probe = object.__new__(type(rule))
    PythonRule.__init__(probe, ctx)
    return dict(probe.kept_uses())


def _notebook_uses(rule: Any) -> list[_Kept]:
    namespace = rule.ctx.namespace
    cells: list[cst.Module | None] = []
    for cell in namespace.cells:
        code = kernel_code(cell)
        try:
            cells.append(cst.parse_module(code) if code is not None else None)
        except Exception:  # noqa: BLE001 - a cell that does not parse is left as it is by the engine too
            cells.append(None)
    joined = cst.Module(body=[statement for module in cells if module is not None for statement in module.body])
    imports = ImportMap.from_module(joined)
    where: dict[int, tuple[int, int, cst.CSTNode]] = {}
    for index, module in enumerate(cells):
        if module is not None:
            calls = _Calls()
            module.visit(calls)
            for position, node in enumerate(_attributes(module)):
                where[id(node)] = (index, position, calls.found.get(id(node), node))  # the call, where it is one
    found: dict[tuple[int, int], _Kept] = {}
    probes = [(module, module.code) for module in cells if module is not None] + [(joined, joined.code)]
    for module, source in probes:
        for key, message in _probe(rule, module, source, imports).items():
            if key in where:
                index, position, shown = where[key]
                found.setdefault((index, position), _Kept(index, position, " ".join(source_of(shown).split()), message))
    return [found[key] for key in sorted(found)]


def notebook_kept(rule: Any, kept_here: dict[int, str]) -> dict[int, str]:
    """The todos (id of a node of the cell being migrated -> message) that keep this cell on optimum-neuron because
    of its notebook: the kept uses of this cell that only the whole notebook shows, and when the cell has none of its
    own (``kept_here`` empty) but another cell has, one todo at each of this cell's loads naming that use."""
    ctx = rule.ctx
    namespace = ctx.namespace
    module = ctx.shared.get("module")
    if namespace is None or not namespace.cells or not isinstance(module, cst.Module):
        return {}
    memo = vars(namespace).setdefault(NOTEBOOK_KEPT, {})
    if rule.id not in memo:
        memo[rule.id] = _notebook_uses(rule)
    uses: list[_Kept] = memo[rule.id]
    if not uses:
        return {}
    matches = [index for index, cell in enumerate(namespace.cells) if kernel_code(cell) == ctx.source]
    here = matches[0] if len(matches) == 1 else None
    nodes = _attributes(module)
    out: dict[int, str] = {}
    for use in uses:
        if use.cell == here and use.position < len(nodes):
            out[id(nodes[use.position])] = use.message
    if kept_here or out:
        return out
    other = uses[0]
    when = "an earlier" if here is not None and other.cell < here else "a later" if here is not None else "another"
    moved = {old for old, new in getattr(rule, "moves", {}).items() if new is not None}
    calls = _Calls()
    module.visit(calls)
    for node in nodes:
        call = calls.found.get(id(node))
        if call is None or not rule.is_target_call(call):
            continue
        owner = source_of(node.value)
        out[id(node)] = (f"{when} cell of this notebook keeps it on optimum-neuron (`{other.use}`: see the todo there), "
                         f"and a notebook's cells run in one kernel with one set of requirements: {rule.id} leaves this "
                         f"cell as it is too - the {owner} import and loads are not rewritten (ported alone, this cell "
                         "would remove the import that cell still uses, and the optimum-neuron requirement with it). "
                         "Once that cell can be migrated, run neuron-migrate again")
    if out:
        return out
    # no load of the rule here (an import cell): its import of a moved class stays for the cells that still use it
    for node in _moved_imports(module, moved):
        out[id(node)] = (f"{when} cell of this notebook keeps it on optimum-neuron (`{other.use}`: see the todo "
                         f"there), and a notebook's cells run in one kernel with one set of requirements: {rule.id} "
                         "leaves this import as it is (ported alone, the cells that still name the Neuron class would "
                         "raise NameError, and the optimum-neuron requirement would go with it). Once that cell can "
                         "be migrated, run neuron-migrate again")
    if not out and _names_moved(module, moved):
        out[id(module)] = ""  # no Attribute node is ever this id: the rule withdraws from the cell, with no note
    return out


def _names_moved(module: cst.Module, moved: set[str]) -> bool:
    """Whether ``module`` names a class the rule moves (by its last name: the kernel binds it in another cell)."""
    short = {old.rsplit(".", 1)[-1] for old in moved}
    walk = _Names()
    module.visit(walk)
    return not short.isdisjoint(walk.found)


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)
