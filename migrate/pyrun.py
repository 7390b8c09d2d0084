"""Runs the active Python rules over one module: parse once, one batched traversal, post-passes, codegen.

Order of work for a file:
1. ``ImportMap`` from the original tree (qualified-name resolution for every rule);
2. one traversal that dispatches each node to every rule's ``visit_X``/``leave_X`` (the symbol mover
   first), keeping track of the statement being visited so that a ``todo`` becomes an inline note.
   The traversal is ``migrate.cstwalk``'s: libcst's callback semantics at a tenth of its cost;
3. unused imports of legacy modules are removed (emptied blocks get ``pass``);
4. scheduled imports are added (``migrate.imports``: libcst's ``AddImportsVisitor`` behaviour, cheaper);
5. findings get positions from the ORIGINAL tree (line numbers refer to the file before the run), see
   ``migrate.positions``.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Callable, Iterable, Mapping, Sequence

import libcst as cst

from migrate import cstwalk, positions
from migrate.findings import Finding, Severity
from migrate.imports import add_imports
from migrate.rule import ImportMap, PythonContext, PythonRule, dotted_name
from migrate.snippets import parse_expression, parse_statement
from migrate.textdoc import NOTE_PREFIX

def _concrete_subclasses(base: type) -> frozenset[type]:
    found = set()
    for subclass in base.__subclasses__():
        found |= {subclass} | _concrete_subclasses(subclass)
    return frozenset(found)


_STATEMENT_CLASSES = frozenset({cst.SimpleStatementLine}) | _concrete_subclasses(cst.BaseCompoundStatement)
_NAME_BOOKKEEPING = frozenset({cst.Name, cst.Import, cst.ImportFrom})  # names used, outside imports


#: ``ctx.shared`` key: local names a rule found still read where no Name node shows it (``eval("on.X")``)
KEPT_NAMES = "imports.kept_names"


def transform_module(source: str, rules: Sequence[type[PythonRule]], ctx: PythonContext) -> tuple[str, list[Finding]]:
    """Apply ``rules`` to ``source``. Raises ``libcst.ParserSyntaxError`` for code that does not parse."""
    module = cst.parse_module(source)
    ctx.imports = ImportMap.from_module(module)
    if ctx.namespace is not None:  # a notebook cell: earlier cells' imports are in scope here
        ctx.namespace.imports = ctx.namespace.imports.merged_with(ctx.imports)
        ctx.imports = ctx.namespace.imports
    ctx.shared["module"] = module  # the original tree, for rule pre-passes that need more than one node
    instances: list[object] = [rule(ctx) for rule in rules]
    # read from the instances: a rule may withdraw its moves and import cleanup from a file (codemods/xla/_base.py)
    rule_instances = list(instances)
    moves = {old: (new, rule.id) for rule in rule_instances for old, new in rule.moves.items()}
    if moves:
        instances.insert(0, SymbolMover(ctx, moves))
    dispatcher = _Dispatcher(instances, ctx, module)
    new_module = cstwalk.transform(module, dispatcher)
    legacy = tuple(prefix for rule in rule_instances for prefix in rule.legacy_modules)
    if legacy and _imports_any(ctx.imports, legacy):
        still_used = set(ctx.namespace.names if ctx.namespace is not None else ()) | ctx.shared.get(KEPT_NAMES, set())
        new_module = _remove_unused_imports(new_module, legacy, still_used, dispatcher.names_by_statement)
    if ctx.needed_imports:
        new_module, needed = _reuse_module_imports(new_module, ctx.needed_imports, ctx.imports)
        new_module, needed = _keep_lazy_imports_lazy(new_module, needed, ctx.imports)
        new_module = add_imports(new_module, needed)
    return new_module.code, _positioned(module, source, ctx)


def _positioned(module: cst.Module, source: str, ctx: PythonContext) -> list[Finding]:
    if not ctx.findings:
        return []
    by_statement: dict[cst.CSTNode, list[cst.CSTNode]] | None = {}
    for pending in ctx.findings:
        # a finding reported in a rule's pre-pass was not inside a visited statement: find the one holding it
        top = pending.top or _statement_holding(module, pending.node)
        if top is None:
            by_statement = None  # the module itself, or a node that is not in it: see the whole module
            break
        by_statement.setdefault(top, []).extend(_located(pending))
    found = positions.starts_by_statement(module, source, by_statement) if by_statement is not None else None
    if found is None:
        found = positions.starts(module, [node for pending in ctx.findings for node in _located(pending)])
    findings = []
    for pending in ctx.findings:
        # a node a rule made itself is not in the parsed tree: the statement it was reported in is
        where = found.get(id(pending.node)) or (found.get(id(pending.statement)) if pending.statement else None)
        line, column = where or (0, 0)
        findings.append(Finding(pending.rule, pending.severity, line, column, pending.message))
    return findings


def _located(pending) -> list[cst.CSTNode]:
    """The nodes whose positions a finding may take: its own, else its statement's."""
    return [node for node in (pending.node, pending.statement) if node is not None]


