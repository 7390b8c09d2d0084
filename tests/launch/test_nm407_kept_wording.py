"""NM407's todo for a core count kept for a script that stays on the torch_xla stack says so once."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

FIXTURES = Path(__file__).parent.parent / "fixtures" / "launch"
KEPT_SCRIPT = (FIXTURES / "npc_unresolved_target_kept" / "project" / "train.py").read_text()  # stays on optimum-neuron


@pytest.mark.parametrize("script, why", [
    (KEPT_SCRIPT, "which stays on optimum-neuron after this run, on the torch_xla stack"),
    (None, "is a torch_xla / NxD script (this launcher names torch_xla)"),
])
def test_kept_count_names_the_stack_once(script, why):
    project = {"train.py": script} if script is not None else {"prep.py": "print(1)\n"}
    launcher = "#!/bin/bash\ntorchrun --nproc_per_node=32 train.py --output_dir out\n"
    if script is None:  # a script outside the project, the launcher naming the torch_xla stack
        launcher += "python -m torch_xla.distributed.xla_dist -- python other.py\n"
    result = apply_rules(launcher, FileKind.SHELL, select=["NM407"], path="run.sh", project=project)
    finding = next(f for f in result.findings if f.rule == "NM407" and f.line == 2)
    assert why in finding.message, finding.message
    assert finding.message.count("torch_xla stack") <= 1
    assert "that stack (trn1 included) takes this count" in finding.message
    assert finding.message.endswith("set it to the product of your DistributedConfig dims")
