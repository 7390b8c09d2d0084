"""Fixtures for the neuron-compat reports: hand-written result rows (fixtures/results.jsonl) and helpers to
derive variants of them (a regression, a NaN timing, a shard) without repeating whole rows."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

from compat_matrix.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
RESULTS = FIXTURES / "results.jsonl"


def check_golden(name: str, text: str, update_variable: str) -> None:
    """``text`` must equal golden/``name``; with ``update_variable``=1 in the environment, it is (re)written."""
    path = GOLDEN / name
    if os.environ.get(update_variable) == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with {update_variable}=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file (see module docstring)"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def find(rows: list[dict[str, Any]], model_type: str, mode: str) -> dict[str, Any]:
    return next(row for row in rows if row["model_type"] == model_type and row["mode"] == mode)


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    """A fresh deep copy of the fixture rows (10 architectures, 28 jobs), safe to mutate."""
    return copy.deepcopy(read_jsonl(RESULTS))


@pytest.fixture
def jsonl(tmp_path: Path) -> Callable[..., Path]:
    """``jsonl(rows, name="results.jsonl")`` writes rows under tmp_path and returns the path."""

    def write(rows: list[dict[str, Any]], name: str = "results.jsonl") -> Path:
        return write_jsonl(tmp_path / name, rows)

    return write


@pytest.fixture
def cli() -> Callable[..., Any]:
    """``cli("gate", ...)`` runs neuron-compat in-process and returns click's Result (exit_code, output)."""
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        return runner.invoke(main, [str(arg) for arg in args], catch_exceptions=False)

    return invoke
