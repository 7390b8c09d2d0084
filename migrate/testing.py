"""Test helpers: run rules over a string the way the engine would (no disk, no pool)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Sequence

from migrate.filekinds import FileKind
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
) -> Migrated:
    """Migrate ``source`` with the registered rules selected by id prefix (all when ``select`` is empty)."""
    rules = select_rules(all_rules(), select, ignore)
    options = RuleOptions(device_style=DeviceStyle(device_style), inline_notes=inline_notes, neuron_project=neuron_project)
    if not neuron_project:
        rules = [rule for rule in rules if rule.scope != "neuron-project"]
    return migrate_file_text(source, kind, PurePath(path), rules, options)
