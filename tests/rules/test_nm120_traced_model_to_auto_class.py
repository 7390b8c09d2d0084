"""NM120: a traced NeuronModelFor<Task> becomes the transformers auto class on the device, compiled."""

from tests.rules.case import findings, migrate, unchanged


def test_traced_token_classifier_becomes_the_auto_class() -> None:
    result = migrate(
        """
        from optimum import neuron

        model = neuron.NeuronModelForTokenClassification.from_pretrained(
            "dslim/bert-base-NER", export=True, batch_size=2, sequence_length=32
        )
        """,
        "NM120",
    )
    assert "AutoModelForTokenClassification.from_pretrained(" in result.text
    assert 'model.compile(backend="neuron"' in result.text
    assert "export=True" not in result.text and "NeuronModelFor" not in result.text
    assert (3, "fixed") in findings(result, "NM120")
    assert (3, "todo") in findings(result, "NM120")  # the static shapes the caller must now pad to


def test_stock_auto_class_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from transformers import AutoModelForTokenClassification

        model = AutoModelForTokenClassification.from_pretrained("dslim/bert-base-NER")
        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM120",
    )
