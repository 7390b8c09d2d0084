"""Where legacy references hide, and how the sweep finds them without flagging prose.

In Python, API references (``optimum.neuron``, ``torch_xla``, ``xm.``) count only in code: string
literals and comments are blanked out first, so a library that merely names a package in an
availability check (``_is_package_available("optimum.neuron")``) or a URL is not flagged. Launch
commands and environment variables count in strings too, since they are typically run from Python
(``subprocess.run("neuron_parallel_compile torchrun ...")``, ``os.environ["XLA_USE_BF16"]``).
In other files, comment lines are skipped and everything else counts.

Two rules keep the notes to one per thing to do. A hit inside a statement (a command, with its continuation lines)
that another rule's note already speaks about (the note names what the hit matched: NM410's note on a command
string that runs ``neuron_parallel_compile``) is skipped, like a hit on the very line of another rule's ``todo``.
And ``once_per_message`` keeps one finding per file per distinct message: a repeated ``info`` is dropped, a
repeated ``todo`` becomes an ``info`` finding (in the report, without a second inline note).
"""

from __future__ import annotations

import functools
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable, Iterator

from migrate.filekinds import HASH_COMMENT_KINDS, FileKind
from migrate.findings import Severity
from migrate.rule import SweepHit
from migrate.textdoc import NOTE_PREFIX, TextDocument


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern
    message: str
    in_strings: bool  # Python: also look inside string literals


#: every message a sweep pattern reports: a note of the sweep's own (from an earlier run) names no other rule's work
SWEEP_MESSAGES: set[str] = set()


def pattern(expression: str, message: str, in_strings: bool = False) -> Pattern:
    SWEEP_MESSAGES.add(" ".join(message.split()))
    return Pattern(re.compile(expression), message, in_strings)


REPEATED = " (the same as at an earlier line of this file, whose note says it once)"


def once_per_message(hits: Iterable[SweepHit], text: str, kind: FileKind) -> list[SweepHit]:
    """One finding per distinct message in a file: the first keeps its severity; a later ``info`` is dropped and a
    later ``todo`` is reported as ``info`` (its line stays in the report; the inline note is written once). A hit on
    the first line of a statement that another rule's note sits above is not counted as the first: the engine
    reports nothing on a line another rule left a ``todo`` on."""
    hits = list(hits)
    if not hits:
        return hits
    lines = text.splitlines()
    starts = statement_starts(text, kind, sorted({hit.line for hit in hits}))
    seen: set[str] = set()
    kept = []
    for hit in hits:
        if starts.get(hit.line, hit.line) == hit.line and noted_by_another_rule(lines, hit.line, None):
            kept.append(hit)  # the engine drops it (another rule's todo is on this line)
        elif hit.message not in seen:
            seen.add(hit.message)
            kept.append(hit)
        elif hit.severity is Severity.TODO:
            kept.append(SweepHit(hit.line, hit.column, hit.message + REPEATED, Severity.INFO))
    return kept


