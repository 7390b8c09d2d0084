"""NM205 and NM208 decide in one place (``note_checkpoint_need``, codemods/training/_base.py) what a model load they
give a ``distributed_config`` needs of the training arguments: Trainer raises for a model sharded at load time
unless they say save_only_model=True or save_strategy="no" (transformers 5 trainer.py). Before, only NM208's plain
load asked for it; the load NM205 carries out of ``lazy_load_for_parallelism`` got nothing (rt5G D1)."""

import textwrap
from pathlib import PurePath

from migrate.filekinds import FileKind
from migrate.pipeline import migrate_file_text
from migrate.registry import all_rules, select_rules
from migrate.rule import RuleOptions
from tests.rules.case import migrate

PARSED_LAZY = """
import sys
from dataclasses import dataclass

from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism
from transformers import AutoModelForCausalLM, HfArgumentParser


@dataclass
class RunArgs:
    checkpoint: str = "tiny-llama"


def run():
    parser = HfArgumentParser((RunArgs, NeuronTrainingArguments))
    run_args, train_args = parser.parse_yaml_file(sys.argv[1])
    with lazy_load_for_parallelism(tensor_parallel_size={degree}):
        lm = AutoModelForCausalLM.from_pretrained(run_args.checkpoint)
    NeuronTrainer(model=lm, args=train_args).train()


run()
"""

BUILT_LAZY = """
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism
from transformers import AutoModelForCausalLM

targs = NeuronTrainingArguments(output_dir="ckpt", tensor_parallel_size=4)
with lazy_load_for_parallelism(tensor_parallel_size=4):
    lm = AutoModelForCausalLM.from_pretrained("tiny-llama")
NeuronTrainer(model=lm, args=targs).train()
"""

LOOP_LAZY = """
import torch
from optimum.neuron.distributed import lazy_load_for_parallelism
from transformers import AutoModelForCausalLM

with lazy_load_for_parallelism(tensor_parallel_size=4):
    lm = AutoModelForCausalLM.from_pretrained("tiny-llama")
opt = torch.optim.SGD(lm.parameters(), lr=0.1)
"""

PARSED_PLAIN = """
from dataclasses import dataclass

from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from transformers import AutoModelForCausalLM, HfArgumentParser


@dataclass
class RunArgs:
    checkpoint: str = "tiny-llama"


run_args, train_args = HfArgumentParser((RunArgs, NeuronTrainingArguments)).parse_args_into_dataclasses()
lm = AutoModelForCausalLM.from_pretrained(run_args.checkpoint)
NeuronTrainer(model=lm, args=train_args).train()
"""


def _needs(result, rule: str) -> list[str]:
    return [f.message for f in result.findings if f.rule == rule and "save_only_model" in f.message]


def test_a_lazy_load_of_parsed_arguments_gets_the_checkpoint_todo_naming_the_config() -> None:
    project = {"conf/run.yaml": "output_dir: ckpt\ntensor_parallel_size: 4\nsave_strategy: steps\n",
               "launch.sh": "torchrun --nproc_per_node 8 trainer.py conf/run.yaml\n"}
    result = migrate(PARSED_LAZY.replace("{degree}", "train_args.tensor_parallel_size"), "NM205", path="trainer.py",
                     family="NM2", project=project)
    assert "distributed_config=(DistributedConfig(tp_size=run_args.tensor_parallel_size" in result.text
    (message,) = _needs(result, "NM205")
    assert message.startswith("with run_args.tensor_parallel_size above 1 this model is sharded at load time")
    assert "pass --save_only_model true (or the config key save_only_model: true)" in message
    assert message.endswith("add save_only_model: true to conf/run.yaml (tensor_parallel_size: 4)")
    # the todo sits on the load line
    lines = result.text.splitlines()
    at = next(i for i, line in enumerate(lines) if "from_pretrained(run_args.checkpoint" in line)
    assert "save_only_model" in lines[at - 1]


def test_a_literal_degree_is_named_as_such_and_a_launch_flag_is_named() -> None:
    project = {"launch.sh": "torchrun --nproc_per_node 8 trainer.py --tensor_parallel_size 2 --output_dir o\n"}
    result = migrate(PARSED_LAZY.replace("{degree}", "2"), "NM205", path="trainer.py", family="NM2", project=project)
    (message,) = _needs(result, "NM205")
    assert message.startswith("with tensor parallel degree 2 this model is sharded at load time")
    assert "add --save_only_model true beside --tensor_parallel_size 2 on a launch line of launch.sh" in message


