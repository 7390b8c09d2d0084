"""The command-line model shared by the rules that edit shell code (launch NM4xx, pip install NM5xx, NM410).

A *command line* is the part of a physical line that is shell code (after a Dockerfile ``RUN``, a YAML ``- `` /
``key:`` prefix; before a comment), read from shell scripts, Dockerfiles and YAML files. Edits change a
``TextDocument`` minimally: a word is cut out of a line (with the blank that separated it); comments, quoting,
line continuations and heredocs are left as they were. A rule reports through a ``Report`` callback
``report(line, severity, message)``.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Callable, Iterator

from codemods._lib.launch_targets import Program, Resolved, Target, program_of, resolve_script
from codemods._lib.shell.lexer import (
    EXPORTERS,
    RESERVED,
    Tok,
    assignment_name,
    exec_words,
    lex,
    simple_commands,
    unquote,
)
from migrate.facts import ProjectFacts
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.textdoc import Line, TextDocument, yaml_owners, yaml_shell_blocks

Report = Callable[[Line, Severity, str], None]
#: the word an interpolated value of an embedded command stands as (``{env_var_options}`` of an f-string, see
#: NM410): a shell reads what it holds, most often variable settings ahead of the command
INTERPOLATED = re.compile(r"__nm_expr_\d+__")
Resolve = Callable[[Program], Resolved]
#: the start of an ``optimum-cli`` command (not of a word ending in it), for the rules that find its subcommands
OPTIMUM_CLI = r"(?<![\w-])optimum-cli\s+"
#: the subcommand of ``optimum-cli neuron cache ...`` (the Hub compile cache), which NM406 deletes
NEURON_CACHE = r"neuron\s+cache"


@dataclass
class CommandLine:
    """The shell code of one physical line: ``line.text[start:end]``."""

    line: Line
    start: int
    end: int
    continued: bool  # the previous line ended with a backslash (this line continues a command)
    dockerfile_env: bool = False  # a Dockerfile ENV instruction (or its continuation)
    exec_form: bool = False  # a JSON array (Dockerfile CMD/ENTRYPOINT/RUN exec form, YAML flow list)
    yaml_item: bool = False  # a YAML list item holding one argument (``- --output_dir``; ``_one_argument``)


_DOCKER_INSTR = re.compile(r"^(\s*)([A-Za-z]+)(\s+)")
_YAML_PREFIX = re.compile(r"^(\s*)(-\s+)?(?:([\w.-]+|\"[^\"]*\"|'[^']*'):(\s+|$))?(-\s+)?")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_SHELLISH_HEREDOC = re.compile(r"\b(sbatch|bash|sh|srun|ssh|zsh)\b|>\s*\S+\.(sh|bash|sbatch|slurm)\b")


def command_lines(doc: TextDocument) -> Iterator[CommandLine]:
    """Every piece of shell code in ``doc`` (kinds SHELL, DOCKERFILE, YAML), comments and non-shell heredocs left out."""
    lines = list(doc)
    if doc.kind is FileKind.DOCKERFILE:
        yield from _dockerfile_lines(lines)
    elif doc.kind is FileKind.YAML:
        yield from _yaml_lines(lines)
    else:
        yield from _shell_lines(lines)


def _shell_lines(lines: list[Line]) -> Iterator[CommandLine]:
    heredoc: str | None = None
    heredoc_shell = False
    continued = False
    for line in lines:
        text = line.text
        if heredoc is not None:
            if text.strip() == heredoc:
                heredoc = None
                continue
            if heredoc_shell and not text.lstrip().startswith("#"):
                yield CommandLine(line, len(text) - len(text.lstrip()), len(text), False)
            continue
        stripped = text.lstrip()
        if not stripped or (stripped.startswith("#") and not continued):
            continued = False
            continue
        yield CommandLine(line, len(text) - len(stripped), len(text), continued)
        continued = text.rstrip().endswith("\\") and not stripped.startswith("#")
        match = _HEREDOC.search(text)
        if match and not stripped.startswith("#"):
            heredoc = match.group(2)
            heredoc_shell = bool(_SHELLISH_HEREDOC.search(text))


_RUN_HEREDOC = re.compile(r"^\s*RUN\s+(?:--\S+\s+)*<<", re.I)  # BuildKit: the heredoc is the script RUN runs


def _dockerfile_lines(lines: list[Line]) -> Iterator[CommandLine]:
    instruction = ""
    continued = False
    heredoc: str | None = None
    heredoc_shell = False
    for line in lines:
        text = line.text
        stripped = text.lstrip()
        if heredoc is not None:  # a BuildKit heredoc body: shell for RUN <<EOF, file content otherwise
            if stripped.rstrip() == heredoc:
                heredoc = None
            elif heredoc_shell and stripped and not stripped.startswith("#"):
                yield CommandLine(line, len(text) - len(stripped), len(text), False)
            continue
        if not stripped or stripped.startswith("#"):
            continue  # comment lines inside a continued instruction are removed by Docker; skip them too
        start = len(text) - len(stripped)
        if not continued:
            match = _DOCKER_INSTR.match(text)
            instruction = match.group(2).upper() if match else ""
            start = match.end() if match else start
        if instruction in {"RUN", "CMD", "ENTRYPOINT", "ENV", "ARG"}:
            body = text[start:].lstrip()
            yield CommandLine(
                line, start, len(text), continued,
                dockerfile_env=instruction in {"ENV", "ARG"},
                exec_form=body.startswith("["),
            )
        continued = text.rstrip().endswith("\\")
        match = _HEREDOC.search(text)
        if match and not continued:
            heredoc = match.group(2)
            heredoc_shell = bool(_RUN_HEREDOC.match(text) or (instruction == "RUN" and _SHELLISH_HEREDOC.search(text)))


def _yaml_lines(lines: list[Line]) -> Iterator[CommandLine]:
    shell = shell_block_lines(lines)
    continued = False
    for line in lines:
        text = line.text
        stripped = text.lstrip()
        if line in shell:  # a line of a script a shell runs (CI `run: |`, `bash -c` args): read as a shell file's
            if stripped and not (stripped.startswith("#") and not continued):
                yield CommandLine(line, len(text) - len(stripped), len(text), continued)
                continued = text.rstrip().endswith("\\") and not stripped.startswith("#")
            else:
                continued = False
            continue
        continued = False
        if not stripped or stripped.startswith("#"):
            continue
        match = _YAML_PREFIX.match(text)
        start = match.end() if match else 0
        body = text[start:]
        end = len(text)
        comment = re.search(r"\s#", body)
        if comment and body[:comment.start()].count('"') % 2 == 0 and body[:comment.start()].count("'") % 2 == 0:
            end = start + comment.start()
        if body.startswith(("|", ">")):
            continue  # block scalar header; its lines come next with their own indentation
        yield CommandLine(line, start, end, False, exec_form=body.startswith("["),
                          yaml_item=_one_argument(match, line.text[start:end]))


def _one_argument(prefix: re.Match | None, code: str) -> bool:
    """Whether a YAML line is a list item holding one argument of a command (a Kubernetes ``args:`` item such as
    ``- --output_dir``): ``- value`` with one shell word. A keyed item (``- run: torchrun ...``, a GitHub Actions
    step) holds a scalar of its key, and an item of several words (``- torchrun train.py ...``: a GitLab
    ``script:`` line, the script after ``bash -c``) is a whole command line: flags go inside that scalar, never
    as list items after it."""
    if prefix is None or not prefix.group(2) or prefix.group(3):
        return False
    toks, _ = lex(code)
    return len(toks) == 1 and toks[0].kind == "word"


def shell_block_lines(lines: list[Line]) -> dict[Line, Line]:
    """The lines of the YAML literal blocks a shell runs (``yaml_shell_blocks``) -> the block's header line."""
    return {each: header for header, body in yaml_shell_blocks(lines) for each in body}


