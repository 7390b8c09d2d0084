"""Same-file shell variables: what a ``$NAME`` word of a command holds, with the source spans of its words.

A launcher often keeps a command's flags (``ARGS="--zero_1 true --output_dir out"``) or the whole command
(``CMD="torchrun ... train.py ..."``) in a variable and runs ``torchrun train.py $ARGS`` or ``$CMD``. The rules that
read commands (NM403, NM407, NM408) see through such a variable only when its value at the command is certain:

* the assignment is a plain ``NAME=value`` / ``NAME="..."`` / ``NAME='...'`` / ``export NAME=...`` statement at the
  top level of the file (not inside ``if``/``case``/a loop/a function/a subshell/a pipeline, not after ``&&`` or
  ``||``), a quoted value spanning lines (``\\``-newline or not) included;
* it is the last assignment of the name before the command, and every earlier one gave the same value (a command
  inside a loop or a function takes every assignment of the file into account);
* its value splits into words that each stand on one line of the file (no quotes or escapes inside a word).

``$NAME``, ``${NAME}`` and ``${NAME:-default}`` (the value when the name is set in the file) are expanded where
the shell splits them into words (unquoted; ``eval "$CMD"`` too); ``$NAME`` words inside a value expand as the
value was assigned. Every other case is *unresolved*, with a reason a todo can quote: a name assigned nowhere in
the file (the environment, a sourced file), the script's own arguments (``$1``, ``"$@"``), an assignment inside a
block, different values before the command.

Given the project's shell files (``Sources``, ``codemods._lib.shell.sourced``), a name a file sourced before the
command sets (``source ./env.sh`` with ``NPROC=32`` there; in a Makefile, a ``. ./env.sh && ...`` of the same recipe
line) has that file's value for a one-word read (``single_value``); its words are never spliced into the command
(they are edited in their own file), and a reason names the file. A source of a path that is not a file of the
project is named in the reason of every name the file does not set itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from codemods._lib.shell.commands import CommandLine, command_lines
from codemods._lib.shell.lexer import Tok, lex, unquote
from codemods._lib.shell.make import make_doc
from migrate.filekinds import FileKind
from migrate.textdoc import Line, TextDocument

#: a word that is one expansion and nothing else: `$NAME`, `${NAME}`, `${NAME:-default}` (group 1/2: the name)
_EXPANSION = re.compile(r"^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\})$")
#: a bash array's expansion: `"${NAME[@]}"` (each element one word), `${NAME[@]}` / `${NAME[*]}` (split again)
_ARRAY_USE = re.compile(r'^("?)\$\{([A-Za-z_][A-Za-z0-9_]*)\[([@*])\]\}\1$')
#: the start of a bash array assignment on a line: `NAME=(` (``+=`` appends)
_ARRAY_START = re.compile(r"(?:^|[\s;&|])[A-Za-z_][A-Za-z0-9_]*\+?=$")
#: a Make variable's expansion: `$(NAME)` / `${NAME}`
_MAKE_EXPANSION = re.compile(r"^\$(?:\(([A-Za-z_][\w.-]*)\)|\{([A-Za-z_][\w.-]*)\})$")
#: a Make variable's assignment line: group 2 the name, 3 the operator
_MAKE_ASSIGN = re.compile(r"^((?:export|override)\s+)*([A-Za-z_][\w.-]*)\s*(:::=|::=|:=|\?=|\+=|!=|=)\s*")
#: the script's own arguments
_POSITIONAL = re.compile(r"^\$(?:[0-9@*#]|\{(?:[0-9]+|[@*#])\})$")
_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_OPENERS = {"if": "an if", "case": "a case", "for": "a loop", "while": "a loop", "until": "a loop", "select": "a loop"}
_CLOSERS = {"fi", "done", "esac"}
_RESERVED = {"then", "do", "else", "elif", "!", "time", "in"}
_EXPORT = {"export", "readonly"}
_SETTERS = {"read", "declare", "typeset", "local", "mapfile", "readarray", "getopts"}
#: commands whose words are text or tests, not a program run with arguments
QUIET = {"echo", "printf", "[", "[[", "test", "local", "declare", "typeset", "export", "readonly", "unset", "read", ":",
         "cd", "mkdir", "rm", "ls", "cat", "tee", "true", "false", "set", "shift", "return", "exit"}


@dataclass
class _Char:
    cl: CommandLine
    col: int


@dataclass
class _Token:
    kind: str  # "word" | "op"
    text: str  # as written (lines joined with "\n")
    start: int  # flat index of the statement's text
    end: int


@dataclass(eq=False)
class Assignment:
    """One ``NAME=value`` setting at its place in the file."""

    name: str
    cl: CommandLine  # the line the assignment starts on (findings about its words go there)
    order: int  # position of its command among the file's commands
    value: str | None  # the value as written between its quotes (None: unset / set by another builtin)
    words: list[tuple[CommandLine, Tok]] | None  # the words the value splits into, with their spans; None: not known
    why: str | None = None  # why the value is not known (words None)
    context: str | None = None  # "an if", "a loop", ...: the block it is in (None: top level)
    lines: list[Line] = field(default_factory=list)  # every line of the assignment command
    col: int = -1  # where its `NAME=` word starts on its first line
    array: bool = False  # a bash array, ``NAME=(word ...)``: its words are its elements, read by ``"${NAME[@]}"``


@dataclass
class Binding:
    assignment: Assignment | None
    why: str | None  # why the value is not known (assignment None)
    #: (where, value) of a name a sourced file sets (assignment None; value None where that file's value is not
    #: known); ``where`` names the file as a note does: "env.sh, which this file sources [through job.sh]"
    imported: tuple[str, str | None] | None = None


class Sources(Protocol):
    """The project's view of the files a shell file sources (``codemods._lib.shell.sourced.Sources``)."""

    def path(self, written: str) -> str | None: ...

    def value(self, written: str, name: str) -> tuple[str, str | None, str | None] | None: ...


