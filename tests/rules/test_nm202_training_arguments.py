"""NM202: what the migrated training arguments ask for depends on the device style and on the other arguments."""

from __future__ import annotations

import pytest

from migrate.testing import apply_rules

SOURCE = '''
from optimum.neuron import NeuronTrainingArguments

args = NeuronTrainingArguments(output_dir="out", bf16={bf16})
'''


@pytest.mark.parametrize(("bf16", "portable"), [
    ("True", "bf16=torch.accelerator.is_available()"),
    ("options.bf16", "bf16=options.bf16 and torch.accelerator.is_available()"),
    ("False", "bf16=False,"),
])
def test_bf16_asks_for_an_accelerator_in_the_portable_style(bf16, portable):
    migrated = apply_rules(SOURCE.format(bf16=bf16), select=["NM2"]).text
    assert portable in migrated


def test_bf16_is_kept_in_the_neuron_style_and_next_to_use_cpu():
    assert "bf16=True," in apply_rules(SOURCE.format(bf16="True"), select=["NM2"], device_style="neuron").text
    with_cpu = SOURCE.format(bf16="True").replace('output_dir="out"', 'output_dir="out", use_cpu=True')
    assert "bf16=True," in apply_rules(with_cpu, select=["NM2"]).text


PIPELINE = '''
from transformers import AutoModelForCausalLM
from optimum.neuron import NeuronTrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism

def main(tp, pp):
    args = NeuronTrainingArguments(output_dir="out", tensor_parallel_size=tp, pipeline_parallel_size=pp)
    with lazy_load_for_parallelism(tensor_parallel_size=tp, pipeline_parallel_size=pp):
        model = AutoModelForCausalLM.from_pretrained("m")
'''


def test_one_pipeline_note_and_no_check_of_a_carried_degree():
    """The pipeline size the arguments and the lazy load share gets one note; the degree the lazy load carries
    to from_pretrained is a fixed finding, not a todo to check the load."""
    result = apply_rules(PIPELINE, select=["NM2"])
    pipeline = [f for f in result.findings if f.message.startswith("pipeline_parallel_size=pp")]
    assert len(pipeline) == 1 and pipeline[0].rule == "NM202" and "dp_replicate_size * fsdp_size" in pipeline[0].message
    degree = [f for f in result.findings if f.message.startswith("tensor_parallel_size=tp removed")]
    assert [f.severity.value for f in degree] == ["fixed"]
    assert "distributed_config=(DistributedConfig(tp_size=tp" in result.text