def shell_script_doc(doc: TextDocument, body: list[Line]) -> TextDocument:
    """A shell document over the lines ``body`` of ``doc`` (a YAML literal block a shell runs): edits of its lines
    are edits of ``doc``'s (lines are shared; it inserts none), and a report on them lands in ``doc``."""
    script = TextDocument("", FileKind.SHELL)
    script.lines = body
    script.newline = doc.newline
    return script


def keep_script(script: TextDocument, indent: str, lines: list[Line]) -> None:
    """A script whose edits deleted every command gets ``:`` (at ``indent``, the block's) in place of its last
    one (the last deleted line of ``lines``, the script's): an empty ``run:`` step or ``bash -c ""`` is no
    script."""
    if any(line.text.strip() and not line.text.lstrip().startswith("#") for line in script):
        return
    last = next((line for line in reversed(lines) if line.deleted), None)
    if last is not None:
        last.deleted = False
        last.text = indent + ":"


# ------------------------------------------------------------------------------------------- edits


def cut(line: Line, spans: list[tuple[int, int]]) -> None:
    """Remove ``spans`` of ``line.text`` with the blanks that separated them, so the other words stay
    separated and a final `` \\`` continuation stays in place."""
    text = line.text
    for start, end in sorted(spans, reverse=True):
        after = end
        while after < len(text) and text[after] in " \t":
            after += 1
        rest = text[after:]
        if rest.startswith("#"):  # a comment follows: keep its spacing, take the blanks before the word
            while start > 0 and text[start - 1] in " \t":
                start -= 1
            text = text[:start] + (text[end:] if text[:start].strip() else rest)
            continue
        if rest and not (rest.startswith("\\") and rest[1:].strip() == ""):
            text = text[:start] + rest  # a word in the middle: take the blanks after it
            continue
        while start > 0 and text[start - 1] in " \t":
            start -= 1  # the last word on the line: take the blanks before it
        head = text[:start]
        text = head + ((" " if head.strip() else head[len(head):]) + rest if rest else "")
    line.text = text


#: the last word of a line after which a block's body starts (``then``, ``do``, a function's ``{``, a case
#: pattern's ``)``): a body left with no command is a syntax error (an empty case arm is not, ``:`` reads better)
_OPENERS = {"then", "do", "else", "{", "in", "if", "elif", "while", "until"}
#: the first word of a line that ends the body above it (``fi``, ``done``, ``;;``, the next case pattern)
_CLOSERS = {"fi", "done", "else", "elif", "esac", "}", "then", "do"}
_CHAINS = {"&&", "||", "|", "|&"}


def _code_toks(line: Line | None) -> list[Tok]:
    """The words and operators of a shell line's code (a comment left out)."""
    return lex(line.text)[0] if line is not None else []


def _opens_block(line: Line | None) -> bool:
    toks = _code_toks(line)
    if len(toks) > 1 and toks[-1].text == "(" and toks[-2].end == toks[-1].start and toks[-2].text.endswith("="):
        return False  # `ARGS=(`: a bash array's elements follow, which may all go (`ARGS=()` is valid)
    return bool(toks) and (toks[-1].text in _OPENERS or toks[-1].kind == "op" and toks[-1].text in {"(", ")"})


def _closes_block(line: Line | None) -> bool:
    toks = _code_toks(line)
    return line is None or not toks or toks[0].text in _CLOSERS or toks[0].kind == "op" and toks[0].text in {";;", ")"} \
        or _case_pattern(toks)


