"""The shell lexer: words and operators of a line of shell code, quotes and expansions kept as written.

Good enough to edit launch scripts minimally (cut one word out of a line), not a shell parser: heredocs, line
continuations and the reading of whole lines are in ``codemods._lib.shell.commands``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


@dataclass
class Tok:
    kind: str  # "word" | "op"
    start: int
    end: int
    text: str


_OPS2 = ("&&", "||", ";;", "|&")
_OPCHARS = ";|&()"


def lex(text: str, start: int = 0, end: int | None = None) -> tuple[list[Tok], int]:
    """Words and operators of ``text[start:end]`` and where the code ends (a ``#`` comment or a final ``\\``)."""
    end = len(text) if end is None else end
    toks: list[Tok] = []
    i = start
    while i < end:
        c = text[i]
        if c in " \t":
            i += 1
            continue
        if c == "#":
            return toks, i
        if c == "\\" and text[i + 1:end].strip() == "":
            return toks, i
        if text.startswith(_OPS2, i) and not text.startswith("&>", i):
            toks.append(Tok("op", i, i + 2, text[i:i + 2]))
            i += 2
            continue
        if c in _OPCHARS and not text.startswith("&>", i):
            toks.append(Tok("op", i, i + 1, c))
            i += 1
            continue
        j = _word_end(text, i, end)
        toks.append(Tok("word", i, j, text[i:j]))
        i = j
    return toks, end


def _word_end(text: str, i: int, end: int) -> int:
    depth = 0
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            close = text.find("'", i + 1, end)
            i = end if close < 0 else close + 1
            continue
        if c == '"':
            j = i + 1
            while j < end and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = min(j + 1, end)
            continue
        if c == "`":
            close = text.find("`", i + 1, end)
            i = end if close < 0 else close + 1
            continue
        if c == "$" and i + 1 < end and text[i + 1] in "({":
            depth += 1
            i += 2
            continue
        if depth and c in ")}":
            depth -= 1
            i += 1
            continue
        if depth and c == "(":
            depth += 1
            i += 1
            continue
        if c == "&" and (text[i - 1:i] in ("<", ">") or text[i + 1:i + 2] == ">"):
            i += 1  # `2>&1`, `&>log`: a redirection, not the `&` operator
            continue
        if not depth and (c in " \t" or c in _OPCHARS):
            return i
        i += 1
    return end


def unquote(word: str) -> str:
    """The value of a shell word with its quotes removed (expansions are left as written)."""
    out, i = [], 0
    while i < len(word):
        c = word[i]
        if c == "'":
            close = word.find("'", i + 1)
            close = len(word) if close < 0 else close
            out.append(word[i + 1:close])
            i = close + 1
        elif c == '"':
            j = i + 1
            while j < len(word) and word[j] != '"':
                if word[j] == "\\" and j + 1 < len(word):
                    out.append(word[j + 1])
                    j += 2
                    continue
                out.append(word[j])
                j += 1
            i = j + 1
        elif c == "\\" and i + 1 < len(word):
            out.append(word[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def simple_commands(toks: list[Tok]) -> list[list[Tok]]:
    """Words of each simple command (split at operators)."""
    commands: list[list[Tok]] = [[]]
    for tok in toks:
        if tok.kind == "op":
            commands.append([])
        else:
            commands[-1].append(tok)
    return [command for command in commands if command]


#: words after which a simple command starts (``then export X=1``, ``! cmd``)
RESERVED = {"then", "do", "else", "elif", "if", "while", "until", "{", "!", "time"}
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
#: builtins and Dockerfile instructions that set (or unset) variables rather than run a program
EXPORTERS = {"export", "env", "declare", "typeset", "readonly", "local", "ENV", "ARG", "unset", "set"}


def assignment_name(word: str) -> str | None:
    """``NAME`` of a ``NAME=value`` word, else None."""
    match = _ASSIGN.match(word)
    return match.group(1) if match else None


def command_word(words: list[Tok]) -> Tok | None:
    """The first word of a simple command that is neither an assignment nor an export-like builtin."""
    for word in words:
        if assignment_name(word.text) or word.text in EXPORTERS or word.text.startswith("-") and word is not words[0]:
            continue
        return word
    return None


def words_of(text: str) -> list[str]:
    """The words of ``text`` as written (quotes kept), operators left out."""
    toks, _ = lex(text)
    return [tok.text for tok in toks if tok.kind == "word"]


def exec_words(code: str) -> list[str]:
    """The words of an exec-form command (``["optimum-cli", "export", ...]``): a JSON list of strings, or the
    quoted strings of a YAML flow list; [] when the text is neither."""
    text = code.strip().rstrip(",")
    try:
        value = json.loads(text)
    except ValueError:
        return [double or single for double, single in re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'', text)]
    return [word for word in value if isinstance(word, str)] if isinstance(value, list) else []
