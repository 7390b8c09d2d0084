"""Project fact ``verify.param-reads``: the Neuron-era training-argument fields (``tensor_parallel_size``,
``trn_config``, ``zero_1``...) a module-level function of a project file reads on one of its parameters.

A script that hands its arguments object to such a function of another module (``from helpers import
describe_world``; ``describe_world(training_args)``) breaks there once its arguments became stock: NM703 reports the
call (``describe_world`` reads ``training_args.tensor_parallel_size`` at ``code/helpers.py:14``), so the rewrite that
made the object stock is withdrawn, as it is for the same read in the script's own file.

Followed: an undecorated module-level function, and the ``__init__`` of an undecorated module-level class (its
parameters after ``self``), whose parameter is never bound again; reads through other module-level functions of the
same file that it passes the parameter to (``def describe(args): log_world(args)``). Not counted: reads under a
``hasattr`` of that name, a ``getattr`` with a default, a ``try`` that catches ``AttributeError``, or an attribute the
file sets (``args.zero_1 = ...``).
"""

from __future__ import annotations

import ast

from codemods._tables.training_args_data import ROWS
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind

#: the Neuron-era fields the stock arguments classes may lack (NM703 checks each against the stock class)
FIELDS = frozenset({source for source, action, *_ in ROWS if action != "KEEP"}) | frozenset(
    {"tensor_parallel_size", "trn_config", "pipeline_parallel_size"})
CATCHES = frozenset({"AttributeError", "Exception", "BaseException"})

#: one read: (parameter position or None for keyword-only, parameter name, field, line of the read)
Read = tuple[int | None, str, str, int]


def param_reads(text: str) -> dict[str, list[Read]] | None:
    """The fact's value for one file: module-level function (or class, for its ``__init__``) -> its reads."""
    if not any(name in text for name in FIELDS):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    set_anywhere = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)}
    callables: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, int]] = {}  # name -> (function, skipped)
    bound = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for node in tree.body:
        if bound.count(getattr(node, "name", "")) != 1 or getattr(node, "decorator_list", None):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            callables[node.name] = (node, 0)
        elif isinstance(node, ast.ClassDef):
            init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"
                         and not s.decorator_list), None)
            if init is not None and (init.args.posonlyargs or init.args.args):
                callables[node.name] = (init, 1)
    direct = {name: _direct_reads(function, skipped, set_anywhere) for name, (function, skipped) in callables.items()}
    passes = {name: _passes(function, skipped, callables) for name, (function, skipped) in callables.items()}
    found: dict[str, set[Read]] = {name: set(reads) for name, reads in direct.items()}
    changed = True
    while changed:  # through the functions of the file a parameter is handed on to
        changed = False
        for name, handed in passes.items():
            for param, position, callee, callee_param in handed:
                for _, read_param, attr, line in list(found.get(callee, ())):
                    if read_param == callee_param and (read := (position, param, attr, line)) not in found[name]:
                        found[name].add(read)
                        changed = True
    result = {name: sorted(reads, key=lambda r: (r[3], r[2])) for name, reads in found.items() if reads}
    return result or None


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef, skipped: int) -> dict[str, int | None]:
    """Parameter name -> position (after ``skipped`` receivers), None for keyword-only; those bound again in the body
    are left out (the name no longer holds what the caller passed)."""
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)][skipped:]
    names: dict[str, int | None] = {name: index for index, name in enumerate(positional)}
    names.update({a.arg: None for a in function.args.kwonlyargs})
    rebound = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    rebound |= {a.arg for inner in ast.walk(function) if inner is not function
                and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                for a in (*inner.args.posonlyargs, *inner.args.args, *inner.args.kwonlyargs)}
    return {name: index for name, index in names.items() if name not in rebound}


def _direct_reads(function, skipped: int, set_anywhere: set[str]) -> list[Read]:
    params = _parameters(function, skipped)
    parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    probed = set()  # (parameter, field) tested with hasattr / read with a getattr default
    reads: list[tuple[str, str, ast.expr]] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
                and node.value.id in params and node.attr in FIELDS:
            reads.append((node.value.id, node.attr, node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in params \
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in FIELDS:
            if node.func.id == "getattr" and len(node.args) == 2 and not node.keywords:
                reads.append((node.args[0].id, node.args[1].value, node))
            else:
                probed.add((node.args[0].id, node.args[1].value))
    return [(params[param], param, attr, node.lineno) for param, attr, node in reads
            if (param, attr) not in probed and attr not in set_anywhere and not _caught(node, parents)]


def _caught(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Inside the body of a ``try`` whose handlers catch AttributeError (or everything)."""
    child, parent = node, parents.get(id(node))
    while parent is not None:
        if isinstance(parent, ast.Try) and child in parent.body:
            for handler in parent.handlers:
                kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                if handler.type is None or any(isinstance(k, ast.Name) and k.id in CATCHES for k in kinds):
                    return True
        child, parent = parent, parents.get(id(parent))
    return False


def _passes(function, skipped: int, callables: dict) -> list[tuple[str, int | None, str, str]]:
    """(parameter, its position, callee, callee's parameter) for each call of another callable of the file that
    hands the parameter on as it is."""
    params = _parameters(function, skipped)
    handed = []
    for call in ast.walk(function):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in callables):
            continue
        callee, callee_skipped = callables[call.func.id]
        positional = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)][callee_skipped:]
        given = [*zip(positional, call.args), *((k.arg, k.value) for k in call.keywords if k.arg)]
        for callee_param, value in given:
            if isinstance(value, ast.Name) and value.id in params:
                handed.append((value.id, params[value.id], call.func.id, callee_param))
    return handed


PARAM_READS = ProjectFact("verify.param-reads", frozenset({FileKind.PYTHON}), tuple(sorted(FIELDS)), param_reads)


def project_reads(values: dict[str, dict[str, list[Read]]]) -> dict[str, tuple[str, list[Read]]]:
    """The fact's values (display path -> callables) by importable qualified name (``helpers.describe_world``, from
    any folder level the importing script runs in) -> (the file, its reads)."""
    qualified = {}
    for path, callables in values.items():
        if not path.endswith(".py"):
            continue
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for start in range(len(parts)):
            for name, reads in callables.items():
                qualified[".".join([*parts[start:], name])] = (path, reads)
    return qualified
