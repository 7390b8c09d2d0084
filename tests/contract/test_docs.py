"""Docs that are tested: every shell block of README.md and docs/*.md marked runnable (a fence whose info string
is ``bash runnable``) runs, as written, on small inputs; the generated parts of the docs are current; and every rule's
module docstring has the fixed sections docs/rules-*.md are generated from (docs/gen_rules.py).

A runnable block runs with `bash -euo pipefail` in a fresh folder holding a copy of `examples/` and, as
`scan-out/`, a small neuron-compat result set (tests/reports/fixtures/results.jsonl), with this install's
`neuron-migrate` and `neuron-compat` first on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUNNABLE = re.compile(r"^```bash runnable\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def runnable_blocks() -> list[tuple[str, str]]:
    blocks = []
    for page in PAGES:
        for number, match in enumerate(RUNNABLE.finditer(page.read_text(encoding="utf-8")), start=1):
            blocks.append((f"{page.relative_to(REPO)}#{number}", match.group(1)))
    return blocks


def test_the_docs_mark_blocks_runnable() -> None:
    pages = {name.split("#")[0] for name, _ in runnable_blocks()}
    assert {"README.md", "docs/ci.md"} <= pages


@pytest.mark.parametrize("name, script", runnable_blocks(), ids=[name for name, _ in runnable_blocks()])
def test_runnable_block(tmp_path: Path, name: str, script: str) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    (tmp_path / "scan-out").mkdir()
    shutil.copy(REPO / "tests" / "reports" / "fixtures" / "results.jsonl", tmp_path / "scan-out" / "results.jsonl")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    completed = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, f"{name} exited {completed.returncode}:\n{completed.stdout}\n{completed.stderr}"


def test_rule_pages_are_generated_from_the_rules() -> None:
    completed = subprocess.run([sys.executable, str(REPO / "docs" / "gen_rules.py"), "--check"],
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_rule_tables_cover_every_rule_of_their_families_and_only_registered_rules() -> None:
    from migrate.registry import all_rules

    listed = {rule_id for page in (REPO / "docs").glob("rules-*.md")
              for rule_id in re.findall(r"^\| \[(NM\d{3})\]", page.read_text(encoding="utf-8"), re.MULTILINE)}
    registered = {rule.id for rule in all_rules()}
    assert listed <= registered
    families = {rule_id[:3] for rule_id in listed}
    assert {rule_id for rule_id in registered if rule_id[:3] in families} == listed


def _rule_pages_generator():
    sys.path.insert(0, str(REPO / "docs"))
    try:
        import gen_rules
    finally:
        sys.path.remove(str(REPO / "docs"))
    return gen_rules


#: Rule ids whose module docstring is not yet in the fixed sections (being converted by their family's owner).
PENDING: set[str] = set()


def test_every_rule_docstring_has_the_fixed_sections() -> None:
    """First line ``NMxxx name: summary.``, then What it does / Why / Before / After / Safety / References in
    that order; ``Safety:`` names the rule's safety; References lists a URL or a docs/ path."""
    from migrate.registry import all_rules

    gen_rules = _rule_pages_generator()
    broken = {rule.id: gen_rules.problems(rule) for rule in all_rules() if rule.id not in PENDING}
    broken = {rule_id: found for rule_id, found in broken.items() if found}
    assert not broken, "\n".join(f"{rule_id}: {'; '.join(found)}" for rule_id, found in sorted(broken.items()))


def test_the_docstring_check_rejects_a_docstring_out_of_order() -> None:
    gen_rules = _rule_pages_generator()

    class Rule:
        id, name = "NM999", "example"
        safety = type("Safety", (), {"value": "safe"})

    good = ("NM999 example: do a thing.\n\nWhat it does:\n\n* this\n\nWhy:\n\nBecause.\n\nBefore::\n\n    a\n\n"
            "After::\n\n    b\n\nSafety: safe. Nothing to check.\n\nReferences:\n\n* docs/architecture.md\n")
    swapped = good.replace("What it does:", "WHAT").replace("Why:", "What it does:").replace("WHAT", "Why:")
    assert gen_rules.parse(good).first_line == "NM999 example: do a thing."
    for text, expected in ((good, []), (swapped, ["are not"]), (good.replace("Safety: safe", "Safety: manual-only"),
                           ["the rule's safety is safe"]), (good.replace("docs/architecture.md", "the design"),
                           ["no URL"])):
        module = type(sys)("example_rule")
        module.__doc__ = text
        sys.modules["example_rule"] = module
        Rule.__module__ = "example_rule"
        try:
            found = gen_rules.problems(Rule)
        finally:
            del sys.modules["example_rule"]
        assert all(any(piece in problem for problem in found) for piece in expected) and bool(found) == bool(expected)


def test_a_rule_section_renders_its_docstring_as_markdown() -> None:
    from migrate.registry import all_rules

    gen_rules = _rule_pages_generator()
    mark_step = next(rule for rule in all_rules() if rule.id == "NM302")
    section = gen_rules.render_rule(mark_step)
    assert section.startswith("### NM302 mark-step\n")
    assert "```python\nloss.backward()\noptimizer.step()\nxm.mark_step()" in section  # Before:: -> fenced code
    assert "**Safety**: safe." in section and not re.search(r"(?<!`)``(?!`)", section)  # reST spans converted
    page = (REPO / "docs" / "rules-xla.md").read_text(encoding="utf-8")
    assert section in page and "| [NM302](#nm302-mark-step) | `mark-step` | safe |" in page
