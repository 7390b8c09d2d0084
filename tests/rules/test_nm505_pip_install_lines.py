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
    assert result.text.endswith('RUN python -m pip install "torch-neuronx==2.14.*" "torch==2.14.*" '
                                '"transformers>=5.24" "accelerate>=1.15" "trl>=1.16" "peft>=0.21" datasets '
                                '-r requirements.txt\n')
    assert findings(result, "NM505") == {(1, "fixed"), (1, "todo")}  # the todo: torch-neuronx is not on PyPI


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
