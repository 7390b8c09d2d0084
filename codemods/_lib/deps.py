"""Dependency edits on text documents: requirement lines (requirements files, setup.cfg), ``pip install``
command lines (shell, Dockerfile, YAML, notebook ``!pip``/``%pip``), and whole-text replacement that keeps
``Line`` objects for unchanged lines (pyproject edited through tomlkit). The decisions are
``codemods._lib.requirements.rewrite``.
"""

from __future__ import annotations

import difflib
import re
from pathlib import PurePath

from codemods._lib import requirements as req
from codemods._lib.shell import CommandLine, Report, Tok, command_statements, cut, lex, unquote
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind, kind_from_name
from migrate.findings import Severity
from migrate.rule import RuleOptions
from migrate.textdoc import Line, TextDocument

# ------------------------------------------------------------------------------- requirement lines

_COMMENT = re.compile(r"(^|\s)#")


def split_requirement_line(text: str) -> tuple[int, int] | None:
    """(start, end) of the requirement in a requirements-file line, or None for blank/comment/option lines."""
    stripped = text.lstrip()
    start = len(text) - len(stripped)
    if not stripped or stripped.startswith("#"):
        return None
    if stripped.startswith("-") and not re.match(r"-e\s+\S*optimum[-_]neuron", stripped):
        return None
    comment = _COMMENT.search(text, start)
    end = comment.start() if comment else len(text)
    body = text[start:end].rstrip()
    if " --hash" in body or body.endswith("\\"):
        return None
    return start, start + len(body)


def rewrite_lines(doc: TextDocument, items: list[tuple[Line, int, int]], report: Report,
                  options: RuleOptions | None = None) -> None:
    """Rewrite the requirement ``line.text[start:end]`` of each item; extra specifiers become new lines below."""
    planner = req.Planner.for_specs([line.text[s:e] for line, s, e in items], doc.text(), options)
    first_changed: Line | None = None
    for line, start, end in items:
        spec = line.text[start:end]
        rewrite = req.rewrite(spec, planner)
        if rewrite is None:
            continue
        if rewrite.keep:
            report(line, rewrite.severity, rewrite.message)
            continue
        first_changed = first_changed or line
        if not rewrite.specs:
            doc.delete(line)
            report(line, rewrite.severity, rewrite.message)
            continue
        line.text = line.text[:start] + rewrite.specs[0] + line.text[end:]
        if len(rewrite.specs) > 1:
            indent = line.text[:start]
            doc.insert_after(line, [indent + spec for spec in rewrite.specs[1:]])
        report(line, rewrite.severity, rewrite.message)
    if planner.needs_repository and not planner.repository_configured and first_changed is not None:
        report(first_changed, Severity.TODO, req.REPOSITORY_NOTE)


def replace_text(doc: TextDocument, new_text: str) -> dict[int, Line]:
    """Make ``doc`` read ``new_text``, keeping the Line objects of unchanged lines; returns new line index -> Line."""
    old_lines = list(doc)
    new_raw = new_text.splitlines()
    mapping: dict[int, Line] = {}
    matcher = difflib.SequenceMatcher(None, [line.text for line in old_lines], new_raw, autojunk=False)
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag == "equal":
            for offset in range(i2 - i1):
                mapping[j1 + offset] = old_lines[i1 + offset]
            continue
        olds, news = old_lines[i1:i2], new_raw[j1:j2]
        for offset, (old, new) in enumerate(zip(olds, news)):
            old.text = new
            mapping[j1 + offset] = old
        if len(olds) > len(news):
            for old in olds[len(news):]:
                doc.delete(old)
        elif len(news) > len(olds):
            anchor = olds[-1] if olds else None
            extra = news[len(olds):]
            if anchor is not None:
                inserted = doc.insert_after(anchor, extra)
            elif i1 < len(old_lines):
                inserted = doc.insert_before(old_lines[i1], extra)
            else:
                inserted = doc.insert_after(old_lines[-1], extra) if old_lines else []
            for offset, line in enumerate(inserted):
                mapping[j1 + len(olds) + offset] = line
    return mapping


# ------------------------------------------------------------------------- requirements in heredocs

_HEREDOC_START = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
#: where a heredoc's text goes: a redirect or tee to a file, ``COPY <<EOF dest``, or pip reading it (-r /dev/stdin)
_HEREDOC_TARGET = re.compile(r"(?:>>?|\btee(?:\s+-a)?)\s*['\"]?([^\s'\"<>|;&]+)|^\s*COPY\s+(?:--\S+\s+)*<<-?\s*['\"]?\w+['\"]?\s+(\S+)",
                            re.I)
