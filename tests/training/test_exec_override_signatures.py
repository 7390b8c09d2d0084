"""Execution proof (NM607): a Trainer subclass written for transformers 4, ``compute_loss(self, model, inputs,
return_outputs=False)`` returning the model's mean loss, is migrated (NM201 moves ``NeuronTrainer`` to ``Trainer``,
NM607 adds ``num_items_in_batch=None`` and ``loss_is_scaled_for_ga = False``) and trained for 2 optimizer steps
with ``gradient_accumulation_steps=2`` under the installed transformers 5 Trainer on CPU. Its logged losses and the
weights it ends with (plain SGD: the update is proportional to the gradient) equal those of the stock Trainer
without an override, as they did on transformers 4. The same migrated class without the attribute runs too, but
its loss is not divided by the accumulation steps (the tiny llama accepts loss kwargs, so transformers 5 counts
the loss as normalized by ``num_items_in_batch``): losses and updates twice as large, which the test also shows."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import run_script

pytestmark = pytest.mark.execution

LEGACY = textwrap.dedent('''
    """A trainer written for transformers 4: the model's mean loss, plus a hook on every step."""
    from optimum.neuron import NeuronTrainer


    class MeanLossTrainer(NeuronTrainer):
        def compute_loss(self, model, inputs, return_outputs=False):
            outputs = model(**inputs)
            loss = outputs.loss
            return (loss, outputs) if return_outputs else loss
    ''').lstrip("\\n")

DRIVER = textwrap.dedent("""
    import json, os
    import torch
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments, set_seed

    import migrated_trainer
    import unscaled_trainer


    def run(cls, name):
        set_seed(0)
        model = AutoModelForCausalLM.from_pretrained(os.environ["MODEL_DIR"])
        ids = torch.randint(3, 64, (8, 12), generator=torch.Generator().manual_seed(0))
        data = [{"input_ids": row, "labels": row.clone(), "attention_mask": torch.ones_like(row)} for row in ids]
        args = TrainingArguments(
            output_dir=os.path.join(os.environ["OUT_DIR"], name), per_device_train_batch_size=2,
            gradient_accumulation_steps=2, max_steps=2, learning_rate=0.5, optim="sgd", lr_scheduler_type="constant",
            logging_steps=1, report_to="none", use_cpu=True, seed=0, save_strategy="no", max_grad_norm=0.0,
        )
        trainer = cls(model=model, args=args, train_dataset=data)
        assert trainer.model_accepts_loss_kwargs, "the model must normalize by num_items_in_batch for this proof"
        result = trainer.train()
        losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
        weights = torch.cat([p.detach().flatten() for p in model.parameters()])
        return losses, result.training_loss, weights


    stock = run(Trainer, "stock")
    migrated = run(migrated_trainer.MeanLossTrainer, "migrated")
    unscaled = run(unscaled_trainer.MeanLossTrainer, "unscaled")
    start = torch.cat([p.detach().flatten()
                       for p in AutoModelForCausalLM.from_pretrained(os.environ["MODEL_DIR"]).parameters()])
    print("RESULT=" + json.dumps({
        name: {"losses": run_[0], "training_loss": run_[1],
               "update_diff": (run_[2] - stock[2]).abs().max().item(),
               "update_ratio": ((run_[2] - start).norm() / (stock[2] - start).norm()).item()}
        for name, run_ in (("stock", stock), ("migrated", migrated), ("unscaled", unscaled))
    }))
    """).lstrip("\\n")


def test_the_migrated_override_trains_as_the_stock_trainer_with_accumulation(tmp_path: Path, tiny_assets) -> None:
    result = apply_rules(
        LEGACY, path="migrated_trainer.py", project={"migrated_trainer.py": LEGACY}, select=["NM2", "NM6", "NM7"]
    )
    migrated = result.text
    assert "from optimum" not in migrated and "class MeanLossTrainer(Trainer):" in migrated
    assert "def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):" in migrated
    assert "    loss_is_scaled_for_ga = False\n" in migrated
    assert not [f for f in result.findings if f.rule == "NM704" or f.severity.value == "error"]
    (tmp_path / "migrated_trainer.py").write_text(migrated)
    # the same migration without the attribute: what adding the parameter alone would give
    (tmp_path / "unscaled_trainer.py").write_text(migrated.replace("    loss_is_scaled_for_ga = False\n", ""))
    (tmp_path / "driver.py").write_text(DRIVER)
    found = run_script(
        tmp_path / "driver.py",
        {**tiny_assets, "OUT_DIR": str(tmp_path / "out"), "CUDA_VISIBLE_DEVICES": ""},
        timeout=400,
    )
    stock, ours, unscaled = found["stock"], found["migrated"], found["unscaled"]
    assert len(stock["losses"]) == 2
    assert ours["losses"] == pytest.approx(stock["losses"], rel=1e-4)
    assert ours["training_loss"] == pytest.approx(stock["training_loss"], rel=1e-4)
    assert ours["update_diff"] < 1e-5 and ours["update_ratio"] == pytest.approx(1.0, rel=1e-3)
    # without loss_is_scaled_for_ga = False: the loss is not divided by the 2 accumulation steps
    assert unscaled["losses"][0] == pytest.approx(2 * stock["losses"][0], rel=1e-3)
    # (the first step's update exactly twice the stock one; the second starts from that other point)
    assert unscaled["update_ratio"] > 1.5 and unscaled["update_diff"] > 1e-3


LOGGING_LEGACY = textwrap.dedent('''
    """A trainer written for transformers 4 that adds a value to every log line."""
    from optimum.neuron import NeuronTrainer


    class TaggedTrainer(NeuronTrainer):
        def log(self, logs):
            logs["tag"] = 7.0
            super().log(logs)
    ''').lstrip("\\n")

LOGGING_DRIVER = textwrap.dedent("""
    import json, os
    import torch
    from transformers import AutoModelForCausalLM, TrainingArguments

    import tagged_trainer

    model = AutoModelForCausalLM.from_pretrained(os.environ["MODEL_DIR"])
    ids = torch.randint(3, 64, (4, 12), generator=torch.Generator().manual_seed(0))
    data = [{"input_ids": row, "labels": row.clone(), "attention_mask": torch.ones_like(row)} for row in ids]
    args = TrainingArguments(
        output_dir=os.environ["OUT_DIR"], per_device_train_batch_size=2, max_steps=2, logging_steps=1,
        report_to="none", use_cpu=True, save_strategy="no", include_num_input_tokens_seen="all",
    )
    trainer = tagged_trainer.TaggedTrainer(model=model, args=args, train_dataset=data)
    trainer.train()
    print("RESULT=" + json.dumps([entry for entry in trainer.state.log_history]))
    """).lstrip("\\n")


def test_the_migrated_log_override_takes_the_start_time_and_logs(tmp_path: Path, tiny_assets) -> None:
    """transformers 5 calls ``self.log(logs, start_time)`` at every logging step: the 4.x override raised TypeError
    there (and kept the whole file on optimum-neuron); with ``start_time=None`` added it runs and its value is
    logged at every step."""
    result = apply_rules(
        LOGGING_LEGACY, path="tagged_trainer.py", project={"tagged_trainer.py": LOGGING_LEGACY},
        select=["NM2", "NM6", "NM7"],
    )
    migrated = result.text
    assert "from optimum" not in migrated and "class TaggedTrainer(Trainer):" in migrated
    assert "    def log(self, logs, start_time=None):\n" in migrated
    assert not [f for f in result.findings if f.severity.value == "error"]
    (tmp_path / "tagged_trainer.py").write_text(migrated)
    (tmp_path / "driver.py").write_text(LOGGING_DRIVER)
    history = run_script(
        tmp_path / "driver.py",
        {**tiny_assets, "OUT_DIR": str(tmp_path / "out"), "CUDA_VISIBLE_DEVICES": ""},
        timeout=400,
    )
    steps = [entry for entry in history if "loss" in entry]
    assert [entry["step"] for entry in steps] == [1, 2]
    assert all(entry["tag"] == 7.0 for entry in steps)
