"""NM208: a parsed tensor_parallel_size moves into the script's own dataclass, and its reads follow it."""

from tests.rules.case import findings, migrate, unchanged


def test_tensor_parallel_size_moves_into_script_arguments() -> None:
    result = migrate(
        """
        from dataclasses import dataclass

        from optimum.neuron import NeuronTrainingArguments
        from transformers import HfArgumentParser


        @dataclass
        class ScriptArguments:
            model_id: str = "meta-llama/Llama-3.2-1B"


        parser = HfArgumentParser((ScriptArguments, NeuronTrainingArguments))
        script_args, training_args = parser.parse_args_into_dataclasses()
        tp = training_args.tensor_parallel_size
        """,
        "NM208",
        family="NM2",
    )
    assert "    tensor_parallel_size: int = 1\n" in result.text
    assert "tp = script_args.tensor_parallel_size" in result.text
    assert {(8, "fixed"), (14, "fixed")} <= findings(result, "NM208")


def test_a_project_field_of_the_same_name_is_left_alone() -> None:
    unchanged(
        """
        from dataclasses import dataclass


        @dataclass
        class Options:
            tensor_parallel_size: int = 1


        print(Options().tensor_parallel_size)
        """,
        "NM208",
    )
