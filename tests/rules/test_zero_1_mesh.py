"""NM205 / NM208 / NM202: the data-parallel rest of a migrated mesh follows the zero_1 the script and its launchers
show (codemods/_lib/zero_1.py) before the optimum-neuron version default."""

from codemods._lib.zero_1 import ZERO_1_LAUNCHES, _collect, truth
from tests.rules.case import findings, migrate

PINNED_03 = {"requirements.txt": "optimum-neuron==0.0.25\n"}

LAZY = """
from dataclasses import dataclass

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism
from transformers import AutoModelForCausalLM


@dataclass
class ScriptArguments:
    model_id: str = "gpt2"


parser = HfArgumentParser((ScriptArguments, TrainingArguments))
script_args, training_args = parser.parse_args_into_dataclasses()
with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
    model = AutoModelForCausalLM.from_pretrained(script_args.model_id)
"""

ARGPARSE = """
import argparse

from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--tensor_parallel_size", type=int, default=1)
parser.add_argument("--zero_1", {option})
args, _ = parser.parse_known_args()
model = AutoModelForCausalLM.from_pretrained("gpt2")
training_args = TrainingArguments(output_dir="out", tensor_parallel_size=args.tensor_parallel_size, zero_1=args.zero_1)
trainer = Trainer(model=model, args=training_args)
"""


def _messages(result, rule: str) -> list[str]:
    return [f.message for f in result.findings if f.rule == rule]


def test_a_launch_line_with_zero_1_true_makes_the_mesh_fsdp() -> None:
    project = {**PINNED_03,
               "scripts/run.sh": "torchrun --nproc_per_node=32 src/train.py --tensor_parallel_size 8 --zero_1 true\n"}
    result = migrate(LAZY, "NM205", family="NM2", path="src/train.py", project=project)
    assert "fsdp_size=_data_parallel_size(" in result.text and "dp_replicate_size" not in result.text
    fixed = " ".join(_messages(result, "NM205"))
    assert "--zero_1 true on a launch line of scripts/run.sh" in fixed and "defaulted to False" not in fixed
    assert "FSDP2 also shards parameters and gradients" in fixed


def test_without_a_zero_1_value_the_version_default_decides() -> None:
    result = migrate(LAZY, "NM205", family="NM2", path="src/train.py",
                     project={**PINNED_03, "scripts/run.sh": "torchrun src/train.py --tensor_parallel_size 8\n"})
    assert "dp_replicate_size=_data_parallel_size(" in result.text
    assert any("defaulted to False" in m for m in _messages(result, "NM205"))


def test_zero_1_passed_to_another_script_does_not_count() -> None:
    project = {**PINNED_03, "run.sh": "torchrun src/train.py --tensor_parallel_size 8\n"
                                      "torchrun src/pretrain.py --tensor_parallel_size 8 --zero_1 true\n"}
    result = migrate(LAZY, "NM205", family="NM2", path="src/train.py", project=project)
    assert "dp_replicate_size=_data_parallel_size(" in result.text


def test_an_arguments_variable_feeds_the_scripts_its_file_runs() -> None:
    project = {**PINNED_03,
               "scripts/run.sh": 'ARGS="--tensor_parallel_size 8 \\\n  --zero_1 true"\ntorchrun src/train.py $ARGS\n'}
    result = migrate(LAZY, "NM205", family="NM2", path="src/train.py", project=project)
    assert "fsdp_size=_data_parallel_size(" in result.text


def test_launchers_that_disagree_keep_the_default_with_a_todo_naming_both() -> None:
    project = {**PINNED_03, "a.sh": "torchrun src/train.py --zero_1 true\n",
               "b.sh": "torchrun src/train.py --zero_1=false\n"}
    result = migrate(LAZY, "NM205", family="NM2", path="src/train.py", project=project)
    assert "dp_replicate_size=_data_parallel_size(" in result.text
    # the mesh todo (the load's save_only_model todo, 1be9a11, is another NM205 todo of the same load)
    todo = [f.message for f in result.findings if f.rule == "NM205" and f.severity.value == "todo"
            and "save_only_model" not in f.message]
    assert len(todo) == 1 and "differs between the runs" in todo[0]
    assert "--zero_1 true on a launch line of a.sh" in todo[0] and "--zero_1 false on a launch line of b.sh" in todo[0]