def _statement_holding(module: cst.Module, node: cst.CSTNode) -> cst.CSTNode | None:
    return next((statement for statement in module.body if cstwalk.find(statement, lambda n: n is node)), None)


# ------------------------------------------------------------------------------------------ dispatch


@functools.lru_cache(maxsize=None)
def _callbacks(rule_class: type) -> tuple[str, ...]:
    """The libcst callbacks (``visit_X`` / ``leave_X``) a rule class defines: looked up once per class, not per file."""
    return tuple(
        name for name in dir(rule_class)
        if name.startswith(("visit_", "leave_")) and name.count("_") == 1
    )


class _Dispatcher(cstwalk.Hooks):
    """One traversal for all rules (batched, like TorchFix): each node goes to every rule's callback."""

    def __init__(self, rules: Iterable[object], ctx: PythonContext, module: cst.Module) -> None:
        self.ctx = ctx
        self.visitors: dict[type, list[Callable]] = defaultdict(list)
        self.leavers: dict[type, list[Callable]] = defaultdict(list)
        for rule in rules:
            for attribute in _callbacks(type(rule)):
                table = self.visitors if attribute.startswith("visit_") else self.leavers
                table[getattr(cst, attribute[6:])].append(getattr(rule, attribute))
        self.visitors, self.leavers = dict(self.visitors), dict(self.leavers)
        self.hooked = (
            frozenset(self.visitors) | frozenset(self.leavers) | _STATEMENT_CLASSES | _NAME_BOOKKEEPING | {cst.IndentedBlock}
        )
        self.carried: list[tuple[int, list[str]]] = []  # notes of removed statements, for the next one
        #: id(enclosing statement) -> the notes above the import statement just left in that block
        self.previous_import: dict[int | None, set[str]] = {}
        self.first_statement = module.body[0] if module.body else None
        self.header_comments = {line.comment.value for line in module.header if line.comment}
        #: id(module-level statement) -> names it uses outside imports; for the statements the traversal
        #: leaves as they were, the unused-import pass reads this instead of walking them again
        self.names_by_statement: dict[int, set[str]] = {}
        self._names: set[str] = set()
        self._in_import = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        node_type = type(node)
        if node_type is cst.Name:
            if not self._in_import:
                self._names.add(node.value)
        elif node_type in _STATEMENT_CLASSES:
            if not self.ctx.statement_stack:
                self._names = self.names_by_statement[id(node)] = set()
            self.ctx.statement_stack.append(node)
        elif node_type is cst.Import or node_type is cst.ImportFrom:
            self._in_import += 1
        for visit in self.visitors.get(node_type, ()):
            visit(node)
        return True

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
        result: object = updated
        node_type = type(original)
        if node_type is cst.SimpleStatementLine and not updated.body:
            result = cst.RemoveFromParent()  # every statement on the line was removed by a child's rule
        elif node_type is cst.Import or node_type is cst.ImportFrom:
            self._in_import -= 1
        for leave in self.leavers.get(node_type, ()):
            if isinstance(result, node_type):
                result = leave(original, result)
            else:
                # Removed, flattened or replaced by an earlier rule: later rules still get their leave
                # call (so visit/leave state stays balanced) but cannot change the node any more.
                leave(original, original)
        if node_type is cst.IndentedBlock and isinstance(result, cst.IndentedBlock) and not result.body:
            result = result.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])  # every statement removed
        elif node_type is cst.If and isinstance(result, cst.If) and _emptied(original, result) \
                and id(original) not in self.ctx.todos_by_statement:  # a note about the test keeps it
            result = cst.RemoveFromParent()  # `if x: pass else: pass` left by removals does nothing
        if node_type in _STATEMENT_CLASSES:
            result = self._attach_notes(original, result)
        return result

    def _attach_notes(self, original: cst.CSTNode, result: object) -> object:
        depth = len(self.ctx.statement_stack)
        self.ctx.statement_stack.pop()
        # an import the symbol mover split puts its notes above the first of the new imports: a second run must
        # see them from the remaining import that follows it
        parent = id(self.ctx.statement_stack[-1]) if self.ctx.statement_stack else None
        preceding = self.previous_import.pop(parent, None)
        if _is_import(original):
            self.previous_import[parent] = {line.comment.value for line in original.leading_lines if line.comment}
            above = preceding or set()
        else:
            above = set()
        if not self.ctx.options.inline_notes:
            return result
        messages = list(self.ctx.todos_by_statement.get(id(original), ()))
        while self.carried and self.carried[-1][0] >= depth:
            messages = self.carried.pop()[1] + messages
        if not messages:
            return result
        target = result.nodes[0] if isinstance(result, cst.FlattenSentinel) and result.nodes else result
        if type(target) not in _STATEMENT_CLASSES or not hasattr(target, "leading_lines"):
            self.carried.append((depth, messages))
            return result
        # a note above an enclosing statement already says it: a rewrite that wrapped this statement (an `if` guard)
        # left its note above the wrapper, and a second run must not add it again inside
        enclosing = {line.comment.value for statement in self.ctx.statement_stack
                     for line in getattr(statement, "leading_lines", ()) if line.comment}
        annotated = _with_notes(target, messages, enclosing | above | (self.header_comments if original is self.first_statement else set()))
        if isinstance(result, cst.FlattenSentinel):
            return cst.FlattenSentinel([annotated, *result.nodes[1:]])
        return annotated


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def _branches(node: cst.If) -> list[cst.BaseSuite]:
    suites = [node.body]
    orelse = node.orelse
    while isinstance(orelse, cst.If):
        suites.append(orelse.body)
        orelse = orelse.orelse
    if orelse is not None:
        suites.append(orelse.body)
    return suites


