"""NM202: a project pinned to optimum-neuron 0.4.x trained with that release's NeuronTrainingArguments defaults
(per_device_train_batch_size 1, optim "adamw_torch"); the stock TrainingArguments default to 8 and
"adamw_torch_fused", so a call that builds the arguments without them gets the old values written (NM408 writes the
same flags on the launch lines). A given value, an unknown version and a ``**`` splat write nothing."""

import ast
import tempfile

from codemods._tables.training_defaults import NEURON_04_DEFAULTS
from tests.rules.case import findings, migrate

SOURCE = """
from optimum.neuron import NeuronTrainingArguments

args = NeuronTrainingArguments(output_dir="out", learning_rate=5e-5{extra})
"""
PINNED_04 = {"requirements.txt": "optimum-neuron[neuronx]==0.4.1\n"}


def _keywords(text: str) -> dict[str, object]:
    call = next(node for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "TrainingArguments")
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg and isinstance(k.value, ast.Constant)}


def test_the_old_defaults_are_written_and_are_what_stock_does_not_default_to():
    from transformers import TrainingArguments

    result = migrate(SOURCE.format(extra=""), "NM202", family="NM2", project=PINNED_04)
    written = _keywords(result.text)
    assert written["per_device_train_batch_size"] == 1 and written["optim"] == "adamw_torch"
    assert any(f.severity.value == "fixed" and "0.4.x (this project's pin) defaults written" in f.message
               for f in result.findings if f.rule == "NM202")
    with tempfile.TemporaryDirectory() as out:
        stock = TrainingArguments(output_dir=out)
        kept = TrainingArguments(output_dir=out, per_device_train_batch_size=1, optim="adamw_torch")
    # the values the table holds are the stock defaults on one side and accepted on the other
    def value(args, field):
        found = getattr(args, field)
        return str(getattr(found, "value", found))  # optim is an OptimizerNames enum

    for field, old, new in NEURON_04_DEFAULTS:
        assert value(stock, field) == new and value(kept, field) == old


def test_given_values_are_kept_and_nothing_is_added():
    result = migrate(SOURCE.format(extra=', per_device_train_batch_size=4, optim="adafactor"'), "NM202",
                     family="NM2", project=PINNED_04)
    assert _keywords(result.text)["per_device_train_batch_size"] == 4
    assert _keywords(result.text)["optim"] == "adafactor"
    assert not any("defaults written" in f.message for f in result.findings)


def test_an_unknown_version_writes_nothing_and_notes_the_defaults():
    result = migrate(SOURCE.format(extra=""), "NM202", family="NM2",
                     project={"requirements.txt": "optimum-neuron\n"})
    assert "per_device_train_batch_size" not in _keywords(result.text)
    assert any("if it ran 0.4.x, defaults differ" in f.message for f in result.findings if f.rule == "NM202")
    assert (3, "todo") in findings(result, "NM202")