def _case_pattern(toks: list[Tok]) -> bool:
    """Whether a line's code is a case pattern (``lookup)``, ``a|b)``, ``(x)``) and nothing more."""
    inner = toks[1:] if toks and toks[0].text == "(" else toks
    return len(inner) >= 2 and inner[-1].text == ")" and all(
        (tok.kind == "word") == (index % 2 == 0) and (tok.kind == "word" or tok.text == "|")
        for index, tok in enumerate(inner[:-1]))


def _colon(indent: str, rest: str = "", comment: str = "") -> str:
    """``:`` (the shell's no-op) at ``indent``, followed by ``rest`` (``;;``) and ``# comment``."""
    text = indent + ":" + (" " + rest.strip() if rest.strip() else "")
    return text + (f"  # {comment}" if comment and "#" not in rest else "")


def drop_line(doc: TextDocument, line: Line, indent: str | None = None, comment: str = "") -> None:
    """Delete a line whose code became empty (or is one command to delete), keeping the script valid: a
    continuation before it is closed, a block that would become empty gets ``:`` (``comment`` after it, when
    given), a case arm's ``;;`` on the line stays (``: ;;``), and the command after ``a &&`` / ``a ||`` / ``a |``
    on the line above is replaced by ``:``, so the next command does not join that list."""
    indent = line.indent if indent is None else indent
    previous = _previous_code(doc, line)
    following = next_code(doc, line)
    continues = line.text.rstrip().endswith("\\")
    script = doc.kind is FileKind.SHELL
    if doc.kind is FileKind.YAML and (header := shell_block_lines(list(doc)).get(line)) is not None:
        # a line of a script a shell runs (CI `run: |`, `bash -c` args): its neighbours in the script only
        block = [each for each, owner in shell_block_lines(list(doc)).items() if owner is header]
        previous = previous if previous in block else None
        following = following if following in block else None
        if previous is None and following is None and not continues:
            line.text = indent + ":"  # the script's last command: an empty `run:` / `bash -c ""` is no script
            return
        # `a &&` before the script's last command: the `&&` goes with it (below), as it does in a folded block
        script = previous is None or not _TRAILING_AND_OR.search(previous.text)
    if script and not continues:
        own = _code_toks(line)
        arm = next((tok for tok in own if tok.kind == "op" and tok.text == ";;"), None)
        if arm is not None:  # `cmd ;;`: the case arm's terminator stays
            line.text = _colon(indent, line.text[arm.start:], comment)
            return
        above = _code_toks(previous)
        last = above[-1] if above else None
        if last is not None and last.kind == "op" and last.text in _CHAINS and not (own and own[-1].text in _CHAINS):
            # `a &&` / `a ||` / `a |` + this: the next command must not join that list (nor `a` stand alone: under
            # `set -e` a failing `a` would now end the script)
            line.text = _colon(indent, comment=comment)
            return
        if previous is not None and _opens_block(previous) and _closes_block(following):
            line.text = _colon(indent, comment=comment)
            return
    if previous is not None and previous.text.rstrip().endswith("\\") and not continues:
        previous.text = previous.text.rstrip()[:-1].rstrip()
    if doc.kind is FileKind.YAML and previous is not None and not continues:
        owners = yaml_owners(list(doc), shell=False)
        if line in owners and owners.get(previous) is owners[line] and (following is None or owners.get(following) is not owners[line]):
            # the last line of a block scalar's script: `pip install ... &&` left before it would end the command
            # with an operator (bash -c: syntax error)
            previous.text = _TRAILING_AND_OR.sub("", previous.text)
    doc.delete(line)


_TRAILING_AND_OR = re.compile(r"\s*(?:&&|\|\|)\s*$")

#: words that make the command after them a condition (its exit status decides what runs)
_CONDITIONS = {"if", "elif", "while", "until", "!"}
#: words after which a body's first command starts
_BODIES = {"then", "do", "else", "{"}


def remove_command(doc: TextDocument, cl: CommandLine, command: list[Tok], toks: list[Tok], comment: str = "") -> bool:
    """Delete the simple command ``command`` (a command of ``simple_commands(toks)``, ``toks`` the words of
    ``cl``) from a shell script so that the script stays valid and does what it did without it, the command
    standing for one that succeeded and printed nothing: the line goes when it held only that command (its
    continuation lines with it); ``cmd && next`` / ``cmd; next`` / ``prev; cmd`` lose the command and its
    operator; a case arm keeps its ``;;`` (``: ;;``), an emptied block, a list (``prev && cmd``, ``prev ||
    cmd``) and any other place get ``:`` (``comment`` after it). A block or script whose last command went
    ends with the status of the command before it. False, and nothing changed, where that cannot be made sure: the command's status
    or output is used (an ``if``/``while`` condition, ``!``, a pipeline), it feeds a heredoc, runs in the
    background with ``$!`` read, starts on a continued line, or goes on past a line continuation it shares."""
    line = cl.line
    if doc.kind is not FileKind.SHELL or cl.continued or not command:
        return False
    lead = 0
    while lead < len(command) and command[lead].text in RESERVED and command[lead].text != "time":
        lead += 1
    words = command[lead:]
    if not words or any(word.text in _CONDITIONS for word in command[:lead]) or any("<<" in w.text for w in words):
        return False
    first, last = _tok_index(toks, words[0]), _tok_index(toks, command[-1])
    before, after = toks[:first], toks[last + 1:]
    if not _status_unused(doc, line, toks, first, last):
        return False
    if after and after[0].text == "&" and "$!" in doc.text():
        return False
    continues = line.text.rstrip().endswith("\\")
    if continues and after:
        return False  # `cmd; other \`: the line goes on
    if continues:  # the command goes on on the next lines: only when they hold nothing but its words
        rest = _continuation(doc, line)
        if rest is None or before:
            return False
        for each in rest:
            doc.delete(each)
        line.text = line.text.rstrip()[:-1].rstrip()
        drop_line(doc, line, comment=comment)
        return True
    indent = line.indent
    if not before and (not after or [tok.text for tok in after] in (["&&"], [";"], ["&"])):
        drop_line(doc, line, comment=comment)  # the line held only this command
        return True
    if not before and after[0].text == ";;":
        line.text = _colon(indent, line.text[after[0].start:], comment)
        return True
    text, start, end = line.text, words[0].start, command[-1].end
    opener = not before or lead > 0 or before[-1].kind == "op" and before[-1].text in {";", "&", "(", ")", "&&"}
    if opener and len(after) > 1 and after[0].text in {"&&", ";", "&"} and after[1].kind == "word" \
            and after[1].text not in _CLOSERS and not (before and before[-1].text == "&&" and after[0].text != "&&"):
        cut(line, [(start, after[0].end)])  # `cmd && next` -> `next`
        return True
    if len(before) > 1 and before[-1].text == ";" and before[-2].kind == "word" \
            and before[-2].text not in _BODIES | _CONDITIONS and (not after or after[0].text in {";", ";;", ")"}):
        cut(line, [(before[-1].start, end)])  # `prev; cmd` -> `prev` (not `prev && cmd`: `set -e` would end on `prev`)
        return True
    tail = text[end:]
    line.text = text[:start] + ":" + tail  # the no-op in the command's place: any other spot
    if comment and "#" not in tail:
        line.text = line.text.rstrip() + f"  # {comment}"
    return True


