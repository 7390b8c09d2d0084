"""NM905 entry-point-on-two-stacks: an entry point that loads a module left on the old stack and one moved to the new.

What it does:

* Runs once the run is done, over what each file is AFTER the run: the project modules each entry point loads when
  it starts (its import closure: the module-level, unguarded ``import`` / ``from ... import`` of the project's files,
  the entry point's own ``if __name__ == "__main__"`` block included, followed through the modules they import in
  the same way, resolved as NM321 and NM316 resolve them), and which of those modules
  - are left on the old stack: they still import ``optimum.neuron``, ``torch_xla``, ``transformers_neuronx``,
    ``neuronx_distributed`` or ``torch_neuron`` at module level (a class no rule knows, a file kept on torch_xla
    as a whole), and
  - need the stock stack: after the run they no longer import any of those and hold code that only the stock
    stack runs (``torch.accelerator``, the ``"neuron"`` device or backend, ``is_torch_neuron_available``,
    ``DistributedConfig``, ``CompileConfig``, ``activation_checkpointing_*``). A rewrite that runs on either
    stack (a rank-0 ``print`` for ``xm.master_print``) does not count: the module still runs beside the old one.
* Entry points: scripts (``if __name__ == "__main__"``), notebooks, tests (``test_*.py``, ``*_test.py``) and apps
  (a module importing gradio, flask, fastapi or streamlit).
* When one entry point's closure holds both, ONE ``error`` on the entry point (the whole file) names the modules of
  each side and what to do: migrate the module left behind by hand first (its notes say what blocks it) and run
  neuron-migrate again, or keep the modules the entry point loads on the old stack (revert this run's changes to
  the moved ones).
* An import that may never run makes no import-time closure: one inside a function, under ``try: ... except
  ImportError`` (or ``ModuleNotFoundError``, ``Exception``, a bare ``except``) or ``if TYPE_CHECKING:`` (never
  followed), or an indented one in a notebook cell that does not parse. When only such an import brings the other
  stack in, the entry point gets ONE ``info`` instead, naming the module, the function or the guard, the importer
  and its line: the code behind it fails on the migrated stack only when it runs (under the guard its ``except``
  branch runs instead).
* Nothing is rewritten and nothing is held back: the engine has no way to withdraw one file's rewrites because of
  another file, so the finding is all this rule does. The per-import note of NM321 (a module kept on torch_xla)
  stays as it is.

Why:

The rules port a project file by file. When one module stays on optimum-neuron (or torch_xla) and another is moved
to the stock stack, an entry point importing both runs in no environment: on the migrated stack the first raises
``ModuleNotFoundError: No module named 'optimum'`` on import; on the old one (optimum-neuron 0.0.x pins an XLA-era
torch 2.1 and transformers 4) the second calls APIs it does not have (``torch.accelerator``, transformers 5). A
requirements file split per job cannot help one process.

Before (after the other rules; ``app.py``)::

    from transcribe import load_whisper      # transcribe.py: still ``from optimum.neuron import NeuronModelFor...``
    from classify_audio import load_classifier   # classify_audio.py: moved to AutoModelFor... by this run

After (unchanged; the report lists)::

    error  NM905  this entry point loads project modules on two stacks that no single environment installs: ...

Safety: manual-only. Nothing is rewritten; the error says which modules to bring onto one stack.

References:

* docs/architecture.md
"""

from __future__ import annotations

import ast
import posixpath
import re
from typing import Any, Iterable, Mapping

from codemods._lib.notebook_cells import code_cells
from codemods.xla._importers import USES, _index, _python_imports, collect_uses, imported_files
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.findings import Finding, Severity
from migrate.rule import ProjectRule, Safety

#: module-level imports of the old stack (a column-0 statement: not inside a try, a function or an if)
_OLD = re.compile(r"^(?:import|from)[ \t]+(optimum\.neuron|torch_xla|transformers_neuronx|neuronx_distributed"
                  r"|torch_neuron)(?![\w])", re.MULTILINE)
_PACKAGE = {"optimum.neuron": "optimum-neuron", "torch_xla": "torch_xla", "transformers_neuronx": "transformers-neuronx",
            "neuronx_distributed": "neuronx-distributed", "torch_neuron": "torch-neuron (Inf1)"}
#: code only the stock stack runs (the device expression, TorchNeuron's device and backend names, transformers 5's
#: distributed and compile configs, its activation-checkpointing names): decided from the final text, so a rewrite
#: that runs on either stack does not count, and a later run sees what an earlier one moved
_NEW = re.compile(r"""\btorch\.accelerator\b|\bis_torch_neuron_available\b|\btorch\.device\(\s*["']neuron\b"""
                  r"""|\b(?:device|backend)\s*=\s*["']neuron["']|\bDistributedConfig\b|\bCompileConfig\b"""
                  r"""|\bactivation_checkpointing_\w+""")
