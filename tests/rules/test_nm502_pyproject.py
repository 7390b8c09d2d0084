"""NM502: optimum-neuron / torch-xla dependencies in pyproject.toml -> the TorchNeuron stack, through tomlkit."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def test_project_dependencies_move_and_poetry_tables_get_a_todo() -> None:
    result = migrate(
        """
        [project]
        name = "trainer"
        dependencies = [
            "optimum-neuron[neuronx]==0.3.0",  # pinned
            "torch-xla",
        ]

        [project.optional-dependencies]
        dev = ["pytest"]

        [tool.poetry.dependencies]
        optimum-neuron = "^0.3.0"
        """,
        "NM502",
        kind=FileKind.PYPROJECT,
        path="pyproject.toml",
    )
    text = result.text
    assert '    "torch-neuronx==2.14.*",  # pinned\n    "torch==2.14.*",\n' in text  # the comment stays on its line
    assert '"transformers>=5.24"' in text and '"accelerate>=1.15"' in text
    assert "torch-xla" not in text.split("[project.optional-dependencies]")[0]
    assert 'dev = ["pytest"]' in text  # what the rule does not touch keeps its layout
    assert 'optimum-neuron = "^0.3.0"' in text  # poetry syntax differs: left to the reviewer
    assert findings(result, "NM502") == {(4, "fixed"), (5, "fixed"), (4, "todo"), (12, "todo")}


def test_a_file_tomlkit_cannot_parse_gets_a_todo_and_no_edit() -> None:
    source = '[project\ndependencies = ["optimum-neuron"]\n'
    result = migrate(source, "NM502", kind=FileKind.PYPROJECT, path="pyproject.toml")
    assert result.text.endswith(source)
    assert findings(result, "NM502") == {(1, "todo")}


def test_a_stock_pyproject_is_left_alone() -> None:
    unchanged(
        """
        [project]
        dependencies = ["transformers>=5.24", "accelerate>=1.15"]
        """,
        "NM502",
        kind=FileKind.PYPROJECT,
        path="pyproject.toml",
    )
