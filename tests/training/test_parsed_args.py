"""The parsed-arguments decision (codemods/_lib/parsed_args.py) and its contract with the launch layer:
``script_cli_fields`` says which --flags the migrated script still parses, with the same answer before and after
the migration."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods._lib.parsed_args import analyse, script_cli_fields
from migrate.testing import apply_rules

FIXTURES = Path(__file__).parents[1] / "fixtures" / "training"


def _source(case: str) -> str:
    return next((FIXTURES / case / "before").iterdir()).read_text()


@pytest.mark.parametrize("case, fields", [
    ("parsed_tp_trl_parser", {"model_id", "dataset_path", "tensor_parallel_size"}),
    # zero_1 is read on the parsed arguments: it moves into ModelArguments too
    ("parsed_tp_json_or_cli", {"model_name_or_path", "cache_dir", "dataset_name", "block_size", "tensor_parallel_size",
                               "zero_1"}),
    ("parsed_tp_no_script_dataclass", set()),  # nothing moves: the launch layer removes the flag
    ("nochange_tp_in_script_dataclass", {"model_id", "tensor_parallel_size"}),  # the script's own field
    ("argparse_tp_option", set()),  # argparse options are not dataclass fields
    ("trainer_drop_in_alias", {"model_name_or_path", "tensor_parallel_size"}),  # the trainer sharded the model itself
])
def test_cli_fields_same_before_and_after_migration(case, fields):
    source = _source(case)
    migrated = apply_rules(source, select=["NM2", "NM6"]).text
    assert script_cli_fields(source) == fields
    assert script_cli_fields(migrated) == fields


def test_move_needs_every_read_to_reach_the_script_dataclass():
    source = '''
from dataclasses import dataclass
from optimum.neuron import NeuronHfArgumentParser, NeuronTrainingArguments

@dataclass
class ScriptArguments:
    model_id: str = "m"

def report(training_args):
    print(training_args.tensor_parallel_size)

def main():
    script_args, training_args = NeuronHfArgumentParser((ScriptArguments, NeuronTrainingArguments)).parse_args_into_dataclasses()
    report(training_args)
'''
    plan = analyse(source)
    assert not plan.moved and "report" in plan.blocked
    assert "tensor_parallel_size" not in script_cli_fields(source)
    migrated = apply_rules(source, select=["NM2"]).text
    assert "print(training_args.tensor_parallel_size)" in migrated  # left as it is, with its todo
    assert "# neuron-migrate: training_args.tensor_parallel_size: the stock arguments have no tensor_parallel_size" in migrated


def test_constructed_arguments_give_their_literal_degree():
    source = '''
from optimum.neuron import NeuronTrainingArguments

def main():
    args = NeuronTrainingArguments(output_dir="out", tensor_parallel_size=4)
    other = NeuronTrainingArguments(output_dir="out")
    return args.tensor_parallel_size, other.tensor_parallel_size
'''
    migrated = apply_rules(source, select=["NM2"]).text
    assert "return 4, 1" in migrated


def test_unparsable_source_has_no_fields():
    assert script_cli_fields("def broken(:\n") == frozenset()


def test_a_model_the_trainer_sharded_needs_one_visible_load():
    source = '''
from dataclasses import dataclass
from transformers import AutoModelForCausalLM
from optimum.neuron import NeuronHfArgumentParser, NeuronTrainer, NeuronTrainingArguments

@dataclass
class ScriptArguments:
    model_id: str = "m"

def main():
    script_args, training_args = NeuronHfArgumentParser((ScriptArguments, NeuronTrainingArguments)).parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(script_args.model_id)
    if script_args.model_id.endswith("-small"):
        model = AutoModelForCausalLM.from_pretrained("gpt2")
    NeuronTrainer(model=model, args=training_args).train()
'''
    assert not analyse(source).moved  # two loads: which one the trainer got is not known
    assert "distributed_config=" not in apply_rules(source, select=["NM2"], inline_notes=False).text
