"""NM905 entry-point-on-two-stacks: an entry point that loads a module left on the old stack and one moved to the new.

What it does:

* Runs once the run is done, over what each file is AFTER the run: the project modules each entry point loads (its
  import closure: ``import`` / ``from ... import`` of the project's files, followed through the modules they import,
  resolved as NM321 and NM316 resolve them), and which of those modules
  - are left on the old stack: they still import ``optimum.neuron``, ``torch_xla``, ``transformers_neuronx``,
    ``neuronx_distributed`` or ``torch_neuron`` at module level (a class no rule knows, a file kept on torch_xla
    as a whole), and
  - need the stock stack: rewritten by the code rules of this run (NM1xx, NM2xx, NM3xx, NM6xx) and no longer
    importing any of those, or code that only the stock stack runs (``torch.accelerator``, the ``"neuron"`` device or
    backend, ``is_torch_neuron_available``), which is what a later run sees of a module an earlier run moved.
* Entry points: scripts (``if __name__ == "__main__"``), notebooks, tests (``test_*.py``, ``*_test.py``) and apps
  (a module importing gradio, flask, fastapi or streamlit).
* When one entry point's closure holds both, ONE ``error`` on the entry point (the whole file) names the modules of
  each side and what to do: migrate the module left behind by hand first (its notes say what blocks it) and run
  neuron-migrate again, or keep the modules the entry point loads on the old stack (revert this run's changes to
  the moved ones).
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

import posixpath
import re
from typing import Any, Iterable, Mapping

from codemods._lib.notebook_cells import code_cells
from codemods.xla._importers import USES, _index, collect_uses, imported_files
from migrate.filekinds import FileKind
from migrate.findings import Finding, Severity
from migrate.rule import ProjectRule, Safety

#: module-level imports of the old stack (a column-0 statement: not inside a try, a function or an if)
_OLD = re.compile(r"^(?:import|from)[ \t]+(optimum\.neuron|torch_xla|transformers_neuronx|neuronx_distributed"
                  r"|torch_neuron)(?![\w])", re.MULTILINE)
_PACKAGE = {"optimum.neuron": "optimum-neuron", "torch_xla": "torch_xla", "transformers_neuronx": "transformers-neuronx",
            "neuronx_distributed": "neuronx-distributed", "torch_neuron": "torch-neuron (Inf1)"}
#: the rule families whose rewrites move code to the stock stack (inference, training, torch_xla, stock drift)
_MOVING = ("NM1", "NM2", "NM3", "NM6")
#: code only the stock stack runs (the device expression, TorchNeuron's device and backend names): a later run sees it
_NEW = re.compile(r"""\btorch\.accelerator\b|\bis_torch_neuron_available\b|\btorch\.device\(\s*["']neuron\b"""
                  r"""|\b(?:device|backend)\s*=\s*["']neuron["']""")
_APPS = {"gradio", "flask", "fastapi", "streamlit"}
_SHOWN = 3


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
    facts = (USES,)  # the imports of the files the run never parsed (their text is their final text)

    @classmethod
    def state(cls, text: str, kind: FileKind, findings: Iterable[Finding], changed: bool) -> Any:
        code = _code(text, kind)
        old = tuple(sorted({match.group(1) for match in _OLD.finditer(code)}))
        rewritten = changed and any(
            finding.severity is Severity.FIXED and finding.rule.startswith(_MOVING) for finding in findings
        )
        moved = not old and (rewritten or bool(_NEW.search(code)))
        uses = collect_uses(text) or {"imports": frozenset(), "main": False}
        return {"imports": uses["imports"], "main": uses["main"], "old": old, "moved": moved}

    def check(self, states: Mapping[str, Any]) -> list[tuple[str, Finding]]:
        project = self.options.project
        files = project.files
        facts = project.of(USES.name)
        index = _index(files)

        def uses(path: str) -> Mapping[str, Any]:
            return states.get(path) or facts.get(path) or {"imports": frozenset(), "main": False}

        found = []
        for entry in sorted(files):
            if not entry.endswith((".py", ".ipynb")) or not self._entry_point(entry, uses(entry)):
                continue
            closure, queue = {entry}, [entry]
            while queue:
                importer = queue.pop()
                for level, dotted, names in uses(importer)["imports"]:
                    for target in imported_files(files, index, importer, level, dotted, names):
                        if target not in closure:
                            closure.add(target)
                            queue.append(target)
            old = sorted(path for path in closure if states.get(path, {}).get("old"))
            moved = sorted(path for path in closure if states.get(path, {}).get("moved"))
            if old and moved:
                found.append((entry, Finding(self.id, Severity.ERROR, 0, 0, self._message(old, moved, states))))
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
