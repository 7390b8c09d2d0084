"""Run one rule over a snippet the way the engine would, with the checks every rule test shares.

``migrate`` dedents the snippet, runs only the given rule, and asserts that Python output parses and that a
second run changes nothing (idempotence), so each test states only what the rule rewrites and reports.
"""

from __future__ import annotations

import ast
import textwrap

from migrate.filekinds import FileKind
from migrate.pipeline import Migrated
from migrate.testing import apply_rules


def migrate(source: str, rule: str, kind: FileKind = FileKind.PYTHON, path: str = "train.py",
            family: str | None = None, **options) -> Migrated:
    """``family``: run the rule's whole family (an id prefix such as "NM2") where the rule leaves part of its
    rewrite to a sibling rule, as a real run does."""
    text = textwrap.dedent(source).lstrip("\n")
    select = [family or rule]
    result = apply_rules(text, kind, select=select, path=path, **options)
    if kind is FileKind.PYTHON:
        ast.parse(result.text)
    again = apply_rules(result.text, kind, select=select, path=path, **options)
    assert again.text == result.text, f"{rule}: a second run changed the output (not idempotent)"
    return result


def findings(result: Migrated, rule: str) -> set[tuple[int, str]]:
    """(line, severity) of the rule's findings."""
    return {(finding.line, finding.severity.value) for finding in result.findings if finding.rule == rule}


def unchanged(source: str, rule: str, **options) -> None:
    """The rule leaves the snippet as it is and reports nothing."""
    result = migrate(source, rule, **options)
    assert result.text == textwrap.dedent(source).lstrip("\n")
    assert findings(result, rule) == set()
