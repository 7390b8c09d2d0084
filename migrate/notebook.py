"""Notebooks: every code cell goes through the rules of the file kind it really is, and only the edited
``source`` values change in the file.

* A plain code cell is Python. IPython syntax that libcst cannot parse is masked first: each ``!cmd`` line,
  ``%magic`` line and ``x = !cmd`` line (with its ``\\`` continuation lines) becomes a placeholder statement
  ``...  # __nm_magic_<k>__`` with the same indentation; after the Python rules ran, the placeholders are
  replaced by the original lines. ``!cmd``, ``%sx``/``%system`` lines go through the SHELL rules, ``%pip``
  lines as ``pip ...``, ``%env NAME=value``/``%set_env`` as ``export NAME=value`` (a removed export removes the
  line). A cell whose placeholders do not all survive is left unchanged (``error`` finding).
* ``%%bash`` / ``%%sh`` / ``%%script bash`` cells: the body is a SHELL file.
* ``%%writefile [-a] NAME``: the body is the file it writes, with the kind NAME has (``train.py`` -> Python,
  ``run.sh`` -> shell, ``requirements.txt``, ``Dockerfile``, ``*.yaml``, ``*.json`` ...); unknown kinds are
  left alone. ``%%time``/``%%timeit``/``%%capture`` bodies are Python; other cell magics are left alone.
* Notebooks whose kernel is not Python are left alone.

Byte-for-byte preservation: the notebook is NOT re-serialised (nbformat's writer would reformat the JSON).
The handler locates each cell's ``source`` value in the original text and replaces only the values it
changed; inside a list-of-lines source, unchanged lines keep their original JSON string tokens (escapes
included). Outputs, metadata, key order, indentation and the final newline stay as they were.

Findings: the message starts with ``cell C, line L:`` where C is the 1-based position of the cell in the
notebook's ``cells`` list (markdown cells count, as in the Jupyter UI order) and L the 1-based line in that
cell's source (the ``%%`` line of a cell magic is line 1). ``Finding.line`` is the line of the ``.ipynb`` file
that holds that source line (exact for the usual one-string-per-line layout), so editors can jump to it.
A notebook that is not valid JSON (or has no ``cells`` list) is left untouched with one ``error`` finding;
a cell that does not parse gets an ``error`` finding and stays as it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from json.decoder import scanstring
from pathlib import PurePath
from typing import Iterator, Sequence

from migrate.filekinds import FileKind, kind_from_name
from migrate.findings import Finding, Severity
from migrate.pipeline import Migrated, _line_map, migrate_source
from migrate.rule import Rule, RuleOptions, SharedNamespace, SweepRule
from migrate.verification import VerifyRule, is_processing_error

NOTEBOOK_RULE = "NM000"  # findings of the handler itself, like the engine's (bad JSON, a cell that does not parse)

# ------------------------------------------------------------------------------- JSON with positions


@dataclass
class Node:
    kind: str  # "object" | "array" | "string" | "literal"
    start: int
    end: int
    value: object = None  # str for strings
    items: list["Node"] = field(default_factory=list)  # array elements
    members: dict[str, "Node"] = field(default_factory=dict)  # object members (last key wins, like json)


_WS = re.compile(r"[ \t\n\r]*")
_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _parse(text: str, index: int) -> Node:
    index = _WS.match(text, index).end()
    if index >= len(text):
        raise ValueError("unexpected end of JSON")
    char = text[index]
    if char == '"':
        value, end = scanstring(text, index + 1)
        return Node("string", index, end, value)
    if char == "{":
        node = Node("object", index, index)
        position = _WS.match(text, index + 1).end()
        if text[position:position + 1] == "}":
            node.end = position + 1
            return node
        while True:
            position = _WS.match(text, position).end()
            if text[position:position + 1] != '"':
                raise ValueError(f"expected a key at offset {position}")
            key, position = scanstring(text, position + 1)
            position = _WS.match(text, position).end()
            if text[position:position + 1] != ":":
                raise ValueError(f"expected ':' at offset {position}")
            value = _parse(text, position + 1)
            node.members[key] = value
            position = _WS.match(text, value.end).end()
            if text[position:position + 1] == ",":
                position += 1
                continue
            if text[position:position + 1] == "}":
                node.end = position + 1
                return node
            raise ValueError(f"expected ',' or '}}' at offset {position}")
    if char == "[":
        node = Node("array", index, index)
        position = _WS.match(text, index + 1).end()
        if text[position:position + 1] == "]":
            node.end = position + 1
            return node
        while True:
            value = _parse(text, position)
            node.items.append(value)
            position = _WS.match(text, value.end).end()
            if text[position:position + 1] == ",":
                position += 1
                continue
            if text[position:position + 1] == "]":
                node.end = position + 1
                return node
            raise ValueError(f"expected ',' or ']' at offset {position}")
    match = _LITERAL.match(text, index)
    if not match:
        raise ValueError(f"unexpected character {char!r} at offset {index}")
    return Node("literal", index, match.end())


def parse_positions(text: str) -> Node:
    root = _parse(text, 0)
    if text[_WS.match(text, root.end).end():].strip():
        raise ValueError("extra data after the JSON document")
    return root


# ------------------------------------------------------------------------------------ the handler


def migrate_notebook(text: str, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions) -> Migrated:
    """Migrate the cells. The kernel cells share one namespace (see ``SharedNamespace``); a legacy import is
    dropped only once no cell uses its name, which is known after the cells were migrated: hence a second
    pass when the first changed anything. Sweep findings come from that last pass (what is left)."""
    # the sweep reports what is left, so it runs in the last pass only: a note it wrote in the first pass could
    # be about an import the second pass drops
    first = _migrate_cells(text, path, [rule for rule in rules if not issubclass(rule, SweepRule)], options)
    if any(is_processing_error(f) for f in first.findings):
        return first
    second = _migrate_cells(first.text, path, rules, options)
    # what is left is what the last pass sees: the sweep's and the verification's findings
    sweeps = {rule.id for rule in rules if issubclass(rule, (SweepRule, VerifyRule))}
    to_original = _line_map(text, first.text)  # the second pass numbers the lines of the first one's output
    return Migrated(second.text, [f for f in first.findings if f.rule not in sweeps] +
                    [replace(f, line=to_original(f.line)) for f in second.findings if f.rule in sweeps])


def _migrate_cells(text: str, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions) -> Migrated:
    try:
        json.loads(text)
        root = parse_positions(text)
    except ValueError as error:
        return Migrated(text, [Finding(NOTEBOOK_RULE, Severity.ERROR, 0, 0, f"not a valid notebook (bad JSON: {error}); left untouched")])
    cells = root.members.get("cells") if root.kind == "object" else None
    if cells is None or cells.kind != "array":
        return Migrated(text, [Finding(NOTEBOOK_RULE, Severity.ERROR, 0, 0,
                                       "not a notebook this tool understands (no 'cells' list; nbformat 4 expected); left untouched")])
    if not _python_kernel(json.loads(text)):
        return Migrated(text, [])
    ascii_only = not any(ord(char) > 127 for char in text)
    edits: list[tuple[int, int, str]] = []
    findings: list[Finding] = []
    namespace = _kernel_namespace(cells)
    for number, cell in enumerate(cells.items, start=1):
        if cell.kind != "object":
            continue
        cell_type = cell.members.get("cell_type")
        source = cell.members.get("source")
        if cell_type is None or cell_type.value not in {"code", "markdown", "raw"} or source is None:
            continue
        if source.kind == "string":
            original = str(source.value)
            line_nodes = None
        elif source.kind == "array" and all(item.kind == "string" for item in source.items):
            original = "".join(str(item.value) for item in source.items)
            line_nodes = source.items
        else:
            continue
        if cell_type.value != "code":  # prose: reported as docs to update (the sweep rules of DOCS), never edited
            prose = migrate_source(original, FileKind.DOCS, path.with_name(f"{path.stem}.cell{number}.md"), rules, options)
            findings.extend(Finding(f.rule, f.severity, _file_line(text, source, line_nodes, f.line), 0,
                                    f"cell {number}, line {f.line}: {f.message}") for f in prose.findings)
            continue
        new, cell_findings = migrate_cell(original, number, path, rules, options, namespace)
        for line, severity, rule, message in cell_findings:
            findings.append(Finding(rule, severity, _file_line(text, source, line_nodes, line), 0, f"cell {number}, line {line}: {message}"))
        if new != original:
            edits.append((source.start, source.end, _encode_source(text, source, line_nodes, new, ascii_only)))
    new_text = text
    for start, end, replacement in sorted(edits, reverse=True):
        new_text = new_text[:start] + replacement + new_text[end:]
    return Migrated(new_text, findings)


def _python_kernel(data: object) -> bool:
    if not isinstance(data, dict):
        return True
    metadata = data.get("metadata") or {}
    language = ((metadata.get("kernelspec") or {}).get("language") or (metadata.get("language_info") or {}).get("name") or "python")
    return str(language).lower().startswith("python")


def _file_line(text: str, source: Node, line_nodes: list[Node] | None, line: int) -> int:
    if line_nodes and 0 < line <= len(line_nodes):
        offset = line_nodes[line - 1].start
    else:
        offset = source.start
    return text.count("\n", 0, offset) + 1


def _encode(value: str, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


def _encode_source(text: str, source: Node, line_nodes: list[Node] | None, new: str, ascii_only: bool) -> str:
    if line_nodes is None:
        return _encode(new, ascii_only)
    new_lines = new.splitlines(keepends=True)
    old_lines = [str(node.value) for node in line_nodes]
    import difflib

    tokens: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            tokens.extend(text[node.start:node.end] for node in line_nodes[i1:i2])
        else:
            tokens.extend(_encode(line, ascii_only) for line in new_lines[j1:j2])
    if len(line_nodes) >= 2:
        opening = text[source.start + 1:line_nodes[0].start]
        separator = text[line_nodes[0].end:line_nodes[1].start]
        closing = text[line_nodes[-1].end:source.end - 1]
    elif len(line_nodes) == 1:
        opening = text[source.start + 1:line_nodes[0].start]
        closing = text[line_nodes[0].end:source.end - 1]
        separator = "," + opening if opening.strip() == "" and "\n" in opening else ", "
    else:
        line_start = text.rfind("\n", 0, source.start) + 1
        indent = len(text[line_start:source.start]) - len(text[line_start:source.start].lstrip())
        opening, separator, closing = "\n" + " " * (indent + 1), ",\n" + " " * (indent + 1), "\n" + " " * indent
    if not tokens:
        return "[]"
    return "[" + opening + separator.join(tokens) + closing + "]"


# ------------------------------------------------------------------------------------------ cells

CellFinding = tuple[int, Severity, str, str]  # (line in the cell, severity, rule, message)

_CELL_MAGIC = re.compile(r"^%%(\w+)(.*)$")
_PY_BODY_MAGICS = {"time", "timeit", "capture", "prun"}
_SHELL_MAGICS = {"bash", "sh"}
_LINE_MAGIC = re.compile(r"^(\s*)(?:[\w.\[\]'\"]+\s*=\s*)?([!%])")
_PLACEHOLDER = "...  # __nm_magic_{}__"
_PLACEHOLDER_LINE = re.compile(r"^(\s*)\.\.\.  # __nm_magic_(\d+)__$")


def _code_sources(cells: Node) -> Iterator[str]:
    for cell in cells.items:
        if cell.kind != "object" or getattr(cell.members.get("cell_type"), "value", None) != "code":
            continue
        source = cell.members.get("source")
        if source is not None and source.kind == "string":
            yield str(source.value)
        elif source is not None and source.kind == "array":
            yield "".join(str(item.value) for item in source.items if item.kind == "string")


_IMPORT_LINE = re.compile(r"^\s*(?:import|from)\s")


def _kernel_namespace(cells: Node) -> SharedNamespace:
    """The code cells run in one kernel: what one cell imports, the next one uses (see SharedNamespace).
    A name counts as used when it appears outside import statements in any cell."""
    code = "\n".join(_code_sources(cells))
    used = "\n".join(line for line in code.splitlines() if not _IMPORT_LINE.match(line))
    return SharedNamespace(trigger_text=code, names=set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", used)))


def migrate_cell(source: str, number: int, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions,
                 namespace: SharedNamespace | None = None) -> tuple[str, list[CellFinding]]:
    lines = source.splitlines(keepends=True)
    if not lines:
        return source, []
    magic = _CELL_MAGIC.match(lines[0].rstrip("\r\n"))
    if magic:
        name, args = magic.group(1), magic.group(2).split()
        body = "".join(lines[1:])
        if name in _SHELL_MAGICS or (name == "script" and args[:1] and args[0].rsplit("/", 1)[-1] in {"bash", "sh"}):
            kind, cell_path = FileKind.SHELL, path.with_name(f"{path.stem}.cell{number}.sh")
        elif name == "writefile":
            targets = [arg for arg in args if not arg.startswith("-")]
            if not targets:
                return source, []
            cell_path = PurePath(targets[-1].strip("'\""))
            kind = kind_from_name(cell_path)
            if kind is None or kind is FileKind.NOTEBOOK:
                return source, []
        elif name in _PY_BODY_MAGICS:
            kind, cell_path = FileKind.PYTHON, path.with_name(f"{path.stem}.cell{number}.py")
        else:
            return source, []
        # a %%writefile cell is a file of its own; a %%time cell runs in the kernel's namespace
        shared = namespace if name in _PY_BODY_MAGICS else None
        new_body, found = _migrate_text(body, kind, cell_path, rules, options, shared)
        return lines[0] + new_body, [(line + 1, severity, rule, message) for line, severity, rule, message in found]
    return _migrate_text(source, FileKind.PYTHON, path.with_name(f"{path.stem}.cell{number}.py"), rules, options, namespace)


def _migrate_text(text: str, kind: FileKind, path: PurePath, rules, options,
                  namespace: SharedNamespace | None = None) -> tuple[str, list[CellFinding]]:
    if kind is FileKind.PYTHON:
        return _migrate_python(text, path, rules, options, namespace)
    try:
        result = migrate_source(text, kind, path, rules, options)
    except Exception as error:  # a rule crashed or the text does not parse: leave it
        return text, [(1, Severity.ERROR, NOTEBOOK_RULE, f"could not process this cell as {kind.value} ({error}); left unchanged")]
    return result.text, [(f.line, f.severity, f.rule, f.message) for f in result.findings]


@dataclass
class _Magic:
    indent: str
    lines: list[str]  # original lines, with their endings
    start: int  # 1-based line in the cell


def _mask(text: str) -> tuple[str, list[_Magic]]:
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    magics: list[_Magic] = []
    index = 0
    in_string = _string_lines(text)
    while index < len(lines):
        line = lines[index]
        match = _LINE_MAGIC.match(line)
        if match and (index + 1) not in in_string and not line.lstrip().startswith("#"):
            group = [line]
            while group[-1].rstrip("\r\n").endswith("\\") and index + len(group) < len(lines):
                group.append(lines[index + len(group)])
            magic = _Magic(match.group(1), group, index + 1)
            ending = line[len(line.rstrip("\r\n")):]
            out.append(match.group(1) + _PLACEHOLDER.format(len(magics)) + (ending or ""))
            out.extend(match.group(1) + _PLACEHOLDER.format(f"{len(magics)}c") + g[len(g.rstrip("\r\n")):] for g in group[1:])
            magics.append(magic)
            index += len(group)
            continue
        out.append(line)
        index += 1
    return "".join(out), magics


def _string_lines(text: str) -> set[int]:
    """Lines (1-based) that lie inside a multi-line string after its first line: a `%` there is text."""
    import io
    import tokenize

    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return inside


_CONT_PLACEHOLDER = re.compile(r"^\s*\.\.\.  # __nm_magic_\d+c__\r?\n?$")


def _migrate_python(text: str, path: PurePath, rules, options,
                    namespace: SharedNamespace | None = None) -> tuple[str, list[CellFinding]]:
    masked, magics = _mask(text)
    findings: list[CellFinding] = []
    try:
        result = migrate_source(masked, FileKind.PYTHON, path, rules, options, namespace)
    except Exception as error:
        return text, [(1, Severity.ERROR, NOTEBOOK_RULE, f"does not parse as Python ({type(error).__name__}); left unchanged")]
    findings.extend((f.line, f.severity, f.rule, f.message) for f in result.findings)
    out_lines = result.text.splitlines(keepends=True)
    seen: list[int] = []
    restored: list[str] = []
    for line in out_lines:
        if _CONT_PLACEHOLDER.match(line):
            continue
        match = _PLACEHOLDER_LINE.match(line.rstrip("\r\n"))
        if not match:
            restored.append(line)
            continue
        index = int(match.group(2))
        seen.append(index)
        magic = magics[index]
        new_lines, magic_findings = _migrate_magic(magic, path, rules, options)
        findings.extend(magic_findings)
        above = set()
        for previous in reversed(restored):
            if not previous.lstrip().startswith("#"):
                break
            above.add(previous.strip())
        restored.extend(line for line in new_lines if not (line.lstrip().startswith("# neuron-migrate:") and line.strip() in above))
    if sorted(seen) != list(range(len(magics))):
        return text, [(1, Severity.ERROR, NOTEBOOK_RULE, "the Python rules moved or removed an IPython magic line; "
                       "cell left unchanged: migrate it by hand")]
    new_text = "".join(restored)
    if new_text != text and result.text == masked:  # only magic lines changed: the Python side was never parsed
        import libcst

        try:
            libcst.parse_module(masked)
        except Exception as error:
            return text, [(1, Severity.ERROR, NOTEBOOK_RULE, f"does not parse as Python ({type(error).__name__}); left unchanged")]
    return new_text, findings


_SHELL_LINE_MAGICS = {"sx", "system"}


def _migrate_magic(magic: _Magic, path: PurePath, rules, options) -> tuple[list[str], list[CellFinding]]:
    """The lines that replace one masked magic (shell rules for ``!``, ``%pip``, ``%env`` ...)."""
    original = magic.lines
    first = original[0]
    ending = first[len(first.rstrip("\r\n")):]
    body = first[len(magic.indent):]
    assignment = re.match(r"^([\w.\[\]'\"]+\s*=\s*)", body)
    head = assignment.group(1) if assignment else ""
    body = body[len(head):]
    if body.startswith("!"):
        bang = "!!" if body.startswith("!!") else "!"
        prefix, command, mode = head + bang, body[len(bang):], "shell"
    else:
        match = re.match(r"%(\w+)\s*", body)
        name = match.group(1) if match else ""
        if name in _SHELL_LINE_MAGICS:
            prefix, command, mode = head + body[:match.end()], body[match.end():], "shell"
        elif name == "pip" and not head:
            prefix, command, mode = "%", body[1:], "shell"
        elif name in {"env", "set_env"} and not head:
            rest = body[match.end():].rstrip("\r\n")
            env = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\s*=\s*|\s+)(.*)$", rest)
            if not env:
                return original, []
            prefix, command, mode = "", f"export {env.group(1)}={env.group(2)}\n", "env"
        else:
            return original, []
    shell_text = command + "".join(original[1:])
    try:
        result = migrate_source(shell_text, FileKind.SHELL, path.with_suffix(".sh"), rules, options)
    except Exception:
        return original, []
    findings = [(magic.start + f.line - 1, f.severity, f.rule, f.message) for f in result.findings]
    if result.text == shell_text:
        return original, findings
    out_lines = result.text.splitlines(keepends=True)
    notes = [line for line in out_lines if line.lstrip().startswith("# neuron-migrate:")]
    if options.inline_notes:  # a note whose line was removed has nowhere to go in the shell text: keep it here
        noted = {note.strip() for note in notes}
        for f in result.findings:
            note = f"# neuron-migrate: {f.message}"
            if f.severity is Severity.TODO and note not in noted:
                notes.append(note + (ending or "\n"))
                noted.add(note)
    code = [line for line in out_lines if not line.lstrip().startswith("# neuron-migrate:")]
    new = [magic.indent + note.lstrip() if note.endswith(("\n", "\r")) else magic.indent + note.lstrip() + ending for note in notes]
    if not "".join(code).strip():
        if magic.indent:
            new.append(magic.indent + "pass" + ending)
        return new, findings
    if mode == "env":
        return new + original, findings  # %env lines are only ever kept or removed
    for index, line in enumerate(code):
        text = line if line.endswith(("\n", "\r")) or index < len(code) - 1 else line + ending
        new.append(magic.indent + prefix + text if index == 0 else text)
    return new, findings
