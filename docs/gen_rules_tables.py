"""Regenerate the rule tables of docs/rules-*.md from the rules' own metadata.

Each page has one table whose header starts ``| id | name | safety |``. The id, name, safety (and, where the
table has one, kinds) columns are written from the registered rules; the last column, the page's own
description, is kept. A page covers the families (``NM1``, ``NM2`` ...) of the ids it lists: a rule added to
one of them gets a row (its summary as the description, to be improved by hand), a rule removed loses its row.

    .venv/bin/python docs/gen_rules_tables.py           # rewrite the pages
    .venv/bin/python docs/gen_rules_tables.py --check   # exit 1 if a page is not current (tests/contract/test_docs.py)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
HEADER = re.compile(r"^\| id \| name \| safety \|")
KIND_LABELS = {"python": "Python", "notebook": "notebook", "shell": "shell", "dockerfile": "Dockerfile",
               "yaml": "YAML", "json": "JSON", "requirements": "requirements", "pyproject": "pyproject.toml",
               "setup_cfg": "setup.cfg", "docs": "Markdown/reST"}


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row (a ``\\|`` inside a cell is not a separator)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def _kinds(rule) -> str:
    order = list(KIND_LABELS)
    return ", ".join(KIND_LABELS[kind.value] for kind in sorted(rule.kinds, key=lambda kind: order.index(kind.value)))


def render_page(text: str, rules: list) -> str:
    lines = text.splitlines(keepends=True)
    start = next((index for index, line in enumerate(lines) if HEADER.match(line)), None)
    if start is None:
        return text
    header = _cells(lines[start])
    end = start + 2
    while end < len(lines) and lines[end].startswith("| NM"):
        end += 1
    # the description is what follows the generated columns; a pipe inside it (even in a code span) must be
    # escaped for GitHub, so one that is not is escaped here
    described = {cells[0]: " \\| ".join(cells[len(header) - 1:])
                 for cells in (_cells(line) for line in lines[start + 2:end])}
    families = {rule_id[:3] for rule_id in described}
    rows = []
    for rule in sorted((rule for rule in rules if rule.id[:3] in families), key=lambda rule: rule.id):
        cells = [rule.id, f"`{rule.name}`", rule.safety.value]
        if "kinds" in header:
            cells.append(_kinds(rule))
        cells.append(described.get(rule.id) or rule.summary())
        rows.append("| " + " | ".join(cells) + " |\n")
    return "".join(lines[:start + 2] + rows + lines[end:])


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(DOCS.parent))
    from migrate.registry import all_rules

    rules = all_rules()
    stale = []
    for page in sorted(DOCS.glob("rules-*.md")):
        text = page.read_text(encoding="utf-8")
        new = render_page(text, rules)
        if new != text:
            stale.append(page.name)
            if "--check" not in argv:
                page.write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"not current: {', '.join(stale)}; run: python docs/gen_rules_tables.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