@dataclass
class _Source:
    written: str  # the path as written, quotes removed
    order: int
    context: str | None
    statement: int


@dataclass
class Expanded:
    """A simple command with its variables expanded."""

    items: list[tuple[CommandLine, Tok]]
    #: id(tok) of a word that came from a value -> (the assignment holding it, the `$NAME` word of the command)
    origin: dict[int, tuple[Assignment, tuple[CommandLine, Tok]]]
    #: `$NAME` words left as they are -> why (a word the script sees as it is, or an unknown number of words)
    unresolved: list[tuple[tuple[CommandLine, Tok], str]]
    used: list[Assignment]  # every assignment whose words are in ``items``
    held: list[Assignment] = field(default_factory=list)  # used, but its words were left as they are (set by a rule)

    def own(self, item: tuple[CommandLine, Tok]) -> tuple[CommandLine, Tok]:
        """The word of the command itself that ``item`` stands for (itself, or the `$NAME` word it came from)."""
        found = self.origin.get(id(item[1]))
        return found[1] if found else item


@dataclass
class _Command:
    words: list[_Token]
    cls: list[CommandLine]
    context: str | None
    loop_or_function: bool
    order: int


class ShellVariables:
    """The variables of a shell document (nothing is known for other kinds)."""

    def __init__(self, doc: TextDocument, sources: Sources | None = None) -> None:
        self.assignments: dict[str, list[Assignment]] = {}
        self._sources = sources
        self._sourced: list[_Source] = []  # the file's `source X` / `. X` commands
        self._statement_of: dict[int, int] = {}  # command order -> its statement's index
        self._at: dict[tuple[int, int], Assignment] = {}  # (id(line), col) of an assignment command's first word
        self._inside: dict[int, Assignment] = {}  # id(line) of a line continuing an assignment command
        #: id(line) -> (start, end, name) of each element of a bash array assignment on the line
        self._array_spans: dict[int, list[tuple[int, int, str]]] = {}
        self._commands: list[_Command] = []
        #: id(line) -> (col of a command's first word, order, inside a loop or a function) of the commands starting there
        self._starts: dict[int, list[tuple[int, int, bool]]] = {}
        #: a Makefile (``codemods._lib.shell.make``): ``NAME = value`` lines are Make variables, ``$(NAME)`` /
        #: ``${NAME}`` their expansions; Make reads every assignment before it runs a recipe
        self._make = doc.kind is FileKind.SHELL and make_doc(doc)
        if doc.kind is FileKind.SHELL:
            self._scan(doc)
        if self._make:
            self._scan_make(doc)

    # ------------------------------------------------------------------------------------------- reading

    def _scan(self, doc: TextDocument) -> None:
        stack: list[str] = []
        order = 0
        pending_function = False
        for statement, (chars, text) in enumerate(_statements(doc)):
            tokens = _array_words(_tokens(text), text)
            commands: list[tuple[list[_Token], str | None, str | None]] = []  # words, op before, op after
            current: list[_Token] = []
            before: str | None = None
            for token in tokens + [_Token("op", ";", len(text), len(text))]:
                if token.kind == "word":
                    current.append(token)
                    continue
                commands.append((current, before, token.text))
                current, before = [], token.text
            for words, op_before, op_after in commands:
                # block structure: keywords at the start of a command
                while words and words[0].text in _RESERVED | _OPENERS.keys() | _CLOSERS | {"{", "}"}:
                    head = words[0].text
                    if head in _OPENERS:
                        stack.append(_OPENERS[head])
                        if head in ("for", "select") and len(words) > 1:
                            self._set_opaque(words[1].text, chars, words[1], order, "it is a loop variable", stack)
                        words = []  # the rest of the `if`/`for` line is a test or a word list
                        break
                    if head in _CLOSERS or head == "}":
                        if stack:
                            stack.pop()
                    elif head == "{" and not (stack and stack[-1] == "a function" and pending_function):
                        stack.append("a { } group")
                    pending_function = False
                    words = words[1:]
                if words and (words[0].text == "function" or (len(words) == 1 and op_after == "(")):
                    stack.append("a function")  # `f() {` / `function f {`: the `{` that follows opens it
                    pending_function = True
                    words = []
                context = stack[-1] if stack else None
                if op_before in ("&&", "||"):
                    context = context or "an && / || list"
                if op_before in ("|", "|&", "&") or op_after in ("|", "|&", "&"):
                    context = context or "a pipeline"
                if words:
                    loop_or_function = any(kind in ("a loop", "a function") for kind in stack)
                    cls = _cls_of(chars, words)
                    self._commands.append(_Command(words, cls, context, loop_or_function, order))
                    first = chars[words[0].start]
                    self._starts.setdefault(id(first.cl.line), []).append((first.col, order, loop_or_function))
                    self._read_command(words, chars, order, context, stack)
                    self._statement_of[order] = statement
                    if words[0].text in ("source", ".") and len(words) > 1:
                        self._sourced.append(_Source(unquote(words[1].text), order,
                                                     None if context == "an && / || list" else context, statement))
                    order += 1
                if op_after == "(" and not words:
                    stack.append("a subshell")
                elif op_after == ")" and stack and stack[-1] == "a subshell":
                    stack.pop()

    def _scan_make(self, doc: TextDocument) -> None:
        """Make variables: ``[export|override] NAME = value`` (``:=``, ``::=``, ``?=`` too) at the start of a line,
        with its backslash-continued lines. Make reads the whole file before it runs a recipe, so each counts for every
        command (order -1); one inside ``ifeq``/``ifdef`` ... ``endif``, appended to (``+=``), set by ``!=`` or
        ``define`` is not known. Shell assignments read from lines that are not recipe lines are dropped."""
        for name, every in list(self.assignments.items()):
            kept = [a for a in every if a.cl.line.text.startswith("\t")]
            if kept:
                self.assignments[name] = kept
            else:
                del self.assignments[name]
        self._at = {key: a for key, a in self._at.items() if a.cl.line.text.startswith("\t")}
        self._inside = {key: a for key, a in self._inside.items() if a.cl.line.text.startswith("\t")}
        cls = {id(cl.line): cl for cl in command_lines(doc)}
        lines = [line for line in doc.lines if not line.deleted]
        depth = 0
        index = 0
        while index < len(lines):
            line = lines[index]
            index += 1
            text = line.text
            if text.startswith("\t") or not text.strip() or text.lstrip().startswith("#"):
                continue
            head = text.split(None, 1)[0]
            if head in ("ifeq", "ifneq", "ifdef", "ifndef"):
                depth += 1
                continue
            if head == "endif":
                depth = max(0, depth - 1)
                continue
            if head == "define" and len(text.split()) > 1:
                name = text.split()[1]
                while index < len(lines) and lines[index].text.strip() != "endef":
                    index += 1
                self._make_opaque(name, cls.get(id(line)), "it is set by a define block")
                continue
            match = _MAKE_ASSIGN.match(text)
            if match is None or id(line) not in cls:
                continue
            group = [line]
            while group[-1].text.rstrip().endswith("\\") and index < len(lines):
                group.append(lines[index])
                index += 1
            name, op = match.group(2), match.group(3)
            cl = cls[id(line)]
            if op in ("+=", "!="):
                self._make_opaque(name, cl, f"it is appended to (`{name} +=`)" if op == "+=" else "it is set by a shell command (`!=`)")
                continue
            words: list[tuple[CommandLine, Tok]] = []
            for position, member in enumerate(group):
                member_cl = cls.get(id(member))
                if member_cl is None:
                    words = []
                    break
                start = match.end() if position == 0 else len(member.text) - len(member.text.lstrip())
                toks, _ = lex(member.text, start, len(member.text))
                words.extend((member_cl, tok) for tok in toks if tok.kind == "word")
            value = " ".join(tok.text for _, tok in words)
            context = "a Make conditional (ifeq/ifdef ... endif)" if depth else None
            assignment = Assignment(name, cl, -1, value, words, None, context, lines=group, col=match.start(2))
            self.assignments.setdefault(name, []).append(assignment)
            self._at[(id(line), match.start(2))] = assignment
            for member in group[1:]:
                self._inside[id(member)] = assignment

    def _make_opaque(self, name: str, cl: CommandLine | None, why: str) -> None:
        if cl is not None:
            self.assignments.setdefault(name, []).append(Assignment(name, cl, -1, None, None, why, None))

    def name_of(self, text: str) -> str | None:
        """The variable a word that is one expansion reads (``$NAME``, ``${NAME}``, an array's ``"${NAME[@]}"``;
        ``$(NAME)`` in a Makefile)."""
        array = _ARRAY_USE.match(text) if not self._make else None
        return array.group(2) if array else self._name(text.strip('"'))

    def _name(self, text: str) -> str | None:
        """The name a word that is one expansion reads: ``$(NAME)`` / ``${NAME}`` in a Makefile."""
        if self._make:
            match = _MAKE_EXPANSION.match(text)
            return (match.group(1) or match.group(2)) if match else None
        return _name_of(text)

    def _set_opaque(self, name: str, chars: list[_Char], token: _Token, order: int, why: str, stack: list[str]) -> None:
        cl = chars[token.start].cl
        self.assignments.setdefault(name, []).append(
            Assignment(name, cl, order, None, None, why, stack[-1] if stack else None))

    def _read_command(self, words: list[_Token], chars: list[_Char], order: int, context: str | None,
                      stack: list[str]) -> None:
        head = words[0].text
        if head == "unset":
            for word in words[1:]:
                if not word.text.startswith("-"):
                    self._set_opaque(word.text, chars, word, order, f"it is unset (`unset {word.text}`)", stack)
            return
        if head in _SETTERS:
            for word in words[1:]:
                name = _NAME.match(word.text)
                bare = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word.text)
                if name or bare:
                    self._set_opaque(name.group(1) if name else word.text, chars, word, order,
                                     f"it is set by `{head}`", stack)
            return
        rest = words[1:] if head in _EXPORT else words
        if not rest or not all(_NAME.match(word.text) for word in rest):
            return  # a command (assignments before its program only set them for it), or `export NAME`
        found: list[Assignment] = []
        for word in rest:
            match = _NAME.match(word.text)
            assert match is not None
            assignment = self._assignment(match.group(1), bool(match.group(2)), word, chars, order, context)
            self.assignments.setdefault(assignment.name, []).append(assignment)
            found.append(assignment)
        lines = []
        for cl in _cls_of(chars, words):
            if cl.line not in lines:
                lines.append(cl.line)
        for assignment in found:
            assignment.lines = lines
        first = chars[words[0].start]
        self._at[(id(first.cl.line), first.col)] = found[0]
        for line in lines[1:]:
            self._inside[id(line)] = found[0]

    def _assignment(self, name: str, append: bool, word: _Token, chars: list[_Char], order: int,
                    context: str | None) -> Assignment:
        cl = chars[word.start].cl
        if append:
            return Assignment(name, cl, order, None, None, f"it is appended to (`{name}+=`)", context,
                              col=chars[word.start].col)
        start = word.start + len(name) + 1
        written = word.text[len(name) + 1:]
        array = written.startswith("(")
        value, pieces, why = _array_value(written, start) if array else _value(written, start)
        col = chars[word.start].col
        if why is not None:
            return Assignment(name, cl, order, value, None, why, context, col=col, array=array)
        words: list[tuple[CommandLine, Tok]] = []
        for piece in pieces:
            first, last = chars[piece[0]], chars[piece[-1]]
            if first.cl is not last.cl or piece != list(range(piece[0], piece[-1] + 1)):
                return Assignment(name, cl, order, value, None, "a word of its value spans lines", context, col=col)
            text = first.cl.line.text[first.col:last.col + 1]
            words.append((first.cl, Tok("word", first.col, last.col + 1, text)))
        if array:  # the commands of its lines (`NAME=(` / `--flag value` / `)`) are the assignment's
            for piece_cl, tok in words:
                self._array_spans.setdefault(id(piece_cl.line), []).append((tok.start, tok.end, name))
        return Assignment(name, cl, order, value, words, None, context, col=col, array=array)

    # ------------------------------------------------------------------------------------------- queries

    def binding(self, name: str, order: int, loop_or_function: bool = False) -> Binding:
        """What ``$name`` holds at the command numbered ``order``."""
        every = self.assignments.get(name, [])
        relevant = every if loop_or_function else [a for a in every if a.order < order]
        sourced = self._from_sources(name, order, loop_or_function, max((a.order for a in relevant), default=-2))
        if sourced is not None:
            return sourced
        if not every:
            return Binding(None, self._not_assigned(name, order, loop_or_function))
        if not relevant:
            return Binding(None, f"{name} is assigned only after this command")
        for assignment in relevant:
            if assignment.context is not None:
                return Binding(None, f"{name} is assigned inside {assignment.context}")
        for assignment in relevant:
            if assignment.words is None:
                return Binding(None, f"the value of {name} is not known: {assignment.why}")
        if len({assignment.value for assignment in relevant}) > 1:
            return Binding(None, f"{name} is assigned {len(relevant)} different values before this command")
        return Binding(relevant[-1], None)

    def _before(self, order: int, loop_or_function: bool) -> list[_Source]:
        """The sources whose settings reach the command numbered ``order`` (in a Makefile: of its recipe line)."""
        if self._make:
            statement = self._statement_of.get(order)
            return [s for s in self._sourced if s.order < order and s.statement == statement]
        return [s for s in self._sourced if loop_or_function or s.order < order]

    def _from_sources(self, name: str, order: int, loop_or_function: bool, last_own: int) -> Binding | None:
        """What a file sourced before the command, after the file's own last assignment of ``name``, sets it to."""
        if self._sources is None:
            return None
        for source in reversed(self._before(order, loop_or_function)):
            if source.order < last_own:
                return None  # the file's own later assignment holds
            found = self._sources.value(source.written, name)
            if found is None:
                continue
            path, value, why = found
            direct = self._sources.path(source.written)
            where = f"{path}, which this file sources" + (f" through {direct}" if direct not in (None, path) else "")
            if source.context is not None:
                return Binding(None, f"{name} is set in {where} inside {source.context}")
            if value is None:
                return Binding(None, f"{name} is set in {where}, and its value there is not known: {why}", (where, None))
            return Binding(None, f"{name} is set in {where} (its words are not read here)", (where, value))
        return None

    def _not_assigned(self, name: str, order: int, loop_or_function: bool) -> str:
        sources = self._before(order, loop_or_function) if self._sources is not None else []
        unresolved = [s.written for s in sources if self._sources is not None and self._sources.path(s.written) is None]
        if unresolved:
            return (f"{name} is not assigned in this file; it may come from {unresolved[-1]}, which this file sources "
                    "and which is not among the project files neuron-migrate read (so its value is not known here), or "
                    "from the environment")
        if sources and self._sources is not None:
            read = ", ".join(dict.fromkeys(str(self._sources.path(s.written)) for s in sources))
            return (f"{name} is not assigned in this file or in {read}, which it sources (its value comes from the "
                    "environment or a file sourced from there)")
        return f"{name} is not assigned in this file (its value comes from the environment or a sourced file)"

    def place(self, line: Line, col: int) -> tuple[int, bool] | None:
        """(order, inside a loop or a function) of the command at ``col`` of ``line`` (the last one starting on the
        line at or before ``col``, else the first starting on it); None when no command starts on the line."""
        starts = self._starts.get(id(line))
        if not starts:
            return None
        before = [start for start in starts if start[0] <= col]
        _, order, loop_or_function = before[-1] if before else starts[0]
        return order, loop_or_function

    def assignment_command(self, command: list[tuple[CommandLine, Tok]]) -> Assignment | None:
        """The assignment ``command`` (as NM408 reads a command) is, or continues; None for any other command."""
        if not command:
            return None
        cl, tok = command[0]
        if tok.text in _EXPORT and len(command) > 1:
            cl, tok = command[1]
        found = self._at.get((id(cl.line), tok.start)) or self._inside.get(id(command[0][0].line))
        if found is None:  # the elements of `NAME=(--a 1 --b)` after its `(` on the same line
            for start, end, name in self._array_spans.get(id(cl.line), []):
                if start <= tok.start < end:
                    found = next((a for a in self.assignments.get(name, []) if a.array and a.cl.line is cl.line), None)
        return found

    def expand(self, command: list[tuple[CommandLine, Tok]]) -> Expanded:
        """``command`` (the words of one simple command, as NM408/NM403 read them) with its variables expanded."""
        expanded = Expanded([], {}, [], [])
        if not command or not self._commands:
            expanded.items = list(command)
            return expanded
        first = next((item for item in command if item[1].text not in _RESERVED | {"{", "if", "while", "until"}), command[0])
        place = self.place(first[0].line, first[1].start)
        order, loop_or_function = place if place is not None else (len(self._commands), True)
        words = [tok.text for _, tok in command]
        head = next((word for word in words if not _NAME.match(word)), None)
        if head in QUIET:
            expanded.items = list(command)
            return expanded
        for index, item in enumerate(command):
            text = item[1].text
            if index and words[index - 1].startswith("--") and "=" not in words[index - 1]:
                expanded.items.append(item)  # `--output_dir $OUT`: the flag's value, one word wherever it is set
                continue
            if text.startswith('"') and text.endswith('"') and len(text) > 2 and index > 0 and words[index - 1] == "eval":
                text = text[1:-1]  # eval "$CMD": the shell reads the value again, as words
            array = _ARRAY_USE.match(text) if not self._make else None
            name = array.group(2) if array else self._name(text)
            if name is None:
                if _POSITIONAL.match(text.strip('"')):
                    expanded.unresolved.append((item, "it holds the arguments this script was called with"))
                elif text.lstrip('"').startswith("$") and not self._make:
                    expanded.unresolved.append((item, _unread(text)))
                expanded.items.append(item)
                continue
            binding = self.binding(name, order, loop_or_function)
            problem = _use_problem(text, name, binding.assignment) if binding.assignment is not None else None
            if binding.assignment is None or problem is not None:
                expanded.unresolved.append((item, problem or binding.why or ""))
                expanded.items.append(item)
                continue
            self._splice(binding.assignment, item, expanded, 0)
        return expanded

    def _splice(self, assignment: Assignment, use: tuple[CommandLine, Tok], expanded: Expanded, depth: int) -> None:
        if assignment not in expanded.used:
            expanded.used.append(assignment)
        for position, word in enumerate(assignment.words or []):
            name = self._name(word[1].text)
            after_flag = position > 0 and (previous := (assignment.words or [])[position - 1][1].text).startswith("--") \
                and "=" not in previous
            why = None
            element = _ARRAY_USE.match(word[1].text) if assignment.array else None
            name = element.group(2) if element else name
            if name is not None and depth < 4 and not after_flag:
                inner = self.binding(name, assignment.order)
                problem = _use_problem(word[1].text, name, inner.assignment) if inner.assignment is not None else None
                if inner.assignment is not None and inner.assignment is not assignment and problem is None:
                    self._splice(inner.assignment, use, expanded, depth + 1)
                    continue
                why = problem or inner.why or f"{name} holds itself"
            elif _POSITIONAL.match(word[1].text.strip('"') if assignment.array else word[1].text) and not after_flag:
                why = "it holds the arguments this script was called with"
            elif assignment.array and "$" in word[1].text and not after_flag:
                why = _unread(word[1].text)  # `"$EXTRA"`: one word whatever it holds, `${X:+--y}` ...
            copy = (word[0], Tok("word", word[1].start, word[1].end, word[1].text))
            expanded.origin[id(copy[1])] = (assignment, use)
            expanded.items.append(copy)
            if why is not None:  # the word a value holds as it is (the command sees it, not what it stands for)
                expanded.unresolved.append((copy, why))

    def single_value(self, word: str, line: Line, col: int) -> str | None:
        """The value a one-word ``$NAME`` stands for at the command at ``col`` of ``line`` (``--nproc_per_node
        $PROCS``), or None."""
        name = self._name(word)
        place = self.place(line, col)
        if name is None or place is None:
            return None
        binding = self.binding(name, *place)
        if binding.imported is not None and binding.imported[1] is not None and len(binding.imported[1].split()) == 1:
            return binding.imported[1]
        if binding.assignment is None or binding.assignment.words is None or len(binding.assignment.words) != 1:
            return None
        return binding.assignment.words[0][1].text

    def binding_at(self, word: str, line: Line, col: int) -> Binding | None:
        """The binding of the one-word ``$NAME`` at the command at ``col`` of ``line`` (None: not one expansion, or
        no command starts on the line)."""
        name = self._name(word)
        place = self.place(line, col)
        return self.binding(name, *place) if name is not None and place is not None else None


