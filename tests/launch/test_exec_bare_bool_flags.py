"""Execution proof (NM408 / NM410, rtC-07): a bare ``--bf16`` on the launch line of a script parsing NeuronSFTConfig
was on; trl 1.x's SFTConfig declares ``bf16: bool | None = None``, which transformers' HfArgumentParser takes only
with a value, so the migrated script would stop with "argument --bf16: expected one argument". The migrated launch
line (shell, and an argv list in Python) spells ``--bf16 true`` and parses with the installed trl."""

from __future__ import annotations

import contextlib
import io
import shlex
import textwrap

import pytest
from transformers import HfArgumentParser
from trl import SFTConfig

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

pytestmark = pytest.mark.execution

SCRIPT = textwrap.dedent('''
    from optimum.neuron import NeuronHfArgumentParser, NeuronSFTConfig

    (training_args,) = NeuronHfArgumentParser(NeuronSFTConfig).parse_args_into_dataclasses()
    ''').lstrip("\n")
LAUNCH = "torchrun --nproc_per_node 2 sft.py --output_dir out --bf16 --zero_1 true --use_cpu true\n"
LAUNCHER = textwrap.dedent('''
    import subprocess

    subprocess.run(["torchrun", "--nproc_per_node", "2", "sft.py", "--output_dir", "out", "--bf16", "--use_cpu", "true"])
    ''').lstrip("\n")
PROJECT = {"sft.py": SCRIPT, "run.sh": LAUNCH, "launch.py": LAUNCHER}


def _parse(args: list[str]) -> SFTConfig:
    # the script as NM201 migrates it parses trl's SFTConfig in place of NeuronSFTConfig
    (parsed,) = HfArgumentParser(SFTConfig).parse_args_into_dataclasses(args=args)
    return parsed



def test_a_bare_bf16_flag_gets_its_value_and_parses_with_trl() -> None:
    launch = apply_rules(LAUNCH, path="run.sh", kind=FileKind.SHELL, project=PROJECT, select=["NM408"]).text
    words = shlex.split(launch.splitlines()[-1])
    assert words[words.index("--bf16") + 1] == "true"
    parsed = _parse(words[words.index("sft.py") + 1:])
    assert parsed.bf16 is True and parsed.torch_compile is True

    launcher = apply_rules(LAUNCHER, path="launch.py", kind=FileKind.PYTHON, project=PROJECT, select=["NM408", "NM410"]).text
    assert '"--bf16",\n' not in launcher and '"--bf16", "--use_cpu"' not in launcher
    namespace: dict = {}
    exec(compile(launcher.replace("subprocess.run(", "argv = ("), "launch.py", "exec"), namespace)
    argv = list(namespace["argv"])
    assert argv[argv.index("--bf16") + 1] == "true"

    # as it was: the bare flag stops the stock parser
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit):
        _parse(["--output_dir", "out", "--bf16", "--use_cpu", "true"])
