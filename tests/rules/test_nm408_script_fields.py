"""NM408 / NM410 / NM412: --overwrite_output_dir stays on commands whose script reads the field.

transformers 5 removed TrainingArguments.overwrite_output_dir; NM208 moves it into the script's own dataclass when
it can (then the flag is the script's), and where it cannot, removing the flag would change what the script does
(it would resume from the last checkpoint instead of overwriting): the flag stays, with a todo on the launcher.
"""

import textwrap

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

SCRIPT = textwrap.dedent("""
    import os
    from dataclasses import dataclass, field

    from transformers import HfArgumentParser, Trainer, TrainingArguments
    from transformers.trainer_utils import get_last_checkpoint


    @dataclass
    class ModelArguments:
        model_name_or_path: str = field(default="t5-small")


    def main():
        parser = HfArgumentParser((ModelArguments, TrainingArguments))
        model_args, training_args = parser.parse_args_into_dataclasses()
        last_checkpoint = None
        if os.path.isdir(training_args.output_dir) and not training_args.overwrite_output_dir:
            last_checkpoint = get_last_checkpoint(training_args.output_dir)
        Trainer(model=None, args=training_args).train(resume_from_checkpoint=last_checkpoint)
    """)
#: the read is in a function that only gets the training arguments: NM208 cannot move it
UNREACHABLE = SCRIPT.replace("    last_checkpoint = None\n"
                             "    if os.path.isdir(training_args.output_dir) and "
                             "not training_args.overwrite_output_dir:\n"
                             "        last_checkpoint = get_last_checkpoint(training_args.output_dir)\n",
                             "    last_checkpoint = detect(training_args)\n") + textwrap.dedent("""

    def detect(training_args):
        return None if training_args.overwrite_output_dir else get_last_checkpoint(training_args.output_dir)
    """)
assert "detect(training_args)\n" in UNREACHABLE
NOT_READ = SCRIPT.replace(" and not training_args.overwrite_output_dir", "")
SUBCLASS = SCRIPT.replace("from transformers import HfArgumentParser, Trainer, TrainingArguments",
                          "from transformers import HfArgumentParser, Trainer\n"
                          "from common.hf_utils import TrnTrainingArguments as TrainingArguments")
HF_UTILS = textwrap.dedent("""
    from dataclasses import dataclass
    from transformers import TrainingArguments


    @dataclass
    class TrnTrainingArguments(TrainingArguments):
        loss_scale: float = 1.0
    """)
LAUNCHER = """
#!/bin/bash
torchrun --nproc_per_node=2 run_trainer.py \\
    --output_dir /tmp/out \\
    --overwrite_output_dir \\
    --do_train
"""


def _launch(script: str, **extra: str):
    return migrate(LAUNCHER, "NM408", kind=FileKind.SHELL, path="run.sh", project={"run_trainer.py": script, **extra})


def test_moved_field_keeps_its_flag_silently() -> None:
    result = _launch(SCRIPT)
    assert "    --overwrite_output_dir \\\n" in result.text
    assert findings(result, "NM408") == set()


def test_unmovable_read_keeps_the_flag_with_a_todo_not_a_fix() -> None:
    result = _launch(UNREACHABLE)
    assert "    --overwrite_output_dir \\\n" in result.text
    assert findings(result, "NM408") == {(4, "todo")}
    note = next(f.message for f in result.findings if f.rule == "NM408")
    assert "run_trainer.py reads training_args.overwrite_output_dir" in note


def test_a_project_subclass_of_the_stock_arguments_keeps_the_flag() -> None:
    result = _launch(SUBCLASS, **{"common/hf_utils.py": HF_UTILS})
    assert "    --overwrite_output_dir \\\n" in result.text
    assert findings(result, "NM408") == set()


def test_a_script_that_never_reads_it_loses_the_flag() -> None:
    result = _launch(NOT_READ)
    assert "--overwrite_output_dir" not in result.text
    assert findings(result, "NM408") == {(4, "fixed")}


def test_python_argv_list_keeps_the_flag_the_script_reads() -> None:
    source = """
        import subprocess

        subprocess.run(["torchrun", "--nproc_per_node=2", "run_trainer.py", "--output_dir", "/tmp/out",
                        "--overwrite_output_dir", "--do_train"], check=True)
        """
    for script in (SCRIPT, UNREACHABLE):
        result = migrate(source, "NM410", path="launch.py", project={"run_trainer.py": script})
        assert '"--overwrite_output_dir"' in result.text
        assert not any(f.severity.value == "fixed" and "overwrite_output_dir" in f.message for f in result.findings)
    result = migrate(source, "NM410", path="launch.py", project={"run_trainer.py": NOT_READ})
    assert '"--overwrite_output_dir"' not in result.text


def test_config_key_the_script_reads_stays() -> None:
    config = """
        output_dir: /tmp/out
        overwrite_output_dir: true
        do_train: true
        learning_rate: 0.0001
        """
    reader = UNREACHABLE.replace("parser.parse_args_into_dataclasses()", "parser.parse_yaml_file(os.environ['CONFIG'])")
    neuron = reader.replace("TrainingArguments))", "NeuronTrainingArguments))").replace(
        "from transformers.trainer_utils",
        "from optimum.neuron import NeuronTrainingArguments\nfrom transformers.trainer_utils")
    result = migrate(config, "NM408", kind=FileKind.YAML, path="config.yaml", project={"run_trainer.py": neuron})
    assert "overwrite_output_dir: true" in result.text
    not_read = neuron.replace(" if training_args.overwrite_output_dir else", " if False else")
    result = migrate(config, "NM408", kind=FileKind.YAML, path="config.yaml", project={"run_trainer.py": not_read})
    assert "overwrite_output_dir" not in result.text


def test_a_neuron_script_held_by_its_removed_field_read_keeps_its_launch_line() -> None:
    # the script reads overwrite_output_dir in a helper that gets the training arguments: NM208 cannot move the field,
    # and the verification pass follows the parameter (f8a8bc7), so the class move is withdrawn and the script stays
    # on optimum-neuron; its launch line stays as it is (no --torch_compile true on a command of the old stack)
    neuron = UNREACHABLE.replace("from transformers import HfArgumentParser, Trainer, TrainingArguments",
                                 "from transformers import HfArgumentParser\n"
                                 "from optimum.neuron import NeuronTrainer as Trainer\n"
                                 "from optimum.neuron import NeuronTrainingArguments as TrainingArguments")
    result = _launch(neuron)
    assert not any("--torch_compile" in line for line in result.text.splitlines() if not line.startswith("#"))
    assert "    --overwrite_output_dir \\\n" in result.text
    messages = [f.message for f in result.findings if f.rule == "NM408"]
    assert any(m.startswith("run_trainer.py stays on optimum-neuron after this run") for m in messages)
    assert all(f.severity.value == "todo" for f in result.findings if f.rule == "NM408")
