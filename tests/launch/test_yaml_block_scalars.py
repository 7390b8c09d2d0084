"""Notes and edits on commands held in YAML block scalars (``command: >``, ``command: |``, ``args: - >-``).

A ``#`` line inside a block scalar is part of its value, not a comment: in a folded scalar it joins the command
(compose's argv[0] becomes ``#``; ``bash -c`` gets a syntax error), in a literal one it is a line of the value. So a
note goes above the key / list item that owns the scalar, except inside a literal scalar that a shell runs (a CI
``run:`` step, the item after ``bash -c``), where it is a shell comment. Every case re-parses the migrated YAML and
compares the scalar's value with the original's.
"""

from __future__ import annotations

import subprocess

import pytest
import yaml

from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from migrate.textdoc import NOTE_PREFIX, TextDocument, add_notes

TRAINER = (
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronTrainingArguments\n"
    "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()\n"
)


def migrate(text: str, path: str = "job.yaml") -> str:
    return apply_rules(text, FileKind.YAML, select=["NM4"], path=path, project={"train.py": TRAINER}).text


def without_notes(value):
    """The parsed YAML with the note lines of shell-run literal scalars taken out."""
    if isinstance(value, str):
        return "\n".join(line for line in value.split("\n") if NOTE_PREFIX not in line)
    if isinstance(value, list):
        return [without_notes(item) for item in value]
    if isinstance(value, dict):
        return {key: without_notes(item) for key, item in value.items()}
    return value


# (YAML, the value a note on the `torchrun` line must not change: its path in the parsed document)
NOT_SHELL = [
    (
        "services:\n  t:\n    command: >\n      torchrun --nproc_per_node=32 train.py\n"
        "      --output_dir /o\n    image: x\n",
        ["services", "t", "command"],
    ),
    (
        "services:\n  t:\n    command: |\n      torchrun --nproc_per_node=32 train.py --output_dir /o\n",
        ["services", "t", "command"],
    ),
    ("services:\n  t:\n    command: >-\n      torchrun --nproc_per_node=32 train.py\n", ["services", "t", "command"]),
    # folded, even for bash -c: the note would join the command (`pip install ... && # note torchrun ...`)
    (
        'c:\n  - name: t\n    command: ["/bin/bash", "-c"]\n    args:\n      - >\n        pip install -r r.txt &&\n'
        "        torchrun --nproc_per_node=32 train.py\n",
        ["c", 0, "args", 0],
    ),
    # literal, but nothing says a shell runs it (no command: [bash, -c])
    ("c:\n  - name: t\n    args:\n      - |\n        torchrun --nproc_per_node=32 train.py\n", ["c", 0, "args", 0]),
    ("c:\n  command: torchrun --nproc_per_node=32\n    train.py\n", ["c", "command"]),  # a plain scalar over lines
    ('c:\n  command: "torchrun --nproc_per_node=32\n    train.py"\n', ["c", "command"]),
]


def _at(document, path):
    for key in path:
        document = document[key]
    return document


@pytest.mark.parametrize("text, path", NOT_SHELL)
def test_note_goes_above_the_key_owning_the_scalar(text: str, path: list) -> None:
    doc = TextDocument(text, FileKind.YAML)
    add_notes(doc, [(next(line for line in doc if "nproc" in line.text), "a note")])
    out = doc.text()
    assert _at(yaml.safe_load(out), path) == _at(yaml.safe_load(text), path)
    assert NOTE_PREFIX in out


SHELL = [
    (
        'c:\n  - name: t\n    command: ["/bin/bash", "-c"]\n    args:\n      - |\n        set -e\n'
        "        torchrun --nproc_per_node=32 train.py \\\n          --bf16\n",
        ["c", 0, "args", 0],
    ),
    (
        "c:\n  - name: t\n    command:\n      - bash\n      - -c\n      - |\n"
        "        torchrun --nproc_per_node=32 train.py\n",
        ["c", 0, "command", 2],
    ),
    (
        "steps:\n  - name: t\n    run: |\n      set -e\n      torchrun --nproc_per_node=32 train.py\n",
        ["steps", 0, "run"],
    ),
    (
        's:\n  t:\n    entrypoint: ["sh", "-c"]\n    command: |\n      torchrun --nproc_per_node=32 train.py\n',
        ["s", "t", "command"],
    ),
]


@pytest.mark.parametrize("text, path", SHELL)
def test_note_inside_a_literal_scalar_a_shell_runs(text: str, path: list) -> None:
    doc = TextDocument(text, FileKind.YAML)
    add_notes(doc, [(next(line for line in doc if "--bf16" in line.text or "nproc" in line.text), "a note")])
    value = _at(yaml.safe_load(doc.text()), path)
    assert NOTE_PREFIX in value  # a shell comment line of the script, above the whole command (continuation included)
    assert without_notes(value) == _at(yaml.safe_load(text), path)
    assert value.index(NOTE_PREFIX) < value.index("torchrun")
    subprocess.run(["bash", "-n", "-c", value], check=True)


def test_compose_folded_command_keeps_its_value_through_the_rules() -> None:
    text = (
        "services:\n  trainer:\n    command: >\n      torchrun --nproc_per_node=32 -m src.train\n"
        "      trainer.output_dir=/outputs\n    environment:\n      - MALLOC_ARENA_MAX=64\n"
    )
    out = migrate(text, "docker-compose.yml")
    assert "trn1 NeuronCore count" in out
    assert yaml.safe_load(out) == yaml.safe_load(text)


def test_pass_deleted_at_the_end_of_a_folded_bash_c_script_leaves_no_dangling_and() -> None:
    text = (
        'c:\n  - name: t\n    command: ["/bin/bash", "-c"]\n    args:\n      - >-\n        pip install -r r.txt &&\n'
        "        torchrun --nproc_per_node=2 train.py &&\n"
        "        neuron_parallel_compile torchrun --nproc_per_node=2 train.py --max_steps 10\n"
    )
    value = yaml.safe_load(migrate(text))["c"][0]["args"][0]
    assert value == "pip install -r r.txt && torchrun --nproc_per_node=2 train.py"
    subprocess.run(["bash", "-n", "-c", value], check=True)


def test_pass_deleted_at_the_end_of_a_literal_bash_c_script_leaves_no_dangling_and() -> None:
    text = (
        'c:\n  - name: t\n    command: ["/bin/bash", "-c"]\n    args:\n      - |\n        pip install -r r.txt &&\n'
        "        torchrun --nproc_per_node=2 train.py &&\n"
        "        neuron_parallel_compile torchrun --nproc_per_node=2 train.py --max_steps 10\n"
    )
    value = yaml.safe_load(migrate(text))["c"][0]["args"][0]
    assert value == "pip install -r r.txt &&\ntorchrun --nproc_per_node=2 train.py\n"
    subprocess.run(["bash", "-n", "-c", value], check=True)


@pytest.mark.parametrize(
    "command",
    [
        "command: neuron_parallel_compile torchrun --nproc_per_node=2 train.py --max_steps 10\n",
        "command: >\n      neuron_parallel_compile torchrun --nproc_per_node=2 train.py --max_steps 10\n",
    ],
)
def test_a_pass_that_is_the_whole_command_stays_with_a_todo(command: str) -> None:
    """Deleting it would leave `command:` empty (or delete the key): the container would run its image's default."""
    text = "services:\n  precompile:\n    image: x\n    " + command
    out = migrate(text, "docker-compose.yml")
    assert yaml.safe_load(out) == yaml.safe_load(text)
    assert "whole command of this YAML entry" in out
