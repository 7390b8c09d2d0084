"""A parallelism or memory knob with no stock equivalent leaves the launch line with a todo the user reads, never a
quiet `fixed`: dropping sequence parallelism under TP changes the activation memory each rank holds."""

from __future__ import annotations

from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.testing import apply_rules

NEURON_SCRIPT = (
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronTrainingArguments\n"
    "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()\n"
)


def test_sequence_parallelism_leaves_with_a_todo_and_a_note_in_the_file() -> None:
    text = "torchrun --nproc_per_node 8 x.py --tensor_parallel_size 8 --sequence_parallel_enabled --output_dir o\n"
    result = apply_rules(text, FileKind.SHELL, select=["NM408"], path="run.sh", project={"x.py": NEURON_SCRIPT})
    assert "--sequence_parallel_enabled" not in result.text.splitlines()[-1]
    (finding,) = [f for f in result.findings if "sequence_parallel_enabled" in f.message]
    assert finding.severity is Severity.TODO
    assert "full-sequence activations" in finding.message
    assert any(line.startswith("# neuron-migrate: --sequence_parallel_enabled") for line in result.text.splitlines())


def test_the_same_flag_on_a_script_with_its_own_argparse_stays() -> None:
    own = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--sequence_parallel_enabled', action='store_true')\n"
    text = "torchrun x.py --sequence_parallel_enabled\n"
    result = apply_rules(text, FileKind.SHELL, select=["NM408"], path="run.sh", project={"x.py": own})
    assert result.text == text and not result.findings
