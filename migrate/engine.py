"""Runs the rules over a tree: discover -> scan (prefilter) -> migrate (pool) -> write.

Three passes over the files, in worker processes (migrate/workers.py; in this process for one job, except
the migrate pass):

1. scan: read each file and look for the triggers of every enabled rule and for the markers that show the
   project targets Neuron, with one Aho-Corasick automaton (pyahocorasick) over every trigger, marker
   anchor and fact anchor: one pass over the text finds them all (a marker's regular expression runs only
   on a file where its anchor was found). A file without a trigger costs a read and a scan, nothing more:
   it is never parsed.
2. facts: only if a rule that reads project facts has work in some file, the files holding a fact's anchor
   are read again and the facts' readers (which parse) run on them (migrate/facts.py). A tree where nothing
   or only the reporting sweep (NM901-NM903) wakes skips it.
3. migrate: only files with a trigger of a rule that may run are parsed and rewritten. Rules scoped to
   Neuron projects (torch_xla idioms) run only if some file of the run carries a marker, or ``--xla``.

The parent writes results as they stream in (bounded memory), atomically, and never over a file with
uncommitted changes unless forced (migrate/gitstate.py). Any failure inside a file, a worker that dies on
it or a file past the time limit included, becomes an ``error`` result for that file, which is left
byte-for-byte untouched; the run always finishes. See docs/reliability.md.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import functools
import os
import re
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Callable, Iterator, Sequence, TypeVar

import libcst

from migrate import facts as project_facts
from migrate import project as project_context
from migrate.discovery import UNKNOWN_KIND, Candidate, NotScanned, discover
from migrate.filekinds import FileKind, kind_from_content
from migrate.findings import ENGINE_RULE, FileResult, FileStatus, Finding, Severity
from migrate.gitstate import refusals
from migrate.notes import NOTE_KINDS, NOTE_MARK, NOTE_RULE, NOTE_RULE_NAME, note_lines, unresolved_notes
from migrate.pipeline import _line_map, automaton_of, migrate_file_text
from migrate.registry import all_rules, select_rules
from migrate.rule import DeviceStyle, ProjectRule, Rule, RuleOptions
from migrate.textio import DecodeError, atomic_write, decode, printable, remove_stale_temp_files
from migrate.verification import is_processing_error
from migrate.workers import run_tasks

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class RunOptions:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    jobs: int = 0  # 0: all cores
    write: bool = True
    diff: bool = False
    force: bool = False
    inline_notes: bool = True
    device_style: DeviceStyle = DeviceStyle.PORTABLE
    xla: bool = False  # treat the project as a Neuron project even without markers
    force_exclude: bool = False  # --exclude applies to the paths given too
    time_limit: float | None = 300.0  # seconds one file may take; None: no limit


@dataclass
class RunResult:
    targets: list[str]
    options: RunOptions
    rules: list[type[Rule]]
    neuron_project: bool
    files: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0
    not_scanned: NotScanned = field(default_factory=NotScanned)  # passed over by discovery, skipped, unreadable

    def count(self, status: FileStatus) -> int:
        return sum(1 for result in self.files if result.status is status)

    def findings(self, severity: Severity | None = None) -> Iterator[tuple[FileResult, Finding]]:
        for result in self.files:
            for finding in result.findings:
                if severity is None or finding.severity is severity:
                    yield result, finding


# ------------------------------------------------------------------------------------------- workers


@dataclass
class _Plan:
    """What the workers need; built once in the parent and inherited (fork) or pickled (spawn)."""

    rules: list[type[Rule]]
    options: RuleOptions
    diff: bool
    markers: dict[FileKind, list[tuple[str, str]]] = field(default_factory=dict)
    scan: bool = False  # the plan of the scan pass: it needs the automaton and the marker patterns
    facts: list[project_facts.ProjectFact] = field(default_factory=list)  # gathered by the scan pass
    project_rules: list[type[ProjectRule]] = field(default_factory=list)  # record each file's state after the run

    def __post_init__(self) -> None:
        if not self.scan:
            return
        # One automaton over every trigger, marker and fact anchor: a file is read once and scanned once.
        self.automaton = automaton_of(
            {t for rule in self.rules for t in rule.triggers}
            | {a for pairs in self.markers.values() for a, _ in pairs}
            | {a for fact in self.facts for a in fact.anchors}
            | {NOTE_MARK}
        )
        self.fact_anchors = {
            kind: frozenset(a for fact in self.facts if kind in fact.kinds for a in fact.anchors) for kind in FileKind
        }
        self.marker_patterns = {
            kind: [(anchor, re.compile(regex, re.MULTILINE)) for anchor, regex in pairs]
            for kind, pairs in self.markers.items()
        }


def _collect_markers(rules: Sequence[type[Rule]]) -> dict[FileKind, list[tuple[str, str]]]:
    markers: dict[FileKind, list[tuple[str, str]]] = {}
    for rule in rules:
        for kind, pairs in rule.markers.items():
            for pair in pairs:
                if pair not in markers.setdefault(kind, []):
                    markers[kind].append(pair)
    return markers


@dataclass
class _Scanned:
    candidate: Candidate
    kind: FileKind | None
    needs: bool = False  # a rule that may run in any project has a trigger here
    needs_if_neuron: bool = False  # only Neuron-project rules have triggers here
    has_marker: bool = False
    has_note: bool = False  # a `# neuron-migrate:` note is work until deleted, trigger or not
    error: str | None = None
    # The facts' anchors the file holds. Its facts are read only if a rule that reads facts has work in the run: a
    # tree with no Neuron usage is never parsed by the facts' readers.
    fact_words: frozenset[str] = frozenset()
    woken: frozenset[str] = frozenset()  # ids of the rules whose triggers make the file be parsed


_PLAN: _Plan | None = None


def _init_worker(plan: _Plan) -> None:
    global _PLAN
    _PLAN = plan


def _scan(candidate: Candidate) -> _Scanned:
    plan = _PLAN
    assert plan is not None
    if candidate.skip_reason:
        return _Scanned(candidate, candidate.kind)
    try:
        data = candidate.path.read_bytes()
    except OSError as error:
        return _Scanned(candidate, candidate.kind, error=f"cannot read: {error.strerror or error}")
    kind = candidate.kind or kind_from_content(data[:256])
    scanned = _Scanned(candidate, kind)
    if kind is None or plan.automaton is None:
        return scanned
    text = data.decode("utf-8", errors="replace")
    found = {word for _, word in plan.automaton.iter(text)}
    if not found:
        return scanned
    scanned.has_note = NOTE_MARK in found and kind in NOTE_KINDS
    scanned.has_marker = any(
        anchor in found and pattern.search(text) for anchor, pattern in plan.marker_patterns.get(kind, ())
    )
    scanned.fact_words = frozenset(found & plan.fact_anchors.get(kind, frozenset()))
    name = candidate.path.name
    woken = set()
    for rule in plan.rules:
        if issubclass(rule, ProjectRule):  # it reads the files after the run; it never makes one be parsed
            continue
        if _handles(rule, kind, name) and not found.isdisjoint(rule.triggers):
            if rule.scope == "neuron-project":
                scanned.needs_if_neuron = True
                woken.add(rule.id)
            elif rule.scope == "any":  # "migrated" (verification) rules never make a file be parsed
                scanned.needs = True
                woken.add(rule.id)
    scanned.woken = frozenset(woken)
    return scanned


def _handles(rule: type[Rule], kind: FileKind, name: str) -> bool:
    # Notebooks hold Python and shell code (and %%writefile cells named anything): any rule may apply.
    return kind is FileKind.NOTEBOOK or (kind in rule.kinds and rule.handles_name(name))


def _migrate(job: tuple[Candidate, FileKind]) -> FileResult:
    plan = _PLAN
    assert plan is not None
    candidate, kind = job
    path = candidate.path
    try:
        data = path.read_bytes()
        decoded = decode(data, kind)
        migrated = migrate_file_text(decoded.text, kind, PurePath(candidate.display), plan.rules, plan.options)
        to_original = _line_map(decoded.text, migrated.text)
        notes = unresolved_notes(migrated.text, kind, migrated.findings, to_original)
        findings = sorted([*migrated.findings, *notes], key=lambda f: (f.line, f.column, f.rule))
        changed = migrated.text != decoded.text
        states = {
            rule.id: value
            for rule in plan.project_rules
            if kind in rule.kinds and (value := rule.state(migrated.text, kind, findings, changed)) is not None
        }
        if not changed:
            errors = [finding for finding in findings if is_processing_error(finding)]
            if errors:  # nothing could be processed (a notebook that is not valid JSON, a cell that does not parse)
                return FileResult(candidate.display, kind.value, FileStatus.ERROR, findings, reason=errors[0].message)
            return FileResult(candidate.display, kind.value, FileStatus.UNCHANGED, findings, project_states=states)
        new_bytes = decoded.encode(migrated.text)
        diff = _unified_diff(candidate.display, decoded.text, migrated.text) if plan.diff else None
        written = _written_lines(findings, to_original, migrated.text, kind)
        return FileResult(
            candidate.display,
            kind.value,
            FileStatus.CHANGED,
            findings,
            new_bytes=new_bytes,
            diff=diff,
            written_lines=written,
            project_states=states,
        )
    except OSError as error:
        return _error(candidate, kind, f"cannot read: {error.strerror or error}")
    except DecodeError as error:
        return _error(candidate, kind, str(error))
    except libcst.ParserSyntaxError as error:
        message = f"does not parse: {error.message} (line {error.raw_line}); left untouched"
        return _error(candidate, kind, message, error.raw_line)
    except UnicodeEncodeError as error:
        return _error(
            candidate, kind, f"the rewrite cannot be written in the file's encoding ({error.reason}); left untouched"
        )
    except Exception as error:  # a rule raised: the file stays as it was and the run goes on
        where = traceback.extract_tb(error.__traceback__)[-1]
        return _error(
            candidate,
            kind,
            f"internal error {type(error).__name__}: {error} "
            f"(at {os.path.basename(where.filename)}:{where.lineno}); left untouched",
        )


def _written_lines(
    findings: list[Finding], to_original: Callable[[int], int], new_text: str, kind: FileKind
) -> list[int]:
    """The line of each finding in the rewritten text. A `todo` points at the note that says it (a note goes
    above its statement, and a rewritten block maps to its first old line only); any other finding at the
    first line that came from its line or from below it. Line 0 (the whole file) stays 0."""
    new_count = len(new_text.splitlines())
    table = [to_original(line) for line in range(1, new_count + 1)]
    notes = note_lines(new_text, kind) if NOTE_MARK in new_text else []
    written = []
    for finding in findings:
        if finding.line <= 0:
            written.append(finding.line)
            continue
        line = bisect.bisect_left(table, finding.line) + 1  # the map is monotonic
        line = min(line, new_count)
        if finding.severity is Severity.TODO:
            saying = [number for number, message in notes if finding.message.endswith(message)]
            if saying:
                line = min(saying, key=lambda number: abs(number - line))
        written.append(line)
    return written


def _error(candidate: Candidate, kind: FileKind | None, message: str, line: int = 0) -> FileResult:
    finding = Finding(ENGINE_RULE, Severity.ERROR, line, 0, message)
    return FileResult(candidate.display, kind.value if kind else "unknown", FileStatus.ERROR, [finding], reason=message)


def _unified_diff(name: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{printable(name)}",
        tofile=f"b/{printable(name)}",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


# --------------------------------------------------------------------------------------------- runner


SCAN_BATCH = 64  # files per scan task: a scan is a read and one automaton pass, too cheap to send alone


def _scan_all(candidates: Sequence[Candidate], plan: _Plan, jobs: int) -> list[_Scanned]:
    """The scan pass: in this process for one job (it reads and searches, it never parses), else in workers."""
    return _in_batches(
        _scan, candidates, plan, jobs, lambda batch, failure: [_Scanned(c, c.kind, error=failure) for c in batch]
    )


def _facts(item: _Scanned) -> tuple[str, dict]:
    """The facts' values for one scanned file (its display path first): the file is read again."""
    plan = _PLAN
    assert plan is not None and item.kind is not None
    try:
        text = item.candidate.path.read_bytes().decode("utf-8", errors="replace")
    except OSError:  # gone since the scan: its facts are unknown, which every reader allows for
        return item.candidate.display, {}
    return item.candidate.display, project_facts.collect(plan.facts, item.kind, text, set(item.fact_words))


