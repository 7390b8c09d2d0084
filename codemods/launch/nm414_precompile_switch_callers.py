"""NM414 precompile-switch-callers: a call that still passes a wrapper's pre-compile switch gets a todo.

What it does:

A launch script of the project may have its own switch that selects a ``neuron_parallel_compile`` pass: a flag
(``train.sh --precompile``, parsed by ``case "$1" in --precompile) PRECOMPILE=1 ...``), a sub-command
(``case "$1" in compile) ...``, ``if [ "$1" = compile ]``, ``MODE=${1:-train}; case $MODE in compile)``) or an
environment variable (``if [ "${PRECOMPILE:-0}" = 1 ]; then neuron_parallel_compile ...``). NM401 deletes that
pass, ends its branch (``echo ...; exit 0``) or drops the launcher word from it. The project fact
``launch.precompile-wrappers`` holds every shell file that runs ``neuron_parallel_compile``; the switches that
selected a pass there are read from its text, and again from its text as this run migrates it
(``codemods/deps/_plan.py`` ``migrated_text``): a switch that selects no pass any more is one the run removed.

Every other file of the project that calls such a wrapper (a shell script, a Makefile recipe, a Dockerfile
``RUN``/``CMD``, a CI YAML step, a ``tox.ini`` command; a README code block gets the same words as an ``info``, docs
to update, and is never rewritten) with that switch gets a todo on the line that passes it: the
call itself (``./train.sh --precompile``, ``PRECOMPILE=1 bash scripts/train.sh``, ``["./train.sh", "compile"]``) or
the file's own setting of the variable (``export PRECOMPILE=1``, ``ENV PRECOMPILE=1``, a YAML ``PRECOMPILE: "1"``)
in a file that calls the wrapper. The todo says what the switch does now (the wrapper prints a note and exits, or
ignores it, or, where NM401 dropped only the launcher word, may train for real) and what to do: drop the switch from
the call, or the call where it only pre-compiled. Nothing is removed: a switch that the wrapper still parses is
still accepted, and the tool cannot prove that its parser ignores it identically.

A pass NM401 keeps (its script stays on torch_xla / optimum-neuron) keeps its switch: no todo. A call passing
another switch (``./train.sh --max_steps 10``), a value that selects nothing (``PRECOMPILE=0``) or a wrapper's own
usage text gets none. A switch the tool cannot read (a ``getopts`` loop, a function called with the arguments) is not
known: no todo.

Why:

After the run, ``make precompile`` or a CI step ``PRECOMPILE=1 ./train.sh`` still passes a switch the wrapper no
longer acts on: a step that pre-compiled now does nothing (or, where the branch was cut down to the real command,
runs a second training run), and nothing in the caller says so.

Before::

    # train.sh
    if [ "${PRECOMPILE:-0}" = "1" ]; then
        neuron_parallel_compile torchrun --nproc_per_node 2 train.py --max_steps 10
    fi
    torchrun --nproc_per_node 2 train.py

    # .github/workflows/ci.yml
          - run: PRECOMPILE=1 ./train.sh

After::

    # .github/workflows/ci.yml
          # neuron-migrate: `PRECOMPILE=1` selected train.sh's neuron_parallel_compile pre-compile pass, which ...
          - run: PRECOMPILE=1 ./train.sh

Safety: manual-only. A todo; the caller's line stays as it is.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/neuron-sys-tools/neuron-parallel-compile.html
* docs/rules-launch.md (NM401)
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import PurePath

from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE
from codemods.launch._base import LAUNCH_KINDS, LaunchRule
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import Line, TextDocument

_NPC = re.compile(r"(?<![\w./-])neuron_parallel_compile(?![\w-])")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VAR = re.compile(rf"\$\{{?({_NAME})")
_POSITIONAL = re.compile(r"^\"?\$\{?1(?:[:}][^\"\s]*)?\"?$")
_ASSIGN = re.compile(rf"^(?:export\s+|local\s+|readonly\s+|declare\s+(?:-\w+\s+)?)?({_NAME})=(.*)$")
_OFF_VALUES = {"", "0", "false", "no", "off", "n", "False", "FALSE"}
#: commands whose arguments are text, not a call (``echo "run ./train.sh --precompile first"``)
_PROSE = {"echo", "printf", "print", "log", "info", "warn", "die", "cat", "grep"}
_ON_VALUES = {"1", "true", "yes", "on", "y", "True", "TRUE", "YES"}


def _code(line: str) -> str:
    """The line without its comment (a ``#`` outside quotes that starts a word)."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t;"):
            return line[:index]
    return line


def _segments(code: str) -> list[str]:
    """The line split at ``;`` / ``;;`` (kept as its own item) / ``&&`` / ``||`` outside quotes."""
    parts: list[str] = []
    quote = ""
    current = ""
    index = 0
    while index < len(code):
        char = code[index]
        if quote:
            quote = "" if char == quote else quote
            current += char
        elif char in "'\"":
            quote = char
            current += char
        elif code.startswith(";;", index):
            parts += [current, ";;"]
            current = ""
            index += 1
        elif char == ";" or code.startswith(("&&", "||"), index):
            parts.append(current)
            if char != ";":
                parts.append(code[index:index + 2])
                index += 1
            current = ""
        else:
            current += char
        index += 1
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


@dataclass
class _Frame:
    kind: str  # "if", "case", "loop", "else"
    switches: set[tuple[str, str]] = field(default_factory=set)
    subject: str = ""
    arm: set[tuple[str, str]] | None = None  # a case frame's current arm


def _words(text: str) -> list[str]:
    return [word.strip("\"'") for word in text.split()]


def _cond_switches(cond: str, positional: set[str]) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    tokens = _words(cond.replace("[[", " ").replace("]]", " ").replace("[", " ").replace("]", " "))
    if "!=" in tokens or "!" in tokens:
        return found  # a negated test: its branch is the other mode
    for index, token in enumerate(tokens):
        if token in ("=", "==") and 0 < index < len(tokens) - 1:
            left, right = tokens[index - 1], tokens[index + 1]
            for side, other in ((left, right), (right, left)):
                name = _VAR.match(side)
                if not other or "$" in other:
                    continue
                if _POSITIONAL.match(side) or (name and name.group(1) in positional):
                    found.add(("arg", other))
                elif name and other not in _OFF_VALUES:
                    found.add(("env", f"{name.group(1)}={other}"))
        elif token == "-n" and index < len(tokens) - 1 and (name := _VAR.match(tokens[index + 1])):
            found.add(("env", name.group(1)))
    if len(tokens) == 1 and (name := _VAR.fullmatch(tokens[0].rstrip("}"))):  # [ "$PRECOMPILE" ]
        found.add(("env", name.group(1)))
    return {switch for switch in found if switch[0] == "arg" or switch[1].split("=")[0] not in positional}


def read_switches(text: str) -> set[tuple[str, str]]:
    """The switches of ``text`` (a shell script) that select a ``neuron_parallel_compile`` pass: ("arg", word), or
    ("env", NAME) for any on value, ("env", NAME=value) for that value."""
    result: set[tuple[str, str]] = set()
    frames: list[_Frame] = []
    positional: set[str] = set()
    setters: dict[str, set[tuple[str, str]]] = {}
    internal: set[str] = set()
    selected: list[set[tuple[str, str]]] = []

    def active() -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        for frame in frames:
            found |= frame.switches
            if frame.kind == "case" and frame.arm:
                found |= frame.arm
        return found

    def command(segment: str, inline: set[tuple[str, str]]) -> None:
        words = segment.split()
        if not words:
            return
        assign = _ASSIGN.match(segment)
        if assign:
            name, value = assign.group(1), assign.group(2).strip("\"'")
            if re.fullmatch(r"\$\{?1(?:[:}].*)?", value):
                positional.add(name)
            switches = {s for s in active() | inline if s[0] == "arg"}
            if switches:
                setters.setdefault(name, set()).update(switches)
            elif not frames and "$" not in value and not segment.startswith("export"):
                internal.add(name)
        if words[0] in ("echo", "printf", ":"):
            return
        if _NPC.search(segment):
            selected.append(active() | inline)

    pending_cond: set[tuple[str, str]] = set()
    for raw in text.splitlines():
        for segment in _segments(_code(raw)):
            if segment == "&&":
                continue
            if segment == "||":
                pending_cond = set()  # `[ ... ] || cmd`: cmd runs in the other mode
                continue
            head = segment.split(None, 1)[0] if segment.split() else ""
            rest = segment[len(head):].strip()
            if head in ("if", "elif"):
                if head == "if":
                    frames.append(_Frame("if"))
                if frames:
                    frames[-1].switches = _cond_switches(rest, positional)
                    frames[-1].kind = "if"
                continue
            if head == "then":
                segment, head = rest, rest.split(None, 1)[0] if rest.split() else ""
                rest = segment[len(head):].strip()
                if not segment:
                    continue
            if head == "else":
                if frames:
                    frames[-1].switches, frames[-1].kind = set(), "else"
                segment = rest
                if not segment:
                    continue
                head = segment.split(None, 1)[0]
            if head == "fi":
                while frames and frames[-1].kind not in ("if", "else"):
                    frames.pop()
                if frames:
                    frames.pop()
                continue
            if head == "case":
                subject = rest.rsplit(" in", 1)[0].strip()
                frames.append(_Frame("case", subject=subject))
                after = rest.split(" in", 1)[1].strip() if " in" in rest else ""
                if not after:
                    continue
                segment = after
                head = segment.split(None, 1)[0]
            if head == "esac":
                while frames and frames[-1].kind != "case":
                    frames.pop()
                if frames:
                    frames.pop()
                continue
            if segment == ";;":
                if frames and frames[-1].kind == "case":
                    frames[-1].arm = None
                continue
            if head in ("for", "while", "until", "select"):
                frames.append(_Frame("loop"))
                loop = re.match(rf"for\s+({_NAME})\s+in\s+\"?\$[@*]\"?", segment)
                if loop:
                    positional.add(loop.group(1))
                continue
            if head == "do":
                segment = rest
                if not segment:
                    continue
                head = segment.split(None, 1)[0]
            if head == "done":
                while frames and frames[-1].kind != "loop":
                    frames.pop()
                if frames:
                    frames.pop()
                continue
            if frames and frames[-1].kind == "case" and frames[-1].arm is None:
                arm = re.match(r"^\(?\s*([^()\s][^()]*?)\s*\)\s*(.*)$", segment)
                if arm:
                    frames[-1].arm = _arm_switches(frames[-1].subject, arm.group(1), positional)
                    segment = arm.group(2)
                    if not segment:
                        continue
            if segment.startswith(("[", "test ")):
                pending_cond = _cond_switches(segment.removeprefix("test "), positional)
                continue
            command(segment, pending_cond)
            pending_cond = set()
        pending_cond = set()
    for switches in selected:
        for switch in list(switches):
            if switch[0] == "env":
                name = switch[1].split("=")[0]
                switches = switches | setters.get(name, set())
                if name in internal:
                    switches = switches - {switch}  # the script sets it itself: a caller's value never reaches the test
        result |= switches
    return result


def _arm_switches(subject: str, patterns: str, positional: set[str]) -> set[tuple[str, str]]:
    values = [value.strip().strip("\"'") for value in patterns.split("|")]
    values = [value for value in values if value and not re.search(r"[*?\[$]", value)]
    name = _VAR.match(subject.strip("\"'"))
    if _POSITIONAL.match(subject) or (name and name.group(1) in positional):
        return {("arg", value) for value in values}
    if name:
        return {("env", f"{name.group(1)}={value}") for value in values}
    return set()


def _selects(switch: str, given: str | None) -> bool:
    """Whether a caller's value ``given`` of the variable selects the env switch ``NAME`` / ``NAME=value``."""
    if given is None or given in _OFF_VALUES:
        return False
    if "=" not in switch:
        return True
    wanted = switch.split("=", 1)[1]
    return given == wanted or (wanted in _ON_VALUES and given in _ON_VALUES)


def _wrapper_text(text: str) -> str | None:
    """Project fact: the text of a shell file that runs ``neuron_parallel_compile`` behind a switch of its own."""
    return text if read_switches(text) else None


PRECOMPILE_WRAPPERS = ProjectFact("launch.precompile-wrappers", frozenset({FileKind.SHELL}),
                                  ("neuron_parallel_compile",), _wrapper_text)

#: NM401's todo where it dropped only the launcher word from a compile branch: that mode now trains for real
_WORD_DROPPED = "dropped neuron_parallel_compile from this variable"
_REMOVED: dict[tuple[str, str], tuple[object, object, dict[tuple[str, str], str]]] = {}


def removed_switches(path: str, text: str, options) -> dict[tuple[str, str], str]:
    """Switch -> what it does now, for the switches of the wrapper ``path`` whose pass this run removes."""
    from codemods.deps._plan import _SIMULATING, migrated_text, still_importing

    if _SIMULATING:
        return {}
    key = (path, text)
    cached = _REMOVED.get(key)
    if cached is not None and cached[0] is options.project and cached[1] == options.rules:  # same facts, same rules
        return cached[2]
    before = read_switches(text)
    # the wrapper as this run migrates it, its rules told which scripts stay on optimum-neuron (whose pre-compile
    # pass NM401 keeps, so that the switch still selects it)
    kept = frozenset(still_importing(options.project.of(OPTIMUM_NEURON_CODE.name), options))
    migrated = migrated_text(path, text, options, kept)
    found: dict[tuple[str, str], str] = {}
    if migrated is not None and migrated != text:
        after = read_switches(migrated)
        exits = read_switches(migrated.replace("exit 0", "neuron_parallel_compile; exit 0")) if "exit 0" in migrated else set()
        for switch in before - after:
            found[switch] = "exit" if switch in exits else ("note" if _WORD_DROPPED in migrated else "ignored")
    _REMOVED[key] = (options.project, options.rules, found)
    return found


EFFECTS = {
    "exit": "with it, {wrapper} now exits without running anything",
    "ignored": "with it, {wrapper} runs no pre-compile pass any more, only what is left of that branch (maybe nothing)",
    "note": "with it, {wrapper} may now run the real training (see the note there): a second training run",
}
MESSAGE = ("`{switch}` selected {wrapper}'s neuron_parallel_compile pre-compile pass, which this run removed "
           "(TorchNeuron compiles graphs on first use, in the real run); {effect}: drop `{switch}` from this call, or "
           "delete the call where it only pre-compiled")
SETTING_MESSAGE = ("`{switch}` selected {wrapper}'s neuron_parallel_compile pre-compile pass, which this run removed "
                   "(TorchNeuron compiles graphs on first use, in the real run); this file calls {wrapper} with it set, "
                   "and {effect}: delete this setting, or the call of {wrapper} where it only pre-compiled")


class PrecompileSwitchCallers(LaunchRule):
    """Todo on each call that still passes a switch selecting a wrapper's removed neuron_parallel_compile pass."""

    id = "NM414"
    name = "precompile-switch-callers"
    safety = Safety.MANUAL_ONLY
    kinds = LAUNCH_KINDS | {FileKind.TOX, FileKind.DOCS}  # docs: an ``info`` (docs to update), never rewritten
    triggers = (".sh", ".bash")
    facts = (PRECOMPILE_WRAPPERS, OPTIMUM_NEURON_CODE)

    @classmethod
    def wakes(cls, text: str, options) -> bool:
        wrappers = options.project.of(PRECOMPILE_WRAPPERS.name)
        return any(posixpath.basename(path) in text for path in wrappers)

    def apply(self, doc: TextDocument) -> None:
        here = PurePath(self.ctx.path).as_posix()
        for path, text in sorted(self.ctx.options.project.of(PRECOMPILE_WRAPPERS.name).items()):
            name = posixpath.basename(path)
            if path == here or name not in doc.text():
                continue
            removed = removed_switches(path, text, self.ctx.options)
            if removed:
                self._calls(doc, name, removed)

    def _calls(self, doc: TextDocument, name: str, removed: dict[tuple[str, str], str]) -> None:
        call = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])")
        statements: list[tuple[Line, str]] = []
        current: tuple[Line, str] | None = None
        for line in doc:
            text = line.text
            if current is None:
                current = (line, text)
            else:
                current = (current[0], current[1] + " " + text.strip())
            if not text.rstrip().endswith("\\"):
                statements.append(current)
                current = None
        if current is not None:
            statements.append(current)
        calls = False
        done: set[int] = set()
        for line, text in statements:
            code = text if doc.kind is FileKind.YAML else _code(text)
            if code.lstrip().startswith("#") or "neuron-migrate:" in code:
                continue
            for match in call.finditer(code):
                before = code[:match.start()]
                head = re.split(r"&&|\|\||;|\||\(|`|\brun:|\bcommand:|\bRUN\b|\bCMD\b|\bENTRYPOINT\b", before)[-1].split()
                if head and head[0].strip("\"'[@-") in _PROSE or re.match(r"\s*-?\s*(?:name|description):", code):
                    continue  # a message or a step's name that mentions the call
                calls = True
                after = re.split(r"&&|\|\||;|\|", code[match.end():])[0]
                args = [word.strip("\"',[]()") for word in after.replace(",", " ").split()]
                envs = {m.group(1): m.group(2).strip("\"'") for m in re.finditer(rf"({_NAME})=(\S*)", before)}
                for (kind, value), effect in sorted(removed.items()):
                    if kind == "arg":
                        passed, shown = value in args, value
                    else:
                        variable = value.split("=")[0]
                        passed, shown = _selects(value, envs.get(variable)), f"{variable}={envs.get(variable)}"
                    if passed and id(line) not in done:
                        self._note(line, shown, name, effect)
                        done.add(id(line))
        if not calls:
            return
        for line, text in statements:
            if id(line) in done or "neuron-migrate:" in text:
                continue
            setting = re.match(rf"^\s*(?:export\s+|ENV\s+|-\s+)?({_NAME})\s*(?:=|:\s|\s)\s*(\S*)", text)
            if setting is None:
                continue
            variable, given = setting.group(1), setting.group(2).strip("\"'")
            for (kind, value), effect in sorted(removed.items()):
                if kind == "env" and value.split("=")[0] == variable and _selects(value, given):
                    self._note(line, f"{variable}={given}", name, effect, SETTING_MESSAGE)
                    done.add(id(line))
                    break

    def _note(self, line: Line, switch: str, wrapper: str, effect: str, message: str = MESSAGE) -> None:
        text = message.format(switch=switch, wrapper=wrapper, effect=EFFECTS[effect].format(wrapper=wrapper))
        if self.ctx.kind is FileKind.DOCS:  # a README code block: docs to update, no note written there
            self.ctx.report(self.id, line, Severity.INFO, f"docs to update: {text}")
        else:
            self.todo(line, text)