_PIP_STDIN = re.compile(r"\bpip3?\b.*\binstall\b.*(?:-r|--requirement)\s*(?:/dev/stdin|-)(?:\s|$)")


def requirement_heredocs(doc: TextDocument) -> list[list[Line]]:
    """The bodies of heredocs that are requirement files: written to a file named like one (``cat > requirements.txt
    <<EOF``, ``tee constraints.txt``, a Dockerfile ``COPY <<EOF requirements.txt``) or read by ``pip install -r
    /dev/stdin``. Heredocs holding shell code are the command rules' business."""
    bodies: list[list[Line]] = []
    lines = list(doc)
    index = 0
    while index < len(lines):
        text = lines[index].text
        match = _HEREDOC_START.search(text)
        index += 1
        if match is None or text.lstrip().startswith("#"):
            continue
        body = []
        while index < len(lines) and lines[index].text.strip() != match.group(2):
            body.append(lines[index])
            index += 1
        index += 1  # the delimiter
        target = _HEREDOC_TARGET.search(text)
        name = next((group for group in (target.groups() if target else ()) if group), "")
        if _PIP_STDIN.search(text) or (name and kind_from_name(PurePath(name)) is FileKind.REQUIREMENTS):
            bodies.append(body)
    return bodies


def rewrite_heredoc_requirements(doc: TextDocument, report: Report, options: RuleOptions | None = None) -> None:
    for body in requirement_heredocs(doc):
        items = [(line, *span) for line in body for span in [split_requirement_line(line.text)] if span is not None]
        if items:
            rewrite_lines(doc, items, report, options)


# ----------------------------------------------------------------------------------- pip install

_VALUE_OPTIONS = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
                  "--find-links", "--target", "-t", "--prefix", "--root", "--platform", "--python-version",
                  "--implementation", "--abi", "--trusted-host", "--cache-dir", "--src", "--upgrade-strategy",
                  "--progress-bar", "--log", "--proxy", "--retries", "--timeout", "--python", "--index",
                  "--default-index", "--only-binary", "--no-binary"}
_SPECIAL = re.compile(r"[*<>\[\];|&()\s!~$`{}?]")


def _pip_requirements(words: list[Tok]) -> list[Tok] | None:
    """The requirement words of a ``pip install`` simple command (None when it is not one)."""
    texts = [unquote(word.text) for word in words]
    for index, text in enumerate(texts):
        base = text.rsplit("/", 1)[-1]
        if base in {"pip", "pip3"} or re.fullmatch(r"pip3\.\d+", base) or (text == "-m" and index + 1 < len(texts) and texts[index + 1] == "pip"):
            rest_index = index + (2 if text == "-m" else 1)
            if rest_index < len(texts) and texts[rest_index] == "install":
                out, skip = [], False
                for word, value in zip(words[rest_index + 1:], texts[rest_index + 1:]):
                    if skip:
                        skip = False
                        continue
                    if value.startswith("-"):
                        skip = value in _VALUE_OPTIONS or value == "-e"
                        if value == "-e":
                            skip = False
                        continue
                    out.append(word)
                return out
    return None


def _quote(spec: str, like: str) -> str:
    if not _SPECIAL.search(spec):
        return spec
    quote = like[0] if like[:1] in {"'", '"'} else '"'
    return f"{quote}{spec}{quote}"


_CLONE_TAG = re.compile(r"huggingface/transformers(?:\.git)?\S*\s+(?:--branch|-b)[\s=]+\\?[\"']?(v?\d+\.[\w.]+)"
                        r"|(?:--branch|-b)[\s=]+\\?[\"']?(v?\d+\.[\w.]+)\\?[\"']?\s+\S*huggingface/transformers\b")


def transformers_checkout(text: str) -> str | None:
    """The tag of a ``git clone https://github.com/huggingface/transformers --branch v4.52.3`` in a file that runs
    that checkout's example scripts (``transformers/examples/...``), or None."""
    match = _CLONE_TAG.search(text)
    if match is None or "examples/" not in text:  # a checkout whose example scripts this file does not run
        return None
    return match.group(1) or match.group(2)


TRANSFORMERS_CHECKOUT = ProjectFact("deps.transformers-checkout",
                                    frozenset({FileKind.SHELL, FileKind.NOTEBOOK, FileKind.DOCKERFILE, FileKind.YAML}),
                                    ("huggingface/transformers",), transformers_checkout)


