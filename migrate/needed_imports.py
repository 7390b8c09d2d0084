"""Where the imports the rules scheduled (``PythonContext.add_import``) go, once the traversal is done.

0. a ``from m import ...`` the rules wrote at module level (a symbol move rewrites ``from optimum.neuron
   import NeuronTrainer as Trainer`` in place) joins a ``from m import ...`` of its run of import lines, the
   user's own first: one ``from transformers import`` line, not three. The user's own
   duplicates stay as they are;
1. what the module imports already is reused, not imported a second time (``add_imports`` sees only the
   leading import block);
2. a module that imports a package only inside functions keeps it so: the import goes into each function
   that uses the name (``import torch.distributed as dist`` beside the worker's own ``import torch``), unless
   code outside functions (imports apart) reads it;
3. the rest go to the top (after a top-of-module ``os.environ[...] = ...`` prelude that comes before the
   file's other imports on purpose: with those imports, ``_environment_prelude``), as libcst's
   ``AddImportsVisitor`` would put them (``migrate.imports``), but above the
   project's own imports (relative ones, or a module of the run's files beside the script or in a folder above
   it) when the leading block has them: stdlib and third-party imports come before the local group. Where
   the block was in isort order (ruff's defaults), a new line takes its sorted place in the group of its
   section (or starts that section's group) and a name joined into a sorted ``from m import`` line its sorted
   place; an unsorted block or line of the user's is left as it is.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import PurePath
from typing import AbstractSet, Sequence

import libcst as cst

from migrate import cstwalk
from migrate.imports import absolute_module, add_imports, bound_name, import_of, skip_first
from migrate.rule import ImportMap, dotted_name
from migrate.snippets import parse_statement

NeededImport = tuple[str, str | None, str | None]  # (module, name or None for ``import module``, alias)
#: a joined ``from m import`` line longer than this is written one name a line
_LINE_LENGTH = 100


def place_imports(
    module: cst.Module,
    needed: Sequence[NeededImport],
    imports: ImportMap,
    original: cst.Module | None = None,
    path: PurePath | None = None,
    files: AbstractSet[str] = frozenset(),
) -> cst.Module:
    """``module`` with the ``needed`` imports; ``imports``: what the original file imported; ``original``: the
    parsed tree (to tell the user's import lines from the ones the rules wrote); ``path`` and ``files``: the
    file's display path and every file of the run (to tell the project's own modules)."""
    if original is not None:
        module = _join_written_imports(module, original)
    if not needed:
        return module
    module, kept = _reuse_module_imports(module, needed, imports)
    module, kept = _keep_lazy_imports_lazy(module, kept, imports)
    prelude = _environment_prelude(module, kept)
    if prelude:
        tail = _add_above_local_imports(module.with_changes(body=module.body[prelude:]), kept, path, files)
        return module.with_changes(body=[*module.body[:prelude], *tail.body])
    return _add_above_local_imports(module, kept, path, files)


def _environment_prelude(module: cst.Module, needed: Sequence[NeededImport]) -> int:
    """Where the imports after a top-of-module environment prelude start (0: no such prelude). The shape::

        import os

        os.environ["XLA_USE_BF16"] = "1"  # must be set before torch is imported
        import torch

    the leading import block, then ``os.environ[...] = ...`` / ``os.environ.setdefault(...)`` /
    ``os.environ.update(...)`` / ``os.putenv(...)`` statements, then more imports: the settings come before
    those imports on purpose (a library reads them when it is imported), so a new import goes with the later
    ones, not above the settings. Only where the first block imports none of the packages of ``needed`` (what
    would join a line there) and no ``__future__`` import is needed."""
    start, end = _leading_block(module)
    index = end
    while index < len(module.body) and _sets_environment(module.body[index]):
        index += 1
    if index == end or index >= len(module.body) or import_of(module.body[index]) is None:
        return 0
    packages = {entry[0].split(".")[0] for entry in needed}
    if "__future__" in packages:
        return 0
    for statement in module.body[start:end]:
        found = import_of(statement)
        if found is None or _packages(found) & packages:
            return 0
    return index


def _sets_environment(statement: cst.BaseStatement) -> bool:
    """A line of ``os.environ[...] = ...`` / ``os.environ.setdefault|update(...)`` / ``os.putenv(...)`` only."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Assign):
            targets = small.targets
            if not all(isinstance(t.target, cst.Subscript) and _code(t.target.value) == "os.environ" for t in targets):
                return False
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            if _code(small.value.func) not in ("os.environ.setdefault", "os.environ.update", "os.putenv"):
                return False
        else:
            return False
    return True


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _leading_block(module: cst.Module) -> tuple[int, int]:
    """``(start, end)`` of the leading import block in ``module.body``: the import lines ``add_imports`` sees."""
    start = 1 if skip_first(module) else 0
    end = start
    while end < len(module.body) and import_of(module.body[end]) is not None:
        end += 1
    return start, end


