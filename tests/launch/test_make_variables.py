"""Make variables in a Makefile's recipes (redteam-round2 D9b): ``TRAIN_ARGS = --flags`` (``:=``, ``?=``, continued
lines) spliced in as ``$(TRAIN_ARGS)`` / ``${TRAIN_ARGS}`` are read as the flags of the command that uses them, so
the script that command runs decides whose flags they are. A value that is appended to, set by ``define`` or
``!=``, set inside ``ifdef`` or twice differently is not known: its flags stay, with a todo. A shell script's
``NAME = value`` line is a command, not an assignment."""

from __future__ import annotations

import textwrap

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

NEURON = ("from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser\n"
          "from optimum.neuron import NeuronTrainingArguments as TrainingArguments\n"
          "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n")
OWN = ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--zero_1', action='store_true')\n"
       "p.parse_args()\n")


def _run(makefile: str, script: str = NEURON, path: str = "Makefile"):
    text = textwrap.dedent(makefile)
    project = {"train.py": script, path: text}
    result = apply_rules(text, FileKind.SHELL, path=path, select=["NM408"], project=project)
    again = apply_rules(result.text, FileKind.SHELL, path=path, select=["NM408"], project=project)
    assert again.text == result.text
    return result


def test_the_flags_of_a_make_variable_are_the_scripts_that_use_it() -> None:
    result = _run("""\
        ARGS := --output_dir out \\
        \t--zero_1 true
        train:
        \ttorchrun train.py $(ARGS)
        """)
    code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert code == ["ARGS := --output_dir out", "train:", "\ttorchrun train.py $(ARGS) --torch_compile true"]
    assert any("removed (was --zero_1 true)" in f.message for f in result.findings)


def test_a_script_with_its_own_flag_keeps_it_without_a_note() -> None:
    result = _run("ARGS = --zero_1\ntrain:\n\ttorchrun train.py ${ARGS}\n", script=OWN)
    assert result.text.count("--zero_1") == 1 and not result.findings


def test_an_uncertain_value_keeps_its_flags() -> None:
    for makefile in ("ARGS = --zero_1 true\nARGS += --seed 1\ntrain:\n\ttorchrun train.py $(ARGS)\n",
                     "ARGS = --zero_1 true\nARGS = --zero_1 false\ntrain:\n\ttorchrun train.py $(ARGS)\n",
                     "ifdef FAST\nARGS = --zero_1 true\nendif\ntrain:\n\ttorchrun train.py $(ARGS)\n"):
        result = _run(makefile)
        code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
        assert code == makefile.splitlines()
        assert any(f.severity.value == "todo" and "--zero_1" in f.message for f in result.findings)
        assert not any(f.severity.value == "fixed" and "--zero_1" in f.message for f in result.findings)


def test_a_shell_script_line_name_equals_value_is_a_command() -> None:
    result = _run("ARGS = --zero_1 true\ntorchrun train.py $(ARGS)\n", path="run.sh")
    assert "ARGS = --zero_1 true" in result.text  # not read as an assignment: its words are not spliced in
