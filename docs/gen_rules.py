"""Generate the rule reference of docs/rules-*.md from the rules' module docstrings (one source of truth).

A page is its hand-written introduction (everything above ``## Rules``) followed by the generated part: a table
(id, name, safety, file kinds, the summary from the docstring's first line) and one section per rule, rendered
from the docstring's sections. A page covers the families (``NM1``, ``NM2`` ...) of the rule ids it lists: a rule
added to one of them gets its row and section, a rule removed loses them.

A rule module's docstring (checked by tests/contract/test_docs.py)::

    NM302 mark-step: <one summary sentence>.

    What it does:

    * the cases it rewrites, notes or leaves alone (bullets or paragraphs)

    Why:

    What the old code meant and what it becomes on TorchNeuron / transformers 5.

    Before::

        <code>

    After::

        <code>

    Safety: safe. <what a reviewer checks; the value is the rule's ``safety``: safe | needs-review | manual-only>

    References:

    * an upstream URL, or a page under docs/ (at least one)

``Before`` and ``After`` may carry a qualifier (``After (unchanged code, plus a note)::``) and may repeat as
pairs. reST literal blocks (a paragraph ending in ``::``) become fenced code; double backticks become single ones.

    .venv/bin/python docs/gen_rules.py           # rewrite the pages
    .venv/bin/python docs/gen_rules.py --check   # exit 1 if a page is not current (tests/contract/test_docs.py)
"""

from __future__ import annotations

import inspect
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

DOCS = Path(__file__).resolve().parent
RULES_HEADING = "## Rules\n"
GENERATED_NOTE = ("<!-- Generated from the rules' module docstrings by docs/gen_rules.py: edit a docstring, then run "
                  "`python docs/gen_rules.py`. -->\n")
ROW_ID = re.compile(r"^\| \[?(NM\d{3})\b", re.MULTILINE)
KIND_LABELS = {"python": "Python", "notebook": "notebook", "shell": "shell", "dockerfile": "Dockerfile",
               "yaml": "YAML", "json": "JSON", "requirements": "requirements", "pyproject": "pyproject.toml",
               "setup_cfg": "setup.cfg", "tox": "tox.ini", "docs": "Markdown/reST"}
#: the language of a Before/After block, from the first of the rule's file kinds found here
FENCE_LANGUAGE = {"python": "python", "shell": "bash", "dockerfile": "dockerfile", "yaml": "yaml", "json": "json",
                  "requirements": "text", "pyproject": "toml", "setup_cfg": "ini", "tox": "ini", "notebook": "python",
                  "docs": "text"}

# The section headers of a rule docstring, in their order. Before/After may carry a qualifier
# ("After (portable style)::") and may repeat as pairs.
SECTION_ORDER = ("what", "why", "before", "after", "safety", "references")
_HEADERS = (
    ("what", re.compile(r"^What it does:$")),
    ("why", re.compile(r"^Why:$")),
    ("before", re.compile(r"^Before(?: \((?P<qualifier>[^)]*)\))?::$")),
    ("after", re.compile(r"^After(?: \((?P<qualifier>[^)]*)\))?::$")),
    ("safety", re.compile(r"^Safety: (?P<value>[a-z-]+)\.(?:\s|$)")),
    ("references", re.compile(r"^References:$")),
)
_SEQUENCE = re.compile(r"^what why (?:before after )+safety references$")
_REFERENCE = re.compile(r"https?://\S+|\bdocs/[\w./-]+")


@dataclass
class Section:
    kind: str
    header: str  # the header line as written
    lines: list[str] = field(default_factory=list)  # the body, without the header line

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


@dataclass
class RuleDoc:
    first_line: str
    preamble: list[str]  # text between the first line and the first section (empty when well formed)
    sections: list[Section]


def module_docstring(rule) -> str:
    return inspect.getdoc(inspect.getmodule(rule)) or ""


