"""rt7M M10: the stochastic-rounding and process-count notes follow what the project has: optimum-neuron code (it
switched stochastic rounding on) or not (the user set it); a mesh (DistributedConfig, tensor parallelism, sharding)
or not (each process is a replica). A second run keeps what the first said, even once the port removed the
optimum-neuron code that decided it."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.launch._base import MESH_COUNT, OWN_ROUNDING, REPLICA_WHY
from migrate.filekinds import FileKind
from migrate.testing import apply_rules

RUN = "#!/bin/bash\nexport NEURON_RT_STOCHASTIC_ROUNDING_EN=1\ntorchrun --nproc_per_node 32 train.py\n"
XLA = "import torch_xla.core.xla_model as xm\ndevice = xm.xla_device()\n"
OPTIMUM = "from optimum.neuron import NeuronTrainer\n"
FIXTURES = Path(__file__).parent.parent / "fixtures" / "launch"


def _run(text: str, train: str):
    return apply_rules(text, FileKind.SHELL, select=["NM4"], path="run.sh", project={"train.py": train, "run.sh": text})


def test_a_torch_xla_project_gets_the_notes_of_its_own_settings() -> None:
    messages = [f.message for f in _run(RUN, XLA).findings]
    assert OWN_ROUNDING in messages
    assert any(REPLICA_WHY in message for message in messages)


@pytest.mark.parametrize("train", [OPTIMUM, XLA + "from torch.distributed.tensor.parallel import parallelize_module\n",
                                   XLA + "tensor_parallel_size = 8\n"], ids=["optimum", "parallelize", "tp"])
def test_a_project_with_a_mesh_or_optimum_gets_the_dims(train: str) -> None:
    messages = [f.message for f in _run(RUN, train).findings]
    assert any(MESH_COUNT in message for message in messages)


def test_a_launcher_running_a_script_outside_the_project_keeps_the_dims() -> None:
    text = RUN.replace("train.py", "examples/run_clm.py")
    messages = [f.message for f in _run(text, XLA).findings]
    assert any(MESH_COUNT in message for message in messages)


@pytest.mark.parametrize("case,train", [("notes_follow_project_xla", OPTIMUM), ("notes_follow_project_optimum", XLA)])
def test_a_second_run_keeps_what_the_first_said(case: str, train: str) -> None:
    after = (FIXTURES / case / "after" / "run.sh").read_text()
    assert _run(after, train).text == after