def test_built_arguments_get_save_only_model_from_nm202_and_no_load_todo() -> None:
    result = migrate(BUILT_LAZY, "NM205", family="NM2")
    assert "save_only_model=True" in result.text
    assert _needs(result, "NM205") == []


def _without_nm202(source: str, rule: str):
    """A run that applies ``rule`` but not NM202 (``--ignore NM202``): options.rules says which rules run."""
    rules = select_rules(all_rules(), [rule], [])
    options = RuleOptions(rules=frozenset(r.id for r in rules))
    text = textwrap.dedent(source).lstrip("\n")
    return migrate_file_text(text, FileKind.PYTHON, PurePath("train.py"), rules, options)


def test_built_arguments_without_nm202_get_the_todo_that_names_the_arguments() -> None:
    result = _without_nm202(BUILT_LAZY, "NM205")
    (message,) = _needs(result, "NM205")
    assert "add save_only_model=True to them (NM202, which does that, did not run)" in message
    assert "save_only_model=True" not in result.text.replace(message, "")


def test_a_file_without_training_arguments_gets_no_checkpoint_todo() -> None:
    result = migrate(LOOP_LAZY, "NM205", family="NM2")
    assert "distributed_config=DistributedConfig(tp_size=4" in result.text
    assert _needs(result, "NM205") == []


def test_nm208_plain_load_gives_the_same_todo_with_the_project_s_degree() -> None:
    project = {"run.sh": "torchrun --nproc_per_node 8 train.py --tensor_parallel_size 8 --output_dir o\n"}
    result = migrate(PARSED_PLAIN, "NM208", family="NM2", project=project)
    (message,) = _needs(result, "NM208")
    assert message.startswith("with run_args.tensor_parallel_size above 1 this model is sharded at load time and "
                              "Trainer raises unless the parsed arguments set save_only_model=True")
    assert message.endswith("add --save_only_model true beside --tensor_parallel_size 8 on a launch line of run.sh")


def test_nm208_built_degree_without_nm202_names_the_built_arguments() -> None:
    source = """
    from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
    from transformers import AutoModelForCausalLM

    lm = AutoModelForCausalLM.from_pretrained("tiny-llama")
    targs = NeuronTrainingArguments(output_dir="ckpt", tensor_parallel_size=4)
    NeuronTrainer(model=lm, args=targs).train()
    """
    (message,) = _needs(_without_nm202(source, "NM208"), "NM208")
    assert "arguments built in this file say save_only_model=True" in message
    assert "pass --save_only_model" not in message
    assert _needs(migrate(source, "NM208", family="NM2"), "NM208") == []


MAKEFILE_TP = """TP ?= {tp}
ARGS = --output_dir out \\
\t--tensor_parallel_size {flag} \\
\t--save_strategy epoch

train:
\ttorchrun --nproc_per_node=8 trainer.py $(ARGS)
"""


def test_a_makefile_variable_degree_is_expanded_and_its_launch_line_named() -> None:
    # rt6J J2: `--tensor_parallel_size $(TP)` with `TP ?= 8` was not read as a degree, so the Makefile, the main
    # launch, went unnamed and its run raised in Trainer.__init__
    for flag in ("$(TP)", "${TP}"):
        project = {"Makefile": MAKEFILE_TP.format(tp=8, flag=flag)}
        result = migrate(PARSED_LAZY.replace("{degree}", "train_args.tensor_parallel_size"), "NM205",
                         path="trainer.py", family="NM2", project=project)
        (message,) = _needs(result, "NM205")
        assert message.endswith(f"add --save_only_model true beside --tensor_parallel_size {flag} on a launch line "
                                f"of Makefile (where {flag} is 8)"), message


def test_a_makefile_variable_of_degree_one_or_unknown_value_names_nothing() -> None:
    appended = MAKEFILE_TP.format(tp=2, flag="$(TP)").replace("TP ?= 2\n", "TP ?= 2\nTP += 4\n")
    for makefile in (MAKEFILE_TP.format(tp=1, flag="$(TP)"), appended):
        result = migrate(PARSED_LAZY.replace("{degree}", "train_args.tensor_parallel_size"), "NM205",
                         path="trainer.py", family="NM2", project={"Makefile": makefile})
        (message,) = _needs(result, "NM205")
        assert "the project runs it with a degree above 1" not in message, message