def checkout_of(project: ProjectFacts, path: PurePath) -> str | None:
    """The transformers tag the file ``path`` clones (a notebook's shell lines arrive as ``NAME.sh`` or, for a
    ``%%bash`` cell, ``NAME.cellN.sh``)."""
    found = project.of(TRANSFORMERS_CHECKOUT.name)
    notebook = re.sub(r"(?:\.cell\d+)?\.sh$", ".ipynb", path.as_posix())
    return next((found[name] for name in (path.as_posix(), notebook) if name in found), None)


CHECKOUT_TODO = ("{spec} was left as it is: this file clones transformers at {tag} and runs that tag's example scripts, "
                 "which need a {major}.x transformers (they import APIs that 5.x removed); TorchNeuron needs {new}: clone "
                 "a tag of the installed 5.x release (its examples), then change this pin, in one step")


def _follows_checkout(spec: str, rewrite, tag: str | None):
    """A transformers bump to 5.x beside a 4.x examples checkout: kept with a todo (the pair must move together)."""
    major = re.match(r"v?(\d+)", tag or "")
    name = re.match(r"[A-Za-z0-9_.-]+", spec)
    if major is None or int(major.group(1)) >= 5 or name is None or name.group(0).lower() != "transformers" or rewrite.keep:
        return rewrite
    new = next((s for s in rewrite.specs if s.lower().startswith("transformers")), None)
    if new is None:
        return rewrite
    return req.Rewrite([], Severity.TODO, CHECKOUT_TODO.format(spec=spec, tag=tag, major=major.group(1), new=new), keep=True)


def edit_pip_install(doc: TextDocument, report: Report, options: RuleOptions | None = None,
                     checkout: str | None = None) -> None:
    """Rewrite the Neuron stack in ``pip install`` commands (shell, Dockerfile RUN, YAML run blocks, !pip).
    ``checkout``: the transformers tag the file clones for its example scripts (see ``transformers_checkout``)."""
    full_text = doc.text()
    for statement in command_statements(doc):
        items: list[tuple[CommandLine, Tok]] = []
        for cl in statement:
            toks, _ = lex(cl.line.text, cl.start, cl.end)
            items.extend((cl, tok) for tok in toks)
        groups: list[list[tuple[CommandLine, Tok]]] = [[]]
        for item in items:
            if item[1].kind == "op":
                groups.append([])
            else:
                groups[-1].append(item)
        for group in groups:
            words = [tok for _, tok in group]
            requirements = _pip_requirements(words) if words else None
            if not requirements:
                continue
            owner = {id(tok): cl for cl, tok in group}
            joined = " ".join(word.text for word in words)
            planner = req.Planner.for_specs([unquote(word.text) for word in requirements], joined, options)
            if re.search(r"index-url\S*\s*=?\s*\S*neuron", full_text, re.I):
                planner.repository_configured = True
            plans = []
            for word in requirements:
                rewrite = req.rewrite(unquote(word.text), planner)
                if rewrite is not None:
                    plans.append((word, _follows_checkout(unquote(word.text), rewrite, checkout or transformers_checkout(full_text))))
            if not plans:
                continue
            if all(not rewrite.specs and not rewrite.keep for _, rewrite in plans) and len(plans) == len(requirements):
                line = owner[id(plans[0][0])].line
                report(line, Severity.TODO, "this pip install only installs packages of the XLA-era stack ("
                       + ", ".join(unquote(word.text) for word, _ in plans) + "): delete the command")
                continue
            edits: dict[int, list[tuple[int, int, str | None]]] = {}
            lines: dict[int, Line] = {}
            first_line: Line | None = None
            for word, rewrite in plans:
                cl = owner[id(word)]
                lines[id(cl.line)] = cl.line
                if rewrite.keep:
                    report(cl.line, rewrite.severity, rewrite.message)
                    continue
                first_line = first_line or cl.line
                new = " ".join(_quote(spec, word.text) for spec in rewrite.specs) if rewrite.specs else None
                edits.setdefault(id(cl.line), []).append((word.start, word.end, new))
                report(cl.line, rewrite.severity, rewrite.message)
            for key, line_edits in edits.items():
                line = lines[key]
                for start, end, new in sorted(line_edits, reverse=True):
                    if new is None:
                        cut(line, [(start, end)])
                    else:
                        line.text = line.text[:start] + new + line.text[end:]
            if planner.needs_repository and not planner.repository_configured and first_line is not None:
                report(first_line, Severity.TODO, req.REPOSITORY_NOTE)
