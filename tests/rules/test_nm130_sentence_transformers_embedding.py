"""NM130: a Neuron sentence-transformers model becomes SentenceTransformer on the device."""

from tests.rules.case import findings, migrate, unchanged


def test_neuron_sentence_transformer_becomes_sentence_transformer() -> None:
    result = migrate(
        """
        import optimum.neuron

        embedder = optimum.neuron.NeuronSentenceTransformers.from_pretrained(
            "sentence-transformers/all-MiniLM-L6-v2", export=True, batch_size=8, sequence_length=256
        )
        vectors = embedder.encode(["a", "b"])
        """,
        "NM130",
    )
    assert "from sentence_transformers import SentenceTransformer" in result.text
    assert "embedder = SentenceTransformer(\n" in result.text and "device=torch.accelerator" in result.text
    assert "export=True" not in result.text
    assert "embedder.max_seq_length = 256" in result.text
    assert (3, "fixed") in findings(result, "NM130")


def test_stock_sentence_transformer_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from sentence_transformers import SentenceTransformer

        embedder = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM130",
    )
