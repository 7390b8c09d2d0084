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


def test_a_python_range_below_the_migrated_stack_gets_a_todo() -> None:
    # redteam-round2 D3: transformers 5.24 requires Python 3.11; a requires-python that admits 3.8 cannot install
    # there, and Poetry's python = ">=3.8,<3.11" excludes every Python it supports (poetry lock fails)
    text = '[project]\nname = "x"\nrequires-python = ">=3.8"\ndependencies = ["optimum-neuron==0.3.0"]\n'
    result = migrate(text, "NM502", kind=FileKind.PYPROJECT, path="pyproject.toml", neuron_project=True)
    assert ("# neuron-migrate: requires-python '>=3.8': transformers 5.24.0, which these dependencies install after "
            "the migration, requires Python>=3.11; the range admits Pythons below 3.11, where it cannot be "
            "installed: raise its lower bound to >=3.11\nrequires-python = \">=3.8\"\n") in result.text
    poetry = ('[tool.poetry.dependencies]\npython = ">=3.8,<3.11"\ntransformers = "^5.24"\n')
    result = migrate(poetry, "NM502", kind=FileKind.PYPROJECT, path="pyproject.toml", neuron_project=True)
    assert result.text.startswith("[tool.poetry.dependencies]\n# neuron-migrate: python '>=3.8,<3.11': transformers "
                                  "5.24.0, which these dependencies install after the migration, requires "
                                  "Python>=3.11; the range excludes every Python it supports: allow >=3.11\n")
    assert findings(result, "NM502") == {(2, "todo")}
    # no change: a range from 3.11 on, or dependencies that need no newer Python
    unchanged(text.replace(">=3.8", ">=3.11").replace("optimum-neuron==0.3.0", "transformers>=5.24"), "NM502",
              kind=FileKind.PYPROJECT, path="pyproject.toml", neuron_project=True)
    unchanged(poetry.replace("^5.24", "4.41.2").replace("transformers", "requests"), "NM502",
              kind=FileKind.PYPROJECT, path="pyproject.toml", neuron_project=True)
