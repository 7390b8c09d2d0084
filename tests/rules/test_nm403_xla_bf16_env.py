"""NM403 and NM316: one policy for XLA_USE_BF16 / XLA_DOWNCAST_BF16 per script (redteam-round2 D8). The launcher's
export goes where the script's Python carries the precision itself (NM316 moves its model with
``dtype=torch.bfloat16``), and stays with the same todo as the script's own setting where it does not."""

from __future__ import annotations

import json
import textwrap

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate
from tests.rules.test_nm316_env_vars import BF16_SCRIPT

LAUNCHER = "#!/bin/bash\nexport XLA_USE_BF16=1\ntorchrun --nproc_per_node=2 train_loop.py --max_steps 10\n"
KEPT = "XLA_USE_BF16 was left as it is: TorchNeuron ignores it, so removing it alone would turn this bf16 run into fp32"


def _launch(script: str):
    project = {"run.sh": LAUNCHER, "train_loop.py": script}
    return migrate(LAUNCHER, "NM403", kind=FileKind.SHELL, path="run.sh", project=project)


def _script(script: str):
    return migrate(script, "NM316", path="train_loop.py", project={"run.sh": LAUNCHER, "train_loop.py": script})


def test_the_export_goes_where_the_script_moves_its_model_in_bf16() -> None:
    launcher, script = _launch(BF16_SCRIPT), _script(BF16_SCRIPT)
    assert "XLA_USE_BF16" not in launcher.text and "--bf16" not in launcher.text
    assert findings(launcher, "NM403") == {(2, "fixed")}
    assert "train_loop.py now moves the model to the device in bf16" in launcher.findings[0].message
    assert "XLA_USE_BF16" not in script.text and "model.to(device, dtype=torch.bfloat16)" in script.text


def test_the_export_and_the_setting_stay_with_the_same_todo_where_nothing_carries_it() -> None:
    vision = BF16_SCRIPT.replace("AutoModelForCausalLM", "AutoModelForImageClassification")  # float inputs
    launcher, script = _launch(vision), _script(vision)
    assert "export XLA_USE_BF16=1" in launcher.text and 'os.environ["XLA_USE_BF16"] = "1"' in script.text
    assert f"# neuron-migrate: {KEPT}" in launcher.text and f"# neuron-migrate: {KEPT}" in script.text
    assert findings(launcher, "NM403") == {(2, "todo")} and findings(script, "NM316") == {(3, "todo")}


def test_a_script_that_does_not_set_it_itself_keeps_the_export() -> None:
    # the launcher is then the only source of the setting: NM316 does not move the model, so the export stays
    script = BF16_SCRIPT.replace('os.environ["XLA_USE_BF16"] = "1"  # full bf16 on the device\n', "")
    launcher = _launch(script)
    assert "export XLA_USE_BF16=1" in launcher.text and KEPT in launcher.text
    assert "dtype=torch.bfloat16)" not in _script(script).text.replace("loaded with dtype=torch.bfloat16)", "")


# ------------------------------------------------------ a command whose script reads its arguments from a config

CONFIG_SCRIPT = '''\
import os
import sys

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronTrainingArguments as TrainingArguments

parser = HfArgumentParser(TrainingArguments)
if len(sys.argv) == 2 and sys.argv[1].endswith((".json", ".yaml")):
    (args,) = parser.parse_json_file(os.path.abspath(sys.argv[1]))
else:
    (args,) = parser.parse_args_into_dataclasses()
'''


def _config_launch(command: str, config: str | None, name: str = "cfg/run.json"):
    launcher = f"#!/bin/bash\nexport XLA_USE_BF16=1\n{command}\n"
    project = {"run.sh": launcher, "train.py": CONFIG_SCRIPT, **({name: config} if config is not None else {})}
    return migrate(launcher, "NM403", kind=FileKind.SHELL, path="run.sh", project=project)


def test_a_config_that_sets_bf16_carries_the_precision_and_gets_no_flag_after_it() -> None:
    result = _config_launch("torchrun train.py cfg/run.json", '{"output_dir": "out", "bf16": true}\n')
    assert "export XLA_USE_BF16" not in result.text and "--bf16" not in result.text
    assert result.text.endswith("torchrun train.py cfg/run.json\n")
    yaml = _config_launch("python train.py cfg/run.yaml 2>&1 | tee log", "output_dir: out\nfp16: true\n",
                          "cfg/run.yaml")
    assert "export XLA_USE_BF16" not in yaml.text and "--bf16" not in yaml.text


def test_a_config_without_a_precision_key_keeps_the_variable_with_the_key_to_add() -> None:
    result = _config_launch("torchrun train.py cfg/run.json", '{"output_dir": "out", "learning_rate": 1e-5}\n')
    assert "export XLA_USE_BF16=1" in result.text
    assert result.text.endswith("torchrun train.py cfg/run.json\n")
    assert 'cfg/run.json sets neither bf16 nor fp16; add "bf16": true to cfg/run.json' in result.text
    assert findings(result, "NM403") == {(2, "todo")}
    # a key nested below the top level is not the Trainer's
    nested = _config_launch("torchrun train.py cfg/run.yaml", "output_dir: out\nmodel:\n  bf16: true\n", "cfg/run.yaml")
    assert "export XLA_USE_BF16=1" in nested.text and "add bf16: true to cfg/run.yaml" in nested.text


def test_a_config_outside_the_project_keeps_the_variable() -> None:
    result = _config_launch("torchrun train.py /opt/ml/input/run.json", None)
    assert "export XLA_USE_BF16=1" in result.text and "is not a file of this project" in result.text
    assert result.text.endswith("torchrun train.py /opt/ml/input/run.json\n")


