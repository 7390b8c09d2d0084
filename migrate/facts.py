"""Project facts: what a rule needs to know about OTHER files of the run (which scripts parse Neuron training
arguments, say), gathered during the engine's scan pass and handed to every rule through ``RuleOptions``.

A rule declares ``facts = (ProjectFact(...),)``. The engine adds each fact's anchors to the scan automaton; if the
run has some file to migrate, it then calls ``collect(text)`` on every file of the fact's kinds that holds an
anchor (a tree with nothing to migrate is never parsed for its facts); the values, keyed by the file's display
path, reach the rules as ``options.project``. The engine knows
nothing of what a fact means: computing and reading one is the rule family's business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from migrate.filekinds import FileKind


@dataclass(frozen=True)
class ProjectFact:
    name: str
    kinds: frozenset[FileKind]
    #: literal substrings; ``collect`` runs only on a file holding one of them (keeps the scan cheap)
    anchors: tuple[str, ...]
    #: file text -> the value to record for that file (None: nothing); a module-level function (pickled to workers)
    collect: Callable[[str], Any]


@dataclass(frozen=True)
class ProjectFacts:
    """Every file of the run (display paths, '/'-separated) and the facts' values per file."""

    files: frozenset[str] = frozenset()
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # fact name -> display path -> value

    def of(self, name: str) -> Mapping[str, Any]:
        return self.values.get(name, {})


def facts_of(rules: Iterable[type]) -> list[ProjectFact]:
    """The distinct facts the rules declare."""
    seen: dict[str, ProjectFact] = {}
    for rule in rules:
        for fact in getattr(rule, "facts", ()):
            seen.setdefault(fact.name, fact)
    return list(seen.values())


def collect(facts: Sequence[ProjectFact], kind: FileKind, text: str, found: set[str]) -> dict[str, Any]:
    """The facts' values for one file whose scan found the words ``found``; a reader that raises gives no value."""
    values = {}
    for fact in facts:
        if kind in fact.kinds and not found.isdisjoint(fact.anchors):
            try:
                value = fact.collect(text)
            except Exception:  # noqa: BLE001 - e.g. RecursionError from ast.parse on a 20,000-term expression
                # The scan runs in this process: a file its reader cannot read must not end the run. The fact is
                # unknown for this file (every reader treats "no value" as "not known"), and the migrate pass,
                # in a worker under the time limit, reports what the file itself does.
                continue
            if value is not None:
                values[fact.name] = value
    return values


def merge(files: Iterable[str], per_file: Iterable[tuple[str, Mapping[str, Any]]]) -> ProjectFacts:
    values: dict[str, dict[str, Any]] = {}
    for path, found in per_file:
        for name, value in found.items():
            values.setdefault(name, {})[path] = value
    return ProjectFacts(frozenset(files), values)


def gather(rules: Iterable[type], files: Mapping[str, tuple[FileKind, str]]) -> ProjectFacts:
    """Facts for an in-memory project (display path -> (kind, text)): what the scan pass computes, for tests."""
    facts = facts_of(rules)
    anchors = {anchor for fact in facts for anchor in fact.anchors}
    per_file = [
        (path, collect(facts, kind, text, {a for a in anchors if a in text})) for path, (kind, text) in files.items()
    ]
    return merge(files, per_file)
