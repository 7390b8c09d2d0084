"""IPython lines in a Python cell: masked so that libcst can parse the cell, and put back afterwards.

Each ``!cmd`` line, ``%magic`` line and ``x = !cmd`` line (with its ``\\`` continuation lines) becomes a
placeholder statement ``...  # __nm_magic_<k>__`` with the same indentation (continuation lines
``...  # __nm_magic_<k>c__``). After the Python rules ran, each placeholder is replaced by the lines its
magic becomes: the cell handler runs ``!cmd``, ``%sx``/``%system``, ``%pip`` and ``%env``/``%set_env``
lines through the shell rules (see ``shell_command``) and ``rewritten`` turns their output back into
IPython lines.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Callable, Literal

from migrate.findings import Finding, Severity
from migrate.textdoc import NOTE_PREFIX

_LINE_MAGIC = re.compile(r"^(\s*)(?:[\w.\[\]'\"]+\s*=\s*)?([!%])")
_PLACEHOLDER = "...  # __nm_magic_{}__"
_PLACEHOLDER_LINE = re.compile(r"^(\s*)\.\.\.  # __nm_magic_(\d+)__$")
_CONT_PLACEHOLDER = re.compile(r"^\s*\.\.\.  # __nm_magic_\d+c__\r?\n?$")
_ASSIGNMENT = re.compile(r"^([\w.\[\]'\"]+\s*=\s*)")
_MAGIC_NAME = re.compile(r"%(\w+)\s*")
_ENV = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\s*=\s*|\s+)(.*)$")
_SHELL_LINE_MAGICS = {"sx", "system"}
_NOTE = f"# {NOTE_PREFIX}"


@dataclass
class Magic:
    indent: str
    lines: list[str]  # original lines, with their endings
    start: int  # 1-based line in the cell

    @property
    def ending(self) -> str:
        """The line ending of the first line ("" on a last line without one)."""
        first = self.lines[0]
        return first[len(first.rstrip("\r\n")) :]


@dataclass(frozen=True)
class ShellCommand:
    """What the shell rules see of a magic: ``text`` (its command, continuation lines included), and how to
    write their output back: ``prefix`` goes before the first line (``!``, ``x = !``, ``%sx ``, ``%``)."""

    prefix: str
    text: str
    mode: Literal["shell", "env"]  # "env": a ``%env`` line, only ever kept or removed


def mask(text: str) -> tuple[str, list[Magic]]:
    """``text`` with its IPython lines replaced by placeholders, and those lines in order."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    magics: list[Magic] = []
    index = 0
    in_string = _string_lines(text)
    while index < len(lines):
        line = lines[index]
        match = _LINE_MAGIC.match(line)
        if match and (index + 1) not in in_string and not line.lstrip().startswith("#"):
            group = [line]
            while group[-1].rstrip("\r\n").endswith("\\") and index + len(group) < len(lines):
                group.append(lines[index + len(group)])
            magic = Magic(match.group(1), group, index + 1)
            out.append(match.group(1) + _PLACEHOLDER.format(len(magics)) + magic.ending)
            out.extend(
                match.group(1) + _PLACEHOLDER.format(f"{len(magics)}c") + g[len(g.rstrip("\r\n")) :] for g in group[1:]
            )
            magics.append(magic)
            index += len(group)
            continue
        out.append(line)
        index += 1
    return "".join(out), magics


def _string_lines(text: str) -> set[int]:
    """Lines (1-based) that lie inside a multi-line string after its first line: a `%` there is text."""
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        pass
    return inside


def unmask(text: str, magics: list[Magic], replacement: Callable[[Magic], list[str]]) -> str | None:
    """``text`` (the masked cell after the Python rules) with each placeholder replaced by the lines
    ``replacement`` gives for its magic; None when the rules moved or removed a placeholder."""
    seen: list[int] = []
    restored: list[str] = []
    for line in text.splitlines(keepends=True):
        if _CONT_PLACEHOLDER.match(line):
            continue
        match = _PLACEHOLDER_LINE.match(line.rstrip("\r\n"))
        if not match:
            restored.append(line)
            continue
        index = int(match.group(2))
        seen.append(index)
        new_lines = replacement(magics[index])
        # a note the Python side already wrote right above (a second run) is not repeated
        above = set()
        for previous in reversed(restored):
            if not previous.lstrip().startswith("#"):
                break
            above.add(previous.strip())
        restored.extend(line for line in new_lines if not (line.lstrip().startswith(_NOTE) and line.strip() in above))
    if sorted(seen) != list(range(len(magics))):
        return None
    return "".join(restored)


def shell_command(magic: Magic) -> ShellCommand | None:
    """The shell text of a magic the shell rules handle (``!``, ``%sx``/``%system``, ``%pip``, ``%env``
    ``NAME=value`` as ``export NAME=value``); None for other magics, which stay as they are."""
    body = magic.lines[0][len(magic.indent) :]
    assignment = _ASSIGNMENT.match(body)
    head = assignment.group(1) if assignment else ""
    body = body[len(head) :]
    continuation = "".join(magic.lines[1:])
    if body.startswith("!"):
        bang = "!!" if body.startswith("!!") else "!"
        return ShellCommand(head + bang, body[len(bang) :] + continuation, "shell")
    match = _MAGIC_NAME.match(body)
    if match is None:
        return None
    name = match.group(1)
    if name in _SHELL_LINE_MAGICS:
        return ShellCommand(head + body[: match.end()], body[match.end() :] + continuation, "shell")
    if name == "pip" and not head:
        return ShellCommand("%", body[1:] + continuation, "shell")
    if name in {"env", "set_env"} and not head:
        env = _ENV.match(body[match.end() :].rstrip("\r\n"))
        if not env:
            return None
        return ShellCommand("", f"export {env.group(1)}={env.group(2)}\n" + continuation, "env")
    return None


def rewritten(
    magic: Magic, command: ShellCommand, new_text: str, findings: list[Finding], inline_notes: bool
) -> list[str]:
    """The lines that replace ``magic`` once the shell rules turned ``command.text`` into ``new_text``
    (which differs from it) with ``findings``."""
    ending = magic.ending
    out_lines = new_text.splitlines(keepends=True)
    notes = [line for line in out_lines if line.lstrip().startswith(_NOTE)]
    if inline_notes:  # a note whose line was removed has nowhere to go in the shell text: keep it here
        noted = {note.strip() for note in notes}
        for finding in findings:
            note = f"{_NOTE} {finding.message}"
            if finding.severity is Severity.TODO and note not in noted:
                notes.append(note + (ending or "\n"))
                noted.add(note)
    code = [line for line in out_lines if not line.lstrip().startswith(_NOTE)]
    new = [magic.indent + note.lstrip() + ("" if note.endswith(("\n", "\r")) else ending) for note in notes]
    if not "".join(code).strip():
        if magic.indent:
            new.append(magic.indent + "pass" + ending)
        return new
    if command.mode == "env":
        return new + magic.lines  # %env lines are only ever kept or removed
    for index, line in enumerate(code):
        text = line if line.endswith(("\n", "\r")) or index < len(code) - 1 else line + ending
        new.append(magic.indent + command.prefix + text if index == 0 else text)
    return new
