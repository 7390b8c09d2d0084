"""`--explain RULE` as plain text for a terminal.

Rule documentation is written as reST-flavoured docstrings (``code``, ``Before::`` literal blocks), which
read badly raw: code spans are shown with single backticks (as findings' messages quote code), a
paragraph ending in ``::`` ends in ``:``, and the module docstring's first line, which repeats the rule's
id and name, is folded into the heading.
"""

from __future__ import annotations

import re

from migrate.rule import Rule

_DOUBLE_BACKTICKS = re.compile(r"``(.+?)``", re.DOTALL)
_LITERAL_MARKER = re.compile(r"(?m)(\S)\s*::$")  # "Before::" / "After (portable style) ::" -> "...:"


def plain_explanation(rule: type[Rule]) -> str:
    text = rule.explanation()
    first, _, rest = text.partition("\n\n")
    repeated = f"{rule.id} {rule.name}:"
    summary = " ".join(first[len(repeated) :].split()) if first.startswith(repeated) else ""
    heading = f"{rule.id} {rule.name} ({rule.safety.value})" + (f": {summary}" if summary else "")
    body = rest if summary else text
    return plain_text(f"{heading}\n\n{body}").rstrip() + "\n"


def plain_text(text: str) -> str:
    text = _DOUBLE_BACKTICKS.sub(lambda match: f"`{match.group(1)}`", text)
    return _LITERAL_MARKER.sub(r"\1:", text)
