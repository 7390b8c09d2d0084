"""NM403 and NM316: one policy for XLA_USE_BF16 / XLA_DOWNCAST_BF16 per script (redteam-round2 D8). The launcher's
export goes where the script's Python carries the precision itself (NM316 moves its model with
``dtype=torch.bfloat16``), and stays with the same todo as the script's own setting where it does not."""

from __future__ import annotations

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