def _facts_all(items: Sequence[_Scanned], plan: _Plan, jobs: int) -> list[tuple[str, dict]]:
    """The facts pass, over the scanned files holding a fact's anchor: the readers parse, so it runs in
    workers like the scan (in this process for one job). A worker that died on a batch: those files' facts
    are unknown."""
    holding = [item for item in items if item.fact_words and item.kind is not None]
    return _in_batches(_facts, holding, plan, jobs, lambda batch, failure: [])


def _each(function: Callable[[T], R], batch: Sequence[T]) -> list[R]:
    return [function(item) for item in batch]


def _in_batches(
    function: Callable[[T], R],
    items: Sequence[T],
    plan: _Plan,
    jobs: int,
    failed: Callable[[Sequence[T], str], list[R]],
) -> list[R]:
    """``function`` (module level: workers get it pickled) over ``items``, in order: in this process for one job
    or a short list, else in workers SCAN_BATCH items a task (one item alone is too cheap to send);
    ``failed(batch, failure)`` stands for the results of a batch whose worker died."""
    if jobs <= 1 or len(items) <= SCAN_BATCH:
        _init_worker(plan)
        return [function(item) for item in items]
    batches = [items[start : start + SCAN_BATCH] for start in range(0, len(items), SCAN_BATCH)]
    results: list[R] = []
    for batch, done, failure in run_tasks(functools.partial(_each, function), batches, _init_worker, plan, jobs, None):
        results.extend(done if failure is None else failed(batch, failure))
    return results


