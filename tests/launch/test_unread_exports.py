"""NM401: exports that reached only the deleted neuron_parallel_compile pass go with it (corpus llama3-aws-trainium
notebook, cell 11: `export XLA_USE_BF16=1`, `export NEURON_CC_FLAGS=...`, then only the pass; the cell is its own
shell, yet NM403 kept XLA_USE_BF16 with "no command here runs a training script" and NM405 asked to review the
flags). In a script, an export before a deleted pass that later commands can still read stays as before."""

from __future__ import annotations

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

TRAINER = (
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronTrainingArguments\n"
    "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()\n"
)
PASS = "neuron_parallel_compile torchrun --nproc_per_node=2 train.py --max_steps 10\n"


def run(text: str, path: str = "compile.sh", project: dict | None = None):
    project = {"train.py": TRAINER, "run.sh": "torchrun --nproc_per_node=2 train.py\n", **(project or {})}
    return apply_rules(text, FileKind.SHELL, select=["NM4"], path=path, project=project, inline_notes=False)


def test_script_whose_only_command_was_the_pass_loses_its_exports() -> None:
    result = run(
        '#!/bin/bash\nexport XLA_USE_BF16=1\nexport NEURON_CC_FLAGS="-O1"\nexport MALLOC_ARENA_MAX=64\n'
        + PASS
        + "rm -rf out\n"
    )
    assert result.text == "#!/bin/bash\nexport MALLOC_ARENA_MAX=64\nrm -rf out\n"  # MALLOC_ARENA_MAX: a keep setting
    removed = [f for f in result.findings if f.rule == "NM401" and f.message.startswith("removed `export")]
    assert {f.line for f in removed} == {2, 3} and all(f.severity.value == "fixed" for f in removed)
    assert not [f for f in result.findings if f.rule in ("NM403", "NM405")]


@pytest.mark.parametrize(
    "after",
    [
        "torchrun --nproc_per_node=2 train.py --bf16 true\n",  # the real run reads them: today's decisions
        'echo "flags: $NEURON_CC_FLAGS"\n',  # the shell expands it
        "python eval.py\n",  # another program may read it
    ],
)
def test_exports_a_later_command_may_read_stay(after: str) -> None:
    result = run('export NEURON_CC_FLAGS="-O1"\n' + PASS + after)
    assert 'export NEURON_CC_FLAGS="-O1"' in result.text
    assert not [f for f in result.findings if f.message.startswith("removed `export")]


def test_a_script_another_file_sources_keeps_its_exports() -> None:
    """`source compile.sh` elsewhere: its exports reach the sourcing shell."""
    result = run('export NEURON_CC_FLAGS="-O1"\n' + PASS, project={"go.sh": "source compile.sh\ntorchrun train.py\n"})
    assert 'export NEURON_CC_FLAGS="-O1"' in result.text


def test_no_pass_deleted_no_export_removed() -> None:
    result = run('export NEURON_CC_FLAGS="-O1"\nrm -rf out\n')
    assert not [f for f in result.findings if f.rule == "NM401"]
