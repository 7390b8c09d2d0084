"""NM505: pip install commands (shell, Dockerfile, YAML) move from optimum-neuron / PyTorch-XLA to TorchNeuron."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def test_pip_lines_and_a_heredoc_requirements_file() -> None:
    result = migrate(
        """
        #!/bin/bash
        pip install --upgrade optimum-neuron[neuronx]==0.0.25 --extra-index-url https://pip.repos.neuron.amazonaws.com
        pip install torch-xla libneuronxla
        cat > requirements.txt <<EOF
        torch-xla==2.1.2
        datasets
        EOF
        cat > run.py <<EOF
        import torch_xla
        EOF
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="setup.sh",
    )
    lines = result.text.splitlines()
    assert lines[1] == ('pip install --upgrade "torch-neuronx==2.14.*" "torch==2.14.*" "transformers>=5.24" '
                        '"accelerate>=1.15" --extra-index-url https://pip.repos.neuron.amazonaws.com')
    assert "pip install torch-xla libneuronxla" in lines  # nothing would be left to install: a todo, no edit
    assert "cat > requirements.txt <<EOF\ndatasets\nEOF" in result.text  # the requirements heredoc loses torch-xla
    assert "import torch_xla" in lines  # a heredoc holding code is not a requirements file
    assert findings(result, "NM505") == {(2, "fixed"), (3, "todo"), (5, "fixed")}


def test_dockerfile_run_keeps_the_quote_style_and_skips_option_values() -> None:
    result = migrate(
        """
        RUN python -m pip install "optimum-neuron[training]==0.0.25" -r requirements.txt
        """,
        "NM505",
        kind=FileKind.DOCKERFILE,
        path="Dockerfile",
    )
    # torch-neuronx is not on PyPI: the rewritten command names AWS's Neuron repository itself
    assert result.text.endswith('RUN python -m pip install --extra-index-url https://pip.repos.neuron.amazonaws.com '
                                '"torch-neuronx==2.14.*" "torch==2.14.*" "transformers>=5.24" "accelerate>=1.15" '
                                '"trl>=1.16" "peft>=0.21" datasets -r requirements.txt\n')
    assert findings(result, "NM505") == {(1, "fixed")}


def test_conda_environment_pip_section() -> None:
    result = migrate(
        """
        name: neuron
        dependencies:
          - python=3.11
          - pip:
            - optimum-neuron==0.0.25
            - datasets
        """,
        "NM505",
        kind=FileKind.YAML,
        path="environment.yml",
    )
    assert "    - torch-neuronx==2.14.*\n    - torch==2.14.*\n" in result.text
    assert "    - datasets\n" in result.text and "  - python=3.11\n" in result.text
    assert findings(result, "NM505") == {(5, "fixed"), (5, "todo")}


def test_a_transformers_pin_beside_a_4x_examples_checkout_stays_with_a_todo() -> None:
    result = migrate(
        """
        git clone https://github.com/huggingface/transformers --branch v4.52.3
        pip install transformers==4.52.3
        python transformers/examples/pytorch/language-modeling/run_clm.py
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="run.sh",
    )
    assert "pip install transformers==4.52.3\n" in result.text
    todo = next(f for f in result.findings if f.rule == "NM505")
    assert todo.severity.value == "todo" and "clones transformers at v4.52.3" in todo.message


def test_a_stock_pip_line_is_left_alone() -> None:
    unchanged(
        """
        pip install "transformers>=5.24" accelerate datasets
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="setup.sh",
    )


