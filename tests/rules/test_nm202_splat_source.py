"""NM202: ``NeuronSFTConfig(**args)`` where ``args`` is the ``to_dict()`` of stock arguments the tool knows (parsed,
or built by a Neuron class) has nothing to check: that dict cannot hold Neuron-only fields and carries its own
torch_compile (rt3C #10). A source it cannot see keeps the todo."""

from tests.rules.case import migrate

SPLAT = "arguments passed through ** are not checked"
PARSED = """
import sys

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronSFTConfig, NeuronTrainingArguments


def build(training_args, max_len):
    args = training_args.to_dict()
    return NeuronSFTConfig(max_seq_length=max_len, packing=True, **args)


def main():
    parser = HfArgumentParser(NeuronTrainingArguments)
    (training_args,) = parser.parse_args_into_dataclasses()
    build(training_args, 512)
"""


def _todos(result) -> list[str]:
    return [f.message for f in result.findings if f.rule == "NM202" and f.severity.value == "todo"]


def test_the_dict_of_parsed_arguments_needs_no_check_and_gets_the_sft_additions() -> None:
    result = migrate(PARSED, "NM202")
    assert not any(m.startswith(SPLAT) for m in _todos(result))
    assert ('SFTConfig(max_length=max_len, packing=True, **args, pad_to_multiple_of=max_len, '
            'packing_strategy="wrapped")') in result.text


def test_the_dict_of_arguments_built_by_a_neuron_class_needs_no_check() -> None:
    source = """
    from optimum.neuron import NeuronSFTConfig, NeuronTrainingArguments

    base = NeuronTrainingArguments(output_dir="out")
    cfg = NeuronSFTConfig(packing=False, **base.to_dict())
    """
    result = migrate(source, "NM202")
    assert not any(m.startswith(SPLAT) for m in _todos(result))
    assert "TrainingArguments(output_dir=\"out\", torch_compile=True" in result.text


def test_unknown_or_incomplete_sources_keep_the_todo() -> None:
    unknown = PARSED.replace("args = training_args.to_dict()", "args = load_json(training_args)")
    stock = """
    from transformers import TrainingArguments
    from optimum.neuron import NeuronSFTConfig

    base = TrainingArguments(output_dir="out")
    cfg = NeuronSFTConfig(packing=False, **base.to_dict())
    """  # a stock class without torch_compile: the dict does not carry it
    edited = PARSED.replace("    return NeuronSFTConfig",
                            "    args[\"tensor_parallel_size\"] = 8\n    return NeuronSFTConfig")
    from_method = PARSED + """

class Runner:
    def go(self, anything):
        build(anything, 1)
"""
    for source in (unknown, stock, edited, from_method):
        result = migrate(source, "NM202")
        assert any(m.startswith(SPLAT) for m in _todos(result)), source
        assert "pad_to_multiple_of" not in result.text