def _tok_index(toks: list[Tok], tok: Tok) -> int:
    return next(index for index, each in enumerate(toks) if each is tok or each.start == tok.start)


def _continuation(doc: TextDocument, line: Line) -> list[Line] | None:
    """The lines continuing ``line`` (ending with a backslash) when each holds words only, else None."""
    found: list[Line] = []
    current: Line | None = line
    while current is not None and current.text.rstrip().endswith("\\"):
        current = doc.next_live(current)
        if current is None or any(tok.kind == "op" for tok in lex(current.text)[0]) or "<<" in current.text:
            return None
        found.append(current)
    return found


def _status_unused(doc: TextDocument, line: Line, toks: list[Tok], first: int, last: int) -> bool:
    """Whether the exit status and output of the command ``toks[first:last + 1]`` go unused: it is no
    condition (of ``if``/``elif``/``while``/``until``, after ``!``, the last list before ``then``/``do``) and
    in no pipeline; ``&&``/``||`` lists around it are followed across lines."""
    above: Line | None = line
    index, row = first - 1, toks
    while True:  # back through the list the command is in, across lines a list goes on over (`a &&`)
        while index >= 0:
            tok = row[index]
            if tok.kind == "op":
                if tok.text in {"|", "|&"}:
                    return False
                if tok.text in {"&&", "||"}:
                    index -= 1
                    continue
                break  # ; & ;; ( ): the list starts after it
            start = index
            while start > 0 and row[start - 1].kind == "word":
                start -= 1
            heads = {each.text for each in itertools.takewhile(lambda each: each.text in RESERVED, row[start:index + 1])}
            if heads & _CONDITIONS:
                return False
            if heads & _BODIES:
                break
            index = start - 1
        if index >= 0:
            break
        above = _previous_code(doc, above) if above is not None else None
        row = _code_toks(above)
        if not row or row[-1].text in _CONDITIONS:
            if row:
                return False
            break
        if row[-1].kind != "op" or row[-1].text not in _CHAINS:
            break
        index = len(row) - 1
    current: Line | None = line
    index, row = last + 1, toks
    while True:  # on through its list, and the list after it: `then`/`do` there make the command a condition
        while index < len(row):
            tok = row[index]
            if tok.kind == "op" and tok.text in {"|", "|&"}:
                return False
            if tok.kind == "op" and tok.text not in {"&&", "||"}:
                following = row[index + 1] if index + 1 < len(row) else None
                if following is not None:
                    return not (tok.text in {";", "&"} and following.text in {"then", "do"})
                break
            index += 1
        ends = row[-1] if row else None
        current = next_code(doc, current) if current is not None else None
        after = _code_toks(current)
        if after and after[0].text in {"then", "do"}:
            return False
        if ends is None or ends.kind != "op" or ends.text not in {"&&", "||"} or not after:
            return True
        index, row = 0, after


def yaml_value_lines(doc: TextDocument, line: Line) -> list[Line] | None:
    """The code lines of the YAML value ``line`` belongs to (a block scalar's lines, a plain scalar over lines, a
    ``key: value`` line alone), or None when ``line`` is not part of a key's scalar value (a list item)."""
    owners = yaml_owners(list(doc), shell=False)
    owner = owners.get(line)
    if owner is None:
        return [line] if _YAML_KEYED.match(line.text) else None
    return [candidate for candidate in doc if owners.get(candidate) is owner and candidate.text.strip()
            and not candidate.text.lstrip().startswith("#")] + ([owner] if _YAML_KEYED.match(owner.text) else [])


_YAML_KEYED = re.compile(r"^\s*(?:-\s+)?(?:[\w.-]+|\"[^\"]*\"|'[^']*'):\s+[^\s|>#]")


def _previous_code(doc: TextDocument, line: Line) -> Line | None:
    index = doc._index(line)
    for candidate in reversed(doc.lines[:index]):
        if not candidate.deleted and candidate.text.strip() and not candidate.text.lstrip().startswith("#"):
            return candidate
    return None


