"""NM406 (fxL): the stock step that replaces a decoder `optimum-cli export neuron` of NM110's compiled-folder round
trip, and how the project's optimum-cli exports are read for that decision (kind, replaceable, folder)."""

import pytest

from codemods._lib.shell.lexer import lex
from codemods.inference._compiled_exports import cli_commands, cli_export_mentions, cli_exports, stock_step
from migrate.filekinds import FileKind
from migrate.testing import apply_rules

LOADER = """
import argparse

from optimum.neuron import NeuronModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--model-dir", required=True)
model = NeuronModelForCausalLM.from_pretrained(parser.parse_args().model_dir)
"""


def _export(line: str):
    (found,) = cli_commands(lex(line)[0])
    return found[2]


@pytest.mark.parametrize("line", [
    'optimum-cli export neuron --model "$MODEL_ID" --sequence_length "$SEQ" --auto_cast_type "$DTYPE" "$OUT"',
    "optimum-cli export neuron -m {model_id} --sequence_length 128 --torch_dtype bfloat16 out/",
    "optimum-cli export neuron --model $(MODEL) --sequence_length 64 --num_cores 2 $(OUT)",
])
def test_the_step_python_holds_nothing_a_shell_make_or_ipython_expands(line: str) -> None:
    step = stock_step(_export(line))
    code = step.split('"', 2)[1]
    assert not any(mark in code for mark in ("$", "{", "}", "`", "\\", "!", '"'))
    assert step.startswith('python -c "import sys') and "save_pretrained(sys.argv[2])" in code


def test_kinds_and_what_can_be_replaced() -> None:
    text = """#!/bin/bash
M=${M:-org/llm}
optimum-cli export neuron --model $M --batch_size 1 --sequence_length 256 --num_cores 2 --auto_cast_type bf16 out/llm
optimum-cli export neuron --model org/enc --task feature-extraction --sequence_length 128 out/enc
optimum-cli export neuron --model org/x --batch_size 1 --sequence_length 128 out/x
optimum-cli export neuron --model $M --sequence_length 256 --num_cores 2 --subfolder y out/y
optimum-cli export neuron --task text-generation --model $M --batch_size 1 out/z
echo "$(optimum-cli export neuron --model $M --sequence_length 8 --num_cores 2 out/w)"
"""
    entries = cli_exports(text)["exports"]
    assert [(family, replaceable, folder) for family, replaceable, folder, _, _ in entries] == [
        ("decoder", True, "out/llm"),  # --num_cores: a decoder
        ("other", False, "out/enc"),  # another task
        ("", False, "out/x"),  # the command does not say: the loads of its folder do
        ("decoder", False, "out/y"),  # --subfolder: no meaning for the stock step
        ("decoder", False, "out/z"),  # no --sequence_length
        ("", False, None),  # inside a substitution: not read
    ]
    assert entries[0][3] == "2" and dict(entries[0][4])["sequence_length"] == "256"


def test_python_command_strings_never_replaced_comments_and_docstrings_left_out() -> None:
    code = '''"""Runs optimum-cli export neuron for each model."""
import subprocess

# the folder holds what `optimum-cli export neuron` wrote
subprocess.run(["optimum-cli", "export", "neuron", "--task", "text-classification", "-m", "bert", "out"])
subprocess.run(f"optimum-cli export neuron -m {model} --task {task} out", shell=True)
'''
    assert cli_export_mentions(code)["exports"] == (("other", False, None, None, None), ("", False, None, None, None))


def test_an_export_string_of_unknown_task_in_python_keeps_the_round_trip_off() -> None:
    script = "optimum-cli export neuron --model org/llm --sequence_length 64 --num_cores 2 out/llm\n"
    runner = 'import subprocess\nsubprocess.run(f"optimum-cli export neuron -m {m} --task {t} o", shell=True)\n'
    project = {"export.sh": script, "serve.py": LOADER, "compile_all.py": runner}
    migrated = apply_rules(script, FileKind.SHELL, select=["NM1", "NM4"], path="export.sh", project=project)
    assert "optimum-cli export neuron" in migrated.text.splitlines()[-1]
    assert "python -c" not in migrated.text
    alone = {"export.sh": script, "serve.py": LOADER}
    migrated = apply_rules(script, FileKind.SHELL, select=["NM1", "NM4"], path="export.sh", project=alone)
    step = migrated.text.splitlines()[-1]
    assert step.startswith('python -c "') and step.endswith("org/llm out/llm")
