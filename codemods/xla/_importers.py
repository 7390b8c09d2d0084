"""Project modules kept on torch_xla with their importers. Not a rule module (leading underscore).

A helper module with no torch_xla construct of its own (an optimizer that reads ``XLA_DOWNCAST_BF16``, a logger that
tests ``NEURON_EXTRACT_GRAPHS_ONLY``) runs on the XLA stack when every file of the project that imports it is left on
torch_xla as a whole (NM318's blockers, ``codemods/_lib/launch_targets.py`` ``STAYS_ON_XLA``): there its XLA settings
and reads keep their torch_xla meaning, and porting advice for them would change the XLA run. Such a module is "kept
with its importers"; so is one imported only by kept modules (the relation is followed to its fixed point).

A module is not kept when it could run otherwise: it has no importer in the run, one of its importers is ported (a
notebook counts as ported: it is never left on torch_xla as a whole), it is a script (``__main__``), a package's
``__init__.py``, or a file other than its importers names it as a file (``python helper.py`` in a launcher,
``COPY helper.py``).

The import graph is a project fact gathered by the scan pass from the text (``import`` / ``from ... import`` lines,
notebook code cells included), resolved against the files of the run the way ``sys.path.append("..")`` finds them
(NM321 does the same): the closest file whose path ends with the dotted name.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import PurePath

from codemods._lib.launch_targets import STAYS_ON_XLA, resolve_script, stays_on_xla
from codemods._lib.notebook_cells import code_cells
from codemods.xla._base import XSER_LOADS
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind

#: the words of the one note such a module gets (NM316); the sweep (NM902) reads it from the text, like NM318's
KEPT_WITH_IMPORTERS = "this module is imported only by code that neuron-migrate leaves on torch_xla as a whole"
#: the same for a Python launcher whose commands run only project scripts left on torch_xla as a whole
LAUNCHES_KEPT = "this file launches only project scripts that neuron-migrate leaves on torch_xla as a whole"
KEPT_NOTES = (KEPT_WITH_IMPORTERS, LAUNCHES_KEPT)

_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.MULTILINE)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.MULTILINE)
_MAIN = re.compile(r"""__name__\s*==\s*["']__main__["']""")
_FILE_NAME = re.compile(r"(?<![\w-])([A-Za-z_]\w*\.py)(?![\w-])")
_RUNS = re.compile(r"\bsubprocess\.\w+\(|\bos\.(?:system|popen|exec\w*|spawn\w*)\(|^[ \t]*from[ \t]+subprocess[ \t]+import\b",
                   re.MULTILINE)
_SCRIPT = re.compile(r"""["'][^"'\n]*?([\w./-]+\.py)\b""")  # a script a string of the file names


def _python_imports(text: str) -> set[tuple[int, str, tuple[str, ...]]]:
    found: set[tuple[int, str, tuple[str, ...]]] = set()
    for match in _IMPORT.finditer(text):
        for part in match.group(1).split(","):
            words = part.split()
            if words and re.fullmatch(r"[A-Za-z_][\w.]*", words[0]):
                found.add((0, words[0], ()))
    for match in _FROM.finditer(text):
        names = tuple(word.split()[0] for word in match.group(3).strip("()").replace("\\", " ").split(",")
                      if word.split() and word.split()[0] != "*")
        found.add((len(match.group(1)), match.group(2), names))
    return found


def _cells(text: str) -> str:
    return "\n".join(code_cells(text) or [])


def collect_uses(text: str) -> dict | None:
    """What a file does with other files of the project: the modules it imports ``(level, dotted, names)``, whether
    it is a script (``__main__``), and the Python file names it mentions outside comments (it may run them; a
    notebook: in its code cells)."""
    code = _cells(text) if text.lstrip().startswith("{") else text
    imports = _python_imports(code)
    # a comment runs nothing (the notes of a first run name modules too: a second run must see the same)
    commands = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))
    mentions = frozenset(_FILE_NAME.findall(commands))
    if not imports and not mentions:
        return None
    return {"imports": frozenset(imports), "main": bool(_MAIN.search(code)), "mentions": mentions}