def next_code(doc: TextDocument, line: Line) -> Line | None:
    index = doc._index(line)
    for candidate in doc.lines[index + 1:]:
        if not candidate.deleted and candidate.text.strip() and not candidate.text.lstrip().startswith("#"):
            return candidate
    return None


def remove_words(doc: TextDocument, cl: CommandLine, command: list[Tok], doomed: list[Tok], toks: list[Tok]) -> None:
    """Remove ``doomed`` words of the simple command ``command``; drop the whole command (and an adjacent
    ``&&``/``;``) when only ``export``-like words would be left, and the line when nothing is left."""
    left = [word for word in command if word not in doomed]
    spans = [(word.start, word.end) for word in doomed]
    continues = cl.line.text.rstrip().endswith("\\") and command[-1] is toks[-1]
    if continues:
        pass  # `export A=1 \` + `    B=2`: the command goes on below, keep `export` for it
    elif all(word.text in EXPORTERS or word.text.startswith("-") for word in left):
        spans = [(word.start, word.end) for word in command]
        index = toks.index(command[-1])
        before = toks.index(command[0]) - 1
        if index + 1 < len(toks) and toks[index + 1].kind == "op" and toks[index + 1].text in {"&&", ";", "||"}:
            spans.append((toks[index + 1].start, toks[index + 1].end))
        elif before >= 0 and toks[before].kind == "op" and toks[before].text in {"&&", ";", "||"}:
            spans.append((toks[before].start, toks[before].end))
    line = cl.line
    original = line.text
    cut(line, spans)
    if original != line.text and not line.text[cl.start:].strip(" \t\\"):
        drop_line(doc, line, original[:len(original) - len(original.lstrip())])
    elif original != line.text and doc.kind is FileKind.SHELL:
        line.text = fill_empty_blocks(original, line.text)


_EMPTY_BLOCKS = [
    (re.compile(r"\{(\s*)\}"), r"{ :;\1}"),
    (re.compile(r"\((\s+)\)"), r"( :;\1)"),
    (re.compile(r"\b(then|do|else)(\s+)(fi|done|else|elif)\b"), r"\1 :;\2\3"),
    (re.compile(r"\b(then|do|else)\s*;(\s*)(fi|done|else|elif)\b"), r"\1 :;\2\3"),
]


def fill_empty_blocks(original: str, text: str) -> str:
    """``{ }``, ``( )``, ``then fi``, ``do done`` left by a removed command get ``:`` so the line stays valid
    shell (only where the edit created them: ``f ( )`` written by the user stays)."""
    for pattern, replacement in _EMPTY_BLOCKS:
        if len(pattern.findall(text)) > len(pattern.findall(original)):
            text = pattern.sub(replacement, text)
    return text



def command_statements(doc: TextDocument) -> list[list[CommandLine]]:
    """The document's command lines grouped by shell statement (a line and the lines continuing it)."""
    statements: list[list[CommandLine]] = []
    for cl in command_lines(doc):
        if cl.continued and statements:
            statements[-1].append(cl)
        else:
            statements.append([cl])
    return statements


@dataclass
class EnvSite:
    cl: CommandLine
    name: str
    value: str | None  # None for `export NAME` / `unset NAME` / YAML name lines
    word: Tok | None  # the word holding it (shell/Dockerfile), None for YAML
    command: list[Tok] | None
    toks: list[Tok] | None
    prefix: bool  # `NAME=value cmd`: the variable is set for that command only
    unset: bool = False


def env_sites(doc: TextDocument) -> Iterator[EnvSite]:
    """Assignments / exports / unsets of environment variables in shell code, Dockerfile ENV and YAML env lists."""
    lines = list(command_lines(doc))
    shell = shell_block_lines(list(doc)) if doc.kind is FileKind.YAML else {}
    for index, cl in enumerate(lines):
        text = cl.line.text
        if doc.kind is FileKind.YAML and not cl.exec_form and cl.line not in shell:
            yield from _yaml_env(lines, index, cl)
            continue
        if cl.exec_form:
            continue
        if cl.dockerfile_env:
            toks, _ = lex(text, cl.start, cl.end)
            words = [tok for tok in toks if tok.kind == "word"]
            if not cl.continued and len(words) >= 2 and "=" not in words[0].text:  # ENV NAME value (legacy form)
                yield EnvSite(cl, words[0].text, " ".join(unquote(w.text) for w in words[1:]), words[0], words, toks, False)
                continue
            for word in words:
                name = assignment_name(word.text)
                if name:
                    yield EnvSite(cl, name, unquote(word.text[len(name) + 1:]), word, words, toks, False)
            continue
        make = _MAKE_ASSIGN.match(text[cl.start:cl.end])
        if make:  # Makefile `[export] NAME = value` (never an assignment in shell, where it would run NAME)
            whole = Tok("word", cl.start, cl.end - (len(text[cl.start:cl.end]) - len(text[cl.start:cl.end].rstrip())),
                        text[cl.start:cl.end].rstrip())
            yield EnvSite(cl, make.group(2), make.group(3).strip(), whole, [whole], [whole], False)
            continue
        toks, _ = lex(text, cl.start, cl.end)
        for command in simple_commands(toks):
            while command and command[0].text in RESERVED:
                command = command[1:]  # `then export X=1`, `{ export X=1; }`: the command starts after the keyword
            if not command:
                continue
            head = command[0].text
            if head == "unset":
                for word in command[1:]:
                    if not word.text.startswith("-"):
                        yield EnvSite(cl, word.text, None, word, command, toks, False, unset=True)
                continue
            exporting = head in {"export", "declare", "typeset", "readonly", "env"}
            for position, word in enumerate(command):
                if exporting and position == 0:
                    continue
                if word.text.startswith("-") and exporting:
                    continue
                name = assignment_name(word.text)
                if name:
                    yield EnvSite(cl, name, unquote(word.text[len(name) + 1:]), word, command, toks, False)
                    continue
                if exporting and head != "env" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word.text):
                    yield EnvSite(cl, word.text, None, word, command, toks, False)
                    continue
                if INTERPOLATED.fullmatch(word.text):
                    continue  # an f-string's `{env_var_options} XLA_USE_BF16=1 torchrun ...`: settings ahead of it
                break  # the command word: assignments before it only set the variable for that command