def _migrate_all(
    work: Sequence[tuple[Candidate, FileKind]], plan: _Plan, jobs: int, time_limit: float | None
) -> Iterator[FileResult]:
    """The migrate pass, always in worker processes (one for --jobs 1): a file that crashes the parser
    or runs past the time limit ends as that file's ``error``, never as the end of the run."""
    for (candidate, kind), result, failure in run_tasks(_migrate, work, _init_worker, plan, jobs, time_limit):
        yield result if failure is None else _error(candidate, kind, f"{failure}; left untouched")


def run(
    paths: Sequence[Path],
    options: RunOptions,
    progress: Callable[[int, int], None] | None = None,
    rules: Sequence[type[Rule]] | None = None,
) -> RunResult:
    """Migrate ``paths`` with ``rules`` (default: every registered rule, filtered by --select/--ignore).
    Raises DiscoveryError / UnknownRuleError for bad input, before touching anything."""
    started = time.perf_counter()
    registered = all_rules() if rules is None else rules
    markers = _collect_markers(registered)  # from every rule: --ignore must not change what a Neuron project is
    rules = select_rules(registered, options.select, options.ignore)
    not_scanned = NotScanned()
    candidates = list(discover(paths, options.exclude, options.force_exclude, not_scanned))
    jobs = options.jobs or os.cpu_count() or 1
    rule_options = RuleOptions(device_style=options.device_style, inline_notes=options.inline_notes)
    scan_plan = _Plan(rules, rule_options, options.diff, markers, scan=True, facts=project_facts.facts_of(rules))

    scanned = _scan_all(candidates, scan_plan, jobs)
    # staged files, a subfolder: markers and facts may sit elsewhere in their project (read, never rewritten)
    known = [*scanned, *_scan_all(_context(paths, options.exclude, scanned), scan_plan, jobs)]
    neuron_project = options.xla or any(item.has_marker for item in known)
    if not neuron_project:
        rules = [rule for rule in rules if rule.scope != "neuron-project"]
    result = RunResult([str(path) for path in paths], options, rules, neuron_project, not_scanned=not_scanned)
    work: list[tuple[Candidate, FileKind]] = []
    reading = {rule.id for rule in rules if rule.reads_facts}
    wants_facts = False
    for item in scanned:
        kind_name = item.kind.value if item.kind else "unknown"
        if item.candidate.skip_reason:
            result.files.append(
                FileResult(item.candidate.display, kind_name, FileStatus.SKIPPED, reason=item.candidate.skip_reason)
            )
            not_scanned.add(item.candidate.display, item.candidate.skip_reason)
        elif item.error:
            result.files.append(_error(item.candidate, item.kind, item.error))
            not_scanned.add(item.candidate.display, item.error)
        elif item.kind is None:  # no telling name and no shebang: not a file we handle
            not_scanned.add(item.candidate.display, UNKNOWN_KIND)
        elif item.needs or item.has_note or (item.needs_if_neuron and neuron_project):
            work.append((item.candidate, item.kind))
            wants_facts = wants_facts or not reading.isdisjoint(item.woken)
        else:
            result.files.append(FileResult(item.candidate.display, item.kind.value, FileStatus.UNCHANGED))

    # Only now are the facts read, and only if a rule that reads them has work: they serve the rules of the
    # migrate pass (and the project rules, which look only at files it processed).
    if work and any(issubclass(rule, ProjectRule) for rule in rules):  # it reads the facts of files never parsed
        wants_facts = True
    values = _facts_all(known, scan_plan, jobs) if wants_facts else []
    project = project_facts.merge((item.candidate.display for item in known), values)
    selected = frozenset(rule.id for rule in rules)  # NM410 runs the selected launch rules' edits (RuleOptions.rules)
    # Asked before the first write, of the files that may change: a file's own repository says whether
    # rewriting it could destroy work git cannot give back. Asked before the rules run too: a file left as it is
    # must count as left as it is where another file's rewrite depends on it (rtG p4: requirements.txt dropped
    # optimum-neuron for a refused serve/app.py that still imports it).
    refused = refusals(candidate.path for candidate, _ in work) if options.write and not options.force else {}
    unwritten = frozenset(candidate.display for candidate, _ in work if candidate.path in refused)
    migrate_options = RuleOptions(
        options.device_style, options.inline_notes, neuron_project, project, rules=selected, unwritten=unwritten
    )
    project_rules = [rule for rule in rules if issubclass(rule, ProjectRule)]
    plan = _Plan(
        [r for r in rules if r not in project_rules], migrate_options, options.diff, project_rules=project_rules
    )

    if options.write:  # what a run killed mid-write left behind where this one writes
        for folder in {candidate.path.parent for candidate, _ in work}:
            remove_stale_temp_files(folder)
    by_display = {candidate.display: candidate for candidate, _ in work}
    done = 0
    for file_result in _migrate_all(work, plan, jobs, options.time_limit):
        done += 1
        if file_result.status is FileStatus.CHANGED and options.write:
            _write(by_display[file_result.path].path, file_result, refused)
            written = file_result.written_lines  # set on every changed result
            if file_result.status is FileStatus.CHANGED and written is not None:  # point into the file as it now is
                file_result.findings = [
                    dataclasses.replace(f, line=line, original_line=f.line)
                    for f, line in zip(file_result.findings, written)
                ]
        file_result.written_lines = None
        file_result.new_bytes = None  # written or not wanted (--check/--diff): never kept for the whole tree
        result.files.append(file_result)
        if progress:
            progress(done, len(work))
    result.files.sort(key=lambda item: item.path)
    _check_project(result, project_rules, migrate_options)
    result.seconds = time.perf_counter() - started
    return result