def _from_import(statement: cst.BaseStatement) -> tuple[str, cst.ImportFrom] | None:
    """``(m, node)`` for a line that is one absolute ``from m import a, b`` (no star)."""
    found = import_of(statement)
    if not isinstance(found, cst.ImportFrom) or isinstance(found.names, cst.ImportStar):
        return None
    source = absolute_module(found)
    return None if source is None else (source, found)


def _pairs(node: cst.ImportFrom) -> set[tuple[str, str | None]]:
    assert not isinstance(node.names, cst.ImportStar)
    return {(alias.evaluated_name, alias.evaluated_alias) for alias in node.names}


def _join_written_imports(module: cst.Module, original: cst.Module) -> cst.Module:
    """A module-level ``from m import ...`` line that the user did not write (no module-level ``from m
    import`` of the original holds its names) joins another ``from m import`` of its run of import lines (the
    leading block, or one after code): the user's first, else the first written one. Left where it is when it
    or the line it would join holds a comment, or when a line between them binds one of its names (the binding
    order would change)."""
    groups: dict[tuple[int, str], list[int]] = defaultdict(list)  # (run, m) -> its lines
    run = 0
    for index, statement in enumerate(module.body):
        if import_of(statement) is None:
            run += 1  # code between two lines: their bindings' order may matter
            continue
        found = _from_import(statement)
        if found is not None:
            groups[(run, found[0])].append(index)
    if all(len(indexes) < 2 for indexes in groups.values()):
        return module
    user: dict[str, list[set[tuple[str, str | None]]]] = defaultdict(list)
    for statement in original.body:
        found = _from_import(statement)
        if found is not None:
            user[found[0]].append(_pairs(found[1]))
    body = list(module.body)
    removed: set[int] = set()
    for (_, source), indexes in groups.items():
        if len(indexes) < 2:
            continue
        written = [i for i in indexes if not any(_pairs(_node(body[i])) <= names for names in user[source])]
        if not written:
            continue  # the user's own duplicates stay
        mine = [i for i in indexes if i not in written]
        target = mine[0] if mine else written[0]
        for index in written:
            if index == target:
                continue
            joined = _joined(module, body, target, index)
            if joined is not None:
                body[target] = joined
                removed.add(index)
    if not removed:
        return module
    new_body: list[cst.BaseStatement] = []
    carried: Sequence[cst.EmptyLine] = ()
    for index, statement in enumerate(body):
        if index in removed:
            carried = carried or statement.leading_lines  # a blank line above the group stays above it
            continue
        if carried and not statement.leading_lines:
            statement = statement.with_changes(leading_lines=carried)
        carried = ()
        new_body.append(statement)
    return module.with_changes(body=new_body)


def _node(statement: cst.BaseStatement) -> cst.ImportFrom:
    found = _from_import(statement)
    assert found is not None
    return found[1]