_MAKE_ASSIGN = re.compile(r"^(export\s+)?([A-Za-z_][A-Za-z0-9_]*)(?:\s+(?:[:?+!]|::)?=\s*|\s*(?:[:?+!]|::)=\s*)(.*)$")
_YAML_NAME = re.compile(r"^(\s*)-\s+name:\s*[\"']?([A-Za-z_][A-Za-z0-9_]*)[\"']?\s*(#.*)?$")
_YAML_VALUE = re.compile(r"^(\s*)value:\s*(.*?)\s*(#.*)?$")
_YAML_MAP = re.compile(r"^(\s*)[\"']?([A-Z_][A-Z0-9_]*)[\"']?:\s*(.*?)\s*(#.*)?$")
_YAML_LIST = re.compile(r"^(\s*)-\s+[\"']?([A-Z_][A-Z0-9_]*)=(.*?)[\"']?\s*(#.*)?$")


def _yaml_env(lines: list[CommandLine], index: int, cl: CommandLine) -> Iterator[EnvSite]:
    text = cl.line.text
    match = _YAML_NAME.match(text)
    if match:
        value = None
        if index + 1 < len(lines):
            value_match = _YAML_VALUE.match(lines[index + 1].line.text)
            if value_match:
                value = value_match.group(2).strip("\"'")
        yield EnvSite(cl, match.group(2), value, None, None, None, False)
        return
    match = _YAML_LIST.match(text) or _YAML_MAP.match(text)
    if match and (match.group(3) or "").strip() not in {"", "|", ">"}:
        yield EnvSite(cl, match.group(2), match.group(3).strip("\"'"), None, None, None, False)


def remove_env_site(doc: TextDocument, site: EnvSite) -> None:
    cl = site.cl
    if site.word is None:  # YAML
        line = cl.line
        item = _yaml_item_lines(doc, line) if _YAML_NAME.match(line.text) else []
        drop_line(doc, line)
        for each in item:  # the rest of a `- name:` item: `value:`, or `valueFrom:` and the lines under it
            doc.delete(each)
        close_emptied_yaml_key(doc, line)
        return
    if cl.dockerfile_env and site.command and len(site.command) >= 2 and "=" not in site.command[0].text and not cl.continued:
        doomed = list(site.command)  # ENV NAME value: the whole instruction
    else:
        doomed = [site.word]
    _remove_from_command(doc, cl, site.command or [], doomed, site.toks or [])


def _yaml_item_lines(doc: TextDocument, line: Line) -> list[Line]:
    """The lines after the list item ``- name: X`` that belong to it (indented past its dash), comments inside it
    included; a comment line at the dash's column or less ends it."""
    column = len(line.text) - len(line.text.lstrip())
    found: list[Line] = []
    following = doc.next_live(line)
    while following is not None:
        stripped = following.text.strip()
        if stripped and len(following.text) - len(following.text.lstrip()) <= column:
            break
        found.append(following)
        following = doc.next_live(following)
    while found and not found[-1].text.strip():
        found.pop()  # a blank line after the item separates it from what follows: it stays
    return found


_YAML_EMPTY_KEY = re.compile(r"^(\s*)(-\s+)?([\w.-]+|\"[^\"]*\"|'[^']*'):((?:\s+[&!]\S*)*)(\s+#.*)?\s*$")


def close_emptied_yaml_key(doc: TextDocument, removed: Line) -> None:
    """After the YAML entry ``removed`` was deleted: when it was the last entry of its key (``environment:``,
    ``env:``, ``variables:``), the key is left with a null value, which compose (``services.x.environment must be
    a mapping``), Kubernetes and GitHub Actions reject. The key goes too; where a comment belongs to it (a comment
    line in its block or right above it, one after it on its line) or it holds an anchor or tag, it stays with an
    empty value of its form (``[]`` for a list, ``{}`` for a mapping), so the comments still sit under their key."""
    text = removed.text
    column = len(text) - len(text.lstrip())
    item = text.lstrip().startswith("-")
    index = doc._index(removed)
    parent: Line | None = None
    between: list[Line] = []  # comment lines between the key and the removed entry
    for candidate in reversed(doc.lines[:index]):
        stripped = candidate.text.strip()
        if candidate.deleted or not stripped:
            continue
        if stripped.startswith("#"):
            between.append(candidate)
            continue
        indent = len(candidate.text) - len(candidate.text.lstrip())
        if indent > column or (indent == column and (stripped.startswith("-") == item)):
            return  # another entry (or a line of one) is left above
        parent = candidate
        break
    if parent is None:
        return
    key = _YAML_EMPTY_KEY.match(parent.text)
    if key is None:
        return
    key_column = len(key.group(1)) + len(key.group(2) or "")
    if column <= key_column and not (item and column == key_column):
        return
    after = doc.lines[index + 1:]
    for candidate in after:
        stripped = candidate.text.strip()
        if candidate.deleted or not stripped:
            continue
        indent = len(candidate.text) - len(candidate.text.lstrip())
        if stripped.startswith("#"):
            if indent > key_column:
                between.append(candidate)
            continue
        if indent > key_column or (item and indent == key_column and stripped.startswith("-")):
            return  # another entry is left below
        break
    above = doc.lines[:doc._index(parent)]
    commented = next((c for c in reversed(above) if not c.deleted and c.text.strip()), None)
    if between or key.group(4) or key.group(5) or (commented is not None and commented.text.lstrip().startswith("#")
                                                    and commented.indent == parent.indent):
        empty = "[]" if item else "{}"
        cut_at = key.end(4)
        parent.text = parent.text[:cut_at] + " " + empty + parent.text[cut_at:]
        return
    doc.delete(parent)


