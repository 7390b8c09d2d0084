"""``-m pkg.module`` after the launchers that run a training module (``torchrun -m``, ``python -m
torch.distributed.run -m``, ``accelerate launch -m``, ``deepspeed --module``) names the script the launch settings
belong to, as ``python -m`` does (rt4D 4: ``torchrun ... -m vitft.train`` resolved to the program ``torchrun``, so
the compile pass of a script kept on optimum-neuron was deleted)."""

from __future__ import annotations

from pathlib import PurePath

import pytest

from codemods._lib.launch_targets import program_of
from codemods._lib.shell import launched_scripts
from migrate.facts import ProjectFacts
from migrate.filekinds import FileKind
from migrate.textdoc import TextDocument


@pytest.mark.parametrize(
    "command, kind, name",
    [
        ("torchrun --nproc_per_node=2 -m pkg.train --bf16", "module", "pkg.train"),
        ("python -m torch.distributed.run --nproc-per-node 2 -m pkg.train", "module", "pkg.train"),
        ("python -m torch.distributed.run --nproc-per-node 2 train.py", "script", "train.py"),
        ("python3 -m torch.distributed.launch train.py", "script", "train.py"),
        ("accelerate launch --num_processes 2 -m pkg.train", "module", "pkg.train"),
        ("deepspeed --num_gpus 2 --module pkg.train", "module", "pkg.train"),
        ("python -m pkg.train --a 1", "module", "pkg.train"),
        ("srun torchrun -m pkg.train", "module", "pkg.train"),
        ("torchrun -m --nproc_per_node 2 pkg.train", "program", "the module this launcher runs"),
        ("grep -m 1 x file", "program", "grep"),  # -m of another program is its own option
    ],
)
def test_program_of_module_after_launchers(command: str, kind: str, name: str) -> None:
    program = program_of(command.split())
    assert program is not None and (program.kind, program.name) == (kind, name)


def test_launched_scripts_follow_modules_into_src_layouts() -> None:
    project = ProjectFacts(frozenset({"src/pkg/__init__.py", "src/pkg/train.py", "run.sh"}))
    doc = TextDocument(
        "torchrun --nproc_per_node 2 \\\n  -m pkg.train --x 1\npython -m pip install x\n", FileKind.SHELL
    )
    scripts, _ = launched_scripts(doc, project, PurePath("run.sh"))
    assert [script.path for script in scripts] == ["src/pkg/train.py"]  # pip: installed, not the project's
