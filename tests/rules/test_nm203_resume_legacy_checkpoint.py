"""NM203: ``trainer.train(resume_from_checkpoint=...)`` in a script that trained with an optimum-neuron trainer gets
a todo: the checkpoint-* folders its old runs wrote (shards/, trn_config.json) cannot be resumed by the stock
Trainer (rt7L L5, trap T23). A literal None / False resumes nothing; a script that never used a Neuron trainer keeps
its resume as it is."""

from __future__ import annotations

from tests.rules.case import findings, migrate

NOTE = "cannot resume a checkpoint an optimum-neuron run wrote"
PINNED_04 = {"requirements.txt": "optimum-neuron[training]==0.4.1\n"}


def _notes(result) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in result.findings if f.rule == "NM203" and NOTE in f.message]


def test_the_resume_of_a_neuron_trainer_is_noted_with_the_way_on():
    result = migrate("""
        from optimum.neuron import NeuronTrainer

        def main(args, ckpt):
            trainer = NeuronTrainer(args=args)
            trainer.train(resume_from_checkpoint=ckpt)
            trainer.train(ckpt)
            trainer.train(resume_from_checkpoint=None)
            trainer.train()
        """, "NM203", project=PINNED_04)
    notes = _notes(result)
    assert [line for line, _ in notes] == [5, 6]
    message = notes[0][1]
    assert message.startswith("resume_from_checkpoint=ckpt: ")
    assert "ValueError" in message and "from_pretrained(<dir>)" in message and "new output_dir" in message
    assert "0.4.x's NeuronTrainer refused any resume_from_checkpoint" in message  # the project's line
    assert {(5, "todo"), (6, "todo")} <= findings(result, "NM203")


def test_a_module_alias_and_a_true_value_are_noted_and_the_line_is_not_claimed_when_unpinned():
    result = migrate("""
        import optimum.neuron as on

        def main(args):
            on.NeuronSFTTrainer(args=args).train(resume_from_checkpoint=True)
        """, "NM203", project={"requirements.txt": "optimum-neuron\n"})
    notes = _notes(result)
    assert [line for line, _ in notes] == [4]
    assert "refused" not in notes[0][1]


def test_other_train_calls_and_stock_scripts_are_left_alone():
    result = migrate("""
        from optimum.neuron import NeuronTrainer

        def main(args, model, ckpt):
            model.train(True)
            NeuronTrainer(args=args).train(resume_from_checkpoint=False)
        """, "NM203", project=PINNED_04)
    assert _notes(result) == []
    stock = migrate("""
        from transformers import Trainer

        def main(args, ckpt):
            Trainer(args=args).train(resume_from_checkpoint=ckpt)
        """, "NM203", project={**PINNED_04, "other.py": "from optimum.neuron import NeuronTrainer\n"})
    assert _notes(stock) == []
