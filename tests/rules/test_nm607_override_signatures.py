"""NM607: trainer overrides written for transformers 4 get the ``num_items_in_batch`` transformers 5's Trainer passes
them (``compute_loss`` also the class's ``loss_is_scaled_for_ga = False``), so NM704 has nothing left to report on
them and NM201's class move is no longer withdrawn; any other refusal stays NM704's."""

from __future__ import annotations

import textwrap

import pytest

from codemods.drift import nm607_override_signatures
from migrate.testing import apply_rules
from tests.rules.case import findings, migrate, unchanged


def _run(source: str, select=("NM2", "NM6", "NM7"), ignore=(), project=None, path="train.py"):
    text = textwrap.dedent(source).lstrip("\n")
    files = {**(project or {}), path: text}
    result = apply_rules(text, path=path, select=list(select), ignore=list(ignore), project=files)
    again = apply_rules(result.text, path=path, select=list(select), ignore=list(ignore), project=files)
    assert again.text == result.text, "a second run changed the output"
    return result


NEURON = """
from optimum.neuron import NeuronTrainer


class SmoothedTrainer(NeuronTrainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(**inputs)
        return (outputs.loss, outputs) if return_outputs else outputs.loss

    def training_step(self, model, inputs):
        return super().training_step(model, inputs)
"""


def test_a_neuron_trainer_subclass_gets_the_parameter_and_keeps_its_class_move() -> None:
    result = _run(NEURON)
    assert "class SmoothedTrainer(Trainer):" in result.text and "from optimum" not in result.text
    assert "def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):" in result.text
    assert "def training_step(self, model, inputs, num_items_in_batch=None):" in result.text
    assert "class SmoothedTrainer(Trainer):\n    # compute_loss returns a mean loss" in result.text
    assert "    loss_is_scaled_for_ga = False\n\n    def compute_loss" in result.text
    assert findings(result, "NM607") == {(5, "fixed"), (9, "fixed")}
    assert findings(result, "NM704") == set() and findings(result, "NM201") == {(1, "fixed")}
    compute = next(f.message for f in result.findings if f.rule == "NM607" and f.line == 5)
    assert "Trainer.prediction_step" in compute and "`loss_is_scaled_for_ga = False`" in compute
    assert "as in transformers 4" in compute
    step = next(f.message for f in result.findings if f.rule == "NM607" and f.line == 9)
    assert "Trainer._run_epoch" in step and "loss_is_scaled_for_ga" not in step


def test_without_the_rule_verification_withdraws_the_class_move() -> None:
    result = _run(NEURON, ignore=("NM607",))
    assert "class SmoothedTrainer(NeuronTrainer):" in result.text
    assert any(
        f.rule == "NM201" and f.severity.value == "todo" and "would fail verification" in f.message
        for f in result.findings
    )


def test_another_refusing_override_of_the_class_stays_nm704s() -> None:
    result = _run("""
        from transformers import Trainer


        class MaskedTrainer(Trainer):
            def compute_loss(self, model, inputs, mask, return_outputs=False):
                return model(**inputs).loss * mask

            def training_step(self, model, inputs):
                return super().training_step(model, inputs)
        """)
    assert "def compute_loss(self, model, inputs, mask, return_outputs=False):" in result.text
    assert "def training_step(self, model, inputs, num_items_in_batch=None):" in result.text
    assert "loss_is_scaled_for_ga" not in result.text  # compute_loss was not changed
    assert findings(result, "NM607") == {(8, "fixed")}
    assert findings(result, "NM704") == {(5, "error")}


@pytest.mark.parametrize(
    "method",
    [
        "def training_step(self, model, batch):",  # its positional names are not the stock method's
        "def training_step(self, model, inputs, *, num_items_in_batch=None):",  # the name exists: keyword-only
        "def compute_loss(self, model, inputs):",  # return_outputs= too: the caller then needs (loss, outputs)
        "def compute_loss(self, model, inputs, return_outputs=False, *, weights):",  # a required keyword-only one
    ],
)
def test_what_adding_the_parameter_does_not_fix_is_left(method: str) -> None:
    source = f"""
        from transformers import Trainer


        class MyTrainer(Trainer):
            {method}
                return None
        """
    result = _run(source)
    assert result.text == textwrap.dedent(source).lstrip("\n")
    assert findings(result, "NM607") == set() and findings(result, "NM704") == {(5, "error")}


