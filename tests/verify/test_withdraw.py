"""A rule's rewrite that fails verification is withdrawn and becomes a todo; the verification pass runs
with the other rules (--select/--ignore NM7), never on files nobody migrated, and changes nothing twice."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from migrate.engine import RunOptions, run
from migrate.filekinds import FileKind
from migrate.findings import FileStatus, Finding, Severity
from migrate.testing import apply_rules

# NeuronTrainingArguments -> TrainingArguments (NM201) is right in general; here the script passes a
# field of its own that stock TrainingArguments refuses, so the rewritten call would raise TypeError
CUSTOM_FIELD = '''from optimum.neuron import NeuronTrainingArguments

args = NeuronTrainingArguments(output_dir="out", my_custom_flag=3)
'''


def test_a_rewrite_that_would_raise_is_withdrawn_and_becomes_a_todo() -> None:
    result = apply_rules(CUSTOM_FIELD)
    assert "NeuronTrainingArguments(" in result.text and "TrainingArguments(output_dir" not in result.text.replace(
        "NeuronTrainingArguments(output_dir", "")
    nm201 = [f for f in result.findings if f.rule == "NM201"]
    assert [f.severity for f in nm201] == [Severity.TODO]
    assert "not rewritten" in nm201[0].message and "my_custom_flag" in nm201[0].message
    assert not any(f.rule == "NM201" and f.severity is Severity.FIXED for f in result.findings)
    assert not any(f.severity is Severity.ERROR for f in result.findings)  # nothing shipped fails
    assert f"# neuron-migrate: {nm201[0].message}" in result.text  # the todo is inline, like any other
    assert apply_rules(result.text).text == result.text  # a second run changes nothing


def test_the_withdrawal_note_names_every_violation_of_the_rewrite_up_to_five() -> None:
    fields = ", ".join(f"field_{n}={n}" for n in range(7))
    result = apply_rules(CUSTOM_FIELD.replace("my_custom_flag=3", fields))
    nm201 = [f for f in result.findings if f.rule == "NM201"]
    assert [f.severity for f in nm201] == [Severity.TODO]
    message = nm201[0].message
    assert "7 violations: (1) " in message and "(5) " in message and "(6) " not in message
    assert [f"`field_{n}`" in message for n in range(7)] == [True] * 5 + [False] * 2
    assert "; and 2 more)" in message  # the user learns how many are left unnamed
    assert apply_rules(result.text).text == result.text


def test_a_withdrawal_with_one_violation_names_it_alone() -> None:
    message = next(f.message for f in apply_rules(CUSTOM_FIELD).findings if f.rule == "NM201")
    assert "violations:" not in message and "(`transformers.TrainingArguments(..., my_custom_flag=...)`" in message


def test_the_same_rewrite_without_the_unknown_field_is_made() -> None:
    result = apply_rules(CUSTOM_FIELD.replace(", my_custom_flag=3", ""))
    assert "args = TrainingArguments(output_dir=" in result.text
    assert any(f.rule == "NM201" and f.severity is Severity.FIXED for f in result.findings)
    assert not any(f.rule.startswith("NM7") for f in result.findings)


def test_a_failure_the_user_wrote_stays_an_error_and_the_rewrites_stay() -> None:
    source = CUSTOM_FIELD + "import torch_xla.core.xla_model as xm\ndevice = xm.xla_device()\n" \
        "from transformers import TrainingArguments\nstock = TrainingArguments(output_dir='o', learning_rat=1e-4)\n"
    result = apply_rules(source)
    assert "torch.accelerator" in result.text  # NM301's rewrite is fine and kept
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    assert [(f.rule, f.line) for f in errors] == [("NM702", 7)]
    assert "`learning_rat`" in errors[0].message and "did you mean `learning_rate`?" in errors[0].message


def test_ignore_nm7_turns_the_pass_off() -> None:
    result = apply_rules(CUSTOM_FIELD, ignore=("NM7",))
    assert "args = TrainingArguments(output_dir=\"out\", my_custom_flag=3" in result.text


def test_the_pass_parses_no_file_nobody_migrated(tmp_path: Path) -> None:
    (tmp_path / "stock.py").write_text("from peft import NotAPeftName\n")  # no rule's trigger: never parsed
    (tmp_path / "train.py").write_text(CUSTOM_FIELD)
    result = run([tmp_path], RunOptions(jobs=1, write=False))
    by_path = {Path(f.path).name: f for f in result.files}
    assert by_path["stock.py"].status is FileStatus.UNCHANGED and by_path["stock.py"].findings == []
    assert by_path["train.py"].status is FileStatus.CHANGED  # written with its other rewrites


def test_the_example_project_migrates_with_no_verification_error(tmp_path: Path) -> None:
    project = tmp_path / "legacy-project"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "legacy-project", project)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    result = run([project], RunOptions(jobs=1, write=False))
    assert [f.path for f in result.files if f.status is FileStatus.ERROR] == []
    assert [(f.path, finding.message) for f in result.files for finding in f.findings
            if finding.rule.startswith("NM7")] == []


def test_notebook_cells_are_verified_with_the_imports_of_the_cells_before() -> None:
    cells = [["from optimum.neuron import NeuronTrainingArguments\n", "from transformers import TrainingArguments as TA"],
             ["stock = TA(output_dir='o', learning_rat=1e-4)"]]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
                          for source in cells],
                "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
                "nbformat": 4, "nbformat_minor": 5}
    result = apply_rules(json.dumps(notebook, indent=1), FileKind.NOTEBOOK, path="train.ipynb")
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    assert [f.rule for f in errors] == ["NM702"]
    assert errors[0].message.startswith("cell 2, line 1: ") and "`learning_rat`" in errors[0].message


# rt3A 1/2: the rewrite that breaks the read is the import (it changes the type of training_args), on a line of
# its own: the read's line does not change, and an NM208 todo names the field (the script's dataclass is imported
# from another module, so NM208 cannot move zero_1 into it as it does for a dataclass of the file)
ZERO_1_READ = '''from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments

from script_arguments import ModelArguments


def main(model):
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    if training_args.zero_1:
        print("using ZeRO-1")
    Trainer(model=model, args=training_args, tokenizer=None).train()
'''


def test_a_rewrite_elsewhere_that_breaks_an_unchanged_line_is_withdrawn_with_the_rewrites_assuming_it() -> None:
    result = apply_rules(ZERO_1_READ)
    assert "from optimum.neuron import NeuronTrainingArguments as TrainingArguments" in result.text
    assert not any(f.severity is Severity.FIXED and f.rule.startswith("NM2") for f in result.findings)
    nm201 = [f for f in result.findings if f.rule == "NM201"]
    assert len(nm201) == 3 and all("`training_args.zero_1` will raise" in f.message for f in nm201)
    # the training rules that assume the stock classes go with the class move: nothing half-migrated stays
    assert "tensor_parallel_size: int" not in result.text and "tokenizer=None" in result.text
    assert any(f.rule == "NM203" and f.message.startswith("not rewritten: it assumes the NM201 rewrite")
               for f in result.findings)
    assert not any(f.severity is Severity.ERROR for f in result.findings)
    again = apply_rules(result.text)
    assert again.text == result.text  # the second run decides the same
    assert not any(f.severity is Severity.FIXED and f.rule.startswith("NM2") for f in again.findings)


def test_without_the_read_the_classes_move() -> None:
    result = apply_rules(ZERO_1_READ.replace('    if training_args.zero_1:\n        print("using ZeRO-1")\n', ""))
    imports = "from transformers import HfArgumentParser, Trainer, TrainingArguments\n"  # the moves, on one line
    assert imports in result.text and "processing_class=None" in result.text
    assert [f.severity for f in result.findings if f.rule == "NM201"] == [Severity.FIXED] * 3
    assert not any(f.rule.startswith("NM7") for f in result.findings)


def _no_withdrawal_helps(old: str, new: str, todo: str):
    """A transform whose output is the same whatever rules run (no single withdrawal removes what it breaks)."""
    from migrate.verification import verified
    from tests.verify.helpers import VERIFIERS

    class Fake:
        id = "NM299"

    def transform(chosen):
        return new, [Finding("NM299", Severity.FIXED, 1, 0, "moved"), Finding("NM208", Severity.TODO, 4, 0, todo)]

    return verified(old, [Fake], VERIFIERS, transform, inline_notes=False)[1]


def test_a_todo_does_not_hide_an_error_the_run_made() -> None:
    old = "from optimum.neuron import NeuronTrainingArguments as TA\n\nargs = TA(output_dir='o')\nprint(args.zero_1)\n"
    new = old.replace("from optimum.neuron import NeuronTrainingArguments", "from transformers import TrainingArguments")
    found = _no_withdrawal_helps(old, new, "args.zero_1: declare `zero_1` yourself")
    assert [(f.rule, f.line) for f in found if f.severity is Severity.ERROR] == [("NM703", 4)]


def test_a_todo_naming_a_failure_the_text_had_before_stands_for_it() -> None:
    old = "from transformers import TrainingArguments as TA\n\nargs = TA(output_dir='o')\nprint(args.zero_1)\n"
    found = _no_withdrawal_helps(old, old, "args.zero_1: declare `zero_1` yourself")
    assert not any(f.severity is Severity.ERROR for f in found)
