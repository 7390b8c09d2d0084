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
