"""Makefile structure the launch rules need: targets with their recipes, and the targets a rule's edit emptied.

A recipe is the tab-indented lines after a ``target: prerequisites`` line. When a rule deletes the last command of
a recipe (NM401 deletes a ``neuron_parallel_compile`` pass, NM402 a compile-only pass), ``make precompile`` would
print "Nothing to be done" and succeed without a word. ``close_emptied_targets`` then deletes the target (and its
``.PHONY`` entry) when nothing in the Makefile depends on it (no other target lists it as a prerequisite, no
recipe runs ``make``/``$(MAKE)`` with it) and no other file of the project runs ``make <target>`` (a CI step, a
script, a Dockerfile ``RUN``, a ``subprocess.run(["make", ...])``: the fact ``MAKE_CALLS``), else gives it an
``@echo`` line saying why it does nothing now: deleted, that caller would stop with "No rule to make target".
Targets with a recipe on their own line (``t: ; cmd``), double-colon, pattern or computed (``$(X):``) targets are
left as they are.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Callable

from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.textdoc import NOTE_PREFIX, Line, TextDocument

MAKEFILE_NAMES = {"Makefile", "makefile", "GNUmakefile"}
_TARGET = re.compile(r"^([A-Za-z0-9_.][A-Za-z0-9_.\- /]*?)\s*:(?![:=])(.*)$")
_ASSIGNMENT = re.compile(r"^(?:(?:export|override|private)\s+)*[A-Za-z_][\w.-]*\s*(?::{1,3}=|\?=|\+=|!=|=)")


def is_makefile(path: PurePath) -> bool:
    return path.name in MAKEFILE_NAMES or path.suffix == ".mk"


#: the documents the launch rules edit as Makefiles (``LaunchRule`` marks them; a document knows no path)
_MAKE_DOCS: "weakref.WeakSet[TextDocument]" = weakref.WeakSet()


def mark_make_doc(doc: TextDocument) -> None:
    _MAKE_DOCS.add(doc)


def make_doc(doc: TextDocument) -> bool:
    """Whether ``doc`` is a Makefile (marked by the rule editing it): its ``NAME = value`` lines are Make variables."""
    return doc in _MAKE_DOCS


@dataclass(eq=False)
class Target:
    line: Line
    names: list[str]
    prerequisites: str
    recipe: list[Line] = field(default_factory=list)  # the tab-indented lines after it (comments, blanks between)

    def commands(self) -> list[Line]:
        """The recipe lines that run something (not deleted, not a comment or blank)."""
        return [line for line in self.recipe if not line.deleted and line.text.strip()
                and not line.text.lstrip().startswith("#")]


def targets(doc: TextDocument) -> list[Target]:
    """The file's plain targets (``name ...: prerequisites``), each with the recipe lines that follow it."""
    found: list[Target] = []
    current: Target | None = None
    continued = False
    for line in doc.lines:
        if line.deleted:  # a deleted recipe line still belongs to its target (what the rule said of it)
            if current is not None and line.text.startswith("\t"):
                current.recipe.append(line)
            continue
        text = line.text
        if continued or text.startswith("\t"):
            if current is not None:
                current.recipe.append(line)
            continued = text.rstrip().endswith("\\")
            continue
        if not text.strip() or text.lstrip().startswith("#"):
            continue  # a blank or comment line does not end a recipe
        current = None
        match = _TARGET.match(text)
        if match and not _ASSIGNMENT.match(text) and "%" not in match.group(1) and "$" not in match.group(1):
            prerequisites = match.group(2).split("#", 1)[0]
            if ";" not in prerequisites and "=" not in prerequisites:
                current = Target(line, match.group(1).split(), prerequisites)
                found.append(current)
        continued = text.rstrip().endswith("\\")
    return found


def _wanted(name: str, others: list[Target]) -> bool:
    """Whether another target of the file depends on ``name`` or runs it through a sub-make."""
    sub_make = re.compile(rf"(?:\$\(MAKE\)|\$\{{MAKE\}}|\bmake)\b[^#\n]*(?<![\w.-]){re.escape(name)}(?![\w.-])")
    for other in others:
        if other.names[0].startswith("."):
            continue  # .PHONY, .DEFAULT_GOAL ...: not a dependency
        if name in other.prerequisites.replace("|", " ").split():
            return True
        if any(sub_make.search(line.text) for line in other.commands()):
            return True
    return False


