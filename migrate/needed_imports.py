"""Where the imports the rules scheduled (``PythonContext.add_import``) go, once the traversal is done.

1. what the module imports already is reused, not imported a second time (``add_imports`` sees only the
   leading import block);
2. a module that imports a package only inside functions keeps it so: the import goes into each function
   that uses the name;
3. the rest go to the top, as libcst's ``AddImportsVisitor`` would put them (``migrate.imports``).
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from migrate import cstwalk
from migrate.imports import add_imports, bound_name
from migrate.rule import ImportMap, dotted_name
from migrate.snippets import parse_statement

NeededImport = tuple[str, str | None, str | None]  # (module, name or None for ``import module``, alias)


def place_imports(module: cst.Module, needed: Sequence[NeededImport], imports: ImportMap) -> cst.Module:
    """``module`` with the ``needed`` imports; ``imports``: what the original file imported."""
    module, kept = _reuse_module_imports(module, needed, imports)
    module, kept = _keep_lazy_imports_lazy(module, kept, imports)
    return add_imports(module, kept)


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
    """A module that imports a package only inside functions (a CLI that starts fast, a launcher without
    torch) keeps it so: an import the rules need goes into each function that uses it, not to the top. Only
    when module-level code uses the name does it go to the top."""
    if not any(entry[1] is None and _local_name(entry) in imports.bindings for entry in needed):
        return module, needed  # the file imports none of them anywhere: nothing can be lazy
    lazy = _bound_in_functions_only(module)
    moved = [entry for entry in needed if entry[1] is None and _local_name(entry) in lazy]
    if not moved:
        return module, needed
    body: list[cst.BaseStatement] = list(module.body)
    keep = [entry for entry in needed if entry not in moved]
    for entry in moved:
        local = _local_name(entry)
        if any(not isinstance(s, (cst.FunctionDef, cst.ClassDef)) and _uses(s, local) for s in body):
            keep.append(entry)  # module-level code reads it
            continue
        line = f"import {entry[0]}" + (f" as {entry[2]}" if entry[2] else "")
        body = [_import_into_functions(statement, local, line) for statement in body]
    return module.with_changes(body=body), keep


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


def _uses(node: cst.CSTNode, name: str) -> bool:
    return cstwalk.find(node, lambda n: isinstance(n, cst.Name) and n.value == name)


def _binds(node: cst.CSTNode, name: str) -> bool:
    return cstwalk.find(node, lambda n: isinstance(n, cst.Import) and any(bound_name(a) == name for a in n.names))


def _import_into_functions(statement: cst.BaseStatement, local: str, line: str) -> cst.BaseStatement:
    if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
        inner = [_import_into_functions(s, local, line) for s in statement.body.body]
        return statement.with_changes(body=statement.body.with_changes(body=inner))
    if not isinstance(statement, cst.FunctionDef) or not _uses(statement.body, local) or _binds(statement.body, local):
        return statement
    block = _as_block(statement.body)
    inner = list(block.body)
    start = 1 if inner and _is_docstring(inner[0]) else 0
    new_body = [*inner[:start], parse_statement(line + "\n"), *inner[start:]]
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
