"""Shared plumbing of the launch-layer text rules (not a rule module: the registry skips ``_`` modules)."""

from __future__ import annotations

import posixpath

from codemods._lib import shell
from codemods._lib.launch_targets import ENV_READS, NOTEBOOK_SCRIPTS, PARSER_SCRIPTS, env_readers
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import TextRule
from migrate.textdoc import Line, TextDocument

LAUNCH_KINDS = frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML})


#: the facts a rule needs to leave launcher settings that the project's code, or a script it cannot see, still reads
ENV_FACTS = (ENV_READS, PARSER_SCRIPTS, NOTEBOOK_SCRIPTS)


class LaunchRule(TextRule):
    """A text rule whose work is one function of ``codemods._lib.shell`` taking ``(doc, report)``."""

    kinds = LAUNCH_KINDS

    def report(self, line: Line, severity: Severity, message: str) -> None:
        if severity is Severity.FIXED:
            self.fixed(line, message)
        else:
            self.todo(line, message)

    def unseen_target(self, doc: TextDocument) -> tuple[str, str] | None:
        """See ``shell.unseen_xla_target``: the torch_xla/NxD script outside the project this launcher runs."""
        return shell.unseen_xla_target(doc, self.ctx.options.project, self.ctx.path)

    def env_readers(self, doc: TextDocument):
        """See ``env_readers``: the code beside this launcher or beside the project scripts it runs."""
        scripts, _ = shell.launched_scripts(doc, self.ctx.options.project, self.ctx.path)
        folders = [self.ctx.path.parent.as_posix(), *(posixpath.dirname(s.path) for s in scripts if s.path)]
        return env_readers(self.ctx.options.project, ["" if folder == "." else folder for folder in folders])

    def apply(self, doc: TextDocument) -> None:  # pragma: no cover - interface
        raise NotImplementedError
