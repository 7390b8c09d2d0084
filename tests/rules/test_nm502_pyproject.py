"""NM502: optimum-neuron / torch-xla dependencies in pyproject.toml -> the TorchNeuron stack, through tomlkit."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def test_project_dependencies_and_poetry_string_specs_move() -> None:
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
    # a Poetry string spec gets the same plan, in Poetry's syntax (redteam-round2 D11)
    assert text.endswith('[tool.poetry.dependencies]\ntorch-neuronx = "2.14.*"\ntorch = "2.14.*"\n'
                         'transformers = ">=5.24"\naccelerate = ">=1.15"\n')
    assert findings(result, "NM502") == {(4, "fixed"), (5, "fixed"), (4, "todo"), (12, "fixed")}


def test_poetry_entries_move_with_the_plan_and_table_specs_get_a_todo() -> None:
    # redteam-round2 D11: torch-neuronx = "2.1.2.2.2.0" is the XLA-era build (I7): replaced like a PEP 621 entry;
    # torch / transformers / accelerate follow, torch-xla goes, a table spec keeps its source with a todo
    text = ('[tool.poetry.dependencies]\npython = ">=3.11"\noptimum-neuron = "0.0.24"\n'
            'transformers = "4.41.2"  # pinned\ntorch = "2.1.2"\ntorch-xla = "2.1.2"\n'
            'torch-neuronx = "2.1.2.2.2.0"\nsentencepiece = "*"\n\n[tool.poetry.group.dev.dependencies]\n'
            'neuronx-distributed = { version = "0.8.0", source = "neuron" }\npytest = "^7.4"\n\n'
            '[[tool.poetry.source]]\nname = "neuron"\nurl = "https://pip.repos.neuron.amazonaws.com"\n')
    result = migrate(text, "NM502", kind=FileKind.PYPROJECT, path="pyproject.toml", neuron_project=True)
    assert result.text.startswith('[tool.poetry.dependencies]\npython = ">=3.11"\naccelerate = ">=1.15"\n'
                                  'transformers = ">=5.24"  # pinned\ntorch = "2.14.*"\ntorch-neuronx = "2.14.*"\n'
                                  'sentencepiece = "*"\n\n[tool.poetry.group.dev.dependencies]\n# neuron-migrate: '
                                  "poetry dependency neuronx-distributed is not a plain version string (a table with "
                                  "version / source / markers, or several constraints), so it was left for you: "
                                  "remove it (neuronx-distributed (NxD) runs on PyTorch/XLA")
    assert 'neuronx-distributed = { version = "0.8.0", source = "neuron" }\npytest = "^7.4"\n' in result.text
    assert findings(result, "NM502") == {(3, "fixed"), (4, "fixed"), (5, "fixed"), (6, "fixed"), (7, "fixed"),
                                         (11, "todo")}
    # no change: entries already on the stack, or packages the plan does not touch
    unchanged('[tool.poetry.dependencies]\npython = "^3.11"\ntorch-neuronx = "2.14.*"\ntransformers = ">=5.24"\n'
              'requests = { version = "^2.31", optional = true }\n', "NM502", kind=FileKind.PYPROJECT,
              path="pyproject.toml", neuron_project=True)


def test_a_kept_optimum_neuron_holds_the_poetry_entries_beside_it() -> None:
    # the same hold as in a requirements file: scripts/cache.py still imports optimum.neuron after the run
    text = '[tool.poetry.dependencies]\noptimum-neuron = "0.3.0"\ntransformers = "4.51.3"\n'
    kept = "from optimum.neuron.utils.cache_utils import get_hf_hub_cache_repos\n\nprint(get_hf_hub_cache_repos())\n"
    result = migrate(text, "NM502", kind=FileKind.PYPROJECT, path="pyproject.toml", neuron_project=True,
                     project={"scripts/cache.py": kept})
    assert result.text.endswith('optimum-neuron = "0.3.0"\n# neuron-migrate: transformers==4.51.3 was left as it is: '
                                "it goes with optimum-neuron, kept because scripts/cache.py still imports "
                                "optimum.neuron; move it together with optimum-neuron (transformers==4.51.3 (pinned "
                                "beside optimum-neuron) excludes transformers 5.24, the version the TorchNeuron port "
                                'is tested with -> >=5.24)\ntransformers = "4.51.3"\n')


def test_an_optimum_neuron_table_entry_left_for_the_user_holds_the_entries_beside_it() -> None:
    """A table spec is left as written (with the decision as a todo), so optimum-neuron 0.0.22 stays installed: the
    pins beside it stay with it, or the file resolves on neither stack (final check: transformers moved to >=5.24
    next to an optimum-neuron that pins transformers 4.36)."""
    text = ('[tool.poetry.dependencies]\npython = ">=3.11"\n'
            'optimum-neuron = {version = "^0.0.22", extras = ["neuronx"]}\n'
            'torch-neuronx = "==2.1.2.2.1.0"\ntransformers = "^4.41.1"\nfastapi = "^0.110"\n')
    result = migrate(text, "NM502", kind=FileKind.PYPROJECT, path="pyproject.toml", neuron_project=True)
    code = [line for line in result.text.splitlines() if not line.startswith("# neuron-migrate:")]
    assert code == text.splitlines()  # nothing rewritten
    notes = [line for line in result.text.splitlines() if line.startswith("# neuron-migrate:")]
    assert "so it was left for you: make it" in notes[0]  # what the entry should become, not the hold
    assert all("it goes with optimum-neuron, whose Poetry table entry is left for you to replace" in note
               for note in notes[1:]) and len(notes) == 3
    assert findings(result, "NM502") == {(3, "todo"), (4, "todo"), (5, "todo")}


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


def test_a_one_time_converter_gets_the_old_pins_in_a_dependency_group_of_their_own() -> None:
    # rt7L L14 (mistral-cpt-pp): the dependencies move for the migrated train.py; consolidate.py's old stack goes
    # to [dependency-groups] legacy-convert, which pip installs alone (an extra would be installed with the
    # dependencies, whose transformers>=5.24 conflicts with its ==4.55.4)
    body = ('[project]\nname = "x"\nversion = "0"\ndependencies = [\n  "optimum-neuron[training]==0.4.1",\n'
            '  "transformers==4.55.4",\n  "datasets>=3.0",\n]\n')
    converter = ("from optimum.neuron.models.training import consolidate_model_parallel_checkpoints_to_unified_"
                 "checkpoint\n\nconsolidate_model_parallel_checkpoints_to_unified_checkpoint('a', 'b')\n")
    project = {"src/consolidate.py": converter,
               "src/train.py": "from optimum.neuron import NeuronTrainer\n\ntrainer = NeuronTrainer(model=None)\n"}
    result = migrate(body, "NM502", kind=FileKind.PYPROJECT, path="pyproject.toml", project=project)
    import tomllib

    data = tomllib.loads(result.text)
    assert "transformers>=5.24" in data["project"]["dependencies"]
    assert not any(spec.startswith("optimum-neuron") for spec in data["project"]["dependencies"])
    assert data["dependency-groups"]["legacy-convert"] == ["optimum-neuron[training]==0.4.1", "transformers==4.55.4"]
    assert "legacy-convert" not in data["project"].get("optional-dependencies", {})
    notes = [f.message for f in result.findings if f.rule == "NM502"]
    assert any("src/consolidate.py, the one-time checkpoint conversion" in note and "then delete this group" in note
               for note in notes)
