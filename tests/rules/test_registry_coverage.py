"""Every registered rule id has tests a reader can find from the id.

A rule is covered by ``tests/rules/test_<id>_*.py`` (``test_nm306_rendezvous.py``), by a golden fixture whose
``findings.txt`` names it (tests/test_golden.py checks those findings), or by a test module elsewhere under
tests/ whose docstring opens with the id (tests/verify/test_imports.py opens with "NM701: ...").
"""

from __future__ import annotations

import ast
from pathlib import Path

from migrate.registry import all_rules

TESTS = Path(__file__).resolve().parents[1]


def _covered_ids() -> set[str]:
    covered = {path.name.split("_")[1].upper() for path in (TESTS / "rules").glob("test_nm[0-9][0-9][0-9]_*.py")}
    for findings in (TESTS / "fixtures").glob("*/*/findings.txt"):
        covered |= {line.split()[2] for line in findings.read_text().splitlines()
                    if len(line.split()) >= 3 and not line.startswith("#")}
    for module in TESTS.rglob("test_*.py"):
        if "fixtures" in module.parts:
            continue
        docstring = ast.get_docstring(ast.parse(module.read_text())) or ""
        head = docstring.split(maxsplit=1)[0].rstrip(":") if docstring else ""
        covered.add(head)
    return covered


def test_every_rule_id_has_a_test() -> None:
    missing = sorted(rule.id for rule in all_rules() if rule.id not in _covered_ids())
    assert not missing, (
        f"rules with no test: {missing}; add tests/rules/test_<id>_<name>.py "
        "(a change case with its findings, a no-change case; tests/rules/case.py runs the idempotence check)"
    )


def test_every_rule_test_file_names_a_registered_rule() -> None:
    rules = {rule.id: rule.name for rule in all_rules()}
    for path in (TESTS / "rules").glob("test_nm[0-9][0-9][0-9]_*.py"):
        rule_id = path.name.split("_")[1].upper()
        assert rule_id in rules, f"{path.name}: no registered rule {rule_id}"
