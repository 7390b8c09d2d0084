"""NM205 claims the arguments of a ``with lazy_load_for_parallelism(...)`` header it removes (rt3C #6): the header's
``training_args.pipeline_parallel_size`` goes with it, so NM208 gives that read no "raises AttributeError" todo;
NM205's own pipeline note stays. A read of the field elsewhere moves it into the script's dataclass (NM208), whose
``__post_init__`` stops a run with a pipeline degree above 1."""

from tests.rules.case import migrate

SCRIPT = """
    from dataclasses import dataclass, field

    from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
    from optimum.neuron import NeuronTrainingArguments
    from optimum.neuron.distributed import lazy_load_for_parallelism
    from transformers import AutoModelForCausalLM


    @dataclass
    class ScriptArguments:
        model_id: str = field(default="gpt2")


    def main():
        parser = HfArgumentParser((ScriptArguments, NeuronTrainingArguments))
        script_args, training_args = parser.parse_args_into_dataclasses()
        with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size,
                                       pipeline_parallel_size=training_args.pipeline_parallel_size):
            model = AutoModelForCausalLM.from_pretrained(script_args.model_id)
        {later}
        return model
"""


def _pp_notes(result, rule: str) -> list[str]:
    return [f.message for f in result.findings if f.rule == rule and "pipeline_parallel_size" in f.message]


def test_read_in_the_removed_header_gets_no_attribute_error_todo() -> None:
    result = migrate(SCRIPT.replace("{later}", "print(model)"), "NM205", family="NM2")
    assert "lazy_load_for_parallelism" not in result.text
    code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("pipeline_parallel_size" in line for line in code)
    assert not any("raises AttributeError" in note for note in _pp_notes(result, "NM208"))
    assert len(_pp_notes(result, "NM205")) == 1  # the pipeline note itself stays, once


def test_a_read_that_survives_the_run_moves_into_the_script_dataclass() -> None:
    result = migrate(SCRIPT.replace("{later}", "print(training_args.pipeline_parallel_size)"), "NM205", family="NM2")
    assert "print(script_args.pipeline_parallel_size)" in result.text
    assert "    pipeline_parallel_size: int = 1\n" in result.text
    assert "        if self.pipeline_parallel_size != 1:\n            raise ValueError(" in result.text
    assert not any("raises AttributeError" in note for note in _pp_notes(result, "NM208"))