def test_a_rewritten_pip_line_gets_the_neuron_repository_in_the_same_command() -> None:
    result = migrate(
        """
        pip install -U "torch-neuronx==2.1.2.2.0.0" "transformers==4.43.2"
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="setup.sh",
    )
    assert result.text == ('pip install --extra-index-url https://pip.repos.neuron.amazonaws.com -U '
                           '"torch-neuronx==2.14.*" "transformers>=5.24"\n')
    assert not any("placeholders): install with" in f.message for f in result.findings)


def test_a_command_that_already_names_the_neuron_repository_gets_no_second_one() -> None:
    result = migrate(
        """
        pip install -i https://pip.repos.neuron.amazonaws.com torch-neuronx==2.1.2.2.0.0
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="setup.sh",
    )
    assert result.text.count("pip.repos.neuron.amazonaws.com") == 1 and '"torch-neuronx==2.14.*"' in result.text


def test_an_old_numpy_pin_without_wheels_for_the_stack_python_is_bumped() -> None:
    """transformers 5.24 needs Python 3.11; numpy publishes cp311 wheels from 1.23.2 on, so `numpy<=1.20.0` beside
    it has nothing to install (its metadata floor, numpy>=1.17, does not catch that)."""
    result = migrate(
        """
        pip install -U "numpy<=1.20.0" "transformers==4.52.3" datasets
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="clip.sh",
    )
    assert result.text == 'pip install -U "numpy>=1.23.2" "transformers>=5.24" datasets\n'
    [numpy] = [f for f in result.findings if "numpy" in f.message]
    assert numpy.severity.value == "fixed" and "Python 3.11 from 1.23.2" in numpy.message


def test_companions_of_a_held_transformers_4x_stay_with_it() -> None:
    """transformers==4.52.3 stays for the v4.52.3 example scripts: accelerate and huggingface_hub must not move to
    the transformers-5 floors beside it (a half-moved environment); each gets a todo saying why."""
    result = migrate(
        """
        git clone https://github.com/huggingface/transformers --branch v4.52.3
        pip install -U "transformers==4.52.3" "accelerate==1.9.0" "huggingface_hub==0.30.2" "numpy<=1.20.0" evaluate
        pip install "tokenizers==0.21.1"
        python transformers/examples/pytorch/text-classification/run_glue.py
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="glue.sh",
    )
    assert ('pip install -U "transformers==4.52.3" "accelerate==1.9.0" "huggingface_hub==0.30.2" "numpy<=1.20.0" '
            'evaluate\n' in result.text)
    assert 'pip install "tokenizers==0.21.1"\n' in result.text  # another command of the same file: held too
    todos = [f for f in result.findings if f.severity.value == "todo"]
    assert len(todos) == 5
    held = [f for f in todos if "goes with transformers==4.52.3" in f.message]
    assert {f.message.split(" was left")[0] for f in held} == {"accelerate==1.9.0", "huggingface_hub==0.30.2",
                                                                "numpy<=1.20.0", "tokenizers==0.21.1"}
    assert all(f.severity.value != "fixed" for f in result.findings)


def test_companions_move_when_the_checkout_is_5x() -> None:
    result = migrate(
        """
        git clone https://github.com/huggingface/transformers --branch v5.24.0
        pip install "transformers==4.52.3" "accelerate==1.9.0"
        python transformers/examples/pytorch/text-classification/run_glue.py
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="glue.sh",
    )
    assert 'pip install "transformers>=5.24" "accelerate>=1.15"\n' in result.text


def test_a_command_with_its_own_package_index_gets_a_todo_not_a_second_index() -> None:
    result = migrate(
        """
        pip install --index-url https://mirror.example.invalid/simple torch-neuronx==2.1.2.2.0.0
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="setup.sh",
    )
    mirror = 'pip install --index-url https://mirror.example.invalid/simple "torch-neuronx==2.14.*"\n'
    assert result.text.endswith("\n" + mirror)
    assert result.text.startswith("# neuron-migrate: torch-neuronx (and neuronx-cc) are published")
    assert findings(result, "NM505") == {(1, "fixed"), (1, "todo")}


