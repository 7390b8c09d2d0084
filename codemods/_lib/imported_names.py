"""The names each project module's importers take from it: a project fact. Not a rule module.

A rule that deletes a module-level binding of a file (an import its rewrite left unused, a dict it folded into a
call) must first know that no other module of the project reads that name from the file: ``from xla_utils import
xm, mark_step`` in ``train.py`` raises ``ImportError`` once ``xla_utils.py`` no longer binds them, whatever its own
code needs. The scan pass records, per Python file (a notebook: its code cells), what it takes from other modules:

* ``from mod import a, b as c``: ``a`` and ``b`` from ``mod`` (relative imports too);
* ``import pkg.mod`` / ``import pkg.mod as m`` then ``pkg.mod.name`` / ``m.name``: ``name`` from ``pkg.mod``;
  ``from pkg import mod`` then ``mod.name``: ``name`` from ``pkg.mod`` (and ``mod`` from ``pkg``);
* ``from mod import *``, or the module object itself handed on (``f(m)``, ``getattr(m, key)``): every name
  (:data:`EVERY_NAME`).

A module path is matched against the files of the run as ``sys.path.append("..")`` finds it (the closest file whose
path ends with ``pkg/mod.py`` or ``pkg/mod/__init__.py``, as in ``codemods/xla/_importers.py``).
:func:`importers_of` gives the files that take a name from a file; :func:`keep_imported_bindings` adds the
names a file's importers take to the names the unused-import pass keeps (``migrate.pyrun.KEPT_NAMES``).
"""

from __future__ import annotations

import ast
import posixpath

from codemods._lib.notebook_cells import kernel_code
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.pyrun import KEPT_NAMES

#: the name recorded for an importer that may read any name of the module (a star import, the module object)
EVERY_NAME = "*"

Record = tuple[int, str, tuple[str, ...]]  # (relative level, dotted module, the names taken from it)