def test_a_run_time_value_gets_a_todo() -> None:
    project = {**PINNED_03, "run.sh": "torchrun src/train.py --zero_1 $ZERO_1\n"}
    result = migrate(LAZY, "NM205", family="NM2", path="src/train.py", project=project)
    assert any("is not a literal" in m and "$ZERO_1" in m for m in _messages(result, "NM205"))


def test_the_argparse_default_decides_without_a_launcher() -> None:
    result = migrate(ARGPARSE.replace("{option}", "type=bool, default=True"), "NM208", family="NM2",
                     project=PINNED_03)
    assert "fsdp_size=_data_parallel_size(" in result.text
    assert any("the default True of the script's own --zero_1 option" in m for m in _messages(result, "NM208"))
    off = migrate(ARGPARSE.replace("{option}", 'action="store_true"'), "NM208", family="NM2", project=PINNED_03)
    assert "dp_replicate_size=_data_parallel_size(" in off.text


def test_sagemaker_hyperparameters_of_the_entry_point_count_and_type_bool_makes_false_true() -> None:
    launcher = ('hp = {"tensor_parallel_size": 8, "zero_1": "False"}\n'
                'PyTorch(entry_point="train.py", source_dir="src", hyperparameters=hp).fit()\n')
    source = ARGPARSE.replace("{option}", "type=bool, default=False")
    result = migrate(source, "NM208", family="NM2", path="src/train.py", project={**PINNED_03, "launch.py": launcher})
    assert "fsdp_size=_data_parallel_size(" in result.text
    assert any("type=bool" in m for m in _messages(result, "NM208"))
    # the same hyperparameters for another source_dir's train.py are not this script's
    other = migrate(source, "NM208", family="NM2", path="src/train.py",
                    project={**PINNED_03, "launch.py": launcher.replace('"src"', '"other"')})
    assert "dp_replicate_size=_data_parallel_size(" in other.text


def test_a_literal_keyword_wins_over_the_launchers() -> None:
    source = ARGPARSE.replace("{option}", "type=bool, default=True").replace("zero_1=args.zero_1", "zero_1=False")
    result = migrate(source, "NM208", family="NM2", path="train.py",
                     project={**PINNED_03, "run.sh": "torchrun train.py --zero_1 true\n"})
    assert "dp_replicate_size=_data_parallel_size(" in result.text
    assert findings(result, "NM208")


def test_notebook_cells_and_written_scripts_are_read() -> None:
    import json

    notebook = json.dumps({"cells": [
        {"cell_type": "code", "source": ["%%writefile src/train.py\n", "zero_1=args.zero_1\n"]},
        {"cell_type": "code", "source": ['hyperparameters = {"zero_1": True}\n']},
        {"cell_type": "code",
         "source": ['est = PyTorch(entry_point="train.py", source_dir="src", hyperparameters=hyperparameters)\n']},
    ]})
    value = _collect(notebook)
    assert value is not None
    launches = [(launch.script, launch.value, launch.kind) for launch in value["launches"]]
    assert launches == [("src/train.py", "True", "hyperparameter")]
    assert [name for name, _ in value["written"]] == ["src/train.py"]
    assert ZERO_1_LAUNCHES.name == "training.zero-1-launches"


def test_truth_reads_hf_boolean_flags() -> None:
    assert truth("true") is True and truth('"True"') is True and truth("1") is True
    assert truth("false") is False and truth("no") is False
    assert truth("$ZERO_1") is None


def test_a_bare_flag_does_not_swallow_the_next_one() -> None:
    # --bf16 takes no value here: the --zero_1 after it is a flag of its own (it was read as bf16's value)
    launch = "torchrun --nproc_per_node 8 train.py --bf16 --zero_1 --tensor_parallel_size 2 --max_steps -1\n"
    values = [(record.field, record.value) for record in _collect(launch)["launches"]]
    assert values == [("bf16", "true"), ("zero_1", "true"), ("tensor_parallel_size", "2")]
    result = migrate(LAZY, "NM205", family="NM2", path="train.py",
                     project={"train.py": LAZY, "run.sh": launch, **PINNED_03})
    assert "fsdp_size=_data_parallel_size(script_args.tensor_parallel_size)" in result.text