def _only_pass(suite: cst.BaseSuite) -> bool:
    statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
    return all(
        isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        and all(isinstance(small, cst.Pass) for small in statement.body)
        for statement in statements
    )


_SIDE_EFFECTS = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda)


def _emptied(original: cst.If, updated: cst.If) -> bool:
    """Rules removed every statement of every branch (the user did not write it so) and the tests do nothing
    but test: the whole `if` can go."""
    if not all(_only_pass(suite) for suite in _branches(updated)) or all(_only_pass(suite) for suite in _branches(original)):
        return False
    tests = [updated.test]
    orelse = updated.orelse
    while isinstance(orelse, cst.If):
        tests.append(orelse.test)
        orelse = orelse.orelse
    return not any(cstwalk.find(test, lambda node: isinstance(node, _SIDE_EFFECTS)) for test in tests)


def _with_notes(statement, messages: list[str], also_present: set[str]):
    lines = list(statement.leading_lines)
    present = {line.comment.value for line in lines if line.comment} | also_present
    for message in dict.fromkeys(messages):
        text = f"# {NOTE_PREFIX} {message}"
        if text not in present:
            lines.append(cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=cst.Comment(text)))
            present.add(text)
    return statement.with_changes(leading_lines=lines)


# ------------------------------------------------------------------------------------- symbol moves