def parse(docstring: str) -> RuleDoc:
    lines = inspect.cleandoc(docstring).splitlines()
    first, rest = (lines[0] if lines else ""), lines[1:]
    preamble: list[str] = []
    sections: list[Section] = []
    for line in rest:
        kind = next((kind for kind, header in _HEADERS if header.match(line)), None)
        if kind is not None:
            sections.append(Section(kind, line))
            if kind == "safety":
                sections[-1].lines.append(line)
        elif sections:
            sections[-1].lines.append(line)
        else:
            preamble.append(line)
    return RuleDoc(first, preamble, sections)


def summary(rule) -> str:
    """The summary sentence of the docstring's first line (``NM302 mark-step: <summary>``)."""
    first = parse(module_docstring(rule)).first_line
    prefix = f"{rule.id} {rule.name}:"
    return first[len(prefix):].strip() if first.startswith(prefix) else rule.summary()


def problems(rule) -> list[str]:
    """What keeps a rule's module docstring from the fixed format (empty when it follows it)."""
    doc_text = module_docstring(rule)
    doc = parse(doc_text)
    found = []
    if not doc.first_line.startswith(f"{rule.id} {rule.name}: ") or not doc.first_line.endswith("."):
        found.append(f"the first line is not '{rule.id} {rule.name}: <summary sentence>.'")
    if any(line.strip() for line in doc.preamble):
        found.append("text between the first line and 'What it does:'")
    kinds = " ".join(section.kind for section in doc.sections)
    if not _SEQUENCE.match(kinds):
        found.append(f"sections {kinds.split()} are not {list(SECTION_ORDER)} in that order")
    for section in doc.sections:
        if section.kind == "safety":
            value = next(header.match(section.header) for kind, header in _HEADERS if kind == "safety")["value"]
            if value != rule.safety.value:
                found.append(f"'Safety: {value}' but the rule's safety is {rule.safety.value}")
        if section.kind == "references" and not _REFERENCE.search(section.text):
            found.append("References: lists no URL and no docs/ path")
        if section.kind != "safety" and not section.text.strip():
            found.append(f"the section {section.header!r} is empty")
    # a file of the repository the docstring names must exist (modules move; the docs must follow)
    paths = re.findall(r"(?<![\w/.])(?:docs|codemods|migrate)/[\w./-]*\w", re.sub(r"https?://\S+", "", doc_text))
    missing = sorted({path for path in paths if not (DOCS.parent / path).exists()})
    if missing:
        found.append(f"names {missing}, not in the repository")
    return found


# ------------------------------------------------------------------------------------------------ rendering


def _code_spans(text: str) -> str:
    """``code`` -> `code` (a span holding a backtick keeps double backticks, padded, as Markdown wants)."""
    return re.sub(r"``(.+?)``", lambda match: f"`` {match[1]} ``" if "`" in match[1] else f"`{match[1]}`", text,
                  flags=re.DOTALL)


def _links(text: str) -> str:
    """A docs/ path becomes a link relative to the page (the pages live in docs/ too); a URL stays (autolinked)."""
    return re.sub(r"(?<![\w/`(\[])docs/([\w.-]+\.md)\b", r"[docs/\1](\1)", text)


def _fence(block: list[str], language: str) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in block if line.strip()]
    cut = min(indents, default=0)
    body = [line[cut:] for line in block]
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    return [f"```{language}", *body, "```"]


def _split_block(lines: list[str]) -> tuple[list[str], list[str]]:
    """A literal block (blank or indented lines) and the prose that follows it."""
    for index, line in enumerate(lines):
        if line.strip() and not line.startswith(" "):
            return lines[:index], lines[index:]
    return lines, []


