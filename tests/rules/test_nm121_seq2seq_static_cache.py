"""NM121: a Neuron encoder-decoder becomes the stock class with a static-cache generation config."""

from tests.rules.case import findings, migrate, unchanged


def test_seq2seq_model_gets_a_static_cache_generation_config() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForSeq2SeqLM as Seq2Seq

        translator = Seq2Seq.from_pretrained(
            "google/flan-t5-small",
            export=True,
            batch_size=1,
            sequence_length=128,
            num_beams=2,
        )
        """,
        "NM121",
    )
    assert "from transformers import CompileConfig, AutoModelForSeq2SeqLM as Seq2Seq" in result.text
    assert "translator = Seq2Seq.from_pretrained(" in result.text and "export=True" not in result.text
    assert 'translator.generation_config.update(cache_implementation="static", num_beams=2' in result.text
    assert (3, "fixed") in findings(result, "NM121")
    assert (3, "todo") in findings(result, "NM121")


def test_stock_seq2seq_class_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from transformers import AutoModelForSeq2SeqLM

        translator = AutoModelForSeq2SeqLM.from_pretrained("google/flan-t5-small")
        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM121",
    )