class SymbolMover:
    """Applies every active rule's ``moves`` table: rewrites imports in place (keeping user aliases and
    where the import sits), renames references of un-aliased names, and replaces ``module.Symbol``
    accesses through a module alias. Findings are attributed to the rule that declared the move."""

    def __init__(self, ctx: PythonContext, moves: Mapping[str, tuple[str | None, str]]) -> None:
        self.ctx = ctx
        self.moves = moves
        self.renames: dict[str, str] = {}  # local name -> new local name, for un-aliased moved imports
        self.skip: set[int] = set()  # ids of Name nodes that are not references (attrs, keywords, defs)
        self.in_import = 0
        self.reported: set[str] = set()
        self._plan_renames()

    def _bound_elsewhere(self, local: str, qualified: str) -> bool:
        bindings = self.ctx.imports.bindings.get(local, set())
        return bool(bindings - {qualified}) or local in self.ctx.imports.defined

    def _plan_renames(self) -> None:
        for local, qualifieds in self.ctx.imports.bindings.items():
            for qualified in qualifieds:
                target = self.moves.get(qualified, (None, ""))[0]
                if target is None or local != qualified.rsplit(".", 1)[-1]:
                    continue  # aliased imports keep their alias; removals keep their name
                new_local = target.rsplit(".", 1)[-1]
                if new_local != local and not self._bound_elsewhere(new_local, target):
                    self.renames[local] = new_local

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

    def visit_Import(self, node: cst.Import) -> None:
        self.in_import += 1

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self.in_import -= 1
        return updated

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import += 1

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self.in_import -= 1
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if self.in_import or id(original) in self.skip or original.value not in self.renames:
            return updated
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

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.ImportFrom):
            return updated
        statement = updated.body[0]
        if statement.relative or statement.module is None or isinstance(statement.names, cst.ImportStar):
            return updated
        module_name = dotted_name(statement.module)
        groups: dict[str, list[cst.ImportAlias]] = {}
        kept: list[cst.ImportAlias] = []
        changed = False
        original_names = original.body[0].names if isinstance(original.body[0], cst.ImportFrom) else statement.names
        for alias, original_alias in zip(statement.names, original_names):
            qualified = f"{module_name}.{dotted_name(alias.name)}"
            target = self.moves.get(qualified, (None, ""))[0]
            if target is None:
                kept.append(alias)
                continue
            changed = True
            new_module, new_name = target.rsplit(".", 1)
            old_name = dotted_name(alias.name)
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else old_name
            if local == old_name and self.renames.get(local) == new_name:
                local = new_name
            asname = None if local == new_name else cst.AsName(name=cst.Name(local))
            group = groups.setdefault(new_module, [])
            if not any(a.name.value == new_name and a.evaluated_alias == (asname and local) for a in group):
                group.append(cst.ImportAlias(name=cst.Name(new_name), asname=asname))  # two old names, one new
            self._report_once(self.moves[qualified][1], original_alias, qualified, target)
        if not changed:
            return updated
        lines = [
            cst.SimpleStatementLine(body=[cst.ImportFrom(module=parse_expression(mod), names=_fix_commas(aliases))])
            for mod, aliases in groups.items()
        ]
        if kept:
            lines.append(cst.SimpleStatementLine(body=[statement.with_changes(names=_fix_commas(kept), lpar=None, rpar=None)]))
        lines[0] = lines[0].with_changes(leading_lines=updated.leading_lines)
        lines[-1] = lines[-1].with_changes(trailing_whitespace=updated.trailing_whitespace)
        return cst.FlattenSentinel(lines)

    def _report_once(self, rule_id: str, node: cst.CSTNode, old: str, new: str) -> None:
        if old not in self.reported:
            self.reported.add(old)
            self.ctx.report(rule_id, node, Severity.FIXED, f"`{old}` -> `{new}`")


def _fix_commas(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    return [alias.with_changes(comma=cst.MaybeSentinel.DEFAULT) for alias in aliases]


# ------------------------------------------------------------------------- imports already there


def _reuse_module_imports(module: cst.Module, needed, imports: ImportMap):
    """No second import of what the module already imports: ``add_imports`` sees only the leading block, so
    an ``import torch`` below a first statement, or ``torch.distributed`` bound as ``D``, would be imported
    again. A module import (``import m [as a]``) is dropped when a plain module-level import binds it before
    any module-level code reads it; one bound under another name takes that name in the emitted code."""
    bound = _module_level_bindings(module)
    keep, renames = [], {}
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
        if any(_uses(statement, existing_local) for statement in module.body[:index]
               if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))):
            keep.append(entry)  # read above its import at module level: the top import is needed
        elif existing_local != local:
            if local in imports.bindings or local in imports.defined or cstwalk.find(
                module, lambda node: isinstance(node, cst.Param) and node.name.value == local
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
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative \
                    and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else dotted_name(alias.name)
                    found.setdefault(f"{dotted_name(small.module)}.{dotted_name(alias.name)}", (index, local))
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


# ---------------------------------------------------------------------------------- lazy imports


def _keep_lazy_imports_lazy(module: cst.Module, needed, imports: ImportMap):
    """A module that imports a package only inside functions (a CLI that starts fast, a launcher without
    torch) keeps it so: an import the rules need goes into each function that uses it, not to the top. Only
    when module-level code uses the name does it go to the top."""
    if not any(entry[1] is None and _local_name(entry) in imports.bindings for entry in needed):
        return module, needed  # the file imports none of them anywhere: nothing can be lazy
    lazy = _bound_in_functions_only(module)
    moved = [entry for entry in needed if entry[1] is None and _local_name(entry) in lazy]
    if not moved:
        return module, needed
    body = list(module.body)
    keep = [entry for entry in needed if entry not in moved]
    for entry in moved:
        local = _local_name(entry)
        if any(not isinstance(s, (cst.FunctionDef, cst.ClassDef)) and _uses(s, local) for s in body):
            keep.append(entry)  # module-level code reads it
            continue
        line = f"import {entry[0]}" + (f" as {entry[2]}" if entry[2] else "")
        body = [_import_into_functions(statement, local, line) for statement in body]
    return module.with_changes(body=body), keep


def _local_name(entry) -> str:
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
                self.into.add(alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name)
                              else dotted_name(alias.name).split(".")[0])

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
    return cstwalk.find(node, lambda n: isinstance(n, cst.Import) and any(
        (a.asname.name.value if a.asname and isinstance(a.asname.name, cst.Name) else dotted_name(a.name).split(".")[0]) == name
        for a in n.names
    ))