def test_flags_beside_a_config_flag_still_take_bf16_unless_the_config_sets_it() -> None:
    # `--config X` with other words: the command line is parsed as flags, and --bf16 true can follow
    unset = _config_launch("torchrun train.py --config cfg/run.json --output_dir out", '{"learning_rate": 1e-5}\n')
    assert "export XLA_USE_BF16" not in unset.text
    assert "--config cfg/run.json --output_dir out --bf16 true" in unset.text
    given = _config_launch("torchrun train.py --config cfg/run.json --output_dir out", '{"bf16": true}\n')
    assert "export XLA_USE_BF16" not in given.text and "--bf16" not in given.text
    # a file passed to another flag (a DeepSpeed config) is not the arguments config
    other = _config_launch("torchrun train.py --deepspeed cfg/run.json", '{"bf16": {"enabled": true}}\n')
    assert "--deepspeed cfg/run.json --bf16 true" in other.text


# ---------------------------------------------- a notebook's %env line reaches the commands of all its cells

TRAINER = CONFIG_SCRIPT  # parses Neuron TrainingArguments: --bf16 is one of its flags


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": textwrap.dedent(cell).lstrip("\n")} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _cells(result) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(result.text)["cells"]]


def _run_notebook(*cells: str):
    text = _notebook(*cells)
    return migrate(text, "NM403", kind=FileKind.NOTEBOOK, path="nb/tutorial.ipynb",
                   project={"nb/tutorial.ipynb": text, "nb/train.py": TRAINER})


ENV_CELL = "%env XLA_USE_BF16=1\n%env MALLOC_ARENA_MAX=64\n"
CMD_CELL = 'n = 2\ncmd = f"torchrun --nproc_per_node={n} train.py --output_dir out --bf16"\nprint(cmd)\n'


def test_notebook_env_goes_where_every_command_of_its_cells_passes_bf16() -> None:
    result = _run_notebook(ENV_CELL, CMD_CELL, "!{cmd}\n", "!torchrun train.py --output_dir out2 --fp16 true\n")
    cells = _cells(result)
    assert "%env XLA_USE_BF16" not in cells[0] and "%env MALLOC_ARENA_MAX=64" in cells[0]
    assert findings(result, "NM403") and all(f.severity.value == "todo" and "removed" in f.message
                                             for f in result.findings if f.rule == "NM403")
    assert cells[1:] == [CMD_CELL, "!{cmd}\n", "!torchrun train.py --output_dir out2 --fp16 true\n"]


def test_notebook_env_stays_where_a_command_of_another_cell_lacks_bf16() -> None:
    result = _run_notebook(ENV_CELL, CMD_CELL, "!python train.py --output_dir out2\n")
    cells = _cells(result)
    assert "%env XLA_USE_BF16=1" in cells[0]
    assert "the command running train.py in another cell of this notebook does not pass --bf16" in cells[0]
    assert cells[2] == "!python train.py --output_dir out2\n"  # the other cell is not edited from here


def test_notebook_env_with_no_command_anywhere_keeps_its_reason() -> None:
    result = _run_notebook(ENV_CELL, "print('hello train.py')\n")
    assert "%env XLA_USE_BF16=1" in _cells(result)[0]
    assert "no command here runs a training script that --bf16 could be given to" in _cells(result)[0]


def test_notebook_bash_cell_export_is_judged_on_its_own_cell() -> None:
    # a %%bash cell's export ends with its process: the other cells' commands do not see it
    result = _run_notebook("%%bash\nexport XLA_USE_BF16=1\n", CMD_CELL)
    assert "export XLA_USE_BF16=1" in _cells(result)[0]
    assert "no command here runs a training script" in _cells(result)[0]


#: a Neuron trainer script whose class rewrite the verifier withdraws (it reads training_args.zero_1, which the
#: stock TrainingArguments lacks): it stays on optimum-neuron, on torch_xla, after the run
STAYING_TRAINER = textwrap.dedent("""
    from optimum.neuron import NeuronHfArgumentParser, NeuronTrainingArguments

    (training_args,) = NeuronHfArgumentParser((NeuronTrainingArguments,)).parse_args_into_dataclasses()
    if training_args.zero_1:
        print("ZeRO-1")
    """)
PORTED_TRAINER = STAYING_TRAINER.replace('if training_args.zero_1:\n    print("ZeRO-1")\n', "")


def _trainer_launch(script: str):
    launcher = "#!/bin/bash\nexport XLA_USE_BF16=1\ntorchrun --nproc_per_node=2 train.py --output_dir out\n"
    return migrate(launcher, "NM403", kind=FileKind.SHELL, path="run.sh",
                   project={"run.sh": launcher, "train.py": script})


def test_the_export_stays_for_a_trainer_script_left_on_optimum_neuron() -> None:
    result = _trainer_launch(STAYING_TRAINER)
    assert "export XLA_USE_BF16=1" in result.text and "out --bf16" not in result.text
    assert findings(result, "NM403") == {(2, "todo")}
    assert "train.py, which stays on optimum-neuron after this run" in result.findings[0].message


def test_the_export_becomes_bf16_for_a_trainer_script_the_run_ports() -> None:
    result = _trainer_launch(PORTED_TRAINER)
    assert "export XLA_USE_BF16" not in result.text and "--output_dir out --bf16 true" in result.text
    assert findings(result, "NM403") == {(2, "todo"), (3, "fixed")}  # removed, with the table's note
