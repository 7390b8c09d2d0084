"""NM150: optimum.neuron.pipeline(...) becomes transformers.pipeline(...) on the device."""

import textwrap

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


def test_a_pipeline_with_a_splat_nothing_resolves_keeps_the_file_on_optimum_neuron() -> None:
    source = """
        from optimum.neuron import pipeline

        def build(model, **neuron_options):
            return pipeline("text-classification", model=model, **neuron_options)

        generator = pipeline("text-generation", model="gpt2", export=True)
        """
    result = migrate(source, "NM150")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("# neuron-migrate"))
    assert code == textwrap.dedent(source).strip("\n")  # the import and both calls stay: the file still runs
    assert findings(result, "NM150") == {(4, "todo")}
    (message,) = [f.message for f in result.findings if f.rule == "NM150"]
    assert message.startswith("`**neuron_options` cannot be resolved statically") and "pipeline import" in message


def test_a_pipeline_splat_of_a_dict_bound_once_is_folded() -> None:
    result = migrate(
        """
        from optimum.neuron import pipeline

        def build(model):
            options = {"export": True, "input_shapes": {"batch_size": 1, "sequence_length": 64}}
            return pipeline("text-classification", model=model, **options)
        """,
        "NM150",
    )
    assert "from transformers import pipeline" in result.text and "**options" not in result.text
    assert 'pipeline("text-classification", model=model, device=' in result.text
    assert (5, "fixed") in findings(result, "NM150")


def test_a_pipeline_splat_of_a_project_module_dict_is_folded() -> None:
    source = """
        from optimum.neuron import pipeline

        from app.config import NEURON_OPTIONS

        pipe = pipeline("text-classification", model="distilbert-base-uncased", **NEURON_OPTIONS)
        """
    config = 'NEURON_OPTIONS = {"export": True, "input_shapes": {"batch_size": 1, "sequence_length": 64}}\n'
    result = migrate(source, "NM150", path="app/serve.py", project={"app/config.py": config})
    assert "**NEURON_OPTIONS" not in result.text and "from transformers import pipeline" in result.text
    messages = [f.message for f in result.findings if f.rule == "NM150"]
    assert any("**NEURON_OPTIONS (a dict of app/config.py, folded in" in m for m in messages)
    assert any("batch_size=1, sequence_length=64" in m for m in messages)


def test_a_task_transformers_5_removed_keeps_the_file_on_optimum_neuron() -> None:
    """rtB B1: transformers.pipeline("question-answering" / "summarization" / "translation_xx_to_yy" ...) raises
    KeyError in transformers 5, so such a call, its import and its file stay on optimum-neuron with a todo."""
    source = """
        from optimum.neuron import pipeline

        qa = pipeline("question-answering", model="deepset/roberta-base-squad2", export=True)
        fr = pipeline("translation_en_to_fr", model="google-t5/t5-small", export=True)
        clf = pipeline("text-classification", model="distilbert/distilbert-base-uncased", export=True)
        """
    result = migrate(source, "NM150")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("# neuron-migrate"))
    assert code == textwrap.dedent(source).strip("\n")
    assert findings(result, "NM150") == {(3, "todo"), (4, "todo")}
    assert all("removed in transformers 5" in f.message for f in result.findings if f.rule == "NM150")


def test_a_task_that_is_no_literal_names_the_removed_tasks() -> None:
    result = migrate(
        """
        import sys
        from optimum.neuron import pipeline

        pipe = pipeline(sys.argv[1], model="distilbert/distilbert-base-uncased", export=True)
        """,
        "NM150",
    )
    assert "from transformers import pipeline" in result.text
    messages = " ".join(f.message for f in result.findings if f.rule == "NM150")
    assert 'the task is no literal: transformers 5 removed the "text2text-generation"' in messages


def test_the_removed_tasks_are_those_of_the_installed_transformers() -> None:
    from transformers.pipelines import REMOVED_TASKS as STOCK

    from codemods.inference.nm150_neuron_pipeline_function import REMOVED_TASKS

    assert set(REMOVED_TASKS) == set(STOCK)
