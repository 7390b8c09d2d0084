"""Test helpers: run rules over a string the way the engine would (no disk, no pool)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Mapping, Sequence

from migrate import facts
from migrate.filekinds import FileKind, kind_from_content, kind_from_name
from migrate.pipeline import Migrated, migrate_file_text
from migrate.registry import all_rules, select_rules
from migrate.rule import DeviceStyle, RuleOptions


def apply_rules(
    source: str,
    kind: FileKind = FileKind.PYTHON,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    path: str = "example.py",
    device_style: str = "portable",
    inline_notes: bool = True,
    neuron_project: bool = True,
    project: Mapping[str, str] | None = None,
) -> Migrated:
    """Migrate ``source`` with the registered rules selected by id prefix (all when ``select`` is empty).
    ``project``: the other files of the run (path -> text), whose project facts the rules then see."""
    rules = select_rules(all_rules(), select, ignore)
    known = {}
    for name, text in (project or {}).items():
        file_kind = kind_from_name(PurePath(name)) or kind_from_content(text[:256].encode())
        if file_kind is not None:
            known[name] = (file_kind, text)
    options = RuleOptions(
        device_style=DeviceStyle(device_style),
        inline_notes=inline_notes,
        neuron_project=neuron_project,
        project=facts.gather(rules, known),
    )
    if not neuron_project:
        rules = [rule for rule in rules if rule.scope != "neuron-project"]
    return migrate_file_text(source, kind, PurePath(path), rules, options)