def _check_project(result: RunResult, rules: Sequence[type[ProjectRule]], options: RuleOptions) -> None:
    """The project rules over what every file is after the run; their findings join their files' (report only)."""
    by_path = {file.path: file for file in result.files}
    for rule in rules:
        states = {file.path: file.project_states[rule.id] for file in result.files if rule.id in file.project_states}
        for path, finding in rule(options).check(states):
            file = by_path.get(path)
            if file is not None:
                file.findings = sorted([*file.findings, finding], key=lambda f: (f.line, f.column, f.rule))
    for file in result.files:
        file.project_states = {}


def _context(paths: Sequence[Path], exclude: Sequence[str], scanned: list[_Scanned]) -> list[Candidate]:
    """The files of the projects around ``paths`` (migrate/project.py) that the run does not scan already."""
    seen = {item.candidate.path for item in scanned}
    context = []
    for candidate in project_context.context_candidates(paths, exclude):
        if candidate.path not in seen and candidate.skip_reason is None:
            seen.add(candidate.path)
            context.append(candidate)
    return context


def _write(path: Path, file_result: FileResult, refused: dict[Path, str]) -> None:
    data = file_result.new_bytes
    if path in refused:
        _not_written(file_result, f"{refused[path]}; left untouched")
        return
    try:
        atomic_write(path, data or b"")
    except OSError as error:
        _not_written(file_result, f"cannot write: {error.strerror or error}; left untouched")


