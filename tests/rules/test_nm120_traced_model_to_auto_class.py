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


def test_load_with_a_splat_nothing_resolves_stays_on_optimum_neuron() -> None:
    source = """
        from optimum.neuron import NeuronModelForSequenceClassification

        def load(path, shapes):
            return NeuronModelForSequenceClassification.from_pretrained(path, export=True, **shapes)
        """
    result = migrate(source, "NM120")
    assert "from optimum.neuron import NeuronModelForSequenceClassification" in result.text
    assert "from_pretrained(path, export=True, **shapes)" in result.text and "dtype=" not in result.text
    (message,) = [f.message for f in result.findings if f.rule == "NM120"]
    assert message.startswith("`**shapes` cannot be resolved statically")