def _remove_from_command(doc: TextDocument, cl: CommandLine, command: list[Tok], doomed: list[Tok], toks: list[Tok]) -> None:
    line = cl.line
    if cl.dockerfile_env:
        remaining = [word for word in command if word not in doomed]
        cut(line, [(word.start, word.end) for word in doomed])
        if not remaining and not line.text[cl.start:].strip(" \t\\"):
            _drop_docker_env_line(doc, cl)
        return
    remove_words(doc, cl, command, doomed, toks)


def _drop_docker_env_line(doc: TextDocument, cl: CommandLine) -> None:
    """An ENV line with no assignment left: drop it; when it started the instruction, the next continued line
    (if any) becomes the instruction."""
    line = cl.line
    continues = line.text.rstrip().endswith("\\")
    if not cl.continued and continues:
        following = next_code(doc, line)
        if following is not None:
            keyword = _DOCKER_INSTR.match(line.text)
            following.text = (keyword.group(1) + keyword.group(2) + " " if keyword else "") + following.text.lstrip()
        doc.delete(line)
        return
    if not cl.continued and not continues:
        doc.delete(line)
        return
    drop_line(doc, line)



_XLA_STACK = re.compile(r"\b(?:neuronx[_-]distributed(?:[_-]training)?|torch[_-]xla|xla_dist|xla_spawn)\b")
_SCRIPT_WORD = re.compile(r"[\w./${}-]+\.py\b")


def launched_scripts(doc: TextDocument, project: ProjectFacts, origin) -> tuple[list[Resolved], re.Match | None]:
    """The Python scripts the launcher's commands name (echo/printf text left out), resolved among the project's
    files, and the first mention of the torch_xla / NxD stack in its code (None: none)."""
    scripts: list[str] = []
    modules: list[str] = []
    sign: re.Match | None = None
    for statement in command_statements(doc):
        code = " ".join(cl.line.text[cl.start:cl.end].rstrip().removesuffix("\\") for cl in statement)
        toks, _ = lex(code)
        words = [tok.text for tok in toks if tok.kind == "word"]
        if words and words[0] in {"echo", "printf"}:
            continue
        sign = sign or _XLA_STACK.search(code)
        scripts.extend(name.strip("\"'") for name in _SCRIPT_WORD.findall(code))
        modules.extend(launched_modules(toks))
    found = [resolve_script(project, origin, name, module=True) for name in modules]
    # a module that is no file of the project (`python -m pip`, `-m torch_xla.distributed.xla_dist`) is installed
    # software, not a script of the user's
    return [*(resolve_script(project, origin, name) for name in scripts), *(m for m in found if m.path)], sign


def code_targets(project: ProjectFacts, origin, code: str) -> list[Resolved]:
    """The Python scripts and ``-m`` modules one command's text names, resolved among the project's files."""
    toks, _ = lex(code)
    names = [name.strip("\"'") for name in _SCRIPT_WORD.findall(code)]
    return [*(resolve_script(project, origin, name) for name in names),
            *(resolve_script(project, origin, name, module=True) for name in launched_modules(toks))]


def launched_modules(toks: list[Tok]) -> list[str]:
    """The modules the simple commands of ``toks`` run: ``python -m pkg.train``, ``torchrun ... -m pkg.train``,
    ``accelerate launch -m``, ``deepspeed --module``, ``python -m torch.distributed.run ... -m pkg.train``."""
    found = []
    for command in simple_commands(toks):
        program = program_of([unquote(word.text) for word in command])
        if program is not None and program.kind == "module":
            found.append(program.name)
    return found


COMMAND_WORDS = {"neuron_parallel_compile", "torchrun", "python", "python3", "optimum-cli", "srun", "sbatch", "bash", "sh",
                 "accelerate", "pip", "pip3", "env", "export", "mpirun", "deepspeed", "time", "nohup", "exec", "unset",
                 "docker"}


def looks_like_command(text: str) -> bool:
    """Whether some simple command of ``text`` starts (after variable assignments) with a launcher word."""
    for raw in text.splitlines():
        toks, _ = lex(raw)
        for command in simple_commands(toks):
            words = [word for word in command if not assignment_name(word.text)]
            if not words:
                if command:
                    return True  # `XLA_USE_BF16=1` alone: an environment setting
                continue
            if len(words) == 1 and len(command) > 1 and INTERPOLATED.fullmatch(words[0].text):
                return True  # `XLA_USE_BF16=1 {run_command}`: settings for a command kept in a variable
            while len(words) > 1 and INTERPOLATED.fullmatch(words[0].text):
                words = words[1:]  # an f-string's `{env_var_options} torchrun ...`: settings ahead of the command
            first = unquote(words[0].text).rsplit("/", 1)[-1]
            if first in COMMAND_WORDS or first.endswith(".sh"):
                return True
    return False


def unresolved(program: Program) -> Resolved:
    """The resolution used when no project is known: nothing is a Neuron trainer script."""
    return Resolved(Target.UNKNOWN, program.name)


