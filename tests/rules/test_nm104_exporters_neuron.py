"""NM104: an ahead-of-time export call has no TorchNeuron counterpart: it stays, with a todo."""

from tests.rules.case import findings, migrate, unchanged


def test_export_call_gets_a_todo_and_stays() -> None:
    source = """
        import optimum.exporters.neuron as exporters

        exporters.main_export(
            model_name_or_path="distilbert-base-uncased",
            output="compiled/",
            task="feature-extraction",
            batch_size=4,
            sequence_length=64,
        )
        """
    result = migrate(source, "NM104")
    assert "exporters.main_export(" in result.text
    assert findings(result, "NM104") == {(3, "todo")}


def test_a_file_that_does_not_use_the_exporter_is_left_alone() -> None:
    unchanged(
        """
        # compiled earlier with optimum.exporters.neuron; this script only reads the results
        import json

        print(json.load(open("compiled/config.json")))
        """,
        "NM104",
    )
