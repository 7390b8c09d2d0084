"""rtA-04: a launcher that builds a trainer's argv from a dict (``for k, v in HP.items(): cmd += [f"--{k}", ...]``).
NM410 maps the flags of argv lists, but a dict's keys are no flags in the source: each key that names a field the
migrated script's stock training arguments reject gets NM408's words as a todo on the dict, which stays as it is."""

from __future__ import annotations

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

NEURON = ("from optimum.neuron import NeuronHfArgumentParser, NeuronTrainer, NeuronTrainingArguments\n\n"
          "(args,) = NeuronHfArgumentParser((NeuronTrainingArguments,)).parse_args_into_dataclasses()\n"
          "NeuronTrainer(model=None, args=args).train()\n")
STOCK = ("from transformers import HfArgumentParser, Trainer, TrainingArguments\n\n"
         "(args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
         "Trainer(model=None, args=args).train()\n")
LOOP = ('import subprocess\n\nHP = {"learning_rate": 1e-4, "zero_1": True, "evaluation_strategy": "epoch"}\n\n\n'
        'def main():\n    cmd = ["torchrun", "--nproc_per_node=2", "train.py"]\n'
        '    for key, value in HP.items():\n        cmd += [f"--{key}", str(value)]\n'
        '    subprocess.run(cmd, check=True)\n')


def _run(text: str, script: str, select: tuple[str, ...] = ("NM4",)):
    project = {"launch.py": text, "train.py": script, "requirements.txt": "optimum-neuron==0.0.25\n"}
    return apply_rules(text, FileKind.PYTHON, select=select, path="launch.py", project=project)


def _dict_notes(result) -> list[str]:
    return [f.message for f in result.findings if f.rule == "NM410" and f.message.startswith("HP[")]


def test_each_rejected_key_of_a_dict_turned_into_argv_gets_the_launch_words() -> None:
    result = _run(LOOP, NEURON)
    notes = _dict_notes(result)
    assert len(notes) == 2, notes
    assert notes[0].startswith('HP["zero_1"] was left as it is: this file passes HP to train.py as --zero_1')
    assert "ZeRO-1 has no stock switch" in notes[0] and notes[0].endswith("remove it")
    assert notes[1].endswith("rename the key (evaluation_strategy -> eval_strategy)")
    assert 'HP = {"learning_rate": 1e-4, "zero_1": True, "evaluation_strategy": "epoch"}' in result.text  # a todo only
    assert result.text.count("# neuron-migrate: HP[") == 2


def test_comprehensions_and_concatenated_flags_are_read_too() -> None:
    for built in ('cmd += ["--" + k for k in HP]', 'cmd.extend("--{}={}".format(k, v) for k, v in HP.items())'):
        text = LOOP.replace('    for key, value in HP.items():\n        cmd += [f"--{key}", str(value)]\n',
                            f"    {built}\n")
        assert len(_dict_notes(_run(text, NEURON))) == 2, built


def test_a_script_left_on_optimum_neuron_keeps_its_dict_with_the_lists_kept_todo() -> None:
    script = NEURON + "if args.overwrite_output_dir:\n    print('overwrite')\n"  # NM201 cannot port it this run
    result = _run(LOOP, script, select=())
    assert _dict_notes(result) == []
    assert any(f.message.startswith("train.py stays on optimum-neuron after this run") for f in result.findings)


def test_no_note_for_a_stock_script_a_dict_never_turned_into_argv_() -> None:
    assert _dict_notes(_run(LOOP, STOCK)) == []
    unused = LOOP.replace('        cmd += [f"--{key}", str(value)]\n', '        print(key, value)\n')
    assert _dict_notes(_run(unused, NEURON)) == []
    elsewhere = LOOP.replace('"train.py"]', '"evaluate.py"]')  # not a script of the project
    assert _dict_notes(_run(elsewhere, NEURON)) == []
