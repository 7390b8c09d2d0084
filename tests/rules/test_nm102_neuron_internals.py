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


def test_eval_of_a_built_neuron_class_name_names_the_stock_spelling() -> None:
    result = migrate(
        """
        import os
        import optimum.neuron

        task = os.environ["TASK"]
        Model = eval(f"optimum.neuron.NeuronModelFor{task}")
        """,
        "NM102",
    )
    assert 'Model = eval(f"optimum.neuron.NeuronModelFor{task}")' in result.text  # kept: a todo, no rewrite
    message = next(f.message for f in result.findings if f.rule == "NM102")
    assert 'replace it with eval(f"transformers.AutoModelFor{task}") (import transformers)' in message


def test_eval_of_a_string_built_elsewhere_gets_the_generic_advice() -> None:
    result = migrate(
        """
        import os
        import optimum.neuron as on

        pipe = eval(os.environ["PIPELINE"])
        """,
        "NM102",
    )
    message = next(f.message for f in result.findings if f.rule == "NM102")
    assert "replace it with an explicit stock class" in message