def test_optimum_neuron_beside_a_held_transformers_4x_gets_no_transformers_5_companions() -> None:
    result = migrate(
        """
        git clone https://github.com/huggingface/transformers --branch v4.52.3
        pip install optimum-neuron==0.0.25
        python transformers/examples/pytorch/language-modeling/run_clm.py
        """,
        "NM505",
        kind=FileKind.SHELL,
        path="run.sh",
    )
    neuron_only = ('pip install --extra-index-url https://pip.repos.neuron.amazonaws.com "torch-neuronx==2.14.*" '
                   '"torch==2.14.*"')
    assert neuron_only + "\n" in result.text
    [note] = [f for f in result.findings if "not added" in f.message]
    assert note.severity.value == "todo" and "transformers>=5.24, accelerate>=1.15 not added" in note.message


def test_an_inf1_setup_script_is_left_as_it_is_with_one_todo() -> None:
    # the Inf1 stack in one command makes the whole file an Inf1 setup: no command of it gets the TorchNeuron stack
    source = """
        #!/bin/bash
        pip install neuron-cc[tensorflow] "optimum[neuron]==1.20.0" --extra-index-url https://pip.repos.neuron.amazonaws.com
        pip install optimum-neuron==0.0.23 torch-xla
        """
    result = migrate(source, "NM505", kind=FileKind.SHELL, path="setup.sh")
    lines = [line for line in result.text.splitlines() if not line.startswith("# neuron-migrate:")]
    assert lines == [line.strip() for line in source.strip().splitlines()]
    assert findings(result, "NM505") == {(2, "todo")}
    assert "an Inf1 requirement set (neuron-cc[tensorflow], optimum[neuron])" in result.text


def test_the_package_of_a_command_the_script_still_runs_stays() -> None:
    # D7: optimum-cli export stays (NM406 todo), so the optimum[neuronx] that installs it stays too, with a todo
    source = """
        #!/bin/bash
        pip install "optimum[neuronx, diffusers]"
        optimum-cli export neuron --model stabilityai/stable-diffusion-2-1-base --batch_size 1 sd_neuron/
        """
    result = migrate(source, "NM505", kind=FileKind.SHELL, path="app/build.sh")
    assert 'pip install "optimum[neuronx, diffusers]"\n' in result.text
    assert "this file runs `optimum-cli export neuron`, which optimum / optimum-neuron install" in result.text
    assert findings(result, "NM505") == {(2, "todo")}
    # neuron_parallel_compile still run by the script: the XLA-era stack that installs it stays, every line of it
    source = """
        pip install torch-neuronx==2.1.2.2.0.0 torch-xla==2.1.2 transformers==4.43.2
        neuron_parallel_compile torchrun --nproc_per_node 2 train.py
        """
    result = migrate(source, "NM505", kind=FileKind.SHELL, path="train.sh")
    assert "pip install torch-neuronx==2.1.2.2.0.0 torch-xla==2.1.2 transformers==4.43.2\n" in result.text
    assert "this file still runs neuron_parallel_compile" in result.text
    assert findings(result, "NM505") == {(1, "todo")}


def test_a_command_the_launch_rules_remove_does_not_hold_the_package() -> None:
    # NM406 removes `optimum-cli neuron cache set` (on a line of its own); NM505 then sees no optimum-cli left
    from migrate.testing import apply_rules

    text = "pip install optimum-neuron==0.0.25\noptimum-cli neuron cache set my-org/cache\n"
    result = apply_rules(text, FileKind.SHELL, select=["NM406", "NM505"], path="setup.sh")
    assert "optimum-cli" not in result.text and '"torch-neuronx==2.14.*"' in result.text
    # and an echo of the command is no run of it
    unchanged_text = 'echo "use optimum-cli export neuron"\npip install optimum-neuron==0.0.25\n'
    result = migrate(unchanged_text, "NM505", kind=FileKind.SHELL, path="setup.sh")
    assert '"torch-neuronx==2.14.*"' in result.text


def _shell(text: str, kind: FileKind = FileKind.SHELL):
    return migrate(text, "NM505", kind=kind, path="Dockerfile" if kind is FileKind.DOCKERFILE else "setup.sh")


