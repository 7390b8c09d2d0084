"""What a run reports: findings per file and the status of each file. Plain, picklable records."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field

#: the rule id of findings no rule makes: the engine's own (unreadable, undecodable, unparsable, refused) and the
#: notebook handler's (bad JSON, a cell that does not parse); ``report_data`` names it "engine"
ENGINE_RULE = "NM000"


class Severity(str, enum.Enum):
    FIXED = "fixed"  # the tool changed the code
    TODO = "todo"  # a human must act; the message says what to do
    ERROR = "error"  # the file could not be processed and was left untouched; from a verification rule
    # (NM7xx, migrate/verification.py): the line will raise at run time, and the file is written
    INFO = "info"  # docs to update: a legacy mention in prose (markdown, comments, docstrings); not work for --check


class FileStatus(str, enum.Enum):
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"
    ERROR = "error"


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    line: int  # 1-based, in the file as it was before the run (after a rewrite: as written); 0: the whole file
    column: int  # 0-based
    message: str
    original_line: int | None = None  # set once the file is rewritten: ``line`` before the run

    def to_dict(self) -> dict:
        data = asdict(self)
        data["severity"] = self.severity.value
        return data


@dataclass
class FileResult:
    path: str  # as discovered (absolute or as given)
    kind: str
    status: FileStatus
    findings: list[Finding] = field(default_factory=list)
    reason: str | None = None  # why it was skipped or errored
    new_bytes: bytes | None = None  # the rewritten content when status is CHANGED (not yet written)
    diff: str | None = None
    written_lines: list[int] | None = None  # the line of each finding in the rewritten text (CHANGED only)
    #: what the project rules (``migrate.rule.ProjectRule``) record of the file after the run: rule id -> value
    project_states: dict = field(default_factory=dict)

    def count(self, severity: Severity) -> int:
        return sum(1 for finding in self.findings if finding.severity is severity)
