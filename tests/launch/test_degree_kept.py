"""rt5G D2b: a tensor-parallel degree above 1 that nothing carries to the model (the script parses no dataclass of its
own declaring tensor_parallel_size, so NM208 cannot move it) stays on the launch line / in the config with a todo:
the stock parser then stops the run, where removing the flag silently trained plain data-parallel replicas. The
launch note and the script's NM202 note name the same mesh key (``mesh_key_for``)."""

from __future__ import annotations

import shlex

import pytest
from transformers import HfArgumentParser
from trl import SFTConfig

from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.testing import apply_rules

SCRIPT = (
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronSFTConfig, NeuronSFTTrainer\n"
    "(args,) = HfArgumentParser(NeuronSFTConfig).parse_args_into_dataclasses()\n"
    "NeuronSFTTrainer(model='m', args=args).train()\n"
)
OWN_DEGREE = (
    "from dataclasses import dataclass\n"
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronSFTConfig\n"
    "@dataclass\n"
    "class S:\n"
    "    tensor_parallel_size: int = 1\n"
    "(s, args) = HfArgumentParser((S, NeuronSFTConfig)).parse_args_into_dataclasses()\n"
)


def _launch(line: str, script: str = SCRIPT):
    project = {"train.py": script, "run.sh": line}
    return apply_rules(line, FileKind.SHELL, select=["NM408"], path="run.sh", project=project), project


def _argv(text: str) -> list[str]:
    words = shlex.split(next(line for line in text.splitlines() if line.startswith("torchrun")))
    return words[words.index("train.py") + 1:]


@pytest.mark.parametrize("zero_1, key", [("", "dp_replicate_size"), (" --zero_1 true", "fsdp_size")])
def test_degree_above_one_stays_and_both_notes_name_one_mesh_key(zero_1: str, key: str) -> None:
    line = f"torchrun --nproc_per_node 8 train.py --output_dir out --tensor_parallel_size 8{zero_1}\n"
    result, project = _launch(line)
    argv = _argv(result.text)
    assert argv[argv.index("--tensor_parallel_size") + 1] == "8"
    (todo,) = [f for f in result.findings if f.message.startswith("--tensor_parallel_size 8 was left as it is")]
    assert todo.severity is Severity.TODO and f"{key}=WORLD_SIZE // tp_size" in todo.message
    script = apply_rules(SCRIPT, FileKind.PYTHON, select=["NM202"], path="train.py", project=project)
    (note,) = [f for f in script.findings if f.message.startswith("arguments parsed from the command line")]
    assert f"DistributedConfig(tp_size=..., {key}=WORLD_SIZE // tp_size)" in note.message
    # the stock parser refuses the kept flag: the job stops instead of training 8 replicas of a TP-8 model
    with pytest.raises(ValueError, match="tensor_parallel_size"):
        HfArgumentParser(SFTConfig).parse_args_into_dataclasses(args=[*argv, "--use_cpu", "true"])


def test_degree_one_goes_and_the_scripts_own_field_stays_without_a_word() -> None:
    result, _ = _launch("torchrun train.py --output_dir out --tensor_parallel_size 1\n")
    assert "--tensor_parallel_size" not in _argv(result.text)
    assert not [f for f in result.findings if "was left as it is" in f.message]
    result, _ = _launch("torchrun train.py --output_dir out --tensor_parallel_size 8\n", OWN_DEGREE)
    assert "--tensor_parallel_size" in _argv(result.text)
    assert not [f for f in result.findings if "tensor_parallel_size" in f.message]


def test_config_key_above_one_stays_with_the_configs_own_zero_1_key() -> None:
    script = SCRIPT.replace("parse_args_into_dataclasses()", "parse_yaml_file('sft.yaml')")
    config = "output_dir: out\nzero_1: true\ntensor_parallel_size: 8\nlogging_steps: 10\n"
    project = {"train.py": script}
    result = apply_rules(config, FileKind.YAML, select=["NM408"], path="sft.yaml", project=project)
    assert "\ntensor_parallel_size: 8\n" in result.text and "\nzero_1: true" not in result.text
    (todo,) = [f for f in result.findings if f.message.startswith("tensor_parallel_size: 8 was left")]
    assert "fsdp_size=WORLD_SIZE // tp_size" in todo.message
    again = apply_rules(result.text, FileKind.YAML, select=["NM408"], path="sft.yaml", project=project)
    assert again.text == result.text
    one = apply_rules(config.replace(": 8", ": 1"), FileKind.YAML, select=["NM408"], path="sft.yaml", project=project)
    assert "\ntensor_parallel_size: 1" not in one.text
