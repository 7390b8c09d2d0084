"""Notebooks: code cells go through the Python rules, `!` lines and %%bash cells through the shell rules,
%%writefile cells are treated as the file they write. (Placeholder: leaves notebooks unchanged.)"""

from __future__ import annotations

from pathlib import PurePath
from typing import Sequence

from migrate.pipeline import Migrated
from migrate.rule import Rule, RuleOptions


def migrate_notebook(text: str, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions) -> Migrated:
    return Migrated(text, [])
