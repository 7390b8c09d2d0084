"""The unused-import pass: once the rules ran, an import of a legacy module (a rule's ``legacy_modules``) that
no code uses any more is removed; a block it empties gets ``pass``. Star imports stay (the sweep reports
them). Names are counted outside import statements, in the module and in the names the caller knows are
used elsewhere (the other cells of a notebook, strings a rule found read by ``eval``).
"""

from __future__ import annotations

from typing import Mapping

import libcst as cst

from migrate import cstwalk
from migrate.imports import bound_name, default_commas
from migrate.rule import ImportMap, dotted_name


def _is_legacy(module_name: str, prefixes: tuple[str, ...]) -> bool:
    return any(module_name == prefix or module_name.startswith(prefix + ".") for prefix in prefixes)


def imports_any(imports: ImportMap, prefixes: tuple[str, ...]) -> bool:
    """Whether the original file imported anything from ``prefixes`` (else there is nothing to clean)."""
    return any(_is_legacy(qualified, prefixes) for names in imports.bindings.values() for qualified in names) or any(
        _is_legacy(module, prefixes) for module in imports.star_modules
    )


def remove_unused_imports(
    module: cst.Module,
    prefixes: tuple[str, ...],
    used_elsewhere: set[str],
    known: Mapping[int, set[str]],
) -> cst.Module:
    """``known``: names used by module-level statements of the parsed tree, by id; a statement still there
    unchanged is not walked again."""
    used: set[str] = set(used_elsewhere)

    class Uses(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Name(self, node: cst.Name) -> None:
            used.add(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # `torch.save` uses `torch`, not an imported `save`
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)  # a keyword's name is not a use either
            return False

    for statement in module.body:
        names = known.get(id(statement))  # ids of the parsed tree: it is alive, none was reused
        if names is not None:
            used |= names
        else:
            cstwalk.visit(statement, Uses())
    # imports are statements: expressions (most of a tree's nodes) hold none
    return cstwalk.transform(module, _UnusedImportRemover(prefixes, used), skip=(cst.BaseExpression,))


class _UnusedImportRemover(cst.CSTTransformer):
    def __init__(self, prefixes: tuple[str, ...], used: set[str]) -> None:
        super().__init__()
        self.prefixes = prefixes
        self.used = used

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import | cst.RemovalSentinel:
        keep = []
        for alias in updated.names:
            if _is_legacy(dotted_name(alias.name), self.prefixes) and bound_name(alias) not in self.used:
                continue
            keep.append(alias)
        if len(keep) == len(updated.names):
            return updated
        return updated.with_changes(names=default_commas(keep)) if keep else cst.RemoveFromParent()

    def leave_ImportFrom(
        self, original: cst.ImportFrom, updated: cst.ImportFrom
    ) -> cst.ImportFrom | cst.RemovalSentinel:
        if updated.relative or updated.module is None or not _is_legacy(dotted_name(updated.module), self.prefixes):
            return updated
        if isinstance(updated.names, cst.ImportStar):
            return updated  # a star import cannot be proven unused; the sweep reports it
        keep = [alias for alias in updated.names if bound_name(alias) in self.used]
        if len(keep) == len(updated.names):
            return updated
        if not keep:
            return cst.RemoveFromParent()
        if len(keep) == 1:  # one name needs no parentheses
            return updated.with_changes(names=default_commas(keep), lpar=None, rpar=None)
        return updated.with_changes(names=default_commas(keep))

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        return updated if updated.body else cst.RemoveFromParent()

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if updated.body:
            return updated
        return updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])

    def leave_SimpleStatementSuite(
        self, original: cst.SimpleStatementSuite, updated: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        return updated if updated.body else updated.with_changes(body=[cst.Pass()])
