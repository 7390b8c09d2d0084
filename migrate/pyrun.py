"""Runs the active Python rules over one module: parse once, one batched traversal, post-passes, codegen.

Order of work for a file:
1. ``ImportMap`` from the original tree (qualified-name resolution for every rule);
2. one traversal that dispatches each node to every rule's ``visit_X``/``leave_X`` (the symbol mover,
   ``migrate.symbol_moves``, first), keeping track of the statement being visited so that a ``todo``
   becomes an inline note. The traversal is ``migrate.cstwalk``'s: libcst's callback semantics at a tenth
   of its cost;
3. unused imports of legacy modules are removed (``migrate.unused_imports``; emptied blocks get ``pass``);
4. scheduled imports are added (``migrate.needed_imports``: reused where the module has them, kept lazy
   where it imports inside functions, else libcst's ``AddImportsVisitor`` behaviour, cheaper);
5. findings get positions from the ORIGINAL tree (line numbers refer to the file before the run), see
   ``migrate.positions``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable, Sequence, cast

import libcst as cst

from migrate import cstwalk, positions
from migrate.findings import Finding
from migrate.imports import import_of
from migrate.needed_imports import place_imports
from migrate.rule import ImportMap, PendingFinding, PythonContext, PythonRule
from migrate.symbol_moves import EARLIER_IMPORTS, SymbolMover
from migrate.textdoc import NOTE_PREFIX
from migrate.unused_imports import imports_any, remove_unused_imports


def _concrete_subclasses(base: type) -> frozenset[type]:
    found: set[type] = set()
    subclass: type
    for subclass in base.__subclasses__():
        found |= {subclass} | _concrete_subclasses(subclass)
    return frozenset(found)


_STATEMENT_CLASSES = frozenset({cst.SimpleStatementLine}) | _concrete_subclasses(cst.BaseCompoundStatement)
_Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement  # the nodes that hold inline notes
#: names used, outside imports; an attribute's name (``torch.save``) and a keyword's (``f(save=1)``) are not uses
_NAME_BOOKKEEPING = frozenset({cst.Name, cst.Import, cst.ImportFrom, cst.Attribute, cst.Arg})


#: ``ctx.shared`` key: local names a rule found still read where no Name node shows it (``eval("on.X")``)
KEPT_NAMES = "imports.kept_names"
#: ``ctx.shared`` key: the symbol moves of this run's rules (qualified old -> new name) applied to the file, so a rule
#: can tell whether an object it sees keeps its old class (its rule was not selected) or becomes the stock one
SYMBOL_MOVES = "symbol-moves"


def transform_module(source: str, rules: Sequence[type[PythonRule]], ctx: PythonContext) -> tuple[str, list[Finding]]:
    """Apply ``rules`` to ``source``. Raises ``libcst.ParserSyntaxError`` for code that does not parse."""
    module = cst.parse_module(source)
    ctx.imports = ImportMap.from_module(module)
    earlier = ImportMap()  # what earlier notebook cells imported: this cell need not import it again
    if ctx.namespace is not None:  # a notebook cell: earlier cells' imports are in scope here
        earlier = ctx.namespace.imports
        ctx.namespace.imports = ctx.namespace.imports.merged_with(ctx.imports)
        ctx.imports = ctx.namespace.imports
    ctx.shared[EARLIER_IMPORTS] = earlier
    ctx.shared["module"] = module  # the original tree, for rule pre-passes that need more than one node
    # read from the instances: a rule may withdraw its moves and import cleanup from a file (codemods/xla/_base.py)
    rule_instances = [rule(ctx) for rule in rules]
    instances: list[PythonRule | SymbolMover] = list(rule_instances)
    moves = {old: (new, rule.id) for rule in rule_instances for old, new in rule.moves.items()}
    ctx.shared[SYMBOL_MOVES] = {old: new for old, (new, _) in moves.items()}
    if moves:
        dropped = frozenset().union(*(rule.dropped_aliases() for rule in rule_instances if rule.moves))
        instances.insert(0, SymbolMover(ctx, moves, dropped))
    dispatcher = _Dispatcher(instances, ctx, module)
    new_module = cstwalk.transform(module, dispatcher)
    legacy = tuple(prefix for rule in rule_instances for prefix in rule.legacy_modules)
    if legacy and imports_any(ctx.imports, legacy):
        still_used = set(ctx.namespace.names if ctx.namespace is not None else ()) | ctx.shared.get(KEPT_NAMES, set())
        new_module = remove_unused_imports(new_module, legacy, still_used, dispatcher.names_by_statement)
    needed = [entry for entry in ctx.needed_imports if not _bound_by(earlier, entry)]
    if needed or new_module is not module:
        files = ctx.options.project.files
        new_module = place_imports(new_module, needed, ctx.imports, module, ctx.path, files)
    if ctx.namespace is not None:  # a notebook cell: what it imports after the run is in scope in the cells after it
        top = [statement for statement in new_module.body if import_of(statement) is not None]
        ctx.namespace.imports = ctx.namespace.imports.merged_with(ImportMap.from_module(cst.Module(body=top)))
    return new_module.code, _positioned(module, source, ctx)


def _bound_by(imports: ImportMap, entry: tuple[str, str | None, str | None]) -> bool:
    """Whether ``imports`` bind the name an ``add_import`` entry would bind, to the same thing."""
    module_name, name, alias = entry
    if name is None:
        local, qualified = alias or module_name.split(".")[0], module_name  # `import a.b`: only if a.b is bound
    else:
        local, qualified = alias or name, f"{module_name}.{name}"
    return qualified in imports.bindings.get(local, set())


def _positioned(module: cst.Module, source: str, ctx: PythonContext) -> list[Finding]:
    if not ctx.findings:
        return []
    by_statement: dict[cst.CSTNode, list[cst.CSTNode]] = {}
    whole_module = False
    for pending in ctx.findings:
        # a finding reported in a rule's pre-pass was not inside a visited statement: find the one holding it
        top = pending.top or _statement_holding(module, pending.node)
        if top is None:
            whole_module = True  # the module itself, or a node that is not in it: see the whole module
            break
        by_statement.setdefault(top, []).extend(_located(pending))
    found = None if whole_module else positions.starts_by_statement(module, source, by_statement)
    if found is None:
        found = positions.starts(module, [node for pending in ctx.findings for node in _located(pending)])
    findings = []
    for pending in ctx.findings:
        # a node a rule made itself is not in the parsed tree: the statement it was reported in is
        where = found.get(id(pending.node)) or (found.get(id(pending.statement)) if pending.statement else None)
        line, column = where or (0, 0)
        findings.append(Finding(pending.rule, pending.severity, line, column, pending.message))
    return findings


def _located(pending: PendingFinding) -> list[cst.CSTNode]:
    """The nodes whose positions a finding may take: its own, else its statement's."""
    return [node for node in (pending.node, pending.statement) if node is not None]