def test_an_xla_only_install_in_a_chain_that_goes_on_without_it_is_deleted() -> None:
    deleted = {
        "pip install sagemaker && pip install torch-xla\n": "pip install sagemaker\n",
        "pip install sagemaker && pip install torch-xla && echo ok\n": "pip install sagemaker && echo ok\n",
        "pip install sagemaker && pip install torch-xla || true\n": "pip install sagemaker || true\n",
        "pip install sagemaker && pip install torch-xla; echo ok\n": "pip install sagemaker; echo ok\n",
        "pip install torch-xla && echo ok\n": "echo ok\n",
        "pip install torch-xla; echo ok\n": "echo ok\n",
        "echo a; pip install torch-xla; echo b\n": "echo a; echo b\n",
        "pip install sagemaker && \\\n    pip install libneuronxla\necho next\n": "pip install sagemaker\necho next\n",
        "pip install sagemaker && \\\n    pip install torch-xla && \\\n    echo ok\n":
            "pip install sagemaker && \\\n    echo ok\n",
    }
    for before, after in deleted.items():
        result = _shell(before)
        assert result.text == after, before
        assert [severity for _, severity in findings(result, "NM505")] == ["fixed"], before
    result = _shell("RUN pip install torch-xla && \\\n    pip install datasets\n", FileKind.DOCKERFILE)
    assert result.text == "RUN \\\n    pip install datasets\n"


def test_an_xla_only_install_the_chain_depends_on_stays_with_a_todo_naming_it() -> None:
    for text in ("pip install sagemaker || pip install torch-xla\n",  # a fallback
                 "pip install torch-xla || echo failed\n",
                 "echo a; pip install torch-xla || true\n",
                 "pip install sagemaker && pip install torch-xla | tee log\n",
                 "if true; then pip install torch-xla && echo ok; fi\n"):
        result = _shell(text)
        assert result.text.endswith(text), text
        assert "`pip install torch-xla` only installs packages of the XLA-era stack" in result.text \
            or "`then pip install torch-xla` only installs" in result.text, text
        assert findings(result, "NM505") == {(1, "todo")}, text


def test_two_pip_commands_of_one_line_are_both_rewritten() -> None:
    # the edits are made right to left: the first command's edit no longer garbles the second's positions
    result = _shell("pip install optimum-neuron==0.0.25 && pip install torch-neuronx==2.1.2.2.0.0\n")
    repo = "--extra-index-url https://pip.repos.neuron.amazonaws.com"
    assert result.text == (f'pip install {repo} "torch-neuronx==2.14.*" "torch==2.14.*" "transformers>=5.24" '
                           f'"accelerate>=1.15" && pip install {repo} "torch-neuronx==2.14.*"\n')


def test_only_the_same_file_or_notebook_running_optimum_cli_holds_the_package() -> None:
    # app/compile.sh installs its environment; app/export.sh and app/compile.py run optimum-cli export (each with
    # its own NM406 todo: delete it): neither holds compile.sh's optimum-neuron (redteam-round2 D5), but the
    # replaced install is a todo naming the command (redteam-final 3)
    text = "pip install optimum-neuron==0.0.25\npython /compile.py\n"
    for path, command in {"app/export.sh": "optimum-cli export neuron --model m out/\n",
                          "app/compile.py": "import subprocess\n"
                                            "subprocess.run(['optimum-cli', 'export', 'neuron', 'out/'])\n"}.items():
        result = migrate(text, "NM505", kind=FileKind.SHELL, path="app/compile.sh", project={path: command})
        assert '"torch-neuronx==2.14.*"' in result.text, path
        assert f"{path} still runs `optimum-cli export`, which optimum-neuron installed" in result.text, path
    # an export in a folder it does not install for is not named
    result = migrate(text, "NM505", kind=FileKind.SHELL, path="app/compile.sh",
                     project={"other/export.sh": "optimum-cli export neuron --model m out/\n"})
    assert '"torch-neuronx==2.14.*"' in result.text and "still runs" not in result.text
    # a notebook's %pip line (NAME.sh) and its !optimum-cli export cell are one file
    notebook = ('{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": '
                '"!optimum-cli export neuron -m gpt2 out/\\n"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    result = migrate("pip install optimum-neuron==0.0.25\n", "NM505", kind=FileKind.SHELL, path="nb.sh",
                     project={"nb.ipynb": notebook})
    assert result.text.endswith("pip install optimum-neuron==0.0.25\n")
    assert "nb.ipynb runs `optimum-cli export`" in result.text