_APPS = {"gradio", "flask", "fastapi", "streamlit"}
_SHOWN = 3
_TRY = tuple(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))  # TryStar: Python 3.11+
_CAUGHT = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _catches_import_error(handler: ast.expr | None) -> bool:
    names = handler.elts if isinstance(handler, ast.Tuple) else [handler]
    return handler is None or any(isinstance(name, ast.Name) and name.id in _CAUGHT for name in names)


def _spec(node: ast.Import | ast.ImportFrom) -> list[tuple[int, str, tuple[str, ...]]]:
    if isinstance(node, ast.Import):
        return [(0, alias.name, ()) for alias in node.names]
    return [(node.level, node.module or "", tuple(alias.name for alias in node.names if alias.name != "*"))]


def import_edges(code: str) -> dict[str, Any] | None:
    """The imports of a file by when they run: ``eager`` (module level, unguarded: they run when the module is
    imported), ``main`` (under ``if __name__ == "__main__"``: they run when the file is the entry point) and ``lazy``
    (``(import, line, where)``: inside a function, or under ``try: ... except ImportError``; they may never run).
    Code that does not parse (a notebook's magics) is read by line: a column-0 import is eager, an indented one lazy."""
    eager: set[tuple[int, str, tuple[str, ...]]] = set()
    main: set[tuple[int, str, tuple[str, ...]]] = set()
    lazy: set[tuple[tuple[int, str, tuple[str, ...]], int, str]] = set()
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        for number, line in enumerate(code.splitlines(), 1):
            for spec in _python_imports(line.strip()):
                if line[:1].isspace():
                    lazy.add((spec, number, "in an indented block"))
                else:
                    eager.add(spec)
        return {"eager": frozenset(eager), "main": frozenset(main), "lazy": frozenset(lazy)} if eager or lazy else None

    def visit(body: list[ast.stmt], where: str, is_main: bool) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for spec in _spec(node):
                    if where:
                        lazy.add((spec, node.lineno, where))
                    else:
                        (main if is_main else eager).add(spec)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, where or f"inside {node.name}()", is_main)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, where, is_main)
            elif isinstance(node, _TRY):
                handlers: list[ast.ExceptHandler] = getattr(node, "handlers", [])
                guarded = any(_catches_import_error(handler.type) for handler in handlers)
                guard = "under try/except ImportError" + (f" {where}" if where else "")
                visit(getattr(node, "body", []), guard if guarded else where, is_main)
                for block in (*(h.body for h in handlers), getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                    visit(block, where, is_main)
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if re.fullmatch(r"(?:typing\.)?TYPE_CHECKING", test):
                    continue  # never runs
                if re.fullmatch(r"""__name__\s*==\s*["']__main__["']""", test):
                    visit(node.body, where, True)
                    visit(node.orelse, where, is_main)
                    continue
                visit(node.body, where, is_main)
                visit(node.orelse, where, is_main)
            elif isinstance(node, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
                visit(node.body, where, is_main)
                visit(getattr(node, "orelse", []), where, is_main)

    visit(tree.body, "", False)
    if not (eager or main or lazy):
        return None
    return {"eager": frozenset(eager), "main": frozenset(main), "lazy": frozenset(lazy)}


def _collect_edges(text: str) -> dict[str, Any] | None:
    return import_edges("\n".join(code_cells(text) or []) if text.lstrip().startswith("{") else text)


#: when each import of a file runs (module level and unguarded, or lazily), for the files the run never parsed
EDGES = ProjectFact("sweep.import-edges", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}), ("import",), _collect_edges)