# ------------------------------------------------------------------ commands embedded in other files (NM410)


def _runs_nowhere(name: str) -> bool:
    return False


def _read_by_nothing(name: str) -> list[str]:
    return []


def _stays_nowhere(text: str) -> tuple[str, str] | None:
    return None


@dataclass(frozen=True)
class EmbeddedCommand:
    """What is known around a command string found inside another file (a Python string literal).

    A rule that edits shell code and can make the same edit on such a string defines
    ``edit_command(doc, report, embedded)``; NM410 runs it, for the rules the run selected, on a throw-away
    shell document holding the string."""

    resolve: Resolve = unresolved  # the program a command runs -> which arguments it parses (trainer flags)
    runs_elsewhere: Callable[[str], bool] = _runs_nowhere  # a script name -> another file runs it plainly
    readers: Callable[[str], list[str]] = _read_by_nothing  # a variable name -> the project files reading it
    #: the command text -> (script, why) of a script it runs that stays on torch_xla (see launch/_base.py's
    #: unseen_xla_target), None when none does
    unseen: Callable[[str], tuple[str, str] | None] = _stays_nowhere


_YAML_ENTRY = re.compile(r"^(\s*)(-\s+)?([\w.-]+|\"[^\"]*\"|'[^']*'):(?:\s+(.*?))?\s*$")
#: a container's program key -> the key holding its arguments (Kubernetes ``command`` + ``args``, compose
#: ``entrypoint`` + ``command``)
_ARGV_KEYS = {"command": "args", "entrypoint": "command"}


def _yaml_scalar(text: str) -> str | None:
    """A YAML scalar as the program receives it (quotes removed), None for anything else (a block, a mapping)."""
    text = re.sub(r"\s+#.*$", "", text.strip()) if not text.strip().startswith(("'", '"')) else text.strip()
    if not text or text[0] in "|>&*!{[":
        return None
    if text[0] == '"':
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    if text[0] == "'":
        return text[1:-1].replace("''", "'") if len(text) > 1 and text.endswith("'") else None
    return text


def _yaml_words(lines: list[Line], index: int, value: str | None) -> list[str] | None:
    """The words of the value of the key on ``lines[index]``: a one-line flow list, a block list below it, or one
    plain scalar word; None where it is another shape."""
    if value:
        if value.startswith("["):
            return exec_words(value) if re.sub(r"\s+#.*$", "", value).rstrip().endswith("]") else None
        scalar = _yaml_scalar(value)
        return [scalar] if scalar is not None and not re.search(r"\s", scalar) else None
    key_line = lines[index].text
    column = len(key_line) - len(key_line.lstrip()) + (2 if key_line.lstrip().startswith("- ") else 0)
    words: list[str] = []
    for line in lines[index + 1:]:
        stripped = line.text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line.text) - len(line.text.lstrip())
        if indent < column or not stripped.startswith("- ") and stripped != "-":
            break
        scalar = _yaml_scalar(stripped[1:])
        if scalar is None:
            return None
        words.append(scalar)
    return words or None


def yaml_container_commands(doc: TextDocument) -> list[tuple[Line, list[str]]]:
    """(the line of the program key, the argv) of each YAML mapping whose program and arguments are two keys
    (a Kubernetes container's ``command: ["optimum-cli"]`` with ``args: ["export", ...]``, compose's ``entrypoint:``
    with ``command:``; flow or block lists, quoted items or not): the command it runs is both, in that order.
    Mappings whose keys are not plain word lists are left out."""
    if doc.kind is not FileKind.YAML:
        return []
    lines = [line for line in doc.lines if not line.deleted]
    entries: list[tuple[int, int, str, str | None, bool]] = []  # (index, key column, key, value, starts an item)
    for index, line in enumerate(lines):
        match = _YAML_ENTRY.match(line.text)
        if match and not line.text.lstrip().startswith("#"):
            column = len(match.group(1)) + len(match.group(2) or "")
            entries.append((index, column, match.group(3).strip("\"'"), match.group(4), bool(match.group(2))))
    found: list[tuple[Line, list[str]]] = []
    for position, (index, column, key, value, _) in enumerate(entries):
        if key not in _ARGV_KEYS:
            continue
        siblings = _yaml_siblings(lines, entries, position)
        arguments = next((entry for entry in siblings if entry[2] == _ARGV_KEYS[key]), None)
        if arguments is None or key == "command" and any(entry[2] == "entrypoint" for entry in siblings):
            continue  # no arguments key, or compose's `command:` is the arguments of its `entrypoint:`
        program = _yaml_words(lines, index, value)
        rest = _yaml_words(lines, arguments[0], arguments[3])
        if program and rest:
            found.append((lines[index], program + rest))
    return found


def _yaml_siblings(lines: list[Line], entries: list[tuple[int, int, str, str | None, bool]],
                   position: int) -> list[tuple[int, int, str, str | None, bool]]:
    """The other keys of the mapping the entry ``entries[position]`` belongs to."""
    index, column = entries[position][0], entries[position][1]
    found = []
    for step in (-1, 1):
        at = position
        while True:
            if step < 0 and entries[at][4] and entries[at][1] == column:
                break  # `- name: x`: the mapping's first key
            at += step
            if not 0 <= at < len(entries):
                break
            other = entries[at]
            between = lines[min(index, other[0]) + 1:max(index, other[0])]
            if any(line.text.strip() and not line.text.lstrip().startswith("#")
                   and len(line.text) - len(line.text.lstrip()) < column for line in between):
                break  # a line of the parent between them: another mapping
            if other[1] == column:
                if step > 0 and other[4]:
                    break  # the next item of the parent list
                found.append(other)
            elif other[1] < column:
                break
    return found