_WORKFLOW = """\
jobs:
  unit:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: "{unit}"
      - run: pip install "transformers==4.41.2" pytest
  lint:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: "3.10"
      - run: pip install ruff
"""


def test_a_job_whose_python_is_below_the_migrated_stack_gets_a_todo_on_its_python_version() -> None:
    # redteam-round2 D3: the unit job is bumped to transformers>=5.24 (Requires-Python >=3.11) on Python 3.10:
    # pip finds no release there; the todo goes on the job's own python-version, not on the lint job's
    result = migrate(_WORKFLOW.format(unit="3.10"), "NM505", kind=FileKind.YAML, path=".github/workflows/ci.yml",
                     neuron_project=True)
    lines = result.text.splitlines()
    assert lines[6].strip() == ("# neuron-migrate: Python 3.10 is below the Python>=3.11 that transformers 5.24.0 "
                                "requires, which this job installs after the migration: pip finds no transformers "
                                "release for Python 3.10; use Python 3.11 or later here")
    assert lines[7].strip() == 'python-version: "3.10"' and '"transformers>=5.24"' in lines[8]
    assert result.text.count("neuron-migrate: Python") == 1  # the lint job installs nothing that needs 3.11
    assert findings(result, "NM505") == {(7, "todo"), (8, "fixed")}
    # a matrix list: each version below the floor is named
    matrix = _WORKFLOW.format(unit="3.10").replace('python-version: "3.10"\n      - run: pip install "trans',
                                                   'python-version: ["3.9", "3.11"]\n      - run: pip install "trans')
    result = migrate(matrix, "NM505", kind=FileKind.YAML, path=".github/workflows/ci.yml", neuron_project=True)
    assert "Python 3.9 is below the Python>=3.11" in result.text and "Python 3.11 is below" not in result.text
    # no change: the job runs Python 3.11, or keeps pins that need no newer Python
    result = migrate(_WORKFLOW.format(unit="3.11"), "NM505", kind=FileKind.YAML, path=".github/workflows/ci.yml",
                     neuron_project=True)
    assert "neuron-migrate: Python" not in result.text
    unchanged(_WORKFLOW.format(unit="3.10").replace('"transformers==4.41.2" ', ""), "NM505", kind=FileKind.YAML,
              path=".github/workflows/ci.yml", neuron_project=True)


def test_a_dockerfile_stage_on_an_older_python_image_gets_a_todo_on_its_from_line() -> None:
    text = ("FROM python:3.10-slim AS base\nRUN pip install optimum-neuron==0.0.24\n"
            "FROM base\nRUN pip install trl==0.11.4\nFROM python:3.12-slim\nRUN pip install transformers==4.41.2\n"
            "FROM python:3.9\nRUN pip install gradio\n")
    result = migrate(text, "NM505", kind=FileKind.DOCKERFILE, path="Dockerfile", neuron_project=True)
    lines = result.text.splitlines()
    assert lines[0].startswith("# neuron-migrate: Python 3.10 is below the Python>=3.11 that transformers 5.24.0 "
                               "requires, which this stage installs after the migration")
    assert lines[1] == "FROM python:3.10-slim AS base"
    # the stage built on base has its own note, on its own FROM line; the 3.12 and gradio stages get none
    assert lines[3].startswith("# neuron-migrate: Python 3.10 is below the Python>=3.11 that trl 1.16.0 requires")
    assert lines[4] == "FROM base"
    assert result.text.count("neuron-migrate: Python") == 2