def _use_problem(text: str, name: str, assignment: Assignment) -> str | None:
    """Why the expansion ``text`` of ``name`` does not stand for the words of ``assignment`` (None: it does)."""
    array = _ARRAY_USE.match(text)
    if array and not assignment.array:
        return f"{name} is not an array here, so {text} is not read"
    if array and array.group(1) and array.group(3) == "*":
        return f"{text} joins the elements of {name} into one word"
    if not array and assignment.array:
        return f"{text} is only the first element of the array {name}"
    return None


def _unread(text: str) -> str:
    """Why an expansion word (not one ``$NAME``) is not read."""
    if "$(" in text or "`" in text:
        return "it is the output of a command"
    return f"{text} is an expansion this tool does not read"


def _array_words(tokens: list[_Token], text: str) -> list[_Token]:
    """``tokens`` with each bash array assignment ``NAME=(a b ...)`` (lines and comments inside) made one word."""
    out: list[_Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token.kind == "word" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\+?=", token.text) and following is not None \
                and following.kind == "op" and following.text == "(" and following.start == token.end:
            close = next((at for at in range(index + 2, len(tokens)) if tokens[at].kind == "op"), None)
            if close is not None and tokens[close].text == ")":
                out.append(_Token("word", text[token.start:tokens[close].end], token.start, tokens[close].end))
                index = close + 1
                continue
        out.append(token)
        index += 1
    return out


def _array_value(written: str, start: int) -> tuple[str, list[list[int]], str | None]:
    """The elements of an array assignment's ``(a b ...)`` (flat index ``start``): (their text, the flat indexes of
    each, why they are not known or None). An element keeps its quotes (the shell removes them)."""
    if not written.endswith(")"):
        return written, [], "its value is not a plain array"
    inner = written[1:-1]
    elements = _tokens(inner)
    value = " ".join(token.text for token in elements)
    for token in elements:
        if token.kind != "word":
            return value, [], "its value is not a plain array"
        if "`" in token.text or "$(" in token.text:
            return value, [], "an element of it is the output of a command"
        if re.search(r"[*?[]", re.sub(r"\$\{[^}]*\}", "", unquote(token.text) if "'" not in token.text and '"' not in token.text else "")):
            return value, [], "an element of it is a glob pattern"
    pieces = [list(range(start + 1 + token.start, start + 1 + token.end)) for token in elements]
    return value, pieces, None


def _name_of(text: str) -> str | None:
    match = _EXPANSION.match(text)
    return (match.group(1) or match.group(2)) if match else None


def _cls_of(chars: list[_Char], words: list[_Token]) -> list[CommandLine]:
    cls: list[CommandLine] = []
    for word in words:
        for index in range(word.start, max(word.start + 1, word.end)):
            cl = chars[min(index, len(chars) - 1)].cl
            if not cls or cls[-1] is not cl:
                if cl not in cls:
                    cls.append(cl)
    return cls


# ------------------------------------------------------------------------------------------ statements


def _statements(doc: TextDocument):
    """(chars, text) of each statement: the shell code of its lines joined with newlines, a quote left open at the
    end of a line or a final backslash joining the next line; ``chars[i]`` says where ``text[i]`` stands."""
    chars: list[_Char] = []
    text: list[str] = []
    state = ""
    for cl in command_lines(doc):
        code = cl.line.text[cl.start:cl.end]
        if text and not state:
            joined = "".join(text)
            yield chars, joined
            chars, text = [], []
        for offset, char in enumerate(code):
            chars.append(_Char(cl, cl.start + offset))
            text.append(char)
        state = _open_at_end(code, state)
        chars.append(_Char(cl, cl.end))
        text.append("\n")
    if text:
        yield chars, "".join(text)


def _open_at_end(code: str, state: str) -> str:
    """What is still open at the end of ``code``, started in ``state``: a bash array's ``NAME=(`` (one ``(`` per
    open parenthesis in it), then a quote (``"``/``'``), ``\\`` (a final backslash outside single quotes) or
    nothing."""
    i = 0
    depth = len(state) - len(state.lstrip("("))
    state = state[depth:]
    quote = state if state in ("'", '"') else ""
    word_start = True
    while i < len(code):
        char = code[i]
        if quote == "'":
            if char == "'":
                quote = ""
            i += 1
            continue
        if char == "\\":
            if i + 1 >= len(code) or code[i + 1:].strip() == "":
                return "(" * depth + (quote or "\\")
            i += 2
            continue
        if quote == '"':
            if char == '"':
                quote = ""
            i += 1
            continue
        if char in "'\"":
            quote = char
        elif char == "#" and word_start:
            return "(" * depth
        elif char == "(" and (depth or _ARRAY_START.search(code[:i])):
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        word_start = char in " \t;&|()"
        i += 1
    return "(" * depth + quote


def _tokens(text: str) -> list[_Token]:
    """Words and operators of a statement's text (quotes, expansions and backslash-newlines kept in the words)."""
    tokens: list[_Token] = []
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char in " \t\n":
            i += 1
            continue
        if char == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            continue
        if char == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith(("&&", "||", ";;", "|&"), i):
            tokens.append(_Token("op", text[i:i + 2], i, i + 2))
            i += 2
            continue
        if char in ";|&()" and not text.startswith("&>", i):
            tokens.append(_Token("op", char, i, i + 1))
            i += 1
            continue
        j = _word_end(text, i)
        tokens.append(_Token("word", text[i:j], i, j))
        i = j
    return tokens


def _word_end(text: str, i: int) -> int:
    depth = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "'":
            close = text.find("'", i + 1)
            i = n if close < 0 else close + 1
            continue
        if char == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = min(j + 1, n)
            continue
        if char == "`":
            close = text.find("`", i + 1)
            i = n if close < 0 else close + 1
            continue
        if char == "$" and i + 1 < n and text[i + 1] in "({":
            depth += 1
            i += 2
            continue
        if depth and char in ")}":
            depth -= 1
            i += 1
            continue
        if depth and char == "(":
            depth += 1
            i += 1
            continue
        if char == "&" and (text[i - 1:i] in ("<", ">") or text[i + 1:i + 2] == ">"):
            i += 1
            continue
        if not depth and (char in " \t\n" or char in ";|&()"):
            return i
        i += 1
    return n


def _value(written: str, start: int) -> tuple[str, list[list[int]], str | None]:
    """The value of an assignment as written after ``NAME=`` (flat index ``start``): (its text, the flat indexes of
    each word it splits into, why its words are not known or None)."""
    chars: list[tuple[str, int]] = []
    i = 0
    quoted = False
    while i < len(written):
        char = written[i]
        if char == '"':
            quoted = True
            j = i + 1
            while j < len(written) and written[j] != '"':
                if written[j] == "\\" and j + 1 < len(written):
                    if written[j + 1] == "\n":
                        chars.append(("\n", start + j + 1))
                        j += 2
                        continue
                    return written, [], "its value holds an escaped character"
                if written[j] == "`" or written.startswith("$(", j):
                    return written, [], "its value is the output of a command"
                chars.append((written[j], start + j))
                j += 1
            i = j + 1
            continue
        if char == "'":
            quoted = True
            close = written.find("'", i + 1)
            close = len(written) if close < 0 else close
            body = written[i + 1:close]
            if "\\" in body or '"' in body:
                return written, [], "its single-quoted value holds a backslash or a quote"
            chars.extend((c, start + i + 1 + k) for k, c in enumerate(body))
            i = close + 1
            continue
        if char == "\\":
            if i + 1 < len(written) and written[i + 1] == "\n":
                i += 2
                continue
            return written, [], "its value holds an escaped character"
        if char in "`":
            return written, [], "its value is the output of a command"
        if char == "$" and written[i + 1:i + 2] == "(":
            return written, [], "its value is the output of a command"
        chars.append((char, start + i))
        i += 1
    if any(c in "'\"" for c, _ in chars):
        return written, [], "its value holds quotes, which the shell passes on as they are"
    value = "".join(c for c, _ in chars)
    if not quoted and any(c in " \t\n" for c in value):
        return value, [], "its value is not one word"
    pieces: list[list[int]] = []
    current: list[int] = []
    depth = 0
    for index, (char, flat) in enumerate(chars):
        if char == "$" and index + 1 < len(chars) and chars[index + 1][0] == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char in " \t\n" and not depth:
            if current:
                pieces.append(current)
            current = []
            continue
        current.append(flat)
    if current:
        pieces.append(current)
    if any(c in "*?[" for c, _ in chars):
        return value, [], "its value holds a glob pattern"
    return value, pieces, None