def close_emptied_targets(doc: TextDocument, before: dict[int, bool], report: Callable[[Line, Severity, str], None],
                          reason: Callable[[list[Line]], str],
                          callers: Callable[[str], list[str]] = lambda name: []) -> None:
    """``before``: id(target line) -> whether the target had a command before the rule's edit (``had_commands``).
    Each target the edit emptied is deleted with its ``.PHONY`` entry, or keeps an ``@echo`` line when another target
    depends on it or another project file runs ``make <name>`` (``callers(name)``: those files, ``make_callers``);
    ``report(line, severity, message)`` says which. ``reason(recipe lines)``: what the rule did there."""
    every = targets(doc)
    for target in every:
        if not before.get(id(target.line)) or target.commands():
            continue
        others = [other for other in every if other is not target]
        wanted = [name for name in target.names if _wanted(name, others)]
        called = sorted({path for name in target.names for path in callers(name)})
        shown = " ".join(target.names)
        why = reason(target.recipe)
        if wanted or called:
            text = re.sub(r"[\"'`$\\]", "", f"{shown}: nothing to do on TorchNeuron ({why})")
            last = ([line for line in target.recipe if not line.deleted] or [target.line])[-1]
            doc.insert_after(last if last is not target.line else target.line, [f'\t@echo "{text}"'])
            who = ("another target of this Makefile depends on it" if wanted else
                   f"{', '.join(called)} {'runs' if len(called) == 1 else 'run'} `make {target.names[0]}`, which would "
                   "stop with \"No rule to make target\" were it deleted")
            report(target.line, Severity.FIXED, f"the Make target {shown} had no command left ({why}); {who}, so it "
                   "stays and says with @echo that it does nothing now")
            continue
        for line in [target.line, *target.recipe]:
            if not line.deleted:
                doc.delete(line)
        _drop_blank_pair(doc, target.line)
        phonies = False
        for phony in [other for other in every if other.names == [".PHONY"]]:
            kept = [word for word in phony.prerequisites.split() if word not in target.names]
            if len(kept) == len(phony.prerequisites.split()):
                continue
            phonies = True
            if kept:
                phony.line.text = ".PHONY: " + " ".join(kept)
                phony.prerequisites = " " + " ".join(kept)
            else:
                doc.delete(phony.line)
        report(target.line, Severity.FIXED, f"deleted the Make target {shown}{' and its .PHONY entry' * phonies}: it had no "
               f"command left ({why}) and nothing in this Makefile depends on it; `make {target.names[0]}` would "
               "have printed \"Nothing to be done\" and succeeded")


#: ``make`` as a command word (after a line start, an operator, ``RUN``, a YAML ``run:``/list item, ``$(``, a
#: backquote or a quote), then its words up to the next operator: options, ``NAME=value`` and the goals
_MAKE_COMMAND = re.compile(r"""(?:^|[;&|(`"']|\bRUN\s|\brun:\s|^\s*-\s)\s*(?:g?make|\$\(MAKE\)|\$\{MAKE\})((?:[ \t]+[^\s;&|)`"'#]+)*)""",
                           re.MULTILINE)
#: ``["make", "goal", ...]`` in Python (subprocess argv lists)
_MAKE_ARGV = re.compile(r"""[\[(]\s*["']g?make["']((?:\s*,\s*["'][^"']*["'])*)""")
_OPTION_WITH_VALUE = {"-C", "-f", "-I", "-j", "-l", "-o", "-W", "--directory", "--file", "--makefile"}


def _goals(words: list[str]) -> list[str]:
    goals: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _OPTION_WITH_VALUE:
            skip = True
        elif not word.startswith("-") and "=" not in word and re.fullmatch(r"[\w.][\w./-]*", word):
            goals.append(word)
    return goals


def _collect_make_calls(text: str) -> frozenset[str] | None:
    """The Make goals a file runs (``make precompile``, ``$(MAKE) -C sub warm``, ``["make", "smoke"]``); the tool's
    notes are not code."""
    text = "\n".join(line for line in text.splitlines() if NOTE_PREFIX not in line)
    found = {goal for match in _MAKE_COMMAND.finditer(text) for goal in _goals(match.group(1).split())}
    found |= {goal for match in _MAKE_ARGV.finditer(text)
              for goal in _goals(re.findall(r"""["']([^"']*)["']""", match.group(1)))}
    return frozenset(found) or None


#: the Make goals each project file runs (a CI workflow, a script, a Dockerfile, Python): a target an edit empties
#: stays, with an @echo, while a file runs it (``close_emptied_targets``)
MAKE_CALLS = ProjectFact("launch.make-calls", frozenset({FileKind.SHELL, FileKind.YAML, FileKind.DOCKERFILE,
                                                         FileKind.PYTHON, FileKind.NOTEBOOK}),
                         ("make",), _collect_make_calls)


def make_callers(calls: dict[str, frozenset[str]], own: str) -> Callable[[str], list[str]]:
    """``name -> the project files (not ``own``) that run make with that goal``, from ``MAKE_CALLS``'s values."""
    return lambda name: sorted(path for path, goals in calls.items() if path != own and name in goals)


def had_commands(doc: TextDocument) -> dict[int, bool]:
    """id(target line) -> whether the target has a command now (taken before a rule edits the file)."""
    return {id(target.line): bool(target.commands()) for target in targets(doc)}


def _drop_blank_pair(doc: TextDocument, removed: Line) -> None:
    """A target that stood between blank lines leaves one blank line, not two."""
    index = doc._index(removed)
    before = next((line for line in reversed(doc.lines[:index]) if not line.deleted), None)
    after = next((line for line in doc.lines[index + 1:] if not line.deleted), None)
    if after is not None and not after.text.strip() and (before is None or not before.text.strip()):
        doc.delete(after)


def _collect_recipes(text: str) -> dict[str, tuple[str, ...]] | None:
    """target -> its recipe commands (continued lines joined), for a file that has Make targets with recipes."""
    doc = TextDocument(text, FileKind.SHELL)
    found: dict[str, tuple[str, ...]] = {}
    for target in targets(doc):
        commands: list[str] = []
        for line in target.commands():
            part = line.text.strip()
            if commands and commands[-1].endswith("\\"):
                commands[-1] = commands[-1][:-1].rstrip() + " " + part
            else:
                commands.append(part.lstrip("@-+"))
        for name in target.names:
            if not name.startswith(".") and commands:
                found[name] = tuple(commands)
    return found or None


#: a Makefile's targets and their recipe commands: a CI step's ``make smoke`` runs what ``smoke:`` runs (NM405
#: words its core-count advice after that launcher)
MAKE_RECIPES = ProjectFact("launch.make-recipes", frozenset({FileKind.SHELL}),
                           ("torchrun", "accelerate", "uvicorn", "gunicorn", "hypercorn", "vllm"), _collect_recipes)
