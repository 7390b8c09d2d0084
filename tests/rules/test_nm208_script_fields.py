"""NM208: a removed stock field only scripts read (overwrite_output_dir) moves into the script's own dataclass.

transformers 5 removed ``TrainingArguments.overwrite_output_dir``; the 4.x Trainer never read it, HF example
scripts did (``... and not training_args.overwrite_output_dir``). When the move conditions hold the field is
declared in the script dataclass parsed beside the arguments and the reads follow it; otherwise the todo stays.
"""

import textwrap

from codemods._lib.launch_targets import _collect
from codemods._lib.parsed_args import analyse, script_cli_fields
from tests.rules.case import findings, migrate, unchanged

HEAD = """
import os
from dataclasses import dataclass, field

from transformers import HfArgumentParser, Trainer, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="t5-small")


@dataclass
class DataTrainingArguments:
    overwrite_cache: bool = False
"""

MAIN_READS = HEAD + """

def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    last_checkpoint = None
    if os.path.isdir(training_args.output_dir) and not training_args.overwrite_output_dir:
        last_checkpoint = get_last_checkpoint(training_args.output_dir)
    Trainer(model=None, args=training_args).train(resume_from_checkpoint=last_checkpoint)
"""

HELPER_GETS_ONLY_ARGS = HEAD + """

def detect(training_args):
    if training_args.overwrite_output_dir:
        return None
    return get_last_checkpoint(training_args.output_dir)


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    detect(training_args)
"""


def test_read_on_parsed_stock_arguments_moves_into_the_first_script_dataclass() -> None:
    result = migrate(MAIN_READS, "NM208")
    comment = ("# was a TrainingArguments field (removed in transformers 5, the Trainer never read it): "
               "this script reads it")
    assert ("    model_name_or_path: str = field(default=\"t5-small\")\n"
            f"    {comment}\n"
            "    overwrite_output_dir: bool = False\n") in result.text
    assert "and not model_args.overwrite_output_dir:" in result.text
    assert "training_args.overwrite_output_dir" not in result.text
    assert "overwrite_output_dir" not in result.text.split("class DataTrainingArguments")[1].split("def main")[0]
    assert findings(result, "NM208") == {(9, "fixed"), (22, "fixed")}
    assert script_cli_fields(textwrap.dedent(MAIN_READS)) >= {"overwrite_output_dir", "model_name_or_path"}
    # the migrated script gives the launch layer the same answer (it declares the field now)
    assert "overwrite_output_dir" in script_cli_fields(result.text)


def test_second_run_sees_the_own_field_and_does_nothing() -> None:
    migrated = migrate(MAIN_READS, "NM208").text
    unchanged(migrated, "NM208")
    plan = analyse(migrated)
    assert plan is not None and plan.script_moves == {} and "overwrite_output_dir" in plan.cli_fields


def test_neuron_arguments_take_both_moves_into_one_dataclass() -> None:
    result = migrate(
        """
        from dataclasses import dataclass

        from optimum.neuron import NeuronTrainingArguments
        from transformers import HfArgumentParser


        @dataclass
        class ScriptArguments:
            model_id: str = "tiny"


        parser = HfArgumentParser((ScriptArguments, NeuronTrainingArguments))
        script_args, training_args = parser.parse_args_into_dataclasses()
        tp = training_args.tensor_parallel_size
        resume = not training_args.overwrite_output_dir
        """,
        "NM208",
        family="NM2",
    )
    body = result.text.split("class ScriptArguments:")[1].split("parser =")[0]
    assert "    tensor_parallel_size: int = 1\n" in body and "    overwrite_output_dir: bool = False\n" in body
    assert "resume = not script_args.overwrite_output_dir" in result.text
    assert "tp = script_args.tensor_parallel_size" in result.text


def test_read_through_a_parameter_that_every_call_passes_with_the_script_dataclass() -> None:
    result = migrate(HEAD + """

def detect(model_args, training_args):
    return None if training_args.overwrite_output_dir else get_last_checkpoint(training_args.output_dir)


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    detect(model_args, training_args)
""", "NM208")
    assert "return None if model_args.overwrite_output_dir else" in result.text
    assert "    overwrite_output_dir: bool = False\n" in result.text


