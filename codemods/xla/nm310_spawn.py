"""NM310 xmp-spawn: ``xmp.spawn(fn, args=...)`` becomes ``fn(LOCAL_RANK, ...)``, one call per torchrun worker.

What it does:

* ``xmp.spawn(fn, args=(...))`` and ``torch_xla.launch(fn, args)`` become ``fn(int(os.environ.get("LOCAL_RANK",
  0)), ...)`` with a ``todo`` for the launch command (the launch-layer rules edit shell scripts).
* When the file never creates a process group, the rewritten call is preceded by one, made only when torchrun
  started more than one process::

      if int(os.environ.get("WORLD_SIZE", 1)) > 1 and not dist.is_initialized():  # xmp.spawn joined the processes
          dist.init_process_group(dist.get_default_backend_for_device(...))

* Non-literal ``args`` or ``*args`` get a ``todo`` only.
* The scripts whose spawn this rule rewrites are a project fact (``SPAWNED_SCRIPTS``): NM407 puts the torchrun
  ``todo`` on each plain ``python X.py`` line of the project's launchers that runs one, since a note in the script
  alone is not seen where the run is started.
* Where ``xmp.spawn`` started several processes itself, a plain ``python script.py`` run of the rewritten call
  would train one where it trained N, with nothing said (the README's ``python train_spawn.py --num-cores 8``).
  So when ``nprocs`` is an int literal above 1, or ``flags.<dest>`` of an argument the file declares once with
  ``type=int`` and an int default (or ``required=True``), ``flags`` bound once, in the spawn's scope, to
  ``<parser>.parse_args()``, the call is preceded by a check that stops such a run with the torchrun command::

      if "WORLD_SIZE" not in os.environ and flags.num_cores > 1:  # xmp.spawn started the processes itself
          raise SystemExit(f"{sys.argv[0]} now runs one process per torchrun worker, where xmp.spawn started "
                           f"{flags.num_cores} itself: launch it with torchrun --nproc_per_node {flags.num_cores} "
                           f"{' '.join(sys.argv)}")

  and the ``todo`` names the command and says the argument no longer starts processes. The check reads
  ``WORLD_SIZE`` being set, not its value: a launcher (torchrun, or any that sets the env:// variables) was used,
  and ``torchrun --nproc_per_node 1`` is then a choice, not a silent drop. A loud stop beats a silent one-process
  run. ``nprocs=1``, no ``nprocs`` or ``None`` (every device: a count the file does not hold), and any other
  expression (a call, an argument without ``type=int`` or whose default is not an int, where ``None > 1`` would
  raise) get no check, only the ``todo``.

Why:

``xmp.spawn`` started one process per device and called ``fn(index, *args)``. Native torch.distributed starts the
processes with ``torchrun --nproc_per_node N`` (one per logical NeuronCore) and each process calls ``fn`` once with
its ``LOCAL_RANK``; run alone it is a single process with index 0. ``xmp.spawn`` also joined the processes:
torch_xla's collectives (``xm.all_reduce``, ``xm.optimizer_step``) worked without ``init_process_group``, and
their native replacements need a process group.

Before::

    if __name__ == "__main__":
        xmp.spawn(_mp_fn, args=(flags,), nprocs=8)

After::

    if __name__ == "__main__":
        # neuron-migrate: launch with torchrun --nproc_per_node <NeuronCores> (was xmp.spawn nprocs=8) ...
        _mp_fn(int(os.environ.get("LOCAL_RANK", 0)), flags)

Safety: needs-review. The launch command changes: the reviewer runs the script with ``torchrun`` (the ``todo``).

References:

* https://pytorch.org/docs/stable/elastic/run.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/guides/torch-distributed.html
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import cast

import libcst as cst

from codemods._lib import device as dev
from codemods._lib.cst import Import, source_of, string_value
from codemods._lib.launch_targets import import_aliases, qualified_name
from codemods.xla._base import LOCAL_RANK, Safety, XlaRule, arg, has_star, names
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind

JOIN = """if int(os.environ.get("WORLD_SIZE", 1)) > 1 and not dist.is_initialized():  # xmp.spawn joined the processes
    dist.init_process_group({backend})