#: anchors: every file holding an import or a file name is read (the scan reads each file anyway)
USES = ProjectFact("xla.module-uses", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK, FileKind.SHELL,
                                                 FileKind.DOCKERFILE, FileKind.YAML}), ("import", ".py"), collect_uses)
FACTS = (USES, STAYS_ON_XLA, XSER_LOADS)


def _index(files: frozenset[str]) -> dict[str, list[str]]:
    """Module name (a file's stem, a package's folder) -> the project's Python files of that name."""
    index: dict[str, list[str]] = {}
    for path in sorted(files):
        if path.endswith(".py"):
            stem = posixpath.splitext(posixpath.basename(path))[0]
            index.setdefault(posixpath.basename(posixpath.dirname(path)) if stem == "__init__" else stem, []).append(path)
    return index


def _closest(index: dict[str, list[str]], tail: str, here: str) -> str | None:
    matches = [path for path in index.get(tail.rsplit("/", 1)[-1], ()) for suffix in (f"{tail}.py", f"{tail}/__init__.py")
               if path == suffix or path.endswith("/" + suffix)]
    if not matches:
        return None
    return max(matches, key=lambda path: len(posixpath.commonprefix([path, here + "/"])))


def imported_files(files: frozenset[str], index: dict[str, list[str]], importer: str, level: int, dotted: str,
                   names: tuple[str, ...]) -> set[str]:
    """The project files an import statement of ``importer`` loads: the module, the submodules it imports by name
    and the packages above them (``index``: ``_index(files)``)."""
    here = posixpath.dirname(importer)
    targets = [f"{dotted}.{name}" if dotted else name for name in names] + ([dotted] if dotted else [])
    found: set[str] = set()
    if level:
        base = here
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        for target in targets:
            relative = posixpath.normpath(posixpath.join(base, *target.split(".")))
            found.update(path for path in (f"{relative}.py", f"{relative}/__init__.py") if path in files)
        return found
    for target in targets:
        parts = target.split(".")
        for end in range(1, len(parts) + 1):  # import a.b.c runs a/__init__.py and a/b/__init__.py too
            path = _closest(index, "/".join(parts[:end]), here)
            if path is not None:
                found.add(path)
    return found


_MEMO: dict[int, tuple[ProjectFacts, dict[str, tuple[str, ...]]]] = {}


def kept_with_importers(project: ProjectFacts, path: str) -> tuple[str, ...]:
    """The importers (display paths) of the project module ``path`` when all of them stay on torch_xla, directly or
    through their own importers; empty when the module is ported as usual (or stays on torch_xla itself)."""
    memo = _MEMO.get(id(project))
    if memo is None or memo[0] is not project:
        _MEMO.clear()  # one run's project at a time
        memo = (project, _kept(project))
        _MEMO[id(project)] = memo
    return memo[1].get(path, ())


def _kept(project: ProjectFacts) -> dict[str, tuple[str, ...]]:
    uses = project.of(USES.name)
    index = _index(project.files)
    importers: dict[str, set[str]] = {}
    mentioned: dict[str, set[str]] = {}  # file name -> the files that name it
    for importer, value in uses.items():
        for name in value["mentions"]:
            mentioned.setdefault(name, set()).add(importer)
        for level, dotted, names in value["imports"]:
            for target in imported_files(project.files, index, importer, level, dotted, names):
                if target != importer:
                    importers.setdefault(target, set()).add(importer)
    stays = {path for path in project.of(STAYS_ON_XLA.name) if stays_on_xla(project, path)}
    kept: dict[str, tuple[str, ...]] = {}
    changed = True
    while changed:
        changed = False
        for module, users in importers.items():
            if module in kept or module in stays or not module.endswith(".py") or uses.get(module, {}).get("main"):
                continue
            # named as a file by another file than its importers (which may name it in a message): it may be run
            name = posixpath.basename(module)
            if mentioned.get(name, set()) - users - {module} or name == "__init__.py":
                continue
            if all(user in stays or user in kept for user in users):
                kept[module] = tuple(sorted(users))
                changed = True
    return kept


