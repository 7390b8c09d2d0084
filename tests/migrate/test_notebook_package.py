"""The notebook package's parts: the JSON is parsed once per text, the positions parser agrees with ``json``,
IPython lines are masked and put back as they were, and the handler's errors are the engine's NM000."""

from __future__ import annotations

import json

import nbformat
import pytest

import migrate.notebook
from migrate.filekinds import FileKind
from migrate.findings import ENGINE_RULE, Severity
from migrate.notebook import magics
from migrate.notebook.json_positions import parse_positions
from migrate.testing import apply_rules


def notebook(*sources: str, language: str = "python") -> str:
    document = nbformat.v4.new_notebook()
    document.metadata["kernelspec"] = {"name": "k", "display_name": "K", "language": language}
    document.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for index, cell in enumerate(document.cells):
        cell["id"] = f"c{index}"
    return nbformat.writes(document)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every text the handler parses with the positions parser, and every one ``json.loads`` reads."""
    seen: list[tuple[str, str]] = []
    real_positions, real_loads = migrate.notebook.parse_positions, json.loads

    def counting_positions(text: str):
        seen.append(("positions", text))
        return real_positions(text)

    def counting_loads(text, *args, **kwargs):
        seen.append(("json", text))
        return real_loads(text, *args, **kwargs)

    monkeypatch.setattr(migrate.notebook, "parse_positions", counting_positions)
    monkeypatch.setattr(json, "loads", counting_loads)
    return seen


def test_a_notebook_nothing_changes_is_parsed_once(parses: list[tuple[str, str]]) -> None:
    text = notebook("import torch\nprint(torch.ones(1))")
    result = apply_rules(text, FileKind.NOTEBOOK, path="nb.ipynb")
    assert result.text == text
    assert [parse for parse in parses if parse[1] == text] == [("positions", text)]  # not json.loads too


def test_a_migrated_notebook_is_parsed_once_per_text(parses: list[tuple[str, str]]) -> None:
    text = notebook("import torch_xla.core.xla_model as xm\ndevice = xm.xla_device()\n!XLA_USE_BF16=1 python train.py")
    result = apply_rules(text, FileKind.NOTEBOOK, path="nb.ipynb")
    assert result.text != text
    positions = [parsed for kind, parsed in parses if kind == "positions"]
    assert len(positions) == 2 and positions[0] == text  # the second pass reads the first one's output
    assert not [parsed for kind, parsed in parses if kind == "json" and parsed in positions]


@pytest.mark.parametrize("document", [
    '{"a": [1, -2.5e3, true, false, null, "x\\u00e9\\n"], "b": {}, "c": [], "a2": {"k": "v"}}',
    '  [ "one" , {"two": [ ] } ]  ',
    '"just a string"',
])
def test_the_positions_parser_reads_what_json_reads(document: str) -> None:
    def value(node):
        if node.kind == "object":
            return {key: value(member) for key, member in node.members.items()}
        if node.kind == "array":
            return [value(item) for item in node.items]
        return node.value if node.kind == "string" else json.loads(node.text(document))

    root = parse_positions(document)
    assert value(root) == json.loads(document)
    assert json.loads(root.text(document)) == json.loads(document)


@pytest.mark.parametrize("document", ['{"a": 1,}', '[1 2]', '{"a" 1}', "NaN", '{"a": 1} x', '"\x01"', "01"])
def test_the_positions_parser_rejects_what_is_not_json(document: str) -> None:
    with pytest.raises(ValueError):
        parse_positions(document)


def test_bad_json_is_an_engine_error_in_json_s_words() -> None:
    result = apply_rules('{"cells": [}', FileKind.NOTEBOOK, path="nb.ipynb")
    assert [(f.rule, f.severity) for f in result.findings] == [(ENGINE_RULE, Severity.ERROR)]
    with pytest.raises(ValueError) as raised:
        json.loads('{"cells": [}')
    assert str(raised.value) in result.findings[0].message


def test_a_cell_that_does_not_parse_is_an_engine_error() -> None:
    result = apply_rules(notebook("def broken(:\n    import torch_xla"), FileKind.NOTEBOOK, path="nb.ipynb")
    assert [(f.rule, f.severity) for f in result.findings] == [(ENGINE_RULE, Severity.ERROR)]
    assert result.findings[0].message.startswith("cell 1, line 1: does not parse as Python")


def test_a_kernel_that_is_not_python_is_left_alone() -> None:
    text = notebook("!XLA_USE_BF16=1 python train.py", language="R")
    result = apply_rules(text, FileKind.NOTEBOOK, path="nb.ipynb")
    assert (result.text, result.findings) == (text, [])


def test_masked_lines_come_back_as_they_were() -> None:
    cell = 'x = 1\n!pip install a \\\n    b\n  %env A=1\ns = """\n%not a magic\n"""\nout = !ls\n'
    masked, found = magics.mask(cell)
    assert "!" not in masked and "%env" not in masked and "%not a magic" in masked  # text in a string stays
    assert [magic.start for magic in found] == [2, 4, 8]
    assert magics.unmask(masked, found, lambda magic: magic.lines) == cell


def test_a_placeholder_the_rules_dropped_is_noticed() -> None:
    masked, found = magics.mask("!ls\nprint(1)\n")
    assert magics.unmask(masked.replace(masked.splitlines(keepends=True)[0], ""), found, lambda m: m.lines) is None


@pytest.mark.parametrize(("line", "expected"), [
    ("!ls -la\n", ("!", "ls -la\n", "shell")),
    ("files = !ls\n", ("files = !", "ls\n", "shell")),
    ("%sx ls\n", ("%sx ", "ls\n", "shell")),
    ("%pip install a\n", ("%", "pip install a\n", "shell")),
    ("%env XLA_USE_BF16=1\n", ("", "export XLA_USE_BF16=1\n", "env")),
    ("%matplotlib inline\n", None),
    ("%%bash\n", None),
])
def test_which_magics_the_shell_rules_see(line: str, expected: tuple[str, str, str] | None) -> None:
    magic = magics.mask(line)[1][0]
    command = magics.shell_command(magic)
    assert (None if command is None else (command.prefix, command.text, command.mode)) == expected
