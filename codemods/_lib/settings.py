"""Process-wide settings the migrated code needs, written once, where the program starts.

``torch._dynamo.config.automatic_dynamic_shapes = False`` and ``HF_DEACTIVATE_ASYNC_LOAD`` configure the
whole process: they belong to the entry point, not to every module a rule touched (a library module
imported by three scripts must not set them as a side effect of its import). Where they go:

1. the ``if __name__ == "__main__":`` block, first;
2. else the body of a module-level ``main()``, first (after its docstring);
3. else, for a script (module-level code that runs: calls), after the leading imports;
4. else (a module of definitions only) nowhere: ``place`` returns False and the caller says where they go.

A module that imports torch only inside functions (to import fast) keeps it so: the block gets its own
``import torch`` instead of a module-level one.
"""

from __future__ import annotations

import libcst as cst

from migrate.findings import Severity
from migrate.snippets import parse_statement


def place(module: cst.Module, ctx, lines: list[str], comment: str, rule_id: str | None = None,
          entry_points: tuple[str, ...] = ()) -> tuple[cst.Module, bool]:
    """Insert ``lines`` (statements) with ``comment`` above them at the module's entry point.
    Returns the module and whether there was an entry point; with ``rule_id``, a module without one gets
    a todo saying where the settings go (``entry_points``: the project scripts that import it, named there).
    Imports are added only with the code that uses them."""
    body: list[cst.BaseStatement] = list(module.body)
    lazy_torch = (  # imported, but only inside functions
        any(line.startswith("torch.") for line in lines) and "torch" in ctx.imports.bindings
        and not _binds_at_module_level(module, "torch")
    )
    if not any(_is_main_guard(s) or (isinstance(s, cst.FunctionDef) and s.name.value == "main") or _runs(s)
               for s in body):
        # a module of definitions: nothing is inserted, so no import either (an unused `import os` is no help)
        original = ctx.shared.get("module")
        if rule_id is not None and original is not None and original.body:
            settings = "; ".join(lines)
            verb = "imports" if len(entry_points) == 1 else "import"
            where = f"in {' and '.join(entry_points)}, which {verb} it" if entry_points else "once in the script that runs it"
            ctx.report(rule_id, original.body[0], Severity.TODO, f"this module has no entry point (no `if __name__ == \"__main__\":`, no main()): set {settings} {where}")
        return module, False
    statements = [parse_statement(line + "\n") for line in lines]
    if lazy_torch:
        statements.insert(0, parse_statement("import torch\n"))
    elif any(line.startswith("torch.") for line in lines):
        ctx.add_import("torch")
    statements[0] = statements[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(f"# {comment}"))])
    if any(line.startswith("os.") for line in lines):
        ctx.add_import("os")  # the standard library: a module-level import costs nothing
    for index, statement in enumerate(body):
        if _is_main_guard(statement):
            body[index] = _prepend(statement, statements)
            return module.with_changes(body=body), True
    for index, statement in enumerate(body):
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "main":
            body[index] = _prepend(statement, statements, after_docstring=True)
            return module.with_changes(body=body), True
    if lazy_torch:  # module-level code needs it at module level
        statements = statements[1:]
        statements[0] = statements[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(f"# {comment}"))])
        ctx.add_import("torch")
    index = _after_leading_imports(body)
    # libcst: every BaseStatement subclass has leading_lines, the base class does not declare it
    leading = statements[0].leading_lines  # type: ignore[attr-defined]
    statements[0] = statements[0].with_changes(leading_lines=[cst.EmptyLine(), *leading])
    return module.with_changes(body=body[:index] + statements + body[index:]), True


def _is_main_guard(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    operands = [test.left, *(c.comparator for c in test.comparisons)]
    names = {o.value for o in operands if isinstance(o, cst.Name)}
    strings = {o.evaluated_value for o in operands if isinstance(o, cst.SimpleString)}
    return names == {"__name__"} and strings == {"__main__"}


def _prepend(statement, new: list[cst.BaseStatement], after_docstring: bool = False):
    block = statement.body
    if not isinstance(block, cst.IndentedBlock):  # `if __name__ == "__main__": main()` on one line
        block = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=list(block.body))])
    inner = list(block.body)
    start = 1 if after_docstring and inner and _is_docstring(inner[0]) else 0
    return statement.with_changes(body=block.with_changes(body=inner[:start] + new + inner[start:]))


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))


def _runs(statement: cst.CSTNode) -> bool:
    """Module-level code that does something when the file runs (a call), beyond defining names."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return False
    if isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
        return False
    if _is_docstring(statement):
        return False
    return _has_call(statement)


def _has_call(node: cst.CSTNode) -> bool:
    from migrate import cstwalk

    return cstwalk.find(node, lambda n: isinstance(n, cst.Call))


def _binds_at_module_level(module: cst.Module, name: str) -> bool:
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                    (alias.evaluated_alias
                     or cst.helpers.get_full_name_for_node_or_raise(alias.name).split(".")[0]) == name
                    for alias in small.names
                ):
                    return True
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) and any(
                    (alias.evaluated_alias or alias.evaluated_name) == name for alias in small.names
                ):
                    return True
        elif isinstance(statement, cst.Try):
            return True  # guarded imports at the top: assume they bind it (never import twice)
    return False


def _after_leading_imports(body: list[cst.BaseStatement]) -> int:
    index = 0
    for position, statement in enumerate(body):
        if isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
            index = position + 1
        elif position == 0 and _is_docstring(statement):
            index = 1
        elif isinstance(statement, cst.Try) and index == position:
            index = position + 1
        else:
            break
    return index
