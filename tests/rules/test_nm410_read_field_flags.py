"""NM410: in an argv list, the flag of a removed script-only field the launched script reads without declaring it
stays with NM408's todo, as in shell launchers (it used to stay silently)."""

from tests.rules.case import findings, migrate

READS = """\
from dataclasses import dataclass

from transformers import HfArgumentParser, TrainingArguments


@dataclass
class ScriptArguments:
    model_id: str = "gpt2"


def main(training_args):
    if training_args.overwrite_output_dir:
        print("overwriting")


parser = HfArgumentParser((ScriptArguments, TrainingArguments))
script_args, training_args = parser.parse_args_into_dataclasses()
main(training_args)
"""
DECLARES = READS.replace('    model_id: str = "gpt2"\n',
                         '    model_id: str = "gpt2"\n    overwrite_output_dir: bool = False\n')

LAUNCH = """
import subprocess

subprocess.run(["torchrun", "--nproc_per_node=2", "train.py", "--output_dir", "out",
                "--overwrite_output_dir", "true"], check=True)
"""


def test_a_read_removed_field_keeps_its_flag_with_the_read_field_todo() -> None:
    result = migrate(LAUNCH, "NM410", family="NM4", path="launch.py", project={"train.py": READS})
    assert '"--overwrite_output_dir", "true"' in result.text
    messages = [f.message for f in result.findings if f.rule == "NM410"]
    assert any(m.startswith("--overwrite_output_dir true was left as it is: train.py reads "
                            "training_args.overwrite_output_dir") for m in messages)
    assert findings(result, "NM410") == {(3, "todo")}


def test_a_declared_field_is_the_scripts_own_flag_and_gets_no_todo() -> None:
    result = migrate(LAUNCH, "NM410", family="NM4", path="launch.py", project={"train.py": DECLARES})
    assert '"--overwrite_output_dir", "true"' in result.text
    assert findings(result, "NM410") == set()
