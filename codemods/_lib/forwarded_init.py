"""Where the keywords of a call to a project class go: a subclass whose ``__init__`` passes ``**kwargs`` unchanged to
``super().__init__`` hands every keyword it does not name itself to its base, so a keyword the stock base refuses
(``tokenizer=`` on transformers 5's ``Trainer``) raises there. Shared by NM203 (which renames such keywords at the
call) and the verification pass (NM702, which reports them).

Only a plain forward counts: one ``super().__init__(..., **kwargs)`` statement at the top of the method's body, and
``kwargs`` read nowhere else (a ``kwargs.pop("tokenizer")``, ``kwargs["x"]``, a rebuilt dict or a second call may
change what reaches the base: not known, never guessed)."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class InitShape:
    """What a class's own ``__init__`` does with the keywords of a call."""

    own: frozenset[str]  # the keywords it takes itself (they stop here)
    forwards: bool  # True: every other keyword reaches super().__init__ unchanged
    why: str = ""  # when not: what it does instead, for a todo


#: a class without an ``__init__`` of its own: every keyword goes to its base
INHERITED = InitShape(frozenset(), True)


def init_shape(node: ast.ClassDef) -> InitShape:
    """The ``InitShape`` of the class statement ``node`` (``INHERITED`` without an ``__init__`` in its body)."""
    inits = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"]
    if any(isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__init__" for t in s.targets)
           for s in node.body):
        return InitShape(frozenset(), False, "its __init__ is assigned in the class body")
    if not inits:
        return INHERITED
    if len(inits) > 1 or inits[0].decorator_list or isinstance(inits[0], ast.AsyncFunctionDef):
        return InitShape(frozenset(), False, "its __init__ is decorated or defined twice")
    init = inits[0]
    arguments = init.args
    positional = [*arguments.posonlyargs, *arguments.args][1:]  # self aside
    posonly = {a.arg for a in arguments.posonlyargs}  # no keyword names them: a keyword of that name goes on
    own = frozenset(a.arg for a in (*positional, *arguments.kwonlyargs) if a.arg not in posonly)
    if arguments.kwarg is None:
        return InitShape(own, False, f"its __init__ takes no **kwargs (only {', '.join(sorted(own)) or 'self'})")
    kwargs = arguments.kwarg.arg
    supers = [s for s in init.body if isinstance(s, ast.Expr) and _is_super_init(s.value)]
    calls = [n for n in ast.walk(init) if isinstance(n, ast.Call) and _is_super_init(n)]
    if len(calls) != 1 or len(supers) != 1:
        return InitShape(own, False, "its __init__ does not call super().__init__ exactly once, unconditionally")
    call = supers[0].value
    assert isinstance(call, ast.Call)
    splats = [k for k in call.keywords if k.arg is None]
    if len(splats) != 1 or not (isinstance(splats[0].value, ast.Name) and splats[0].value.id == kwargs):
        return InitShape(own, False, f"its super().__init__ call does not pass **{kwargs} as it came")
    reads = [n for n in ast.walk(init) if isinstance(n, ast.Name) and n.id in (kwargs, "locals", "vars")]
    if len(reads) != 1:
        return InitShape(own, False, f"its __init__ reads or changes {kwargs} before passing it on")
    return InitShape(own, True)


def _is_super_init(node: ast.expr) -> bool:
    """``super().__init__(...)`` or ``super(Cls, self).__init__(...)``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
            and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super")


def module_classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    """The module-level classes of ``tree`` whose name means that class everywhere in it: defined once and bound by
    nothing else (an import, an assignment, a def of the same name)."""
    defined: dict[str, list[ast.ClassDef]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef):
            defined.setdefault(statement.name, []).append(statement)
    rebound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            rebound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            rebound.add(node.name)
        elif isinstance(node, ast.ClassDef) and node not in tree.body:
            rebound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            rebound |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            rebound |= set(node.names)
    return {name: nodes[0] for name, nodes in defined.items() if len(nodes) == 1 and name not in rebound}


@dataclass(frozen=True)
class Route:
    """Where the keywords of a call to a project class go."""

    base: ast.expr | None  # the first base outside the file's classes they reach (None: they stop before it)
    own: frozenset[str]  # keywords a class of the chain takes itself
    chain: tuple[str, ...]  # the classes passed through, the called one first
    why: str = ""  # when base is None: why (a class of the chain that does not forward plainly)


def route(classes: dict[str, ast.ClassDef], name: str) -> Route | None:
    """The ``Route`` of a call of ``name``, a class of ``classes`` (``module_classes``); None when ``name`` is not one.
    The keywords pass a class with one base and no class keywords (metaclass) whose ``init_shape`` forwards."""
    own: set[str] = set()
    chain: list[str] = []
    current = classes.get(name)
    if current is None:
        return None
    while True:
        chain.append(current.name)
        shape = init_shape(current)
        own |= shape.own
        if not shape.forwards:
            return Route(None, frozenset(own), tuple(chain), f"{current.name}: {shape.why}")
        if len(current.bases) != 1 or current.keywords:
            return Route(None, frozenset(own), tuple(chain),
                         f"{current.name} has {'class keywords' if current.keywords else 'more than one base'}")
        base = current.bases[0]
        if isinstance(base, ast.Name) and base.id in classes and base.id not in chain:
            current = classes[base.id]
            continue
        return Route(base, frozenset(own), tuple(chain))