def _outermost_chains(tree: ast.AST) -> dict[int, list[str]]:
    """id(Name) -> the dotted parts of the longest attribute chain it roots (``a.b.c`` -> ``["a", "b", "c"]``)."""
    chains: dict[int, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts = []
            root: ast.expr = node
            while isinstance(root, ast.Attribute):
                parts.append(root.attr)
                root = root.value
            if isinstance(root, ast.Name) and len(parts) + 1 > len(chains.get(id(root), ())):
                chains[id(root)] = [root.id, *parts[::-1]]
    return chains


def _records(tree: ast.Module) -> set[Record]:
    found: set[Record] = set()
    #: local name -> the modules it may name: (level, dotted, how many parts of a chain name the module)
    modules: dict[str, list[tuple[int, str, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            for alias in node.names:
                found.add((node.level, base, (alias.name,)))
                if alias.name != "*":  # the name may be a submodule: what is read from it is taken from it
                    modules.setdefault(alias.asname or alias.name, []).append(
                        (node.level, f"{base}.{alias.name}" if base else alias.name, 1))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules.setdefault(alias.asname, []).append((0, alias.name, 1))
                else:  # `import a.b.c` binds `a`: `a.x`, `a.b.x`, `a.b.c.x` read a, a.b, a.b.c
                    parts = alias.name.split(".")
                    modules.setdefault(parts[0], []).extend(
                        (0, ".".join(parts[:end]), end) for end in range(1, len(parts) + 1))
    if not modules:
        return found
    chains = _outermost_chains(tree)
    taken: dict[tuple[int, str], set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name) or node.id not in modules:
            continue
        parts = chains.get(id(node), [node.id])
        for level, dotted, depth in modules[node.id]:
            if depth > 1 and parts[1:depth] != dotted.split(".")[1:]:
                continue
            if len(parts) > depth:
                taken.setdefault((level, dotted), set()).add(parts[depth])
            elif len(parts) == depth and isinstance(node.ctx, ast.Load):  # the module object itself is handed on
                taken.setdefault((level, dotted), set()).add(EVERY_NAME)
    for (level, dotted), used in taken.items():
        found.add((level, dotted, tuple(sorted(used))))
    return found


def collect_imported_names(text: str) -> frozenset[Record] | None:
    """What a file takes from other modules: ``(level, dotted module, names)`` (see the module docstring)."""
    code = kernel_code(text) if text.lstrip().startswith("{") else text
    if code is None:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return frozenset(_records(tree)) or None


IMPORTED_NAMES = ProjectFact("project.imported-names", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}), ("import",),
                             collect_imported_names)


def module_index(files: frozenset[str]) -> dict[str, list[str]]:
    """Module name (a file's stem, a package's folder) -> the project's Python files of that name."""
    index: dict[str, list[str]] = {}
    for path in sorted(files):
        if path.endswith(".py"):
            stem = posixpath.splitext(posixpath.basename(path))[0]
            index.setdefault(posixpath.basename(posixpath.dirname(path)) if stem == "__init__" else stem, []).append(path)
    return index


def module_file(files: frozenset[str], index: dict[str, list[str]], importer: str, level: int, dotted: str) -> str | None:
    """The project file ``importer`` loads for the module ``dotted`` (``level``: the dots of a relative import)."""
    here = posixpath.dirname(importer)
    if level:
        base = here
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        relative = posixpath.normpath(posixpath.join(base, *dotted.split("."))) if dotted else base
        return next((path for path in (f"{relative}.py", f"{relative}/__init__.py") if path in files), None)
    if not dotted:
        return None
    tail = dotted.replace(".", "/")
    matches = [path for path in index.get(tail.rsplit("/", 1)[-1], ()) for suffix in (f"{tail}.py", f"{tail}/__init__.py")
               if path == suffix or path.endswith("/" + suffix)]
    if not matches:
        return None
    return max(matches, key=lambda path: len(posixpath.commonprefix([path, here + "/"])))


_MEMO: dict[int, tuple[ProjectFacts, dict[str, dict[str, tuple[str, ...]]]]] = {}


def importers_of(project: ProjectFacts, path: str) -> dict[str, tuple[str, ...]]:
    """Name -> the project files (display paths) that take it from the module ``path``; :data:`EVERY_NAME` for those
    that may read any of its names. Empty for a file no other file imports."""
    memo = _MEMO.get(id(project))
    if memo is None or memo[0] is not project:
        _MEMO.clear()  # one run's project at a time
        memo = (project, _taken(project))
        _MEMO[id(project)] = memo
    return memo[1].get(path.replace("\\", "/"), {})


def _taken(project: ProjectFacts) -> dict[str, dict[str, tuple[str, ...]]]:
    index = module_index(project.files)
    found: dict[str, dict[str, set[str]]] = {}
    for importer, records in project.of(IMPORTED_NAMES.name).items():
        for level, dotted, names in records:
            target = module_file(project.files, index, importer, level, dotted)
            if target is None or target == importer:
                continue
            for name in names:
                found.setdefault(target, {}).setdefault(name, set()).add(importer)
    return {path: {name: tuple(sorted(users)) for name, users in names.items()} for path, names in found.items()}


def imported_by(project: ProjectFacts, path: str, name: str) -> tuple[str, ...]:
    """The project files that take ``name`` from the module ``path`` (by name, or by a star / the module object)."""
    taken = importers_of(project, path)
    return tuple(sorted({*taken.get(name, ()), *taken.get(EVERY_NAME, ())}))


def keep_imported_bindings(ctx) -> frozenset[str]:
    """Add the names other modules of the project take from this file to those the unused-import pass keeps (an
    import of a legacy module that another file imports from here stays). Once per file; a notebook is imported by
    none. Returns those names (:data:`EVERY_NAME` among them: every name)."""
    def compute() -> frozenset[str]:
        if ctx.namespace is not None or ctx.path is None:
            return frozenset()
        taken = frozenset(importers_of(ctx.options.project, str(ctx.path)))
        if not taken:
            return taken
        kept = set(taken)
        if EVERY_NAME in taken:  # the import bindings of the module level, all of them
            module = ctx.shared.get("module")
            kept |= _module_import_bindings(module.code if module is not None else ctx.source)
        ctx.shared.setdefault(KEPT_NAMES, set()).update(kept - {EVERY_NAME})
        return taken

    return ctx.memo("imported-names.kept", compute)


def _module_import_bindings(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            bound |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            bound |= {alias.asname or alias.name for alias in node.names if alias.name != "*"}
    return bound