def _joined(
    module: cst.Module, body: Sequence[cst.BaseStatement], target: int, index: int
) -> cst.SimpleStatementLine | None:
    """``body[target]`` with the names of ``body[index]``, or None when the join is not certain to mean the same."""
    into, moved = _node(body[target]), _node(body[index])
    line = body[target]
    assert isinstance(line, cst.SimpleStatementLine)  # a line with one import statement
    if "#" in module.code_for_node(body[index]) or "#" in module.code_for_node(body[target]):
        return None  # a comment: the user's (or a note) belongs to its line
    assert not isinstance(into.names, cst.ImportStar) and not isinstance(moved.names, cst.ImportStar)
    present = _pairs(into)
    bound_there = {bound_name(alias) for alias in into.names}
    added = []
    for alias in moved.names:
        if (alias.evaluated_name, alias.evaluated_alias) in present:
            continue  # imported there already
        if bound_name(alias) in bound_there:
            return None  # the same name bound to something else
        added.append(alias)
    names = {bound_name(alias) for alias in moved.names}
    for between in body[min(target, index) + 1 : max(target, index)]:
        found = import_of(between)
        if found is not None and not isinstance(found.names, cst.ImportStar):
            if any(bound_name(alias) in names for alias in found.names):
                return None
    if not added:
        return line.with_changes(body=[into])
    old = list(into.names)
    last = old[-1]
    separator: cst.Comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if into.lpar is not None and isinstance(into.lpar.whitespace_after, cst.ParenthesizedWhitespace):
        separator = cst.Comma(whitespace_after=into.lpar.whitespace_after)  # one name a line, as the user wrote
    fresh = [alias.with_changes(comma=separator) for alias in added]
    if isinstance(last.comma, cst.Comma):  # a trailing comma: it stays last
        fresh[-1] = fresh[-1].with_changes(comma=last.comma)
        old[-1] = last.with_changes(comma=separator)
    else:
        fresh[-1] = fresh[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        old[-1] = last.with_changes(comma=separator)
    names_now = _in_order([*old, *fresh], into.names)
    statement = into.with_changes(names=names_now)
    code = module.code_for_node(statement)
    if "\n" in code or len(code) <= _LINE_LENGTH:
        return line.with_changes(body=[statement])
    # a joined line too long to read: one name a line, as a formatter writes it
    source = dotted_name(into.module)
    listed = "".join(
        f"{module.default_indent}{module.code_for_node(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT))},\n"
        for alias in names_now
    )
    wrapped = parse_statement(f"from {source} import (\n{listed})\n", config=module.config_for_parsing)
    assert isinstance(wrapped, cst.SimpleStatementLine)
    return wrapped.with_changes(leading_lines=line.leading_lines)


def _add_above_local_imports(
    module: cst.Module, needed: Sequence[NeededImport], path: PurePath | None, files: AbstractSet[str]
) -> cst.Module:
    """``add_imports``, with the new lines above the first local import of the leading block (not after the
    project's own imports). Where that block imports the package of a needed import at or below its first
    local import, ``add_imports`` sees the whole block (it must see what is imported already). Where the
    block was in isort order, the new lines and names keep it (``_add_in_order``)."""
    if not needed or path is None:
        return _add_in_order(module, needed, path, files)
    start, end = _leading_block(module)
    local: set[str] | None = None
    first = None
    for index in range(start, end):
        found = import_of(module.body[index])
        assert found is not None
        if isinstance(found, cst.ImportFrom) and (found.relative or found.module is None):
            first = index
            break
        if local is None:
            local = _local_modules(path, files)
        if _packages(found) & local:
            first = index
            break
    if first is None:
        return _add_in_order(module, needed, path, files)
    packages = {entry[0].split(".")[0] for entry in needed}
    for statement in module.body[first:end]:
        found = import_of(statement)
        assert found is not None
        if _packages(found) & packages:
            return _add_in_order(module, needed, path, files)
    head = _add_in_order(module.with_changes(body=module.body[:first]), needed, path, files)
    return module.with_changes(body=[*head.body, *module.body[first:]])


def _add_in_order(
    module: cst.Module, needed: Sequence[NeededImport], path: PurePath | None, files: AbstractSet[str]
) -> cst.Module:
    """``add_imports``, keeping the isort order (ruff's defaults) of what it adds to: a name joined into a
    ``from m import`` line whose names were sorted takes its sorted place (``add_imports`` writes it first), and
    a new line goes to its sorted place in the group of its section (stdlib, third party, local: lines without
    a blank line between them, all of that section) when that group was sorted (``add_imports`` writes it
    after the block). A group or line that was not sorted is left as ``add_imports`` leaves it: the user's
    lines are never reordered."""
    result = add_imports(module, needed)
    if any(entry[0] == "__future__" for entry in needed) or result is module:
        return result
    start, end = _leading_block(module)
    added = len(result.body) - len(module.body)
    body = list(result.body)
    for index in range(start, end):  # names joined into the block's lines
        old, new = module.body[index], body[index]
        if new is not old and "#" not in module.code_for_node(old):
            before, after = import_of(old), import_of(new)
            if isinstance(before, cst.ImportFrom) and isinstance(after, cst.ImportFrom):
                assert isinstance(new, cst.SimpleStatementLine)
                assert not isinstance(before.names, cst.ImportStar) and not isinstance(after.names, cst.ImportStar)
                body[index] = new.with_changes(body=[after.with_changes(names=_in_order(after.names, before.names))])
    if not added or start == end:
        return module.with_changes(body=body)
    local = _local_modules(path, files) if path is not None else set()
    block = [line for line in body[start:end] if isinstance(line, cst.SimpleStatementLine)]
    assert len(block) == end - start  # import lines
    fresh, rest = body[end : end + added], body[end + added :]
    kept: list[cst.BaseStatement] = []
    for line in fresh:
        placed = _into_sorted_group(block, line, local)
        if placed is None:
            kept.append(line)
        else:
            block = placed
    return module.with_changes(body=[*body[:start], *block, *kept, *rest])


def _name_key(alias: cst.ImportAlias) -> tuple[int, str, str]:
    """isort's order of imported names (ruff's order-by-type): constants, classes, then the rest."""
    name = alias.evaluated_name
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name.lower(), name


def _in_order(names: Sequence[cst.ImportAlias], user: Sequence[cst.ImportAlias]) -> list[cst.ImportAlias]:
    """``names`` (the ``user``'s and the added ones) in isort order when the user's were in it, else as they
    are. Each position keeps its comma (the trailing one stays last)."""
    keys = [_name_key(alias) for alias in user]
    if keys != sorted(keys):
        return list(names)
    ordered = sorted(names, key=_name_key)
    return [alias.with_changes(comma=names[index].comma) for index, alias in enumerate(ordered)]


def _section(found: cst.Import | cst.ImportFrom, local: AbstractSet[str]) -> str | None:
    """isort's section of an import line: ``stdlib``, ``third`` or ``local`` (None: ``__future__``)."""
    if isinstance(found, cst.ImportFrom) and (found.relative or found.module is None):
        return "local"
    packages = _packages(found)
    if "__future__" in packages:
        return None
    if packages & local:
        return "local"
    if packages <= sys.stdlib_module_names:
        return "stdlib"
    return "third"


def _line_key(found: cst.Import | cst.ImportFrom) -> tuple[int, str]:
    """isort's order of lines in a section (ruff's defaults): ``import m`` lines, then ``from m import``, by module."""
    if isinstance(found, cst.Import):
        return 0, dotted_name(found.names[0].name).lower()
    return 1, ("." * len(found.relative)) + (dotted_name(found.module).lower() if found.module is not None else "")


def _into_sorted_group(
    block: Sequence[cst.SimpleStatementLine], line: cst.BaseStatement, local: AbstractSet[str]
) -> list[cst.SimpleStatementLine] | None:
    """``block`` with ``line`` at its sorted place in the first group of its section, or None when the first
    group of that section is not sorted or holds a comment (or there is none)."""
    found = import_of(line)
    if found is None or not isinstance(line, cst.SimpleStatementLine) or line.leading_lines:
        return None
    section = _section(found, local)
    if section is None:
        return None
    groups: list[list[int]] = []
    for index, statement in enumerate(block):
        if not groups or statement.leading_lines:
            groups.append([])
        groups[-1].append(index)
    for group in groups:
        imports = [import_of(block[index]) for index in group]
        if any(node is None or _section(node, local) != section for node in imports):
            continue
        keys = [_line_key(node) for node in imports if node is not None]
        commented = any("#" in cst.Module(body=[block[index].with_changes(leading_lines=())]).code for index in group)
        if keys != sorted(keys) or commented:
            return None
        key = _line_key(found)
        at = next((position for position, other in enumerate(keys) if key < other), len(keys))
        if at == len(keys):
            return [*block[: group[-1] + 1], line, *block[group[-1] + 1 :]]
        target = group[at]
        if at == 0:  # first of its group: it takes the blank line (or comment) above the group
            first = block[target]
            moved = [line.with_changes(leading_lines=first.leading_lines), first.with_changes(leading_lines=())]
            return [*block[:target], *moved, *block[target + 1 :]]
        return [*block[:target], line, *block[target:]]
    return _new_group(block, groups, line, section, local)


_SECTIONS = ("stdlib", "third", "local")


def _new_group(
    block: Sequence[cst.SimpleStatementLine],
    groups: list[list[int]],
    line: cst.SimpleStatementLine,
    section: str,
    local: AbstractSet[str],
) -> list[cst.SimpleStatementLine] | None:
    """``block`` with ``line`` as a group of its own, between the groups of the sections before and after its
    one, when every group is of one section and they come in isort's order (stdlib, third party, local) with
    no comment above them; else None."""
    ranks = []
    for group in groups:
        sections = {_section(node, local) for node in (import_of(block[index]) for index in group) if node}
        if len(sections) != 1 or None in sections:
            return None
        ranks.append(_SECTIONS.index(next(iter(sections))))
        if any(empty.comment is not None for empty in block[group[0]].leading_lines):
            return None
    if ranks != sorted(ranks):
        return None
    rank = _SECTIONS.index(section)
    after = next((position for position, other in enumerate(ranks) if other > rank), len(ranks))
    if after == len(ranks):
        return [*block, line.with_changes(leading_lines=[cst.EmptyLine()])]
    target = groups[after][0]
    first = block[target]
    moved = [line.with_changes(leading_lines=first.leading_lines), first.with_changes(leading_lines=[cst.EmptyLine()])]
    return [*block[:target], *moved, *block[target + 1 :]]


def _packages(found: cst.Import | cst.ImportFrom) -> set[str]:
    """The top-level packages an import statement names (none for a relative one)."""
    if isinstance(found, cst.Import):
        return {dotted_name(alias.name).split(".")[0] for alias in found.names}
    if found.relative or found.module is None:
        return set()
    return {dotted_name(found.module).split(".")[0]}


def _local_modules(path: PurePath, files: AbstractSet[str]) -> set[str]:
    """Top-level names the project's own files give an import from ``path``: ``name.py`` or a folder with a
    ``.py`` file, beside the script or in a folder above it (the script's folder or a project root on
    sys.path)."""
    folders = {"" if str(parent) == "." else parent.as_posix() for parent in path.parents}
    found: set[str] = set()
    for file in files:
        if not file.endswith(".py"):
            continue
        for above in folders:
            if above and not file.startswith(above + "/"):
                continue
            rest = file[len(above) + 1 :] if above else file
            head, _, tail = rest.partition("/")
            found.add(head if tail else head[: -len(".py")])
    return found


def _reuse_module_imports(
    module: cst.Module, needed: Sequence[NeededImport], imports: ImportMap
) -> tuple[cst.Module, list[NeededImport]]:
    """No second import of what the module already imports: ``add_imports`` sees only the leading block, so
    an ``import torch`` below a first statement, or ``torch.distributed`` bound as ``D``, would be imported
    again. A module import (``import m [as a]``) is dropped when a plain module-level import binds it before
    any module-level code reads it; one bound under another name takes that name in the emitted code."""
    bound = _module_level_bindings(module)
    keep: list[NeededImport] = []
    renames: dict[str, str] = {}
    for entry in needed:
        module_name, name, alias = entry
        local = alias or module_name.split(".")[0]
        if name is not None or (alias is None and "." in module_name):
            keep.append(entry)
            continue
        found = bound.get(module_name if alias else local)
        if found is None:
            keep.append(entry)
            continue
        index, existing_local = found
        if any(
            _uses(statement, existing_local)
            for statement in module.body[:index]
            if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))
        ):
            keep.append(entry)  # read above its import at module level: the top import is needed
        elif existing_local != local:
            if (
                local in imports.bindings
                or local in imports.defined
                or cstwalk.find(module, lambda node: isinstance(node, cst.Param) and node.name.value == local)
            ):
                keep.append(entry)  # the emitted name means something else here already
            else:
                renames[local] = existing_local
    if renames:
        module = cstwalk.transform(module, _Rename(renames))
    return module, keep