def render_text(lines: list[str], language: str = "text") -> list[str]:
    """reST-flavoured prose -> Markdown: a paragraph ending in ``::`` introduces the indented block after it."""
    out: list[str] = []
    prose: list[str] = []  # converted together: a code span may wrap onto the next line

    def flush() -> None:
        if prose:
            out.extend(_links(_code_spans("\n".join(prose))).split("\n"))
            prose.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        if line.rstrip().endswith("::"):
            indent = len(line) - len(line.lstrip())
            intro = line.rstrip()[:-2].rstrip()
            if intro.strip():
                prose.append(intro + ":")
            flush()
            index += 1
            block = []
            while index < len(lines) and (not lines[index].strip() or lines[index].startswith(" " * (indent + 1))):
                block.append(lines[index])
                index += 1
            out += ["", *_fence(block, language), ""]
            continue
        prose.append(line)
        index += 1
    flush()
    return out


def _language(rule) -> str:
    return next((FENCE_LANGUAGE[kind] for kind in KIND_LABELS if kind in {k.value for k in rule.kinds}), "text")


def render_rule(rule) -> str:
    doc = parse(module_docstring(rule))
    out = [f"### {rule.id} {rule.name}", "", _links(_code_spans(summary(rule))), "",
           f"Files: {_kinds(rule)}. Scope: `{rule.scope}`. Module: `{rule.__module__.replace('.', '/')}.py`.", ""]
    if doc.preamble:  # a docstring not (yet) in sections: rendered as it is
        out += render_text(doc.preamble, _language(rule)) + [""]
    labels = {"what": "What it does", "why": "Why", "references": "References"}
    for section in doc.sections:
        if section.kind in ("before", "after"):
            qualifier = _HEADERS[SECTION_ORDER.index(section.kind)][1].match(section.header)["qualifier"]
            label = section.kind.capitalize() + (f" ({_code_spans(qualifier)})" if qualifier else "")
            block, after = _split_block(section.lines)
            language = "text" if qualifier and "report" in qualifier else _language(rule)  # findings, not code
            out += [f"**{label}**", "", *_fence(block, language), "", *render_text(after), ""]
        elif section.kind == "safety":
            body = render_text(section.lines)
            body[0] = re.sub(r"^Safety: ([a-z-]+)\.", r"**Safety**: \1.", body[0])
            out += [*body, ""]
        else:
            out += [f"**{labels[section.kind]}**", "", *render_text(section.lines, _language(rule)), ""]
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def _kinds(rule) -> str:
    order = list(KIND_LABELS)
    return ", ".join(KIND_LABELS[kind.value] for kind in sorted(rule.kinds, key=lambda kind: order.index(kind.value)))


def _anchor(rule) -> str:
    """GitHub's anchor of the heading ``### NM302 mark-step``."""
    return re.sub(r"[^a-z0-9 -]", "", f"{rule.id} {rule.name}".lower()).replace(" ", "-")


def _cell(text: str) -> str:
    return _code_spans(text).replace("|", "\\|")


def render_page(text: str, rules: list) -> str:
    """The page with its generated part (from ``## Rules`` to the end) rewritten from ``rules``."""
    head, heading, _ = text.partition(RULES_HEADING)
    if not heading:
        raise ValueError("the page has no '## Rules' heading")
    families = {rule_id[:3] for rule_id in ROW_ID.findall(text)}
    covered = sorted((rule for rule in rules if rule.id[:3] in families), key=lambda rule: rule.id)
    table = ["| id | name | safety | kinds | summary |", "|---|---|---|---|---|"]
    table += [f"| [{rule.id}](#{_anchor(rule)}) | `{rule.name}` | {rule.safety.value} | {_kinds(rule)} | "
              f"{_cell(summary(rule))} |" for rule in covered]
    sections = "\n".join(render_rule(rule) for rule in covered)
    return head + RULES_HEADING + "\n" + GENERATED_NOTE + "\n" + "\n".join(table) + "\n\n" + sections


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(DOCS.parent))
    from migrate.registry import all_rules

    rules = list(all_rules())
    stale = []
    for page in sorted(DOCS.glob("rules-*.md")):
        text = page.read_text(encoding="utf-8")
        new = render_page(text, rules)
        if new != text:
            stale.append(page.name)
            if "--check" not in argv:
                page.write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"not current: {', '.join(stale)}; run: python docs/gen_rules.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
