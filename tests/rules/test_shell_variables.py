"""Shell variables in launchers (codemods/_lib/shell/variables.py) and the launch rules reading through them.

``ARGS="--zero_1 true ..."; torchrun train.py $ARGS`` and ``CMD="torchrun ... train.py ..."; $CMD``: NM408 maps the
flags inside the assignment (once, however many commands splice it in), NM407 reads ``--nproc_per_node $PROCS``
through ``PROCS=32``, NM403 sees the trainer command held in ``$CMD``. Where the value at the command is not certain
(an assignment in an ``if``, two different values, the environment) nothing is edited inside it and
``--torch_compile true`` is not claimed as added: a todo says why.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest

from codemods._lib.shell import command_statements, lex, simple_commands
from codemods._lib.shell.variables import ShellVariables
from migrate.filekinds import FileKind
from migrate.textdoc import TextDocument
from tests.rules.case import findings, migrate

NEURON_SCRIPT = textwrap.dedent("""
    from dataclasses import dataclass

    from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
    from optimum.neuron import NeuronTrainer, NeuronTrainingArguments


    @dataclass
    class ScriptArguments:
        model_id: str = "m"


    script_args, training_args = HfArgumentParser((ScriptArguments, NeuronTrainingArguments)).parse_args_into_dataclasses()
    NeuronTrainer(args=training_args).train()
    """)
OWN_ARGPARSE = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--zero_1')\np.parse_args()\n"
PROJECT = {"train.py": NEURON_SCRIPT, "other.py": NEURON_SCRIPT, "own.py": OWN_ARGPARSE}


def code(text: str) -> str:
    """``text`` without its neuron-migrate notes."""
    return "".join(line for line in text.splitlines(keepends=True) if "# neuron-migrate:" not in line)


def run(source: str, rule: str = "NM408", project: dict | None = None):
    return migrate(source, rule, FileKind.SHELL, path="run.sh", project=PROJECT if project is None else project)


def expand_last(source: str, starts: str = ""):
    """The last simple command of ``source`` (of the last statement starting with ``starts``), as NM408 reads it,
    expanded."""
    doc = TextDocument(textwrap.dedent(source).lstrip("\n"), FileKind.SHELL)
    variables = ShellVariables(doc)
    statement = [s for s in command_statements(doc) if s[0].line.text.lstrip().startswith(starts)][-1]
    items = [(cl, tok) for cl in statement for tok in lex(cl.line.text, cl.start, cl.end)[0]]
    words = simple_commands([tok for _, tok in items])[-1]
    return variables.expand([item for item in items if item[1] in words])


# ------------------------------------------------------------------------------------------- the resolver


def test_a_value_expands_to_its_words_with_their_spans() -> None:
    expanded = expand_last('ARGS="--a 1 \\\n  --b 2"\ntorchrun t.py $ARGS --c\n')
    assert [tok.text for _, tok in expanded.items] == ["torchrun", "t.py", "--a", "1", "--b", "2", "--c"]
    cl, tok = expanded.items[4]
    assert cl.line.text[tok.start:tok.end] == "--b" and cl.line.origin == 2
    assert [a.name for a in expanded.used] == ["ARGS"] and not expanded.unresolved


def test_a_quoted_value_over_lines_without_backslashes_and_braces_and_export() -> None:
    expanded = expand_last('export ARGS="--a 1\n--b 2"\n${ARGS} --c\n')
    assert [tok.text for _, tok in expanded.items] == ["--a", "1", "--b", "2", "--c"]


def test_a_variable_inside_a_value_expands_where_it_can_hold_flags_only() -> None:
    expanded = expand_last('TP=8\nA="--zero_1 true"\nCMD="torchrun t.py --tp $TP $A"\n$CMD\n')
    assert [tok.text for _, tok in expanded.items] == ["torchrun", "t.py", "--tp", "$TP", "--zero_1", "true"]


@pytest.mark.parametrize("source, why", [
    ('if [ -n "$X" ]; then\n  ARGS="--a 1"\nfi\nt.py $ARGS\n', "ARGS is assigned inside an if"),
    ('for i in 1 2; do ARGS="--a $i"; done\nt.py $ARGS\n', "ARGS is assigned inside a loop"),
    ('[ -n "$X" ] && ARGS="--a 1"\nt.py $ARGS\n', "ARGS is assigned inside an && / || list"),
    ('ARGS="--a 1"\nARGS="--a 2"\nt.py $ARGS\n', "ARGS is assigned 2 different values before this command"),
    ('t.py $ARGS\n', "ARGS is not assigned in this file"),
    ('ARGS="--a $(date)"\nt.py $ARGS\n', "its value is the output of a command"),
    ('ARGS="--name \\"a b\\""\nt.py $ARGS\n', "its value holds an escaped character"),
    ('ARGS="--a 1"\nARGS+=" --b"\nt.py $ARGS\n', "it is appended to"),
    ('run() {\n  ARGS="--a 1"\n}\nt.py $ARGS\n', "ARGS is assigned inside a function"),
    ('t.py "$@"\n', "the arguments this script was called with"),
])
def test_a_value_that_is_not_certain_stays_unresolved_with_the_reason(source: str, why: str) -> None:
    expanded = expand_last(source)
    assert expanded.unresolved and why in expanded.unresolved[0][1]
    assert not expanded.used


def test_the_same_value_twice_and_a_function_after_the_assignment_resolve() -> None:
    assert expand_last('A="--x 1"\nA="--x 1"\nt.py $A\n').used
    assert expand_last('A="--x 1"\nf() {\n  t.py $A\n}\n', "t.py").used


def test_a_flag_value_and_echo_are_not_expanded() -> None:
    assert [tok.text for _, tok in expand_last('OUT=o\nt.py --output_dir $OUT\n').items] == ["t.py", "--output_dir", "$OUT"]
    assert not expand_last('CMD="torchrun t.py --zero_1 true"\necho $CMD\n').used


# ------------------------------------------------------------------------------------------- NM408


def test_flags_in_a_variable_are_mapped_inside_the_assignment_once() -> None:
    result = run("""
        ARGS="--model_id m \\
          --zero_1 true \\
          --warmup_ratio 0.03 \\
          --output_dir o"
        torchrun --nproc_per_node 2 train.py $ARGS --max_steps 10
        torchrun --nproc_per_node 2 train.py $ARGS > log
        """)
    assert 'ARGS="--model_id m \\\n  --warmup_steps 0.03 \\\n  --output_dir o"\n' in result.text
    assert "train.py $ARGS --max_steps 10 --torch_compile true\n" in result.text
    assert "train.py $ARGS --torch_compile true > log\n" in result.text
    messages = [f.message for f in result.findings if "zero_1" in f.message]
    assert len(messages) == 1  # the assignment is edited (and reported) once
    assert findings(result, "NM408") == {(1, "todo"), (1, "fixed"), (5, "fixed"), (6, "fixed")}


def test_a_command_held_in_a_variable_is_read_as_that_command() -> None:
    result = run("""
        CMD="torchrun --nproc_per_node 2 train.py --zero_1 true --evaluation_strategy no"
        $CMD
        srun $CMD
        eval "$CMD"
        """)
    assert result.text.splitlines()[1:] == [
        'CMD="torchrun --nproc_per_node 2 train.py --eval_strategy no"',
        "$CMD --torch_compile true",
        "srun $CMD --torch_compile true",
        'eval "$CMD" --torch_compile true',
    ]


def test_a_one_line_assignment_before_its_command() -> None:
    result = run('ARGS="--zero_1 true --warmup_ratio 0.1"; torchrun train.py $ARGS\n')
    assert result.text.endswith('ARGS="--warmup_steps 0.1"; torchrun train.py $ARGS --torch_compile true\n')


def test_notes_go_above_an_assignment_whose_value_spans_lines_without_backslashes() -> None:
    result = run('ARGS="--model_id m\n  --zero_1 true\n  --output_dir o"\ntorchrun train.py $ARGS\n')
    lines = result.text.splitlines()
    assert lines[0].startswith("# neuron-migrate: --zero_1")
    assert lines[1:] == ['ARGS="--model_id m', '  --output_dir o"', "torchrun train.py $ARGS --torch_compile true"]


def test_a_variable_shared_by_commands_that_map_it_differently_stays_with_a_todo() -> None:
    source = 'ARGS="--zero_1 true --output_dir o"\ntorchrun train.py $ARGS\npython own.py $ARGS\n'
    result = run(source)
    assert code(result.text) == source
    messages = {f.line: f.message for f in result.findings}
    assert "ARGS is spliced into commands that do not take the same flags (train.py, own.py)" in messages[1]
    assert messages[2].startswith("--torch_compile true was not added: the flags in ARGS were left as they are")


def test_two_neuron_scripts_sharing_a_variable_are_edited_once() -> None:
    result = run('ARGS="--zero_1 true"\ntorchrun train.py $ARGS\ntorchrun other.py $ARGS\n')
    assert result.text.endswith('ARGS=""\ntorchrun train.py $ARGS --torch_compile true\ntorchrun other.py $ARGS --torch_compile true\n')


def test_a_value_set_in_an_if_keeps_its_flags_and_compile_is_a_todo() -> None:
    source = 'if [ -n "$X" ]; then\n  ARGS="--zero_1 true"\nfi\ntorchrun train.py $ARGS\n'
    result = run(source)
    assert code(result.text) == source
    messages = {f.line: f.message for f in result.findings}
    assert messages[2].startswith("--zero_1 was left as it is: ARGS is assigned inside an if, so this value may not be "
                                  "the one that reaches train.py")
    assert messages[4].startswith("--torch_compile true was not added: $ARGS may hold more flags")


def test_an_unknown_variable_inside_a_held_command_blocks_the_compile_claim() -> None:
    for inner in ("$EXTRA", "$1"):
        result = run(f'CMD="torchrun train.py --zero_1 true {inner}"\n$CMD\n')
        assert code(result.text) == f'CMD="torchrun train.py {inner}"\n$CMD\n'
        assert result.findings[-1].message.startswith(f"--torch_compile true was not added: {inner} may hold more flags")


def test_a_variable_from_the_environment_blocks_the_compile_claim() -> None:
    result = run("torchrun train.py --zero_1 true $EXTRA\n")
    assert result.text.endswith("torchrun train.py $EXTRA\n")
    assert (1, "todo") in findings(result, "NM408") and (1, "fixed") not in findings(result, "NM408")


def test_an_unused_assignment_keeps_todays_todo() -> None:
    result = run('ARGS="--model_id m \\\n  --zero_1 true"\n')
    assert "--zero_1 true was left as it is: the command $ARGS is passed to" in result.findings[0].message


# ------------------------------------------------------------------------------------------- NM407 / NM403


def test_nm407_reads_the_core_count_through_a_variable() -> None:
    result = run("PROCS=32\ntorchrun --nproc_per_node $PROCS train.py\n", "NM407")
    assert result.findings[0].message.startswith("--nproc_per_node $PROCS (PROCS=32) looks like a trn1 NeuronCore count")
    assert not run('if [ -n "$X" ]; then PROCS=32; fi\ntorchrun --nproc_per_node $PROCS train.py\n', "NM407").findings


def test_nm403_sees_the_trainer_command_held_in_a_variable() -> None:
    result = run('export XLA_USE_BF16=1\nCMD="torchrun train.py --output_dir o"\n$CMD > log\n', "NM403")
    assert result.text.endswith('CMD="torchrun train.py --output_dir o"\n$CMD --bf16 true > log\n')
    result = run('export XLA_USE_BF16=1\nCMD="torchrun train.py --bf16 true"\n$CMD\n', "NM403")
    assert result.text.endswith('CMD="torchrun train.py --bf16 true"\n$CMD\n')  # the precision is set already


# ------------------------------------------------------------------------------------------- execution


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_migrated_launcher_passes_flags_the_stock_parser_accepts(tmp_path) -> None:
    """bash runs the migrated launcher with torchrun stubbed to print the script's argv; the stock, strict
    HfArgumentParser parses it (it raised on --zero_1 / --warmup_ratio before the fix)."""
    from dataclasses import dataclass

    from transformers import HfArgumentParser, TrainingArguments

    result = run("""
        ARGS="--model_id m \\
          --zero_1 true \\
          --warmup_ratio 0.03 \\
          --output_dir OUT"
        CMD="torchrun --nproc_per_node 2 train.py $ARGS --evaluation_strategy no"
        $CMD --max_steps 3
        """)
    stub = "torchrun() { shift 2; shift; printf '%s\\n' \"$@\"; }\n"
    argv = subprocess.run(["bash", "-c", stub + result.text.replace("OUT", str(tmp_path))], check=True,
                          capture_output=True, text=True).stdout.split()

    @dataclass
    class ScriptArguments:
        model_id: str = "x"

    script_args, training_args = HfArgumentParser((ScriptArguments, TrainingArguments)).parse_args_into_dataclasses(
        argv, look_for_args_file=False)
    assert script_args.model_id == "m" and training_args.max_steps == 3 and training_args.torch_compile
    assert training_args.warmup_steps == 0.03 and training_args.eval_strategy == "no"
