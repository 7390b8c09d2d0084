"""Shared plumbing of the launch-layer text rules (not a rule module: the registry skips ``_`` modules)."""

from __future__ import annotations

from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import TextRule
from migrate.textdoc import Line, TextDocument

LAUNCH_KINDS = frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML})


class LaunchRule(TextRule):
    """A text rule whose work is one function of ``codemods._lib.shell`` taking ``(doc, report)``."""

    kinds = LAUNCH_KINDS

    def report(self, line: Line, severity: Severity, message: str) -> None:
        if severity is Severity.FIXED:
            self.fixed(line, message)
        else:
            self.todo(line, message)

    def apply(self, doc: TextDocument) -> None:  # pragma: no cover - interface
        raise NotImplementedError