def test_unreachable_read_keeps_the_todo_and_moves_nothing() -> None:
    result = migrate(HELPER_GETS_ONLY_ARGS, "NM208")
    assert "overwrite_output_dir: bool" not in result.text
    assert "    if training_args.overwrite_output_dir:" in result.text
    assert findings(result, "NM208") == {(19, "todo")}
    assert "declare overwrite_output_dir in a dataclass of your own" in result.text
    plan = analyse(textwrap.dedent(HELPER_GETS_ONLY_ARGS))
    assert plan is not None and plan.script_moves == {}
    why = "no variable of the script dataclass reaches training_args in detect"
    assert plan.script_blocked == {"overwrite_output_dir": why}
    record = _collect(textwrap.dedent(HELPER_GETS_ONLY_ARGS))
    assert record is not None and "overwrite_output_dir" not in record.own_fields
    assert record.reads == {("overwrite_output_dir", "training_args.overwrite_output_dir")}


def test_no_script_dataclass_keeps_the_todo() -> None:
    result = migrate(
        """
        from transformers import HfArgumentParser, TrainingArguments

        parser = HfArgumentParser(TrainingArguments)
        (training_args,) = parser.parse_args_into_dataclasses()
        fresh = training_args.overwrite_output_dir
        """,
        "NM208",
    )
    assert "fresh = training_args.overwrite_output_dir" in result.text
    assert findings(result, "NM208") == {(5, "todo")}


def test_another_parsed_dataclass_declaring_it_blocks_the_move() -> None:
    source = MAIN_READS.replace("    overwrite_cache: bool = False\n", "    overwrite_output_dir: bool = False\n")
    result = migrate(source, "NM208")
    assert "not training_args.overwrite_output_dir" in result.text
    assert result.text.count("overwrite_output_dir: bool = False") == 1
    assert {severity for _, severity in findings(result, "NM208")} == {"todo"}


def test_a_field_the_script_dataclass_already_declares_is_left_alone() -> None:
    declared = 'field(default="t5-small")\n    overwrite_output_dir: bool = False\n'
    unchanged(MAIN_READS.replace("training_args.overwrite_output_dir", "model_args.overwrite_output_dir")
              .replace('field(default="t5-small")\n', declared), "NM208")


def test_a_cuda_baseline_is_not_touched() -> None:
    unchanged(MAIN_READS, "NM208", neuron_project=False)


def test_a_project_subclass_declaring_the_field_again_keeps_the_reads() -> None:
    project = {"common/hf_utils.py": textwrap.dedent("""
        from dataclasses import dataclass
        from transformers import TrainingArguments


        @dataclass
        class TrnTrainingArguments(TrainingArguments):
            overwrite_output_dir: bool = False
        """)}
    source = MAIN_READS.replace("from transformers import HfArgumentParser, Trainer, TrainingArguments",
                                "from transformers import HfArgumentParser, Trainer\n"
                                "from common.hf_utils import TrnTrainingArguments as TrainingArguments")
    unchanged(source, "NM208", project=project)


def test_a_project_subclass_without_the_field_takes_the_move() -> None:
    project = {"common/hf_utils.py": textwrap.dedent("""
        from dataclasses import dataclass
        from transformers import TrainingArguments


        @dataclass
        class TrnTrainingArguments(TrainingArguments):
            loss_scale: float = 1.0
        """)}
    source = MAIN_READS.replace("from transformers import HfArgumentParser, Trainer, TrainingArguments",
                                "from transformers import HfArgumentParser, Trainer\n"
                                "from common.hf_utils import TrnTrainingArguments as TrainingArguments")
    result = migrate(source, "NM208", project=project)
    assert "and not model_args.overwrite_output_dir:" in result.text
    # the launch layer reads the script's text alone and must come to the same answer
    assert "overwrite_output_dir" in script_cli_fields(textwrap.dedent(source))