@functools.lru_cache(maxsize=4)  # both sweep rules read the same final text: tokenize it once
def python_views(text: str, through: int | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Two views of each line: code only (strings and comments blanked) and code+strings (comments blanked).
    ``through``: the last line whose views are needed; tokenizing stops there (later lines stay as they are)."""
    lines = text.splitlines()
    code = list(lines)
    with_strings = list(lines)
    tokens = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if through is not None and token.start[0] > through:
                break
            tokens.append(token)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return tuple(lines), tuple(lines)
    docstrings = _statement_strings(tokens)
    for index, token in enumerate(tokens):
        kind = token.type
        is_string = kind == tokenize.STRING or kind in _FSTRING_PARTS
        if kind != tokenize.COMMENT and not is_string:
            continue
        # a docstring (a string that is a whole statement) is prose, like a comment: it runs nothing
        views = (code, with_strings) if kind == tokenize.COMMENT or index in docstrings else (code,)
        (start_line, start_col), (end_line, end_col) = token.start, token.end
        for view in views:
            for number in range(start_line, end_line + 1):
                line = view[number - 1]
                begin = start_col if number == start_line else 0
                end = end_col if number == end_line else len(line)
                view[number - 1] = line[:begin] + " " * (end - begin) + line[end:]
    return tuple(code), tuple(with_strings)


def _statement_strings(tokens: list[tokenize.TokenInfo]) -> set[int]:
    """Indexes of the STRING tokens that are a statement on their own (docstrings, bare string literals)."""
    skip = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
    found, at_start = set(), True
    for index, token in enumerate(tokens):
        if token.type in skip:
            continue
        if at_start and token.type == tokenize.STRING:
            following = next((t for t in tokens[index + 1:] if t.type not in (tokenize.NL, tokenize.COMMENT)), None)
            if following is None or following.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                found.add(index)
        at_start = token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT) or (token.type == tokenize.OP and token.string == ";")
    return found


_FSTRING_PARTS = {getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, name)}


@functools.lru_cache(maxsize=None)
def _any_of(patterns: tuple[Pattern, ...]) -> re.Pattern:
    return re.compile("|".join(f"(?:{item.regex.pattern})" for item in patterns))


def scan(text: str, kind: FileKind, patterns: Iterable[Pattern]) -> Iterator[SweepHit]:
    """One hit per line at most: the first pattern that matches it."""
    patterns = tuple(patterns)
    # Blanking strings and comments only removes matches, so only lines that match a pattern as they are
    # can hit: most migrated files have none and are not tokenized; the others up to their last such line.
    lines = text.splitlines()
    candidates = [number for number, line in enumerate(lines, start=1) if _any_of(patterns).search(line)]
    if not candidates:
        return
    if kind is FileKind.PYTHON:
        code, with_strings = python_views(text, candidates[-1])
    else:
        comment = kind in HASH_COMMENT_KINDS
        code = with_strings = tuple("" if comment and line.lstrip().startswith("#") else line for line in lines)
    starts = statement_starts(text, kind, candidates)
    for number in candidates:
        code_line, string_line = code[number - 1], with_strings[number - 1]
        for item in patterns:
            match = item.regex.search(string_line if item.in_strings else code_line)
            if match:
                if not noted_by_another_rule(lines, starts.get(number, number), match.group(0).strip(" \t\"'[,=")):
                    yield SweepHit(number, match.start(), item.message)
                break


def noted_by_another_rule(lines: list[str], start: int, matched: str | None) -> bool:
    """Whether a note of another rule in the comment block above the statement starting at line ``start`` names
    ``matched`` (the text the hit found: that rule already said what to do with it); ``None``: any note of another
    rule."""
    index = start - 2
    while index >= 0 and lines[index].lstrip().startswith("#"):
        comment = lines[index].strip().lstrip("#").strip()
        index -= 1
        if comment.startswith(NOTE_PREFIX):
            message = comment[len(NOTE_PREFIX):].strip()
            if (matched is None or matched and matched in message) and message not in SWEEP_MESSAGES:
                return True
    return False


def statement_starts(text: str, kind: FileKind, candidates: list[int]) -> dict[int, int]:
    """Line -> first line of its statement (Python: its logical line; shell, Dockerfile: its command with
    continuations), for the lines up to the last candidate; lines not listed start their own."""
    if kind is FileKind.PYTHON:
        return _python_starts(text, candidates[-1])
    if kind not in (FileKind.SHELL, FileKind.DOCKERFILE):
        return {}
    doc = TextDocument(text, kind)
    if len(doc.lines) != len(text.splitlines()):
        return {}
    numbers = {id(line): number for number, line in enumerate(doc.lines, start=1)}
    return {number: numbers.get(id(doc.statement_start(doc.lines[number - 1])), number) for number in candidates}


def _python_starts(text: str, through: int) -> dict[int, int]:
    starts: dict[int, int] = {}
    start = None
    skip = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] > through:
                break
            if token.type in skip and start is None:
                continue
            if start is None:
                start = token.start[0]
            for line in range(token.start[0], token.end[0] + 1):
                starts.setdefault(line, start)
            if token.type == tokenize.NEWLINE:
                start = None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return starts