def test_a_decorated_override_or_another_base_is_left() -> None:
    unchanged(
        """
        import functools

        from transformers import Trainer, TrainerCallback

        from project_mixins import LoggingMixin


        class Decorated(Trainer):
            @functools.wraps(Trainer.training_step)
            def training_step(self, model, inputs):
                return super().training_step(model, inputs)


        class Mixed(LoggingMixin, Trainer):
            def training_step(self, model, inputs):
                return super().training_step(model, inputs)


        class Callback(TrainerCallback):
            def compute_loss(self, model, inputs, return_outputs=False):
                return None
        """,
        "NM607",
    )


def test_a_class_setting_the_attribute_keeps_it_and_a_docstring_stays_first() -> None:
    result = migrate(
        '''
        from transformers import Seq2SeqTrainer


        class Base(Seq2SeqTrainer):
            loss_is_scaled_for_ga = True


        class Summaries(Base):
            """Summaries with a sum loss, scaled by the caller."""

            def compute_loss(self, model, inputs, return_outputs=False):
                return model(**inputs).loss


        class Plain(Seq2SeqTrainer):
            """A mean loss."""

            def compute_loss(self, model, inputs, return_outputs=False):
                return model(**inputs).loss
        ''',
        "NM607",
    )
    assert result.text.count("loss_is_scaled_for_ga") == 2
    assert (
        '    """A mean loss."""\n\n    # compute_loss returns a mean loss: Trainer divides it by the GA steps, as '
        "transformers 4 did\n    loss_is_scaled_for_ga = False\n\n    def compute_loss"
    ) in result.text
    assert result.text.count("return_outputs=False, num_items_in_batch=None)") == 2
    assert findings(result, "NM607") == {(11, "fixed"), (18, "fixed")}


def test_an_alias_and_a_trl_trainer_are_followed() -> None:
    result = migrate(
        """
        from trl import SFTTrainer as SFT


        class Distill(SFT):
            def compute_loss(self, model, inputs, return_outputs=False):
                return model(**inputs).loss
        """,
        "NM607",
    )
    assert "return_outputs=False, num_items_in_batch=None)" in result.text
    assert "loss_is_scaled_for_ga = False" in result.text


def test_without_the_attribute_in_the_index_compute_loss_gets_a_todo(monkeypatch) -> None:
    monkeypatch.setattr(nm607_override_signatures, "SCALED", "an_attribute_no_trainer_has")
    source = """
        from transformers import Trainer


        class MyTrainer(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return model(**inputs).loss

            def training_step(self, model, inputs):
                return super().training_step(model, inputs)
        """
    result = migrate(source, "NM607")
    assert "return_outputs=False):" in result.text and "inputs, num_items_in_batch=None):" in result.text
    assert findings(result, "NM607") == {(5, "todo"), (8, "fixed")}
    todo = next(f.message for f in result.findings if f.severity.value == "todo")
    assert "has no `an_attribute_no_trainer_has`" in todo and "normalize the loss" in todo


def test_a_file_that_stays_on_optimum_neuron_gets_an_info_and_no_change() -> None:
    source = """
        from optimum.neuron import NeuronTrainer
        from optimum.neuron.distributed import ParallelizersManager


        class KeptTrainer(NeuronTrainer):
            def training_step(self, model, inputs):
                ParallelizersManager.parallelizer_for_model(model)
                return super().training_step(model, inputs)
        """
    result = _run(source)
    assert "def training_step(self, model, inputs):" in result.text
    found = [f for f in result.findings if f.rule == "NM607"]
    assert [(f.line, f.severity.value) for f in found] == [(6, "info")]
    assert "still imports optimum.neuron after this run" in found[0].message
    assert "KeptTrainer.training_step" in found[0].message


def test_a_signature_written_one_parameter_a_line_keeps_its_layout() -> None:
    result = migrate(
        """
        from transformers import Trainer


        class MyTrainer(Trainer):
            def training_step(
                self,
                model,
                inputs
            ):
                return super().training_step(model, inputs)

            def compute_loss(self, model, inputs, return_outputs=False, *args, scale=1.0):
                return model(**inputs).loss * scale
        """,
        "NM607",
    )
    assert "        model,\n        inputs,\n        num_items_in_batch=None\n    ):" in result.text
    assert "return_outputs=False, num_items_in_batch=None, *args, scale=1.0):" in result.text