def _statement_holding(module: cst.Module, node: cst.CSTNode) -> cst.CSTNode | None:
    return next((statement for statement in module.body if cstwalk.find(statement, lambda n: n is node)), None)


# ------------------------------------------------------------------------------------------ dispatch


_CALLBACKS: dict[type, tuple[str, ...]] = {}


def _callbacks(rule_class: type) -> tuple[str, ...]:
    """The libcst callbacks (``visit_X`` / ``leave_X``) a rule class defines: looked up once per class, not per
    file."""
    found = _CALLBACKS.get(rule_class)
    if found is None:
        found = _CALLBACKS[rule_class] = tuple(
            name for name in dir(rule_class) if name.startswith(("visit_", "leave_")) and name.count("_") == 1
        )
    return found


class _Dispatcher(cstwalk.Hooks):
    """One traversal for all rules (batched, like TorchFix): each node goes to every rule's callback."""

    def __init__(self, rules: Iterable[PythonRule | SymbolMover], ctx: PythonContext, module: cst.Module) -> None:
        self.ctx = ctx
        self.visitors: dict[type, list[Callable]] = defaultdict(list)
        self.leavers: dict[type, list[Callable]] = defaultdict(list)
        for rule in rules:
            for attribute in _callbacks(type(rule)):
                table = self.visitors if attribute.startswith("visit_") else self.leavers
                table[getattr(cst, attribute[6:])].append(getattr(rule, attribute))
        self.visitors, self.leavers = dict(self.visitors), dict(self.leavers)
        self.hooked = (
            frozenset(self.visitors)
            | frozenset(self.leavers)
            | _STATEMENT_CLASSES
            | _NAME_BOOKKEEPING
            | {cst.IndentedBlock}
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
        self._not_uses: set[int] = set()  # ids of the Name nodes that name an attribute or a keyword

    def on_visit(self, node: cst.CSTNode) -> bool:
        node_type = type(node)
        if node_type is cst.Name:
            if not self._in_import and id(node) not in self._not_uses:
                self._names.add(cast(cst.Name, node).value)
        elif node_type is cst.Attribute:
            self._not_uses.add(id(cast(cst.Attribute, node).attr))
        elif node_type is cst.Arg:
            keyword = cast(cst.Arg, node).keyword
            if keyword is not None:
                self._not_uses.add(id(keyword))
        elif node_type in _STATEMENT_CLASSES:
            if not self.ctx.statement_stack:
                self._names = self.names_by_statement[id(node)] = set()
            self.ctx.statement_stack.append(node)
        elif node_type is cst.Import or node_type is cst.ImportFrom:
            self._in_import += 1
        for visit in self.visitors.get(node_type, ()):
            visit(node)
        return True

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> object:
        result: object = updated
        node_type = type(original)
        if node_type is cst.SimpleStatementLine and not cast(cst.SimpleStatementLine, updated).body:
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
        elif (
            node_type is cst.If
            and isinstance(result, cst.If)
            and _emptied(cast(cst.If, original), result)
            and id(original) not in self.ctx.todos_by_statement
        ):  # a note about the test keeps it
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
        if isinstance(original, cst.SimpleStatementLine) and _is_import(original):
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
        if type(target) not in _STATEMENT_CLASSES:  # every statement class has leading_lines
            self.carried.append((depth, messages))
            return result
        # a note above an enclosing statement already says it: a rewrite that wrapped this statement (an `if` guard)
        # left its note above the wrapper, and a second run must not add it again inside
        enclosing = {
            line.comment.value
            for statement in self.ctx.statement_stack
            for line in getattr(statement, "leading_lines", ())
            if line.comment
        }
        header = self.header_comments if original is self.first_statement else set()
        annotated = _with_notes(cast(_Statement, target), messages, enclosing | above | header)
        if isinstance(result, cst.FlattenSentinel):
            return cst.FlattenSentinel([annotated, *result.nodes[1:]])
        return annotated


def _is_import(statement: cst.SimpleStatementLine) -> bool:
    return all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


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
    if not all(_only_pass(suite) for suite in _branches(updated)):
        return False
    if all(_only_pass(suite) for suite in _branches(original)):  # written so: not the rules' doing
        return False
    tests = [updated.test]
    orelse = updated.orelse
    while isinstance(orelse, cst.If):
        tests.append(orelse.test)
        orelse = orelse.orelse
    return not any(cstwalk.find(test, lambda node: isinstance(node, _SIDE_EFFECTS)) for test in tests)


def _with_notes(statement: _Statement, messages: list[str], also_present: set[str]) -> _Statement:
    lines = list(statement.leading_lines)
    present = {line.comment.value for line in lines if line.comment} | also_present
    for message in dict.fromkeys(messages):
        text = f"# {NOTE_PREFIX} {message}"
        if text not in present:
            lines.append(cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=cst.Comment(text)))
            present.add(text)
    return statement.with_changes(leading_lines=lines)