def _module_level_bindings(module: cst.Module) -> dict[str, tuple[int, str]]:
    """Module imported at module level (plain statements, not try/if) -> (statement index, local name).
    Keys: the local name for ``import m``, the module for ``import m as a`` / ``from p import m as a``."""
    found: dict[str, tuple[int, str]] = {}
    for index, statement in enumerate(module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted_name(alias.name)
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        found.setdefault(full, (index, alias.asname.name.value))
                    else:
                        found.setdefault(full.split(".")[0], (index, full.split(".")[0]))
            elif (
                isinstance(small, cst.ImportFrom)
                and small.module is not None
                and not small.relative
                and not isinstance(small.names, cst.ImportStar)
            ):
                for alias in small.names:
                    qualified = f"{dotted_name(small.module)}.{dotted_name(alias.name)}"
                    found.setdefault(qualified, (index, bound_name(alias)))
    return found


class _Rename(cst.CSTTransformer):
    """Emitted names that the module binds under another name (``dist`` -> ``D``); attributes stay."""

    def __init__(self, renames: dict[str, str]) -> None:
        super().__init__()
        self.renames = renames
        self.attributes: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attributes.add(id(node.attr))

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if id(original) in self.attributes or original.value not in self.renames:
            return updated
        return updated.with_changes(value=self.renames[original.value])


def _keep_lazy_imports_lazy(
    module: cst.Module, needed: list[NeededImport], imports: ImportMap
) -> tuple[cst.Module, list[NeededImport]]:
    """A module that imports a package only inside functions (a CLI that starts fast, a Ray driver whose worker
    imports torch) keeps it so: an import the rules need goes into each function that uses it, not to the top.
    ``import torch`` where the module binds ``torch`` only in functions; ``import torch.distributed as dist``
    where every function using ``dist`` imports torch itself (it goes beside that function's own import of
    torch). Only when code outside functions uses the name (imports apart) does it go to the top."""
    if not any(entry[1] is None and _lazy_key(entry) & imports.bindings.keys() for entry in needed):
        return module, needed  # the file imports none of them anywhere: nothing can be lazy
    lazy = _bound_in_functions_only(module)
    body: list[cst.BaseStatement] = list(module.body)
    keep: list[NeededImport] = []
    for entry in needed:
        local, package = _local_name(entry), entry[0].split(".")[0]
        if entry[1] is not None or not (local in lazy or package in lazy) or _read_outside_functions(body, local):
            keep.append(entry)  # not lazy here, or code outside functions reads it
            continue
        using = _functions_using(body, local)
        if not using or (
            local not in lazy
            and (
                local in imports.bindings
                or local in imports.defined
                or not all(_binds_package(function.body, package) for function in using)
            )
        ):
            keep.append(entry)  # a function using it does not import the package itself: the top import is needed
            continue
        line = f"import {entry[0]}" + (f" as {entry[2]}" if entry[2] else "")
        body = [_import_into_functions(statement, local, line, package) for statement in body]
    return module.with_changes(body=body), keep


def _lazy_key(entry: NeededImport) -> set[str]:
    """The names whose binding makes an ``import`` entry a candidate: its own and its package's."""
    return {_local_name(entry), entry[0].split(".")[0]}


def _local_name(entry: NeededImport) -> str:
    module_name, _, alias = entry
    return alias or module_name.split(".")[0]


def _bound_in_functions_only(module: cst.Module) -> set[str]:
    """Names that imports bind inside functions and nowhere at module level."""
    anywhere: set[str] = set()
    top: set[str] = set()

    class Imports(cst.CSTVisitor):
        def __init__(self, into: set[str]) -> None:
            self.into = into

        def visit_Import(self, node: cst.Import) -> None:
            for alias in node.names:
                self.into.add(bound_name(alias))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return self.into is anywhere

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return self.into is anywhere

    cstwalk.visit(module, Imports(anywhere), skip=(cst.BaseExpression,))
    cstwalk.visit(module, Imports(top), skip=(cst.BaseExpression,))
    return anywhere - top


def _read_outside_functions(body: Sequence[cst.BaseStatement], name: str) -> bool:
    """Whether a statement outside functions (at module level or in a class body) reads ``name``; an import
    statement does not (``from ray.train.torch import TorchTrainer`` names no ``torch``)."""
    for statement in body:
        if isinstance(statement, cst.FunctionDef):  # its decorators, defaults and annotations run at definition
            if _uses([*statement.decorators, statement.params, *filter(None, [statement.returns])], name):
                return True
            continue
        if import_of(statement) is not None:
            continue
        if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            if _read_outside_functions(statement.body.body, name) or _uses(statement.decorators, name):
                return True
            if any(_uses(base, name) for base in (*statement.bases, *statement.keywords)):
                return True
            continue
        if _uses(statement, name):
            return True
    return False


def _functions_using(body: Sequence[cst.BaseStatement], name: str) -> list[cst.FunctionDef]:
    """The module's functions and methods whose body reads ``name`` (where ``_import_into_functions`` puts it)."""
    found: list[cst.FunctionDef] = []
    for statement in body:
        if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            found.extend(_functions_using(statement.body.body, name))
        elif isinstance(statement, cst.FunctionDef) and _uses(statement.body, name):
            found.append(statement)
    return found


def _uses(node: cst.CSTNode | Sequence[cst.CSTNode], name: str) -> bool:
    if not isinstance(node, cst.CSTNode):
        return any(_uses(part, name) for part in node)
    return cstwalk.find(node, lambda n: isinstance(n, cst.Name) and n.value == name)


def _binds(node: cst.CSTNode, name: str) -> bool:
    return cstwalk.find(node, lambda n: isinstance(n, cst.Import) and any(bound_name(a) == name for a in n.names))


def _imports_package(found: cst.CSTNode | None, package: str) -> bool:
    """Whether ``found`` is an ``import package`` / ``import package.x [as y]``."""
    return isinstance(found, cst.Import) and any(alias.evaluated_name.split(".")[0] == package for alias in found.names)


def _binds_package(node: cst.CSTNode, package: str) -> bool:
    return cstwalk.find(node, lambda n: _imports_package(n, package))


def _import_into_functions(statement: cst.BaseStatement, local: str, line: str, package: str) -> cst.BaseStatement:
    """``line`` first in each function using ``local`` that does not bind it: after the docstring, or right
    after the function's own leading import of ``package`` (``import torch``, then ``import torch.distributed
    as dist``)."""
    if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
        inner = [_import_into_functions(s, local, line, package) for s in statement.body.body]
        return statement.with_changes(body=statement.body.with_changes(body=inner))
    if not isinstance(statement, cst.FunctionDef) or not _uses(statement.body, local) or _binds(statement.body, local):
        return statement
    block = _as_block(statement.body)
    inner = list(block.body)
    start = 1 if inner and _is_docstring(inner[0]) else 0
    at = start
    for index in range(start, len(inner)):
        found = import_of(inner[index])
        if found is None:
            break
        if _imports_package(found, package):
            at = index + 1  # beside the function's own import of the package
    new_body = [*inner[:at], parse_statement(line + "\n"), *inner[at:]]
    return statement.with_changes(body=block.with_changes(body=new_body))


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString)
    )


def _as_block(suite: cst.BaseSuite) -> cst.IndentedBlock:
    """``def f(): return x`` as the indented block it means, so that a statement can go first."""
    if isinstance(suite, cst.IndentedBlock):
        return suite
    assert isinstance(suite, cst.SimpleStatementSuite)  # libcst's only other suite
    return cst.IndentedBlock(body=[cst.SimpleStatementLine(body=list(suite.body))])