def _code(text: str, kind: FileKind) -> str:
    return "\n".join(code_cells(text) or []) if kind is FileKind.NOTEBOOK else text


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:_SHOWN]) + (f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")


class EntryPointOnTwoStacks(ProjectRule):
    """An entry point whose modules are split by the run between the old stack and the stock one: one error."""

    id = "NM905"
    name = "entry-point-on-two-stacks"
    safety = Safety.MANUAL_ONLY
    scope = "neuron-project"
    kinds = frozenset({FileKind.PYTHON, FileKind.NOTEBOOK})
    triggers = ("import",)  # never looked for: a project rule reads the files the run processed
    facts = (USES, EDGES)  # the imports of the files the run never parsed (their text is their final text)

    @classmethod
    def state(cls, text: str, kind: FileKind, findings: Iterable[Finding], changed: bool) -> Any:
        code = _code(text, kind)
        old = tuple(sorted({match.group(1) for match in _OLD.finditer(code)}))
        moved = not old and bool(_NEW.search(code))
        uses = collect_uses(text) or {"imports": frozenset(), "main": False}
        return {"imports": uses["imports"], "main": uses["main"], "old": old, "moved": moved,
                "edges": import_edges(code)}

    def check(self, states: Mapping[str, Any]) -> list[tuple[str, Finding]]:
        project = self.options.project
        files = project.files
        facts, edge_facts = project.of(USES.name), project.of(EDGES.name)
        index = _index(files)
        no_edges: Mapping[str, Any] = {"eager": frozenset(), "main": frozenset(), "lazy": frozenset()}

        def uses(path: str) -> Mapping[str, Any]:
            return states.get(path) or facts.get(path) or {"imports": frozenset(), "main": False}

        def edges(path: str) -> Mapping[str, Any]:
            value = states[path].get("edges") if path in states else edge_facts.get(path)
            return value or no_edges

        def targets(importer: str, spec: tuple[int, str, tuple[str, ...]]) -> set[str]:
            return imported_files(files, index, importer, *spec)

        def closure(start: str, entry: bool) -> set[str]:
            """The project modules importing ``start`` runs: its module-level, unguarded imports, followed."""
            found, queue = {start}, [start]
            while queue:
                importer = queue.pop()
                specs = edges(importer)["eager"] | (edges(importer)["main"] if entry and importer == start else set())
                for spec in specs:
                    for target in targets(importer, spec) - found:
                        found.add(target)
                        queue.append(target)
            return found

        def side(paths: Iterable[str], key: str) -> list[str]:
            return sorted(path for path in paths if states.get(path, {}).get(key))

        found = []
        for entry in sorted(files):
            if not entry.endswith((".py", ".ipynb")) or not self._entry_point(entry, uses(entry)):
                continue
            loaded = closure(entry, True)
            old, moved = side(loaded, "old"), side(loaded, "moved")
            if old and moved:
                found.append((entry, Finding(self.id, Severity.ERROR, 0, 0, self._message(old, moved, states))))
                continue
            lazy = []  # (importer, line, where, the old / moved modules the import would load)
            for importer in sorted(loaded):
                for spec, line, where in sorted(edges(importer)["lazy"]):
                    for target in sorted(targets(importer, spec) - loaded):
                        extra = closure(target, False) - loaded
                        if side(extra, "old") or side(extra, "moved"):
                            lazy.append((importer, line, where, side(extra, "old"), side(extra, "moved")))
            late_old = sorted({path for *_, paths, _ in lazy for path in paths})
            late_moved = sorted({path for *_, paths in lazy for path in paths})
            if (old or late_old) and (moved or late_moved):
                message = self._lazy_message(old, moved, lazy, states)
                found.append((entry, Finding(self.id, Severity.INFO, 0, 0, message)))
        return found

    @staticmethod
    def _entry_point(path: str, uses: Mapping[str, Any]) -> bool:
        name = posixpath.basename(path)
        if path.endswith(".ipynb") or uses.get("main"):
            return True
        if re.fullmatch(r"test_\w+\.py|\w+_test\.py", name):
            return True
        return any(dotted.split(".")[0] in _APPS for level, dotted, _ in uses["imports"] if not level)

    @staticmethod
    def _message(old: list[str], moved: list[str], states: Mapping[str, Any]) -> str:
        packages = sorted({_PACKAGE[module] for path in old for module in states[path]["old"]})
        return (f"this entry point loads project modules on two stacks that no single environment installs: "
                f"{_shown(old)} still import{'s' if len(old) == 1 else ''} {', '.join(packages)} (left on the old "
                f"stack by neuron-migrate), while {_shown(moved)} need{'s' if len(moved) == 1 else ''} the stock stack "
                f"(TorchNeuron: torch 2.14, transformers 5). "
                f"On the migrated stack the modules left behind raise ModuleNotFoundError on import; on the old one the "
                f"moved ones call APIs it lacks. Migrate {old[0]} by hand first (its notes say what blocks it) and run "
                f"neuron-migrate again, or keep every module this entry point loads on the old stack (revert the "
                f"migration's changes to {_shown(moved)}); neuron-migrate does not hold rewrites back across files")

    @staticmethod
    def _lazy_message(old: list[str], moved: list[str], lazy: list[tuple[str, int, str, list[str], list[str]]],
                      states: Mapping[str, Any]) -> str:
        late_old = sorted({path for *_, paths, _ in lazy for path in paths})
        every_old = sorted({*old, *late_old})
        packages = sorted({_PACKAGE[module] for path in every_old for module in states[path]["old"]})
        where = "; ".join(
            f"{', '.join(sorted({*paths_old, *paths_moved}))} {how} ({importer}, line {line})"
            for importer, line, how, paths_old, paths_moved in lazy[:_SHOWN])
        return (f"this entry point loads project modules of the other stack only through imports that run later or "
                f"not at all: {where}. At import time it loads "
                f"{_shown(old) + ' (left on the old stack)' if old else _shown(moved) + ' (the stock stack)'} only. "
                f"{_shown(every_old)} still import{'s' if len(every_old) == 1 else ''} {', '.join(packages)}: on the "
                f"migrated stack that import raises ModuleNotFoundError when it runs (under try/except ImportError the "
                f"except branch runs instead), and on the old stack the moved modules call APIs it lacks; migrate "
                f"{every_old[0]} by hand before that path is needed")
