"""Neuron-named aliases of moved imports: ``from optimum.neuron import Seq2SeqNeuronTrainer as NeuronSeq2SeqTrainer``.

A symbol move keeps a user alias (``migrate/symbol_moves.py``), which is right for ``NeuronTrainer as Trainer``; but an
alias that itself names a Neuron class (``Neuron*``, ``*Neuron*``, ``Trainium*``) would leave ``Seq2SeqTrainer as
NeuronSeq2SeqTrainer`` and ``NeuronSeq2SeqTrainer(...)`` behind: valid code that reads as a Neuron class it no longer
is. ``dropped_aliases`` names the aliases a rule may drop (the move then imports the stock name and renames every use
of the alias in the module), only where that is safe:

* the alias is bound only by imports of that one moved name (no assignment, definition, parameter, loop or ``with``
  target, ``global``, other import of it), and the stock name is neither bound nor read anywhere in the module (no
  shadowing; a star import may bind anything, so none may be there);
* no string of the module other than a docstring holds the alias (``__all__``, ``getattr(mod, "Alias")``, ``eval``);
* no other file of the project names it (``from train import NeuronSeq2SeqTrainer``, ``train.NeuronSeq2SeqTrainer``,
  a config's ``_target_: train.NeuronSeq2SeqTrainer``): the fact ``NEURON_NAMED_WORDS``, each file's Neuron-named words
  minus the names it binds itself from a library import or a definition of its own;
* in a notebook, all of the above over every code cell (the cells share one namespace): a cell that does not parse
  and holds either name keeps the alias.

Otherwise the alias stays, as before.
"""

from __future__ import annotations

import ast
import re
from typing import Mapping

from codemods._lib.notebook_cells import code_cells, kernel_code
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.rule import PythonContext

#: an identifier that names a Neuron / Trainium class
NEURON_NAMED = re.compile(r"(?:Neuron|Trainium)")
_NEURON_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
#: top-level packages whose imports are libraries, never a project module another file re-exports
_LIBRARY_ROOTS = frozenset({
    "optimum", "transformers", "trl", "accelerate", "peft", "diffusers", "sentence_transformers", "torch",
    "torch_neuronx", "torch_xla", "neuronx_distributed", "transformers_neuronx", "libneuronxla", "neuronx_cc",
})


def _neuron_words(text: str) -> set[str]:
    return {word for word in _NEURON_WORD.findall(text) if NEURON_NAMED.search(word)}


def _own_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names the code binds from a library import or defines itself, names it imports from another module)."""
    own: set[str] = set()
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            library = node.level == 0 and (node.module or "").split(".")[0] in _LIBRARY_ROOTS
            for alias in node.names:
                (own if library else imported).add(alias.asname or alias.name)
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            own.add(node.name)
    return own, imported


def neuron_named_words(text: str) -> frozenset[str] | None:
    """The Neuron-named words of a project file that may refer to another module's name: every such word of the
    text, minus, for Python code (a notebook's code cells), the names it binds itself from a library import or a
    definition and never imports from elsewhere. None when there is none."""
    words = _neuron_words(text)
    if not words:
        return None
    code = kernel_code(text) if text.lstrip().startswith("{") else text
    if code is not None:
        try:
            own, imported = _own_names(ast.parse(code))
        except (SyntaxError, ValueError, RecursionError):
            pass  # not Python (YAML, shell ...): every word counts
        else:
            cells = code_cells(text) if code is not text else None
            # words of the text outside the parsed code (a notebook's markdown) are prose: only the code's count
            words = _neuron_words(code) if cells is not None else words
            words -= own - imported
    return frozenset(words) or None


NEURON_NAMED_WORDS = ProjectFact(
    "moves.neuron-named-words",
    frozenset({
        FileKind.PYTHON, FileKind.NOTEBOOK, FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML, FileKind.JSON,
        FileKind.TOX, FileKind.PYPROJECT, FileKind.SETUP_CFG,
    }),
    ("Neuron", "Trainium"),
    neuron_named_words,
)


def _sources(ctx: PythonContext) -> list[str]:
    if ctx.namespace is not None and ctx.namespace.cells:
        return [
            "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in cell.splitlines())
            for cell in ctx.namespace.cells
        ]
    return [ctx.source]


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _safe_in(tree: ast.AST, alias: str, stock: str) -> bool:
    """Whether, in this code, ``alias`` is only imported and read, and ``stock`` never appears as a name."""
    word = re.compile(rf"\b{re.escape(alias)}\b")
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id == stock or (node.id == alias and not isinstance(node.ctx, ast.Load)):
                return False
        elif isinstance(node, ast.arg):
            if node.arg in (alias, stock):
                return False
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in (alias, stock):
                return False
        elif isinstance(node, ast.ExceptHandler):
            if node.name in (alias, stock):
                return False
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            if alias in node.names or stock in node.names:
                return False
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
            if node.name in (alias, stock):
                return False
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for name in node.names:
                if name.name == "*" or (name.asname or name.name.split(".")[0]) == stock:
                    return False
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and word.search(node.value):
                return False
    return True


def dropped_aliases(ctx: PythonContext, moves: Mapping[str, str | None]) -> frozenset[str]:
    """The Neuron-named aliases of ``moves`` (a rule's qualified old name -> stock name) bound in this file that the
    move may drop: see the module docstring."""
    moved = {qualified: target for qualified, target in moves.items() if target}
    candidates = {}
    for local, qualifieds in ctx.imports.bindings.items():
        if len(qualifieds) != 1 or not NEURON_NAMED.search(local):
            continue
        qualified = next(iter(qualifieds))
        target = moved.get(qualified)
        if target is None or local == qualified.rsplit(".", 1)[-1] or local in ctx.imports.defined:
            continue
        stock = target.rsplit(".", 1)[-1]
        # (a notebook's later cells see the stock import an earlier cell's run wrote: that binding is no conflict;
        # the original sources are read below)
        if ctx.imports.bindings.get(stock, set()) - {target} or stock in ctx.imports.defined or NEURON_NAMED.search(stock):
            continue
        candidates[local] = stock
    if not candidates:
        return frozenset()
    trees = []
    for source in _sources(ctx):
        try:
            trees.append(ast.parse(source))
        except (SyntaxError, ValueError, RecursionError):
            if any(re.search(rf"\b{re.escape(name)}\b", source) for pair in candidates.items() for name in pair):
                return frozenset()
    here = str(ctx.path).replace("\\", "/")
    if ctx.namespace is not None:  # a notebook's cell is seen as ``nb.cell3.py`` (migrate/notebook/cells.py)
        here = re.sub(r"\.cell\d+\.py$", ".ipynb", here)
    elsewhere = {
        word
        for path, words in ctx.options.project.of(NEURON_NAMED_WORDS.name).items()
        if path != here
        for word in words
    }
    return frozenset(
        local
        for local, stock in candidates.items()
        if local not in elsewhere and all(_safe_in(tree, local, stock) for tree in trees)
    )

