"""Where legacy references hide, and how the sweep finds them without flagging prose.

In Python, API references (``optimum.neuron``, ``torch_xla``, ``xm.``) count only in code: string
literals and comments are blanked out first, so a library that merely names a package in an
availability check (``_is_package_available("optimum.neuron")``) or a URL is not flagged. Launch
commands and environment variables count in strings too, since they are typically run from Python
(``subprocess.run("neuron_parallel_compile torchrun ...")``, ``os.environ["XLA_USE_BF16"]``).
In other files, comment lines are skipped and everything else counts.
"""

from __future__ import annotations

import functools
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable, Iterator

from migrate.filekinds import HASH_COMMENT_KINDS, FileKind
from migrate.rule import SweepHit


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern
    message: str
    in_strings: bool  # Python: also look inside string literals


def pattern(expression: str, message: str, in_strings: bool = False) -> Pattern:
    return Pattern(re.compile(expression), message, in_strings)


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
    for number in candidates:
        code_line, string_line = code[number - 1], with_strings[number - 1]
        for item in patterns:
            match = item.regex.search(string_line if item.in_strings else code_line)
            if match:
                yield SweepHit(number, match.start(), item.message)
                break
