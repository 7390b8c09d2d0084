"""Golden before/after fixtures for every rule family, discovered from tests/fixtures/.

Layout (one folder per case)::

    tests/fixtures/<family>/family.json          {"select": ["NM1"]}  rule prefixes the family runs with
    tests/fixtures/<family>/<case>/before/<file>  the input; its file NAME decides the kind (train.py,
                                                  Dockerfile, requirements.txt, run.sh, nb.ipynb ...)
    tests/fixtures/<family>/<case>/after/<file>   the expected output; ABSENT means "must not change"
    tests/fixtures/<family>/<case>/options.json   optional: select, ignore, device_style, neuron_project,
                                                  inline_notes
    tests/fixtures/<family>/<case>/findings.txt   optional: expected findings, one "LINE SEVERITY RULE"
                                                  per line (order-insensitive, exact set)
    tests/fixtures/<family>/<case>/project/<file> optional: other files of the project (the scripts a launcher
                                                  runs), seen by the rules' project facts, not migrated here

Every case is also checked for idempotence (a second run changes nothing) and, for Python output, that
the result parses. Set NM_UPDATE_GOLDEN=1 to (re)write after/ files from the current output; then READ
the diff before committing.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from migrate.filekinds import FileKind, kind_from_content, kind_from_name
from migrate.testing import apply_rules

FIXTURES = Path(__file__).parent / "fixtures"


def _cases():
    for family_file in sorted(FIXTURES.glob("*/family.json")):
        family = family_file.parent
        for case in sorted(p for p in family.iterdir() if (p / "before").is_dir()):
            for source in sorted((case / "before").rglob("*")):
                if source.is_file():
                    yield pytest.param(family, case, source, id=f"{family.name}/{case.name}/{source.name}")


def _kind(path: Path) -> FileKind:
    kind = kind_from_name(path) or kind_from_content(path.read_bytes()[:128])
    assert kind is not None, f"fixture {path} has a name that no file kind claims"
    return kind


def _options(family: Path, case: Path) -> dict:
    options = json.loads((family / "family.json").read_text())
    if (case / "options.json").exists():
        options.update(json.loads((case / "options.json").read_text()))
    return options


@pytest.mark.parametrize("family, case, source", list(_cases()))
def test_golden(family: Path, case: Path, source: Path) -> None:
    options = _options(family, case)
    kind = _kind(source)
    relative = source.relative_to(case / "before")
    text = source.read_bytes().decode("utf-8")
    # before/ and project/ are the project: rules with project facts see its other files
    project = {p.relative_to(folder).as_posix(): p.read_bytes().decode("utf-8", "replace")
               for folder in (case / "project", case / "before") for p in sorted(folder.rglob("*")) if p.is_file()}
    options = {**options, "project": project}
    result = apply_rules(text, kind, path=str(relative), **options)
    expected_path = case / "after" / relative
    if os.environ.get("NM_UPDATE_GOLDEN") and result.text != text:
        expected_path.parent.mkdir(parents=True, exist_ok=True)
        expected_path.write_bytes(result.text.encode("utf-8"))
    expected = expected_path.read_bytes().decode("utf-8") if expected_path.exists() else text
    assert result.text == expected
    if kind is FileKind.PYTHON:
        ast.parse(result.text)
    again = apply_rules(result.text, kind, path=str(relative), **options)
    assert again.text == result.text, "a second run changed the output (not idempotent)"
    findings_file = case / "findings.txt"
    if findings_file.exists():
        expected_findings = sorted(
            tuple(line.split()[:3]) for line in findings_file.read_text().splitlines() if line.strip() and not line.startswith("#")
        )
        actual = sorted((str(f.line), f.severity.value, f.rule) for f in result.findings)
        assert actual == expected_findings


def test_every_family_has_a_no_change_case() -> None:
    for family_file in FIXTURES.glob("*/family.json"):
        family = family_file.parent
        cases = [p for p in family.iterdir() if (p / "before").is_dir()]
        assert cases, f"{family.name} has no cases"
        assert any(not (case / "after").exists() for case in cases), f"{family.name} has no no-change case"
