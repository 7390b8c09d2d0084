"""The symbol-move pass: every active rule's ``moves`` table (``old qualified name -> new one``, or None for
a name that goes away) applied in the one traversal of ``migrate.pyrun``, as the first of its visitors.

Imports are rewritten in place (keeping user aliases and where the import sits), references of un-aliased
names are renamed (and those of an alias its rule drops: ``PythonRule.dropped_aliases``), and ``module.Symbol``
accesses through a module alias are replaced by the new name, imported where it is needed
(``PythonContext.add_import``). Each move is reported once per file, as a ``fixed`` finding of the rule that
declared it.
"""

from __future__ import annotations

from typing import Mapping, TypeVar

import libcst as cst

from migrate import cstwalk
from migrate.findings import Severity
from migrate.imports import bound_name, default_commas
from migrate.rule import PythonContext, dotted_name
from migrate.snippets import parse_dotted, parse_expression

_AnyImport = TypeVar("_AnyImport", cst.Import, cst.ImportFrom)
#: ``ctx.shared`` key: the ImportMap of what earlier notebook cells imported (empty outside notebooks)
EARLIER_IMPORTS = "imports.earlier_cells"


class SymbolMover:
    """Applies every active rule's ``moves`` table: rewrites imports in place (keeping user aliases and
    where the import sits), renames references of un-aliased names, and replaces ``module.Symbol``
    accesses through a module alias. Findings are attributed to the rule that declared the move."""

    def __init__(
        self, ctx: PythonContext, moves: Mapping[str, tuple[str | None, str]], dropped: frozenset[str] = frozenset()
    ) -> None:
        self.ctx = ctx
        self.moves = moves
        self.dropped = dropped  # aliases of moved imports whose rule drops them: renamed like un-aliased names
        self.renames: dict[str, str] = {}  # local name -> new local name, for un-aliased moved imports
        self.rename_targets: dict[str, str] = {}  # local name -> the qualified name it moves to
        self.skip: set[int] = set()  # ids of Name nodes that are not references (attrs, keywords, defs)
        self.in_import = 0
        self.reported: set[str] = set()
        self._plan_renames()
        #: (local name, qualified name) -> index of the first module-level statement that imports it
        self.first_import: dict[tuple[str, str], int] = {}
        self.statement_index: dict[int, int] = {}
        module = ctx.shared.get("module")
        self.module_body = list(module.body) if isinstance(module, cst.Module) else []
        for index, statement in enumerate(self.module_body):
            self.statement_index[id(statement)] = index
            collector = _ImportedNames()
            cstwalk.visit(statement, collector)
            for pair in collector.pairs:
                self.first_import.setdefault(pair, index)

    def _imported_before(self, local: str, target: str, old_local: str) -> bool:
        """Whether ``local`` is already bound to ``target`` where the current import is: by an earlier
        module-level statement of the file (or a later one, with no module-level read in between), or by an
        earlier notebook cell. A moved import would repeat it."""
        top = self.ctx.statement_stack[0] if self.ctx.statement_stack else None
        current = self.statement_index.get(id(top), -1) if top is not None else -1
        first = self.first_import.get((local, target))
        if first is not None and current >= 0 and first > current:
            # imported again just below (``from optimum.neuron import X`` above ``from transformers import
            # AutoX``): the copy below serves, unless module-level code in between reads the name
            return not any(
                cstwalk.find(statement, lambda node: isinstance(node, cst.Name) and node.value in (local, old_local))
                for statement in self.module_body[current + 1 : first]
                if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))
            )
        if first is not None:
            return first < current
        earlier = self.ctx.shared.get(EARLIER_IMPORTS)
        return earlier is not None and target in earlier.bindings.get(local, set())

    def _bound_elsewhere(self, local: str, qualified: str) -> bool:
        bindings = self.ctx.imports.bindings.get(local, set())
        return bool(bindings - {qualified}) or local in self.ctx.imports.defined

    def _plan_renames(self) -> None:
        for local, qualifieds in self.ctx.imports.bindings.items():
            for qualified in qualifieds:
                target = self.moves.get(qualified, (None, ""))[0]
                if target is None or (local != qualified.rsplit(".", 1)[-1] and local not in self.dropped):
                    continue  # aliased imports keep their alias unless their rule drops it; removals keep their name
                new_local = target.rsplit(".", 1)[-1]
                if new_local != local and not self._bound_elsewhere(new_local, target):
                    self.renames[local] = new_local
                    self.rename_targets[local] = target

    # names that are not references
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skip.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.skip.add(id(node.keyword))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.skip.add(id(node.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.skip.add(id(node.name))

    def visit_Param(self, node: cst.Param) -> None:
        self.skip.add(id(node.name))

    # the names of an import are not references: one pair of callbacks for both kinds of import
    def _enter_import(self, node: cst.Import | cst.ImportFrom) -> None:
        self.in_import += 1

    def _leave_import(self, original: _AnyImport, updated: _AnyImport) -> _AnyImport:
        self.in_import -= 1
        return updated

    visit_Import = visit_ImportFrom = _enter_import
    leave_Import = leave_ImportFrom = _leave_import

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if self.in_import or id(original) in self.skip or original.value not in self.renames:
            return updated
        if self.ctx.namespace is not None and not any(local == original.value for local, _ in self.first_import):
            # a notebook cell using a name an earlier cell imports: that cell may keep its old import (its
            # rewrite withdrawn there), so the new name is imported here unless an earlier cell binds it now
            # (pyrun drops what the earlier cells import after the run)
            module_name, name = self.rename_targets[original.value].rsplit(".", 1)
            self.ctx.add_import(module_name, name)
        return updated.with_changes(value=self.renames[original.value])

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        if self.in_import:
            return updated
        qualified = self.ctx.matches(original, self.moves)
        if qualified is None:
            return updated
        target, rule_id = self.moves[qualified]
        if target is None:
            return updated
        module_name, name = target.rsplit(".", 1)
        self._report_once(rule_id, original, qualified, target)
        if self._bound_elsewhere(name, target):
            self.ctx.add_import(module_name)
            return parse_expression(target)
        self.ctx.add_import(module_name, name)
        return cst.Name(name)

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine] | cst.RemovalSentinel:
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.ImportFrom):
            return updated
        statement = updated.body[0]
        if statement.relative or statement.module is None or isinstance(statement.names, cst.ImportStar):
            return updated
        module_name = dotted_name(statement.module)
        groups: dict[str, list[cst.ImportAlias]] = {}
        kept: list[cst.ImportAlias] = []
        changed = False
        before = original.body[0]
        original_names = (
            before.names
            if isinstance(before, cst.ImportFrom) and not isinstance(before.names, cst.ImportStar)
            else statement.names
        )
        for alias, original_alias in zip(statement.names, original_names):
            qualified = f"{module_name}.{dotted_name(alias.name)}"
            target = self.moves.get(qualified, (None, ""))[0]
            if target is None:
                kept.append(alias)
                continue
            changed = True
            new_module, new_name = target.rsplit(".", 1)
            old_name = dotted_name(alias.name)
            local = bound_name(alias)
            if (local == old_name or local in self.dropped) and self.renames.get(local) == new_name:
                local = new_name
            self._report_once(self.moves[qualified][1], original_alias, qualified, target)
            if self._imported_before(local, target, bound_name(alias)):
                continue  # `from transformers import AutoModel...` already above: no second copy
            asname = None if local == new_name else cst.AsName(name=cst.Name(local))
            group = groups.setdefault(new_module, [])
            if not any(a.name.value == new_name and a.evaluated_alias == (asname and local) for a in group):
                group.append(cst.ImportAlias(name=cst.Name(new_name), asname=asname))  # two old names, one new
        if not changed:
            return updated
        if not groups and not kept:
            return cst.RemoveFromParent()  # every name it moved is imported above already
        lines = [
            cst.SimpleStatementLine(body=[cst.ImportFrom(module=parse_dotted(mod), names=default_commas(aliases))])
            for mod, aliases in groups.items()
        ]
        if kept:
            rest = statement.with_changes(names=default_commas(kept), lpar=None, rpar=None)
            lines.append(cst.SimpleStatementLine(body=[rest]))
        lines[0] = lines[0].with_changes(leading_lines=updated.leading_lines)
        lines[-1] = lines[-1].with_changes(trailing_whitespace=updated.trailing_whitespace)
        return cst.FlattenSentinel(lines)

    def _report_once(self, rule_id: str, node: cst.CSTNode, old: str, new: str) -> None:
        if old not in self.reported:
            self.reported.add(old)
            self.ctx.report(rule_id, node, Severity.FIXED, f"`{old}` -> `{new}`")


class _ImportedNames(cst.CSTVisitor):
    """(local name, qualified name) of every ``from m import n [as a]`` in a statement."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module_name = dotted_name(node.module)
        self.pairs.extend((bound_name(alias), f"{module_name}.{dotted_name(alias.name)}") for alias in node.names)
