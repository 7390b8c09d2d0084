"""Execution proof for NM412: the migrated SageMaker hyperparameters, passed the way SageMaker passes them to the
entry point (``--key value``, Python's str() of each value), are accepted by the stock, strict HfArgumentParser
over TrainingArguments (an unknown key would abort it: HfArgumentParser raises on leftover arguments), and mean
what the legacy ones meant."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

LAUNCH = textwrap.dedent(
    """\
    from sagemaker.huggingface import HuggingFace

    hyperparameters = {
        "model_id": "tiny",
        "output_dir": "/opt/ml/model",
        "max_seq_length": 256,
        "zero_1": True,
        "evaluation_strategy": "steps",
        "group_by_length": True,
        "bf16": False,
    }
    estimator = HuggingFace(entry_point="train.py", source_dir="scripts", hyperparameters=hyperparameters, role="r")
    """
)
LEGACY_TRAIN = textwrap.dedent(
    """\
    from dataclasses import dataclass
    from optimum.neuron import NeuronHfArgumentParser, NeuronSFTConfig

    @dataclass
    class ScriptArguments:
        model_id: str = "x"

    script_args, config = NeuronHfArgumentParser((ScriptArguments, NeuronSFTConfig)).parse_args_into_dataclasses()
    """
)


@dataclass
class ScriptArguments:
    model_id: str = field(default="x")


@pytest.mark.execution
def test_migrated_hyperparameters_parse_with_the_stock_parser() -> None:
    from transformers import HfArgumentParser
    from trl import SFTConfig

    migrated = apply_rules(LAUNCH, FileKind.PYTHON, select=["NM4"], path="launch.py",
                           project={"scripts/train.py": LEGACY_TRAIN}).text
    assignment = next(node for node in ast.parse(migrated).body if isinstance(node, ast.Assign))
    hyperparameters = ast.literal_eval(assignment.value)
    argv = [item for key, value in hyperparameters.items() for item in (f"--{key}", str(value))]
    script_args, config = HfArgumentParser((ScriptArguments, SFTConfig)).parse_args_into_dataclasses(argv)
    assert script_args.model_id == "tiny"
    assert config.max_length == 256
    assert config.eval_strategy.value == "steps"
    assert config.train_sampling_strategy == "group_by_length"
    assert config.torch_compile is True
    assert "zero_1" not in hyperparameters


@pytest.mark.execution
def test_migrated_dict_call_of_an_earlier_notebook_cell_parses_with_the_stock_parser() -> None:
    """The red-team layout: ``hp = dict(...)`` in one cell, the estimator in a later one. Unmigrated, the stock parser
    raised ``Some specified arguments are not used by the HfArgumentParser`` on these keys."""
    import json

    from transformers import HfArgumentParser, TrainingArguments

    cells = [
        'hp = dict(model_id="tiny", output_dir="/opt/ml/model", overwrite_output_dir=True, zero_1=True,\n'
        '          warmup_ratio=0.03, max_steps=2)\n',
        "from sagemaker.huggingface import HuggingFace\n",
        'estimator = HuggingFace(entry_point="train.py", source_dir="scripts", hyperparameters=hp, role="r")\n',
    ]
    notebook = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                      "source": cell} for cell in cells], "metadata": {}, "nbformat": 4,
                           "nbformat_minor": 5})
    legacy = LEGACY_TRAIN.replace("NeuronSFTConfig", "NeuronTrainingArguments")
    migrated = apply_rules(notebook, FileKind.NOTEBOOK, select=["NM4"], path="job.ipynb",
                           project={"scripts/train.py": legacy}).text
    cell = "".join(json.loads(migrated)["cells"][0]["source"])
    call = next(node for node in ast.parse(cell).body if isinstance(node, ast.Assign)).value
    assert isinstance(call, ast.Call)
    hyperparameters = {keyword.arg: ast.literal_eval(keyword.value) for keyword in call.keywords}
    argv = [item for key, value in hyperparameters.items() for item in (f"--{key}", str(value))]
    with pytest.raises(ValueError, match="not used by the HfArgumentParser"):  # what the unmigrated keys did
        HfArgumentParser((ScriptArguments, TrainingArguments)).parse_args_into_dataclasses(
            argv + ["--zero_1", "True", "--overwrite_output_dir", "True"])
    script_args, args = HfArgumentParser((ScriptArguments, TrainingArguments)).parse_args_into_dataclasses(argv)
    assert script_args.model_id == "tiny"
    assert args.warmup_steps == 0.03 and args.max_steps == 2 and args.torch_compile is True
