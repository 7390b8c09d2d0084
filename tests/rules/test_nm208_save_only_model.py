"""NM208: the "pass --save_only_model true" todo on a model load it shards is only for parsed arguments; arguments
built in the file get save_only_model from NM202 (D11: the todo asked for what NM202 had just done)."""

from tests.rules.case import migrate

BUILT = """
import argparse

from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--tensor_parallel_size", type=int, default=1)
args = parser.parse_args()
model = AutoModelForCausalLM.from_pretrained("gpt2")
training_args = TrainingArguments(output_dir="out", tensor_parallel_size=args.tensor_parallel_size{extra})
trainer = Trainer(model=model, args=training_args)
"""

PARSED = """
from dataclasses import dataclass

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from transformers import AutoModelForCausalLM


@dataclass
class ScriptArguments:
    model_id: str = "gpt2"


parser = HfArgumentParser((ScriptArguments, TrainingArguments))
script_args, training_args = parser.parse_args_into_dataclasses()
model = AutoModelForCausalLM.from_pretrained(script_args.model_id)
trainer = Trainer(model=model, args=training_args)
"""


def _asks_for_the_flag(result) -> bool:
    return any("pass --save_only_model" in f.message for f in result.findings if f.rule == "NM208")


def test_built_arguments_get_save_only_model_and_no_flag_todo() -> None:
    result = migrate(BUILT.replace("{extra}", ""), "NM208", family="NM2")
    assert "save_only_model=args.tensor_parallel_size > 1" in result.text
    assert "distributed_config=(DistributedConfig(tp_size=args.tensor_parallel_size" in result.text
    assert not _asks_for_the_flag(result)


def test_built_arguments_with_their_own_save_only_model_get_nm202s_todo_only() -> None:
    result = migrate(BUILT.replace("{extra}", ", save_only_model=False"), "NM208", family="NM2")
    assert not _asks_for_the_flag(result)
    assert any(f.rule == "NM202" and "save_only_model=True" in f.message for f in result.findings)


def test_parsed_arguments_keep_the_todo() -> None:
    result = migrate(PARSED, "NM208", family="NM2")
    assert "distributed_config=(DistributedConfig(tp_size=script_args.tensor_parallel_size" in result.text
    assert _asks_for_the_flag(result)
