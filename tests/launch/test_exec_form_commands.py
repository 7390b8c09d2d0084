"""Exec-form commands (Dockerfile JSON arrays, YAML flow lists) naming optimum-cli get the same todo as
shell lines, instead of making the rule fail on the whole file."""

from __future__ import annotations

from codemods._lib.shell import exec_words
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.testing import apply_rules

DOCKERFILE = 'FROM python:3.10\nCMD ["optimum-cli", "export", "neuron", "--model", "gpt2", "--batch_size", "1", "out/"]\n'


def test_exec_words_reads_json_and_yaml_flow_lists() -> None:
    assert exec_words('["optimum-cli", "export", "neuron"]') == ["optimum-cli", "export", "neuron"]
    assert exec_words("['optimum-cli', 'neuron', 'cache']") == ["optimum-cli", "neuron", "cache"]
    assert exec_words("not a list") == []


def test_dockerfile_exec_form_optimum_cli_is_a_todo() -> None:
    result = apply_rules(DOCKERFILE, FileKind.DOCKERFILE, select=["NM4"], path="Dockerfile")
    todos = [f for f in result.findings if f.rule == "NM406"]
    assert [f.severity for f in todos] == [Severity.TODO] and todos[0].line == 2
    assert "gpt2" in todos[0].message
    assert result.text.endswith(DOCKERFILE.splitlines(keepends=True)[1])  # the command itself is left for a human
