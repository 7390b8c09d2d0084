"""The value of a launcher option is no script (rt5I entry 9): ``torchrun --nproc_per_node $NPROC train.py`` ran
train.py, but NM401 took ``$NPROC`` for the command the pass ran, named it in its finding, and judged the pass by
it: a pass of train.py was deleted as 'the real run of $NPROC in this file' when that run was of another script."""

from __future__ import annotations

import pytest

from codemods._lib.shell.launcher_options import option_values
from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate


@pytest.mark.parametrize("value", ["$NPROC", "${NPROC}", "{nproc}", "$(nproc)", "8", '"$N"'])
def test_the_word_after_a_value_option_is_its_value_whatever_its_form(value: str) -> None:
    words = ["torchrun", "--nproc_per_node", value, "--nnodes", "$NODES", "train.py", "--lr", "$LR"]
    assert option_values(words) == {2, 4, 7}


def test_flags_take_no_value_and_written_values_are_one_word() -> None:
    assert option_values(["torchrun", "--standalone", "$SCRIPT"]) == set()
    assert option_values(["accelerate", "launch", "--multi_gpu", "--num_processes=8", "$SCRIPT"]) == set()
    assert option_values(["python", "-u", "-m", "torch.distributed.run", "--nproc-per-node", "2", "x.py"]) == {5}
    assert option_values(["torchrun", "--nproc_per_node", "train.py"]) == set()  # a script is no value


def _npc(script: str) -> list[tuple[int, str, str]]:
    result = migrate(script, "NM401", kind=FileKind.SHELL, path="run.sh")
    return sorted((f.line, f.severity.value, f.message) for f in result.findings if f.rule == "NM401")


@pytest.mark.parametrize("value", ["$NPROC", "${NPROC}", "$(nproc)"])
def test_a_pass_is_named_and_judged_by_its_script_not_by_an_option_value(value: str) -> None:
    script = (f"#!/bin/bash\nneuron_parallel_compile torchrun --nproc_per_node {value} train.py --max_steps 500\n"
              f"torchrun --nproc_per_node {value} train.py\n")
    result = migrate(script, "NM401", kind=FileKind.SHELL, path="run.sh")
    assert result.text == f"#!/bin/bash\ntorchrun --nproc_per_node {value} train.py\n"
    [(line, severity, message)] = _npc(script)
    assert (line, severity) == (2, "fixed")
    assert "it ran train.py only" in message and "the real run of train.py in this file" in message


def test_a_pass_whose_script_has_no_real_run_stays_although_the_option_value_is_the_same() -> None:
    script = ("#!/bin/bash\nneuron_parallel_compile torchrun --nproc_per_node $NPROC train.py --max_steps 500\n"
              "torchrun --nproc_per_node $NPROC other.py\n")
    result = migrate(script, "NM401", kind=FileKind.SHELL, path="run.sh")
    assert "neuron_parallel_compile torchrun --nproc_per_node $NPROC train.py" in result.text
    assert findings(result, "NM401") == {(2, "todo")}


def test_a_command_variable_is_still_the_command() -> None:
    script = "#!/bin/bash\nneuron_parallel_compile $CMD --max_steps 500\n$CMD\n"
    result = migrate(script, "NM401", kind=FileKind.SHELL, path="run.sh")
    assert result.text == "#!/bin/bash\n$CMD\n"
    [(_, _, message)] = _npc(script)
    assert "it ran $CMD only" in message