def test_a_deep_learning_container_tag_names_the_python_of_its_stage() -> None:
    # rt3B 3 (gpt2-xla-pretrain): a Neuron DLC tag's py310 is the stage's Python, as python:3.10-slim is
    image = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-neuronx-{py}-sdk2.20.0"
    text = f"FROM {image.format(py='py310')}\nRUN pip install --no-cache-dir transformers==4.40.2 datasets\n"
    result = migrate(text, "NM505", kind=FileKind.DOCKERFILE, path="Dockerfile", neuron_project=True)
    lines = result.text.splitlines()
    assert lines[0].startswith("# neuron-migrate: Python 3.10 is below the Python>=3.11 that transformers 5.24.0 "
                               "requires, which this stage installs after the migration")
    assert lines[1].startswith("FROM ") and '"transformers>=5.24"' in lines[2]
    # no change: a py311 image, or a stage that installs nothing of the migrated stack
    result = migrate(text.replace("py310", "py311"), "NM505", kind=FileKind.DOCKERFILE, path="Dockerfile",
                     neuron_project=True)
    assert "neuron-migrate: Python" not in result.text
    unchanged(f"FROM {image.format(py='py310')}\nRUN pip install gradio\n", "NM505", kind=FileKind.DOCKERFILE,
              path="Dockerfile", neuron_project=True)


_POETRY_JOB = """\
jobs:
  smoke:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: "3.10"
      - run: pip install poetry && poetry install --no-interaction
      - run: pip install -r requirements/dev.txt
"""

_PYPROJECT = """\
[tool.poetry]
name = "app"
version = "0.1.0"

[tool.poetry.dependencies]
python = ">=3.11"
optimum-neuron = "0.0.25"
transformers = "4.43.2"
"""


def test_a_job_installing_a_project_file_the_run_migrates_gets_the_python_todo() -> None:
    # rt3B 3 (t5-sd-serving ci.yml): the job names no package itself; poetry install installs pyproject.toml,
    # which this run moves to transformers>=5.24 (Python 3.11); a second run, reading the migrated pyproject.toml,
    # says the same
    migrated = migrate(_PYPROJECT, "NM502", kind=FileKind.PYPROJECT, path="pyproject.toml", neuron_project=True).text
    assert 'transformers = ">=5.24"' in migrated
    for pyproject in (_PYPROJECT, migrated):
        result = migrate(_POETRY_JOB, "NM505", kind=FileKind.YAML, path=".github/workflows/ci.yml",
                         neuron_project=True, project={"pyproject.toml": pyproject})
        lines = result.text.splitlines()
        assert lines[6].strip().startswith("# neuron-migrate: Python 3.10 is below the Python>=3.11 that "
                                           "transformers 5.24.0 requires, which this job installs")
        assert findings(result, "NM505") == {(7, "todo")}
    # a requirements file installed with -r, relative to the repository
    result = migrate(_POETRY_JOB, "NM505", kind=FileKind.YAML, path=".github/workflows/ci.yml", neuron_project=True,
                     project={"requirements/dev.txt": "optimum-neuron==0.0.25\n"})
    assert "Python 3.10 is below the Python>=3.11" in result.text
    # no change: the project file stays on the old stack (optimum-neuron a table entry left for the user) or
    # installs nothing migrated, or no project file is installed
    held = _PYPROJECT.replace('"0.0.25"', '{version = "0.0.25", extras = ["neuronx"]}')
    for project in ({"pyproject.toml": held}, {"requirements/dev.txt": "fastapi\n"}, {}):
        unchanged(_POETRY_JOB, "NM505", kind=FileKind.YAML, path=".github/workflows/ci.yml", neuron_project=True,
                  project=project)
