"""NM150: optimum.neuron.pipeline(...) becomes transformers.pipeline(...) on the device."""

from tests.rules.case import findings, migrate, unchanged


def test_neuron_pipeline_becomes_the_transformers_pipeline() -> None:
    result = migrate(
        """
        from optimum.neuron import pipeline as neuron_pipeline

        classifier = neuron_pipeline("sentiment-analysis", model="distilbert/distilbert-base-uncased", export=True)
        print(classifier("great"))
        """,
        "NM150",
    )
    assert "from transformers import pipeline as neuron_pipeline" in result.text  # the alias is kept
    assert "export=True" not in result.text
    assert 'classifier.model.compile(backend="neuron"' in result.text
    assert (3, "fixed") in findings(result, "NM150")


def test_transformers_pipeline_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from transformers import pipeline

        classifier = pipeline("sentiment-analysis")
        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM150",
    )
