"""NM902 torch-xla-leftovers: one finding per file per distinct message; a file left on torch_xla as a whole gets
one information finding pointing at its note."""

from __future__ import annotations

from migrate.testing import apply_rules
from tests.rules.case import findings

RULE = "NM902"


def test_a_file_left_on_torch_xla_gets_one_information_finding() -> None:
    steps = "".join(f"    xm.mark_step()  # step {n}\n" for n in range(40))
    source = ("import torch_xla.core.xla_model as xm\n"
              "from torch_xla.distributed.zero_redundancy_optimizer import ZeroRedundancyOptimizer\n\n"
              "def train(model):\n    opt = ZeroRedundancyOptimizer(model.parameters(), None)\n" + steps)
    result = apply_rules(source, select=["NM3", "NM9"], path="train.py")
    leftovers = [f for f in result.findings if f.rule == RULE]
    assert len(leftovers) == 1 and leftovers[0].severity.value == "info"
    assert "the note at its top" in leftovers[0].message
    assert result.text.count("# neuron-migrate:") == 1  # NM318's


def test_repeated_leftovers_get_one_todo_and_one_note() -> None:
    source = "import torch_xla.debug.profiler as xp\n\nxp.start_server(9012)\nimport torch_xla.debug.metrics as met\n"
    result = apply_rules(source, select=[RULE], path="train.py")
    assert findings(result, RULE) == {(1, "todo"), (4, "info")}
    assert result.text.count("torch_xla is still used") == 1


def test_distinct_messages_each_keep_their_todo() -> None:
    source = ('import os\nimport torch_xla\n\nos.environ["XLA_USE_BF16"] = "1"\n'
              'if "XLA_DOWNCAST_BF16" in os.environ:\n    pass\n')
    result = apply_rules(source, select=[RULE], path="train.py")
    assert findings(result, RULE) == {(2, "todo"), (4, "todo"), (5, "todo")}


def test_strings_the_code_sweeps_leave_are_still_prose() -> None:
    # a print line naming neuron_parallel_compile runs nothing (NM901 skips it): NM903 reports the mention
    source = 'import torch_xla\n\nprint("ERROR: neuron_parallel_compile failed!")\nprint("neuron_parallel_compile")\n'
    result = apply_rules(source, select=["NM9"], path="run.py")
    assert [(f.line, f.rule, f.severity.value) for f in result.findings if f.line > 1] == [
        (3, "NM903", "info"), (4, "NM903", "info")]