def kept_message(project: ProjectFacts, importers: tuple[str, ...]) -> str:
    """The one note of a module kept with its importers (no line numbers: a second run must find the same text)."""
    shown = []
    for importer in importers:
        labels = stays_on_xla(project, importer)
        shown.append(f"{importer} ({', '.join(labels)})" if labels else f"{importer} (kept with its own importers)")
    which = "that script" if len(importers) == 1 else "those files"
    return (f"{KEPT_WITH_IMPORTERS}: {', '.join(shown)}. There its XLA settings and reads (XLA_USE_BF16, "
            f"XLA_DOWNCAST_BF16, NEURON_EXTRACT_GRAPHS_ONLY ...) keep their torch_xla meaning, so they were left as "
            f"they are: port this module together with {which} (its note says what blocks it), then run "
            f"neuron-migrate again")


def kept_code_message(project: ProjectFacts, importers: tuple[str, ...]) -> str:
    """The one note (NM318's, above its first torch_xla import) of a module with torch_xla code of its own that is
    kept with its importers (``codemods/xla/_base.py`` ``kept_importers``; no line numbers: a second run must find
    the same text)."""
    shown = []
    for importer in importers:
        labels = stays_on_xla(project, importer)
        shown.append(f"{importer} ({', '.join(labels)})" if labels else f"{importer} (kept with its own importers)")
    which = "that script" if len(importers) == 1 else "those files"
    return (f"{KEPT_WITH_IMPORTERS}: {', '.join(shown)}. It runs on the torch_xla stack with them (xmp.spawn "
            "workers, no torchrun RANK / WORLD_SIZE, no torch.distributed group), so its torch_xla code and XLA "
            "settings were left as they are: ported alone, its ranks would read 0 and a world size of 1 on every "
            f"worker and its collectives and barriers would be skipped. Port this module together with {which} (its "
            "note says what blocks it), then run neuron-migrate again")


def launched_kept_scripts(project: ProjectFacts, path: str, source: str) -> tuple[str, ...]:
    """The project scripts a pure Python launcher ``path`` runs when all of them stay on torch_xla as a whole: it
    runs commands (``subprocess``, ``os.system`` ...), has no torch_xla code of its own, and every project script
    its strings name (a command, an argparse default such as ``"./train_neuron.py"``) stays on torch_xla. The
    settings it exports reach those scripts only. Empty otherwise."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))  # notes name torch_xla
    if "torch_xla" in code or not _RUNS.search(code):
        return ()
    scripts = set()
    for name in dict.fromkeys(_SCRIPT.findall(code)):
        resolved = resolve_script(project, PurePath(path), name)
        if resolved.path is not None and resolved.path != path:
            scripts.add(resolved.path)
    if not scripts or not all(stays_on_xla(project, script) for script in scripts):
        return ()
    return tuple(sorted(scripts))


def launcher_message(project: ProjectFacts, scripts: tuple[str, ...]) -> str:
    """The one note of a launcher of scripts kept on torch_xla (no line numbers: a second run finds the same)."""
    shown = ", ".join(f"{script} ({', '.join(stays_on_xla(project, script))})" for script in scripts)
    which = "that script runs" if len(scripts) == 1 else "those scripts run"
    return (f"{LAUNCHES_KEPT}: {shown}. The XLA and Neuron settings it exports to them keep their torch_xla meaning "
            f"there, so they were left as they are: revisit them once {which} on TorchNeuron (their notes say what "
            f"blocks the port), then run neuron-migrate again")

