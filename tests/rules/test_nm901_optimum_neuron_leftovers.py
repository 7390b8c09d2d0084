"""NM901 optimum-neuron-leftovers: every optimum-neuron reference left after the run is reported, uses of its
classes included when the file keeps the import that binds them."""

from __future__ import annotations

from tests.rules.case import findings, migrate

RULE = "NM901"


def test_a_kept_import_and_each_use_of_its_classes_are_reported():
    result = migrate("""
        import optimum.neuron

        def load(task, path):
            model_class = eval(f"optimum.neuron.NeuronModelFor{task}")
            return model_class

        def export(path):
            NeuronModel = load("SequenceClassification", path)
            model = NeuronModel.from_pretrained(path, export=True)
            return model
    """, RULE)
    assert findings(result, RULE) == {(1, "todo"), (8, "todo"), (9, "todo")}
    assert "an optimum-neuron class (this file still imports optimum.neuron)" in result.text


def test_neuron_named_classes_without_an_optimum_import_are_not_reported():
    source = """
        class NeuronModelWrapper:
            pass

        model = NeuronModelWrapper()
    """
    result = migrate(source, RULE)
    assert findings(result, RULE) == set()


def test_a_file_left_whole_reports_its_class_uses_as_information():
    result = migrate("""
        # neuron-migrate: Inf1 flow (torch.neuron.trace): the inference rules leave this file as it is
        from optimum.neuron import NeuronModelForSequenceClassification

        model = NeuronModelForSequenceClassification.from_pretrained("model_dir")
    """, RULE)
    assert (4, "info") in findings(result, RULE)
    assert result.text.count("neuron-migrate:") == 2  # the file's note and the import's; no note for line 4