def _import_into_functions(statement: cst.BaseStatement, local: str, line: str) -> cst.BaseStatement:
    if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
        inner = [_import_into_functions(s, local, line) for s in statement.body.body]
        return statement.with_changes(body=statement.body.with_changes(body=inner))
    if not isinstance(statement, cst.FunctionDef) or not _uses(statement.body, local) or _binds(statement.body, local):
        return statement
    block = statement.body
    if not isinstance(block, cst.IndentedBlock):
        block = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=list(block.body))])
    inner = list(block.body)
    start = 1 if inner and isinstance(inner[0], cst.SimpleStatementLine) and len(inner[0].body) == 1 and isinstance(
        inner[0].body[0], cst.Expr) and isinstance(inner[0].body[0].value, cst.SimpleString) else 0  # after a docstring
    return statement.with_changes(body=block.with_changes(body=[*inner[:start], parse_statement(line + "\n"), *inner[start:]]))


# ---------------------------------------------------------------------------------- import cleanup


def _is_legacy(module_name: str, prefixes: tuple[str, ...]) -> bool:
    return any(module_name == prefix or module_name.startswith(prefix + ".") for prefix in prefixes)


def _imports_any(imports: ImportMap, prefixes: tuple[str, ...]) -> bool:
    """Whether the original file imported anything from ``prefixes`` (else there is nothing to clean)."""
    return any(_is_legacy(qualified, prefixes) for names in imports.bindings.values() for qualified in names) or any(
        _is_legacy(module, prefixes) for module in imports.star_modules
    )


def _remove_unused_imports(
    module: cst.Module, prefixes: tuple[str, ...], used_elsewhere: set[str], known: Mapping[int, set[str]],
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

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        keep = []
        for alias in updated.names:
            full = dotted_name(alias.name)
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else full.split(".")[0]
            if _is_legacy(full, self.prefixes) and local not in self.used:
                continue
            keep.append(alias)
        if len(keep) == len(updated.names):
            return updated
        return updated.with_changes(names=_fix_commas(keep)) if keep else cst.RemoveFromParent()

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        if updated.relative or updated.module is None or not _is_legacy(dotted_name(updated.module), self.prefixes):
            return updated
        if isinstance(updated.names, cst.ImportStar):
            return updated  # a star import cannot be proven unused; the sweep reports it
        keep = [
            alias for alias in updated.names
            if (alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else dotted_name(alias.name)) in self.used
        ]
        if len(keep) == len(updated.names):
            return updated
        if not keep:
            return cst.RemoveFromParent()
        return updated.with_changes(names=_fix_commas(keep), lpar=None, rpar=None) if len(keep) == 1 else updated.with_changes(names=_fix_commas(keep))

    def leave_SimpleStatementLine(self, original, updated):
        return updated if updated.body else cst.RemoveFromParent()

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock):
        if updated.body:
            return updated
        return updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])

    def leave_SimpleStatementSuite(self, original, updated):
        return updated if updated.body else updated.with_changes(body=[cst.Pass()])
