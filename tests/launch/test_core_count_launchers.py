"""NM405's reading of the launcher a core-count setting is for (redteam-round2 D10): torchrun and
``python -m torch.distributed.run`` with --nproc_per_node, ``accelerate launch`` with --num_processes (one
machine only), model servers; anything else is no launcher."""

from __future__ import annotations

import pytest

from codemods.launch.nm405_review_neuron_env import Launcher, launcher_of
from migrate.filekinds import FileKind
from migrate.testing import apply_rules


@pytest.mark.parametrize("command, expected", [
    ("torchrun --nproc_per_node=4 train.py --nproc_per_node 9", Launcher("torchrun", "torchrun", "4")),
    ("python3 -m torch.distributed.run --nproc-per-node 2 train.py", Launcher("torchrun", "torchrun", "2")),
    ("env A=1 accelerate launch --config_file c.yaml --num_processes 2 train.py",
     Launcher("accelerate", "accelerate launch", "2")),
    ("accelerate launch --num_machines 2 --num_processes 16 train.py", Launcher("accelerate", "accelerate launch")),
    ("accelerate launch train.py --num_processes 3", Launcher("accelerate", "accelerate launch")),
    ("gunicorn -w 2 app:app", Launcher("serving", "gunicorn")),
    ("python -m uvicorn app:app", Launcher("serving", "uvicorn")),
    ("vllm serve meta-llama/Llama-3.2-1B --tensor-parallel-size 2", Launcher("serving", "vllm serve")),
    ("accelerate config", None),
    ("python train.py --num_processes 2", None),
    ("echo torchrun", None),
])
def test_launcher_of(command: str, expected: Launcher | None) -> None:
    assert launcher_of(command.split()) == expected


def test_the_table_note_stays_without_a_launcher() -> None:
    text = "export NEURON_RT_NUM_CORES=2\npython train.py\n"
    result = apply_rules(text, FileKind.SHELL, path="run.sh", select=["NM405"])
    assert [f.message for f in result.findings] == [
        "review NEURON_RT_NUM_CORES: TorchNeuron drives one NeuronCore per process; launch with torchrun "
        "--nproc_per_node <cores> instead and remove this"]
