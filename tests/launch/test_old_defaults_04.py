"""rt7L L12: a project pinned to optimum-neuron 0.4.x trained with NeuronTrainingArguments' own defaults,
per_device_train_batch_size 1 and optim "adamw_torch" (stock TrainingArguments: 8 and "adamw_torch_fused"). Where
NM408 edits the launch line (or the argument config) of a script parsing the Neuron arguments, it writes those
values when absent, so the migrated run trains with the batch and optimizer of the old one. The migrated flags and
keys are PARSED with the installed transformers' TrainingArguments."""

from __future__ import annotations

import shlex

import pytest
import yaml
from transformers import HfArgumentParser, TrainingArguments

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

CLI = (
    "from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser\n"
    "from optimum.neuron import NeuronTrainer, NeuronTrainingArguments\n"
    "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()\n"
    "NeuronTrainer(model='m', args=args).train()\n"
)
YAML_SCRIPT = (
    "import sys\n"
    "from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser\n"
    "from optimum.neuron import NeuronTrainingArguments\n"
    "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_yaml_file(sys.argv[1])\n"
)
LINE = "torchrun --nproc_per_node 2 train.py --output_dir out --zero_1 false\n"
PIN_04 = {"requirements.txt": "optimum-neuron[training]==0.4.1\n"}
PIN_03 = {"requirements.txt": "optimum-neuron[training]==0.3.0\n"}


def _parsed(text: str) -> TrainingArguments:
    line = next(line for line in text.splitlines() if line.startswith("torchrun"))
    words = shlex.split(line)
    argv = words[words.index("train.py") + 1:]
    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(args=[*argv, "--use_cpu", "true"])
    return args


def test_pinned_04_launch_line_gets_the_old_defaults_and_parses_to_them() -> None:
    result = apply_rules(LINE, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": CLI, **PIN_04})
    args = _parsed(result.text)
    assert args.per_device_train_batch_size == 1
    assert args.optim == "adamw_torch"
    assert args.torch_compile
    fixed = [f.message for f in result.findings if f.message.startswith(("--per_device_train_batch_size 1 added",
                                                                        "--optim adamw_torch added"))]
    assert len(fixed) == 2 and all("0.4.x" in message for message in fixed)


@pytest.mark.parametrize("pins", [PIN_03, {}], ids=["pinned-0.3", "unpinned"])
def test_other_lines_keep_the_command_as_it_was(pins: dict[str, str]) -> None:
    result = apply_rules(LINE, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": CLI, **pins})
    assert "--per_device_train_batch_size" not in result.text and "--optim" not in result.text
    assert _parsed(result.text).per_device_train_batch_size == 8


def test_given_values_are_kept() -> None:
    line = "torchrun train.py --output_dir out --zero_1 false --per-device-train-batch-size 4 --optim=sgd\n"
    result = apply_rules(line, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": CLI, **PIN_04})
    args = _parsed(result.text)
    assert (args.per_device_train_batch_size, args.optim) == (4, "sgd")


def test_a_command_naming_a_config_gets_no_flag_over_it() -> None:
    line = "torchrun train.py --config train.yaml --zero_1 false\n"
    result = apply_rules(line, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": CLI, **PIN_04})
    assert "--optim" not in result.text and "--per_device_train_batch_size" not in result.text


def test_pinned_04_config_gets_the_old_default_keys() -> None:
    config = "output_dir: out\nzero_1: false\nlearning_rate: 0.0001\n"
    result = apply_rules(config, FileKind.YAML, select=["NM408"], path="train.yaml",
                         project={"train.py": YAML_SCRIPT, **PIN_04})
    loaded = yaml.safe_load(result.text)
    assert loaded["per_device_train_batch_size"] == 1 and loaded["optim"] == "adamw_torch"
    (args,) = HfArgumentParser(TrainingArguments).parse_dict({**loaded, "use_cpu": True})
    assert (args.per_device_train_batch_size, args.optim) == (1, "adamw_torch")
    again = apply_rules(result.text, FileKind.YAML, select=["NM408"], path="train.yaml",
                        project={"train.py": YAML_SCRIPT, **PIN_04})
    assert again.text == result.text
