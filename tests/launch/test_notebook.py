"""The notebook handler: only edited ``source`` values change, magics survive, findings say cell and line."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.notebook import parse_positions
from migrate.testing import apply_rules

FIXTURES = Path(__file__).parent.parent / "fixtures" / "notebooks"


def run(text: str, **kwargs):
    return apply_rules(text, FileKind.NOTEBOOK, select=["NM4", "NM5"], path="nb.ipynb", **kwargs)


def make(*sources: str, ensure_ascii: bool = False, **metadata) -> str:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.update(metadata or {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"c{index}"
    text = nbformat.writes(notebook)
    if ensure_ascii:
        text = json.dumps(json.loads(text), indent=1, ensure_ascii=True) + "\n"
    return text


def _outside_sources(text: str) -> list[str]:
    """The raw text between the cells' source values (everything that must stay byte-for-byte)."""
    root = parse_positions(text)
    spans = [cell.members["source"] for cell in root.members["cells"].items]
    pieces, position = [], 0
    for span in spans:
        pieces.append(text[position:span.start])
        position = span.end
    pieces.append(text[position:])
    return pieces


def test_only_sources_change_and_outputs_metadata_stay_byte_for_byte() -> None:
    text = (FIXTURES / "training_nb" / "before" / "finetune.ipynb").read_text(encoding="utf-8")
    result = run(text)
    assert result.text != text
    assert _outside_sources(result.text) == _outside_sources(text)
    before, after = json.loads(text), json.loads(result.text)
    for old, new in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in old.items() if k != "source"} == {k: v for k, v in new.items() if k != "source"}
    nbformat.validate(nbformat.reads(result.text, as_version=4))
    assert "日本語" in result.text  # not re-encoded as \\u escapes


def test_unchanged_notebook_is_returned_as_is() -> None:
    text = (FIXTURES / "nb_nochange" / "before" / "stock.ipynb").read_text(encoding="utf-8")
    assert run(text).text == text


def test_unchanged_lines_keep_their_original_json_tokens() -> None:
    text = make("x = 'caf\u00e9'\n!PJRT_DEVICE=NEURON torchrun train.py\nprint(x)", ensure_ascii=True)
    result = run(text)
    assert '"x = \'caf\\u00e9\'\\n"' in result.text  # the untouched line kept its \\u escape
    assert "!torchrun train.py\n" in json.loads(result.text)["cells"][0]["source"]


def test_string_source_stays_a_string() -> None:
    data = json.loads(make("print(1)"))
    data["cells"][0]["source"] = "!PJRT_DEVICE=NEURON torchrun train.py"
    text = json.dumps(data, indent=1)
    result = run(text)
    assert json.loads(result.text)["cells"][0]["source"] == "!torchrun train.py"


def test_single_line_list_source_keeps_list_layout() -> None:
    text = make("!PJRT_DEVICE=NEURON torchrun train.py")
    result = run(text)
    assert json.loads(result.text)["cells"][0]["source"] == ["!torchrun train.py"]
    assert _outside_sources(result.text) == _outside_sources(text)


def test_magics_survive_with_indentation_and_assignment() -> None:
    source = (
        "import os\n"
        "files = !ls\n"
        "%matplotlib inline\n"
        "for i in range(2):\n"
        "    !PJRT_DEVICE=NEURON torchrun train.py --seed {i}\n"
        "text = '''\n%d items\n'''\n"
        "os.system('PJRT_DEVICE=NEURON torchrun train.py')"
    )
    result = run(make(source))
    new = "".join(json.loads(result.text)["cells"][0]["source"])
    assert new == source.replace("PJRT_DEVICE=NEURON ", "")


def test_env_magic_removed_with_its_note_and_pip_magic_rewritten() -> None:
    result = run(make("%env PJRT_DEVICE=NEURON\n%pip install torch-xla optimum-neuron==0.0.25"))
    new = "".join(json.loads(result.text)["cells"][0]["source"])
    assert "%env" not in new and "PJRT_DEVICE" not in new
    assert any(f.rule == "NM404" and f.severity.value == "fixed" for f in result.findings)
    assert new.count("%pip install") == 1 and '"torch-neuronx==2.14.*"' in new
    assert "torch-xla" not in new


def test_env_magic_bf16_stays_where_no_command_can_take_bf16() -> None:
    """The cell sets XLA_USE_BF16 for a run made elsewhere: --bf16 cannot be added in the same edit, so the setting
    stays (removed alone, the run would silently train in fp32)."""
    result = run(make("%env XLA_USE_BF16=1\nprint('ready')"))
    new = "".join(json.loads(result.text)["cells"][0]["source"])
    assert "%env XLA_USE_BF16=1" in new
    assert "# neuron-migrate: XLA_USE_BF16 was left as it is" in new


def test_findings_name_cell_and_line_and_point_at_the_file_line() -> None:
    text = make("print(1)", "import os\n!PJRT_DEVICE=NEURON torchrun train.py")
    result = run(text)
    finding = next(f for f in result.findings if f.rule == "NM404")
    assert finding.message.startswith("cell 2, line 2: ")
    assert "PJRT_DEVICE" in text.splitlines()[finding.line - 1]


@pytest.mark.parametrize("text", ["{not json", '{"nbformat": 3, "worksheets": []}'])
def test_unparseable_notebook_is_left_untouched_with_an_error(text: str) -> None:
    result = run(text)
    assert result.text == text
    assert [f.severity for f in result.findings] == [Severity.ERROR]


def test_cell_that_does_not_parse_is_left_alone_with_an_error() -> None:
    text = make("def broken(:\n    !PJRT_DEVICE=NEURON torchrun train.py", "!PJRT_DEVICE=NEURON torchrun ok.py")
    result = run(text)
    cells = json.loads(result.text)["cells"]
    assert "PJRT_DEVICE" in "".join(cells[0]["source"])
    assert "".join(cells[1]["source"]) == "!torchrun ok.py"
    assert any(f.severity is Severity.ERROR and f.message.startswith("cell 1, line 1:") for f in result.findings)


def test_writefile_cell_is_migrated_as_the_file_it_writes() -> None:
    text = make("%%writefile requirements.txt\ntorch-xla\noptimum-neuron\n", "%%writefile -a launch.sh\nexport PJRT_DEVICE=NEURON\ntorchrun x.py\n")
    cells = json.loads(run(text).text)["cells"]
    assert "".join(cells[0]["source"]).startswith("%%writefile requirements.txt\n")
    assert "torch-xla" not in "".join(cells[0]["source"]) and "torch-neuronx==2.14.*" in "".join(cells[0]["source"])
    assert "".join(cells[1]["source"]) == "%%writefile -a launch.sh\ntorchrun x.py\n"


def test_non_python_kernel_is_left_alone() -> None:
    text = make("!neuron_parallel_compile torchrun train.py", kernelspec={"name": "ir", "display_name": "R", "language": "R"})
    assert run(text).text == text


def test_idempotent_on_the_fixture() -> None:
    text = (FIXTURES / "training_nb" / "before" / "finetune.ipynb").read_text(encoding="utf-8")
    once = run(text).text
    assert run(once).text == once
