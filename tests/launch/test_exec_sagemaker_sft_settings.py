"""Execution proof (NM412, rtC-01): SageMaker passes each hyperparameter to the entry point as ``--key value``. For a
script parsing NeuronSFTConfig in a project pinned to optimum-neuron 0.4.x, the migrated dict must carry what a launch
line of the same script gets from NM408: the SFT shape fields (one padded shape, no padding-free bfd packing) and the
0.4.x defaults the stock SFTConfig changes. Parsed with the installed trl as SageMaker would pass it, the migrated dict
trains with optimum-neuron's settings; the dict with only its renames (what NM412 wrote before) does not."""

from __future__ import annotations

import ast
import textwrap

import pytest
from transformers import HfArgumentParser
from trl import SFTConfig

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

pytestmark = pytest.mark.execution

SCRIPT = textwrap.dedent('''
    from optimum.neuron import NeuronHfArgumentParser, NeuronSFTConfig

    (training_args,) = NeuronHfArgumentParser(NeuronSFTConfig).parse_args_into_dataclasses()
    ''').lstrip("\n")
LAUNCHER = textwrap.dedent('''
    from sagemaker.huggingface import HuggingFace

    hyperparameters = {"output_dir": "/tmp/out", "zero_1": True, "max_seq_length": 512, "packing": True, "use_cpu": True}
    HuggingFace(entry_point="sft.py", source_dir="scripts", hyperparameters=hyperparameters).fit()
    ''').lstrip("\n")
PROJECT = {"scripts/sft.py": SCRIPT, "scripts/requirements.txt": "optimum-neuron==0.4.1\n", "launch_sm.py": LAUNCHER}


def _parsed(source: str) -> SFTConfig:
    tree = ast.parse(source)
    hyperparameters = next(ast.literal_eval(node.value) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                           and getattr(node.targets[0], "id", None) == "hyperparameters")
    argv = [word for key, value in hyperparameters.items() for word in (f"--{key}", str(value))]  # as SageMaker does
    (parsed,) = HfArgumentParser(SFTConfig).parse_args_into_dataclasses(args=argv)
    return parsed


def test_the_migrated_hyperparameters_train_with_the_old_settings() -> None:
    migrated = apply_rules(LAUNCHER, path="launch_sm.py", kind=FileKind.PYTHON, project=PROJECT, select=["NM412"]).text
    parsed = _parsed(migrated)
    assert parsed.max_length == 512 and parsed.pad_to_multiple_of == 512  # one compiled shape, as optimum padded
    assert parsed.packing and parsed.packing_strategy == "wrapped"  # trl's default bfd is padding-free
    assert parsed.per_device_train_batch_size == 1 and parsed.optim == "adamw_torch"  # 0.4.x defaults
    assert parsed.average_tokens_across_devices is False
    assert parsed.gradient_checkpointing is False and parsed.learning_rate == 5e-5 and parsed.logging_steps == 500
    assert parsed.torch_compile is True

    # only the renames (the dict before this fix): the stock defaults train differently
    renamed = LAUNCHER.replace('"zero_1": True, ', "").replace("max_seq_length", "max_length")
    stock = _parsed(renamed)
    assert stock.packing_strategy == "bfd" and stock.per_device_train_batch_size == 8
    assert stock.gradient_checkpointing is True and stock.learning_rate == 2e-5
