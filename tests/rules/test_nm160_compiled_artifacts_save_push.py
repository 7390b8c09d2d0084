"""NM160: save_pretrained of a migrated Neuron model gets a todo; optimum's push_to_hub becomes the stock call."""

from tests.rules.case import findings, migrate, unchanged


def test_save_gets_a_todo_and_push_takes_the_stock_signature() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForSequenceClassification

        model = NeuronModelForSequenceClassification.from_pretrained("bert-base-uncased", export=True, batch_size=1)
        model.save_pretrained("bert_neuron/")
        model.push_to_hub("bert_neuron/", repository_id="me/bert-neuron", use_auth_token=TOKEN)
        """,
        "NM160",
        family="NM1",  # NM120 rewrites the load, as in a real run: a second run then sees a stock model
    )
    assert 'model.save_pretrained("bert_neuron/")' in result.text
    assert 'model.push_to_hub("me/bert-neuron", token=TOKEN)' in result.text
    assert findings(result, "NM160") == {(4, "todo"), (5, "fixed")}


def test_a_stock_model_save_is_left_alone() -> None:
    unchanged(
        """
        from transformers import AutoModelForSequenceClassification

        model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
        model.save_pretrained("bert/")
        model.push_to_hub("me/bert")
        """,
        "NM160",
    )


def test_a_model_whose_class_stays_keeps_the_optimum_calls() -> None:
    # --select NM160 alone: the load is not rewritten, so the object is still an optimum-neuron model whose
    # push_to_hub takes (save_directory, repository_id=...) and whose save_pretrained still writes NEFFs
    unchanged(
        """
        from optimum.neuron import NeuronModelForSequenceClassification

        model = NeuronModelForSequenceClassification.from_pretrained("bert-base-uncased", export=True, batch_size=1)
        model.save_pretrained("bert_neuron/")
        model.push_to_hub("bert_neuron/", repository_id="me/bert-neuron", use_auth_token=TOKEN)
        """,
        "NM160",
    )
