"""NEURON_CC_FLAGS set from Python gets the note a shell ``export`` or ``%env`` gets from NM405 (rt5I entry 8): the
assignment, ``os.environ.setdefault``, ``os.putenv`` and ``os.environ.update({...})`` / ``update(NAME=...)``."""

from __future__ import annotations

import pytest

from codemods.launch.nm405_review_neuron_env import cc_flags_message
from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

VALUE = "--model-type=transformer --enable-saturate-infinity"


@pytest.mark.parametrize("write", [
    f'os.environ["NEURON_CC_FLAGS"] = "{VALUE}"',
    f'os.environ.setdefault("NEURON_CC_FLAGS", "{VALUE}")',
    f'os.putenv("NEURON_CC_FLAGS", "{VALUE}")',
    f'os.environ.update({{"NEURON_CC_FLAGS": "{VALUE}", "HOME": "/root"}})',
    f'os.environ.update(NEURON_CC_FLAGS="{VALUE}")',
])
def test_a_python_write_gets_the_launchers_note(write: str) -> None:
    result = migrate(f"import os\nfrom optimum.neuron import NeuronTrainer\n\n{write}\n", "NM316")
    assert write in result.text  # the value stays: it is reviewed, not edited
    assert findings(result, "NM316") == {(4, "todo")}
    [message] = [f.message for f in result.findings if f.rule == "NM316"]
    assert message == cc_flags_message(VALUE)
    shell = migrate(f'#!/bin/bash\nexport NEURON_CC_FLAGS="{VALUE}"\ntorchrun --nproc_per_node 2 train.py\n', "NM405",
                    kind=FileKind.SHELL, path="run.sh")
    assert [f.message for f in shell.findings if f.rule == "NM405"] == [message]


def test_xla_era_flags_are_named_in_an_update_too() -> None:
    result = migrate('import os\nimport torch_xla\n\n'
                     'os.environ.update({"NEURON_CC_FLAGS": "--retry_failed_compilation", "XLA_IR_DEBUG": "1"})\n',
                     "NM316")
    [message] = [f.message for f in result.findings if f.rule == "NM316"]
    assert "drop --retry_failed_compilation" in message
    assert "XLA_IR_DEBUG was left as it is (set with os.environ.update beside other variables)" in message
    assert '"XLA_IR_DEBUG": "1"' in result.text


def test_settings_read_by_kept_xla_code_keep_their_quiet() -> None:
    # torch_neuronx.trace stays on the XLA-era compiler, which takes --model-type: nothing to review, as before
    source = ('import os\n\nimport torch\nimport torch_neuronx\n\n'
              'os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer"\n'
              "traced = torch_neuronx.trace(torch.nn.Linear(2, 2), torch.rand(1, 2))\n")
    assert findings(migrate(source, "NM316"), "NM316") == set()
