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
def python_views(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Two views of each line: code only (strings and comments blanked) and code+strings (comments blanked)."""
    lines = text.splitlines()
    code = list(lines)
    with_strings = list(lines)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return tuple(lines), tuple(lines)
    for token in tokens:
        kind = token.type
        is_string = kind == tokenize.STRING or kind in _FSTRING_PARTS
        if kind != tokenize.COMMENT and not is_string:
            continue
        views = (code, with_strings) if kind == tokenize.COMMENT else (code,)
        (start_line, start_col), (end_line, end_col) = token.start, token.end
        for view in views:
            for number in range(start_line, end_line + 1):
                line = view[number - 1]
                begin = start_col if number == start_line else 0
                end = end_col if number == end_line else len(line)
                view[number - 1] = line[:begin] + " " * (end - begin) + line[end:]
    return tuple(code), tuple(with_strings)


_FSTRING_PARTS = {getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, name)}


@functools.lru_cache(maxsize=None)
def _any_of(patterns: tuple[Pattern, ...]) -> re.Pattern:
    return re.compile("|".join(f"(?:{item.regex.pattern})" for item in patterns))


def scan(text: str, kind: FileKind, patterns: Iterable[Pattern]) -> Iterator[SweepHit]:
    """One hit per line at most: the first pattern that matches it."""
    patterns = tuple(patterns)
    # Blanking strings and comments only removes matches, so a text none of whose lines matches a pattern
    # as it is has no hit: most migrated files end here, without being tokenized.
    if not any(map(_any_of(patterns).search, text.splitlines())):
        return
    if kind is FileKind.PYTHON:
        code, with_strings = python_views(text)
    else:
        plain = text.splitlines()
        comment = kind in HASH_COMMENT_KINDS
        code = with_strings = ["" if comment and line.lstrip().startswith("#") else line for line in plain]
    for number, (code_line, string_line) in enumerate(zip(code, with_strings), start=1):
        for item in patterns:
            match = item.regex.search(string_line if item.in_strings else code_line)
            if match:
                yield SweepHit(number, match.start(), item.message)
                break