def _not_written(file_result: FileResult, message: str) -> None:
    """The file stays as it was: its rewrites were not made, so none of them may be reported as fixed."""
    file_result.status = FileStatus.ERROR
    file_result.reason = message
    file_result.findings = [Finding(ENGINE_RULE, Severity.ERROR, 0, 0, message)] + [
        dataclasses.replace(f, severity=Severity.TODO, message=f"not written: {f.message}")
        if f.severity is Severity.FIXED
        else f
        for f in file_result.findings
    ]


REPORT_SCHEMA_VERSION = 2  # 2: `line` is in the file as written, `original_line` before the run
_ENGINE_NAMES = {ENGINE_RULE: "engine", NOTE_RULE: NOTE_RULE_NAME}  # findings that no registered rule makes


def report_data(result: RunResult, generated_at: str) -> dict:
    """The run as plain data: what every migrate report format renders (see docs/migrate-report.md)."""
    from migrate import __version__

    rules = {rule.id: rule for rule in result.rules}
    by_rule: dict[str, dict[str, int]] = {}
    by_severity = {severity.value: 0 for severity in Severity}
    for _, finding in result.findings():
        by_severity[finding.severity.value] += 1
        counts = by_rule.setdefault(finding.rule, {severity.value: 0 for severity in Severity})
        counts[finding.severity.value] += 1
    data = {
        "schema_version": REPORT_SCHEMA_VERSION,
        "tool": "neuron-migrate",
        "tool_version": __version__,
        "generated_at": generated_at,
        "targets": [printable(target) for target in result.targets],
        "mode": "write" if result.options.write else ("diff" if result.options.diff else "check"),
        "neuron_project": result.neuron_project,
        "device_style": result.options.device_style.value,
        "seconds": round(result.seconds, 3),
        "summary": {
            "files_scanned": len(result.files),
            "changed": result.count(FileStatus.CHANGED),
            "unchanged": result.count(FileStatus.UNCHANGED),
            "skipped": result.count(FileStatus.SKIPPED),
            "errors": result.count(FileStatus.ERROR),
            "findings": by_severity,
            "by_rule": {
                rule_id: {
                    "name": rules[rule_id].name if rule_id in rules else _ENGINE_NAMES.get(rule_id, "engine"),
                    **counts,
                }
                for rule_id, counts in sorted(by_rule.items())
            },
        },
        "files": [
            {
                "path": printable(file.path),
                "kind": file.kind,
                "status": file.status.value,
                "reason": file.reason,
                "findings": [
                    {
                        "rule": f.rule,
                        "severity": f.severity.value,
                        "line": f.line,
                        "original_line": f.line if f.original_line is None else f.original_line,
                        "column": f.column,
                        "message": f.message,
                    }
                    for f in file.findings
                ],
            }
            for file in result.files
        ],
        # optional in schema 2: what the run passed over and why (the first NotScanned.limit, sorted; all counted)
        "not_scanned": {
            "count": result.not_scanned.count,
            "files": [
                {"path": printable(path), "reason": reason} for path, reason in sorted(result.not_scanned.entries)
            ],
        },
    }
    # optional in schema 2: the todos about the project as a whole (a rule's ``project_level``), which the reports
    # put first; each is also in its file's findings
    project_level = {rule.id for rule in result.rules if getattr(rule, "project_level", False)}
    project = [
        {
            "path": printable(file.path),
            "rule": f.rule,
            "severity": f.severity.value,
            "line": f.line,
            "message": f.message,
        }
        for file, f in result.findings()
        if f.rule in project_level and f.severity in (Severity.TODO, Severity.ERROR)
    ]
    if project:
        data["project_findings"] = project
    return data
