"""The lines of a YAML literal block a shell runs (a CI ``run: |`` step, the script after ``bash -c``) get the launch
rules' shell checks, with the same decisions as the same lines in a .sh file.

Before, ``export XLA_USE_BF16=1`` in a ``run: |`` step was only noted by NM902 and ``export PJRT_DEVICE=NEURON``
stayed: the YAML reader looked for env lists only. Each case migrates one script as ``train.sh`` and as the block of a
workflow step / a ``bash -c`` container, re-parses the YAML with PyYAML and compares the block's value with the
migrated .sh file; ``bash -n`` checks the result.
"""

from __future__ import annotations

import subprocess
import textwrap

import pytest
import yaml

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

PROJECT = {
    "train.py": "from transformers import HfArgumentParser, TrainingArguments\n\n"
                "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n",
    "tools/report.py": "import argparse\n\nargparse.ArgumentParser().parse_args()\n",
}


def migrate(text: str, kind: FileKind, path: str) -> str:
    return apply_rules(text, kind, select=["NM4"], path=path, project=PROJECT).text


def workflow(script: str) -> str:
    return "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: |\n" + textwrap.indent(script, " " * 10)


def container(script: str) -> str:
    return ('spec:\n  containers:\n    - name: t\n      command: ["/bin/bash", "-c"]\n      args:\n        - |\n'
            + textwrap.indent(script, " " * 10))


SCRIPTS = [
    "export XLA_USE_BF16=1\ntorchrun --nproc_per_node=2 train.py --output_dir /o\n",  # removed, --bf16 true added
    "export XLA_USE_BF16=1\npython tools/report.py\n",  # kept: its own argparse
    "XLA_USE_BF16=1 torchrun --nproc_per_node=2 train.py \\\n  --output_dir /o\n",  # a prefix, a continued command
    "export PJRT_DEVICE=NEURON\nexport NEURON_CC_FLAGS=\"--model-type=transformer --cache_dir=/c\"\n"
    "torchrun --nproc_per_node=2 train.py --output_dir /o\n",  # NM404 removes, NM405 reviews
    "set -e\nexport MALLOC_ARENA_MAX=64\ntorchrun --nproc_per_node=2 train.py --output_dir /o\n",  # nothing to do
    # NM401 deletes the pass, and the exports that reached only it go with it (the block is a shell of its own)
    "export XLA_USE_BF16=1\nexport NEURON_CC_FLAGS=\"--cache_dir=/c\"\n"
    "neuron_parallel_compile torchrun --nproc_per_node=2 train.py --output_dir /o --max_steps 10\nrm -rf /tmp/x\n",
]


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("wrap, path, where", [
    (workflow, ".github/workflows/train.yml", lambda doc: doc["jobs"]["t"]["steps"][0]["run"]),
    (container, "job.yaml", lambda doc: doc["spec"]["containers"][0]["args"][0]),
])
def test_a_shell_block_is_migrated_as_a_shell_file(script, wrap, path, where):
    as_shell = migrate(script, FileKind.SHELL, "train.sh")
    before = wrap(script)
    after = migrate(before, FileKind.YAML, path)
    assert where(yaml.safe_load(after)) == as_shell
    subprocess.run(["bash", "-n", "-c", where(yaml.safe_load(after))], check=True)
    assert migrate(after, FileKind.YAML, path) == after  # a second run changes nothing
    # the rest of the document is unchanged
    assert {k: v for k, v in yaml.safe_load(after).items() if k != "jobs" and k != "spec"} == \
        {k: v for k, v in yaml.safe_load(before).items() if k != "jobs" and k != "spec"}


def test_an_export_reaches_its_own_step_only():
    before = workflow("export XLA_USE_BF16=1\ntorchrun --nproc_per_node=2 train.py --output_dir /o\n") + \
        "      - run: |\n          torchrun --nproc_per_node=2 train.py --output_dir /eval\n"
    steps = yaml.safe_load(migrate(before, FileKind.YAML, ".github/workflows/train.yml"))["jobs"]["t"]["steps"]
    assert steps[0]["run"].endswith("torchrun --nproc_per_node=2 train.py --output_dir /o --bf16 true\n")
    assert steps[1]["run"] == "torchrun --nproc_per_node=2 train.py --output_dir /eval\n"  # fp32 before and after


@pytest.mark.parametrize("setting", [
    "export XLA_USE_BF16=0\n",
    "export PJRT_DEVICE=NEURON\n",
    "export NEURON_CC_FLAGS=--cache_dir=/c\n"
    "neuron_parallel_compile torchrun --nproc_per_node=2 train.py --max_steps 10\n",
])
def test_a_script_left_without_commands_keeps_a_no_op(setting):
    before = workflow(setting) + "      - run: echo done\n"
    after = migrate(before, FileKind.YAML, ".github/workflows/train.yml")
    assert [step["run"] for step in yaml.safe_load(after)["jobs"]["t"]["steps"]] == [":\n", "echo done"]
    assert migrate(after, FileKind.YAML, ".github/workflows/train.yml") == after


def test_a_block_no_shell_runs_is_left_alone():
    before = "data:\n  notes.txt: |\n    export XLA_USE_BF16=1\n    export PJRT_DEVICE=NEURON\n    torchrun train.py\n"
    assert migrate(before, FileKind.YAML, "configmap.yaml") == before
