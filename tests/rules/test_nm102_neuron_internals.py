"""NM102: an isinstance check against a compiled-model base class becomes the stock base; internals get a todo."""

from tests.rules.case import findings, migrate, unchanged


def test_isinstance_against_a_traced_base_becomes_pretrained_model() -> None:
    result = migrate(
        """
        from optimum.neuron.modeling_traced import NeuronTracedModel as Traced

        def check(model):
            assert isinstance(model, (Traced, dict)), "expected a compiled model"
        """,
        "NM102",
    )
    assert "from transformers import PreTrainedModel" in result.text
    assert "isinstance(model, (PreTrainedModel, dict))" in result.text
    assert "Traced" not in result.text
    assert findings(result, "NM102") == {(4, "fixed")}


def test_star_import_gets_a_todo_and_stays() -> None:
    result = migrate("from optimum.neuron import *\n\nmodel = load()\n", "NM102")
    assert "from optimum.neuron import *" in result.text
    assert findings(result, "NM102") == {(1, "todo")}


def test_stock_base_class_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from transformers import PreTrainedModel

        def check(model):
            return isinstance(model, PreTrainedModel)

        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM102",
    )
