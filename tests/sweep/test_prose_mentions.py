"""NM903 and the `info` severity: prose that names the old stack is reported as docs to update, one finding
per line, in every kind of prose (comments, docstrings, strings, Markdown, notebook markdown cells), and never
counts as work for `--check`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner

from migrate.cli import main
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.testing import apply_rules


def _infos(text: str, kind: FileKind, path: str) -> list[tuple[int, str]]:
    result = apply_rules(text, kind, select=["NM9"], path=path)
    assert result.text == text or kind is FileKind.PYTHON
    return [(f.line, f.message) for f in result.findings if f.severity is Severity.INFO]


def test_docstrings_and_comments_are_prose_but_code_keeps_its_todo() -> None:
    source = ('"""Train with the NeuronTrainer."""\n'
              "import torch_xla.core.xla_model as xm  # the XLA model API\n"
              "x = 1  # was xm.mark_step()\n")
    result = apply_rules(source, FileKind.PYTHON, select=["NM9"], path="train.py")
    by_line = {f.line: f for f in result.findings}
    assert by_line[1].severity is Severity.INFO and "`Trainer` (transformers.Trainer)" in by_line[1].message
    assert by_line[2].severity is Severity.TODO and by_line[2].rule == "NM902"  # code: one finding, the todo
    assert by_line[3].severity is Severity.INFO and "`xm.mark_step`" in by_line[3].message
    assert "# neuron-migrate:" not in "".join(result.text.splitlines(keepends=True)[3:])  # no note for prose


def test_a_string_literal_says_it_may_be_a_lookup() -> None:
    [(line, message)] = _infos('BACKEND = "torch_xla"\n', FileKind.PYTHON, "cfg.py")
    assert line == 1 and "a string mentions `torch_xla`" in message and "port the code if it looks the name up" in message


def test_one_finding_per_line_in_markdown_and_rst() -> None:
    text = "Run `neuron_parallel_compile` first, then `torch_xla` takes over.\n\nNothing legacy here.\n"
    assert [line for line, _ in _infos(text, FileKind.DOCS, "README.md")] == [1]
    assert [line for line, _ in _infos(".. note:: set XLA_USE_BF16=1\n", FileKind.DOCS, "docs/index.rst")] == [1]


def test_mentions_that_are_not_legacy_are_not_reported() -> None:
    text = "Install torch-neuronx 2.14; each NeuronCore runs one process. XLA stands for accelerated linear algebra.\n"
    assert _infos(text, FileKind.DOCS, "README.md") == []


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# Demo\n\nPre-compile with `neuron_parallel_compile`.\n")
    (project / "requirements.txt").write_text("torch-neuronx==2.14.*\n")  # a Neuron project, nothing left to do
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    return project


def test_check_reports_info_but_does_not_fail_on_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, [str(project), "--check", "--jobs", "1", "--force", "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "README.md:3:" in result.output and "NM903 [info]" in result.output
    assert "docs to update: 1 legacy mention" in result.output
    data = json.loads(report.read_text())
    assert data["summary"]["findings"]["info"] == 1 and data["summary"]["by_rule"]["NM903"]["info"] == 1


def test_a_tpu_project_gets_no_prose_findings(tmp_path: Path) -> None:
    project = tmp_path / "tpu"
    project.mkdir()
    (project / "README.md").write_text("Train on TPU with torch_xla and `xm.mark_step()`.\n")
    (project / "train.py").write_text("import torch_xla.core.xla_model as xm\n")
    result = CliRunner().invoke(main, [str(project), "--check", "--jobs", "1", "--force"])
    assert "NM903" not in result.output


def test_an_f_string_replacement_field_is_code_not_prose() -> None:
    """rt8Q-10: `f"{xm.get_ordinal()}"` is a call; Python 3.11's tokenizer gives the whole f-string as one string, so
    the call read as a string mentioning `xm.get_ordinal`. The text around the field is still prose."""
    source = ("import torch_xla.core.xla_model as xm\n"
              'print(f"[ordinal {xm.get_ordinal()}] step")\n'
              'print(f"{len(name)} see the xm.save docs")\n')
    result = apply_rules(source, FileKind.PYTHON, select=["NM903"], path="train.py")
    by_line = {f.line: f for f in result.findings}
    assert by_line[2].severity is Severity.TODO and "code in an f-string replacement field uses `xm.get_ordinal`" \
        in by_line[2].message and "docs to update" not in by_line[2].message
    assert by_line[3].severity is Severity.INFO and "`xm.save`" in by_line[3].message  # the text, not the field
    again = apply_rules(result.text, FileKind.PYTHON, select=["NM903"], path="train.py")
    assert again.text == result.text and {f.line for f in again.findings if f.severity is Severity.TODO} == {3}


def test_an_f_string_field_of_a_file_kept_on_torch_xla_is_not_reported() -> None:
    """The file's one note (NM318) covers every torch_xla call it keeps, those in f-strings too."""
    source = ("import torch_xla.core.xla_model as xm\n"
              "from torch_xla.distributed.zero_redundancy_optimizer import ZeroRedundancyOptimizer\n\n"
              "opt = ZeroRedundancyOptimizer([], None)\n"
              'print(f"[ordinal {xm.get_ordinal()}] step")\n')
    result = apply_rules(source, FileKind.PYTHON, select=["NM3", "NM9"], path="train.py")
    assert not [f for f in result.findings if f.rule == "NM903" and "get_ordinal" in f.message]
