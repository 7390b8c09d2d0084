"""Docs that are tested: every shell block of README.md and docs/*.md marked runnable (a fence whose info string
is ``bash runnable``) runs, as written, on small inputs; and the generated parts of the docs are current.

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


def test_rule_tables_are_generated_from_the_rules() -> None:
    completed = subprocess.run([sys.executable, str(REPO / "docs" / "gen_rules_tables.py"), "--check"],
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_rule_tables_cover_every_rule_of_their_families_and_only_registered_rules() -> None:
    from migrate.registry import all_rules

    listed = {rule_id for page in (REPO / "docs").glob("rules-*.md")
              for rule_id in re.findall(r"^\| (NM\d{3}) \|", page.read_text(encoding="utf-8"), re.MULTILINE)}
    registered = {rule.id for rule in all_rules()}
    assert listed <= registered
    families = {rule_id[:3] for rule_id in listed}
    assert {rule_id for rule_id in registered if rule_id[:3] in families} == listed