"""
SPAWN = names(("torch_xla.distributed.xla_multiprocessing", ["spawn"]), ("torch_xla", ["launch"]))


class XmpSpawn(XlaRule):
    """xmp.spawn(fn, args=(...)) -> fn(LOCAL_RANK, ...) launched by torchrun (todo for the launcher)."""

    id = "NM310"
    name = "xmp-spawn"
    safety = Safety.NEEDS_REVIEW

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call = self.line_call(original, updated, SPAWN)
        if call is None:
            return updated
        new = cast(cst.Call, cast(cst.Expr, updated.body[0]).value)  # line_call matched the line's call expression
        fn, args, nprocs = arg(new, 0, "fn"), arg(new, 1, "args"), arg(call, 2, "nprocs")
        n = source_of(nprocs.value) if nprocs is not None else "all devices"
        if fn is None or has_star(call) or (args is not None and not isinstance(args.value, cst.Tuple)):
            self.todo(call, f"xmp.spawn: launch with torchrun --nproc_per_node <NeuronCores> (was nprocs={n}) and call fn(int(os.environ.get(\"LOCAL_RANK\", 0)), *args) once per process")
            return updated
        call_args = [cst.Arg(self.expr(LOCAL_RANK, Import("os")))]
        if args is not None:
            call_args += [cst.Arg(e.value if not isinstance(e, cst.StarredElement) else e.value, star="*" if isinstance(e, cst.StarredElement) else "") for e in cast(cst.Tuple, args.value).elements]
        script = self.ctx.path.as_posix()
        count = nprocs.value if nprocs is not None else None
        option = self._int_option(original, count) if count is not None else None
        guard: list[cst.BaseStatement] = []
        if isinstance(count, cst.Integer) and count.evaluated_value > 1:
            self.todo(call, f"launch this script with torchrun --nproc_per_node {n} {script} ... (xmp.spawn started "
                      f"{n} processes itself; each torchrun process runs fn once with its LOCAL_RANK): run with plain "
                      f"`python` it now stops with that command instead of training alone")
            guard = [self._guard("", n)]
        elif option is not None:
            self.todo(call, f"launch this script with torchrun --nproc_per_node <the {option} value> {script} ... "
                      f"(xmp.spawn started nprocs={n} processes itself; each torchrun process runs fn once with its "
                      f"LOCAL_RANK): {option} no longer starts processes, torchrun's --nproc_per_node does; a plain "
                      f"`python` run asking for more than one now stops with the torchrun command instead of training "
                      f"alone")
            guard = [self._guard(f" and {n} > 1", f"{{{n}}}")]
        else:
            self.todo(call, f"launch this script with torchrun --nproc_per_node <NeuronCores> (was xmp.spawn nprocs={n}); each process runs fn once with its LOCAL_RANK")
        statement = updated.with_changes(body=[updated.body[0].with_changes(value=cst.Call(func=fn.value, args=call_args))])
        if "init_process_group" in self.code_text():
            if not guard:
                return statement
            return self.replace_line(original, updated, [*guard, statement.with_changes(leading_lines=())])
        backend = dev.process_group_backend(self.ctx.options.device_style)
        join = self.statement(JOIN.format(backend=backend.source), Import("os"), *backend.imports)
        return self.replace_line(original, updated, [*guard, join, statement.with_changes(leading_lines=())])

    def _guard(self, condition: str, count: str) -> cst.BaseStatement:
        """Stops a run that no launcher started (no WORLD_SIZE) where xmp.spawn started several processes."""
        message = (f"f\"{{sys.argv[0]}} now runs one process per torchrun worker, where xmp.spawn started {count} "
                   f"itself: launch it with torchrun --nproc_per_node {count} {{' '.join(sys.argv)}}\"")
        return self.statement(f'if "WORLD_SIZE" not in os.environ{condition}:  # xmp.spawn started the processes itself\n'
                              f"    raise SystemExit({message})\n", Import("os"), Import("sys"))

    def _int_option(self, line: cst.SimpleStatementLine, count: cst.BaseExpression) -> str | None:
        """``--num-cores`` when ``count`` is ``flags.num_cores``, ``flags`` bound once, in the scope of the spawn
        line, to ``<parser>.parse_args()``, and the file declares that dest once with ``type=int`` and an int
        default (or ``required=True``): comparing it with 1 right before the call is then valid. Else None."""
        if not (isinstance(count, cst.Attribute) and isinstance(count.value, cst.Name)) or self.module is None:
            return None
        finder = _ParsedOption(line, count.value.value, count.attr.value)
        self.module.visit(finder)
        return finder.result()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.suite_todo(node, SPAWN, "xmp.spawn in a one-line block: put it on its own line (the rule then rewrites it) and launch with torchrun")


class _ParsedOption(cst.CSTVisitor):
    """The facts ``XmpSpawn._int_option`` needs, from the file's original tree."""

    def __init__(self, line: cst.SimpleStatementLine, name: str, dest: str) -> None:
        self.line, self.name, self.dest = line, name, dest
        self.scopes: list[cst.CSTNode | None] = [None]  # None: the module
        self.line_scope: cst.CSTNode | None | bool = False  # False: the spawn line was not seen
        self.bindings: dict[cst.CSTNode | None, int] = {}  # scope -> bindings of name there
        self.parsed: list[cst.CSTNode | None] = []  # scopes binding name to <x>.parse_args()
        self.options: list[tuple[str, bool]] = []  # (option string, an int with a value) per add_argument of dest

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)
        for param in (*node.params.params, *node.params.posonly_params, *node.params.kwonly_params):
            self._bound(param.name)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if node is self.line:
            self.line_scope = self.scopes[-1]

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bound(target.target)
        if (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and node.targets[0].target.value == self.name
                and isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Attribute)
                and node.value.func.attr.value == "parse_args"):
            self.parsed.append(self.scopes[-1])

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bound(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bound(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bound(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bound(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bound(node.target)

    def _bound(self, target: cst.CSTNode) -> None:
        names = [target] if isinstance(target, cst.Name) else [
            e.value for e in getattr(target, "elements", ()) if isinstance(e.value, cst.Name)]
        if any(isinstance(n, cst.Name) and n.value == self.name for n in names):
            self.bindings[self.scopes[-1]] = self.bindings.get(self.scopes[-1], 0) + 1
        for element in getattr(target, "elements", ()):
            if not isinstance(element.value, cst.Name):
                self._bound(element.value)

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument"):
            return
        flags = [string_value(a.value) for a in node.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if not flags or any(f is None for f in flags):
            return
        strings = cast(list[str], flags)
        long = [f for f in strings if f.startswith("--")]
        dest = string_value(keywords["dest"]) if "dest" in keywords else (
            (long[0] if long else strings[0]).lstrip("-").replace("-", "_"))
        if dest != self.dest:
            return
        kind = keywords.get("type")
        default = keywords.get("default")
        required = keywords.get("required")
        valued = (isinstance(default, cst.Integer) or (isinstance(required, cst.Name) and required.value == "True")
                  or not strings[0].startswith("-"))  # a positional argument is always given
        self.options.append((long[0] if long else strings[0], isinstance(kind, cst.Name) and kind.value == "int" and valued))

    def result(self) -> str | None:
        if self.line_scope is False or self.parsed != [self.line_scope] or self.bindings.get(self.parsed[0]) != 1:
            return None
        if len(self.options) != 1 or not self.options[0][1]:
            return None
        return self.options[0][0]



# ------------------------------------------------------------------ project fact: the scripts whose spawn goes


@dataclass(frozen=True)
class Spawned:
    """A script's ``xmp.spawn`` call of the shape ``XmpSpawn`` rewrites (one process per launch after this run)."""

    nprocs: str | None  # the nprocs argument as written (None: not given, every device)
    #: the option string (``--num_cores``) of the argument ``nprocs`` reads (``flags.num_cores``), or None
    option: str | None = None


_SPAWN_NAMES = {"torch_xla.distributed.xla_multiprocessing.spawn": True, "torch_xla.launch": False}


def _dest_option(tree: ast.Module, dest: str) -> str | None:
    """The option string of the one ``add_argument`` whose dest is ``dest`` (None: none, or more than one)."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not strings or len(strings) != len(node.args):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        explicit = keywords.get("dest")
        long = [s for s in strings if s.startswith("--")]
        name = explicit.value if isinstance(explicit, ast.Constant) else (long[0] if long else strings[0]).lstrip("-").replace("-", "_")
        if name == dest:
            found.append(long[0] if long else strings[0])
    return found[0] if len(found) == 1 and found[0].startswith("-") else None


def spawned(text: str) -> Spawned | None:
    """The first statement ``xmp.spawn(fn, args=(...), nprocs=...)`` / ``torch_xla.launch(fn, ...)`` of a script
    that ``XmpSpawn`` rewrites to one call per process (a function, literal or no ``args``, no ``*``/``**``, on a
    line of its own): a launcher that runs this script with plain ``python`` now starts one process where the call
    started several (NM407 says so on that launch line). None when the file has none."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    aliases = import_aliases(tree)
    lines = text.splitlines()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        name = qualified_name(call.func, aliases)
        if name not in _SPAWN_NAMES:
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        keywords = {k.arg: k.value for k in call.keywords}
        fn = call.args[0] if call.args else keywords.get("fn")
        args = call.args[1] if len(call.args) > 1 else keywords.get("args")
        if fn is None or (args is not None and not isinstance(args, ast.Tuple)):
            continue
        if node.lineno > len(lines) or lines[node.lineno - 1][:node.col_offset].strip():
            continue  # `if x: xmp.spawn(...)`: a one-line block, which the rule does not rewrite
        count = (call.args[2] if len(call.args) > 2 else keywords.get("nprocs")) if _SPAWN_NAMES[name] else None
        if count is None or (isinstance(count, ast.Constant) and count.value is None):
            return Spawned(None)
        option = None
        if isinstance(count, ast.Attribute) and isinstance(count.value, ast.Name):
            option = _dest_option(tree, count.attr)
        return Spawned(ast.unparse(count), option)
    return None


SPAWNED_SCRIPTS = ProjectFact("xla.spawned-scripts", frozenset({FileKind.PYTHON}), ("spawn", "launch"), spawned)
