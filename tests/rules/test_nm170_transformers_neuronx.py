"""NM170: transformers-neuronx is not rewritten; one todo at the file's first import says what replaces it."""

from tests.rules.case import findings, migrate, unchanged


def test_one_todo_at_the_first_import() -> None:
    result = migrate(
        """
        import torch
        from transformers_neuronx.llama.model import LlamaForSampling
        from transformers_neuronx import NeuronConfig

        model = LlamaForSampling.from_pretrained("llama-split", batch_size=1, tp_degree=2, amp="bf16")
        model.to_neuron()
        """,
        "NM170",
    )
    assert "from transformers_neuronx.llama.model import LlamaForSampling" in result.text
    assert findings(result, "NM170") == {(2, "todo")}


def test_a_mention_in_a_string_is_left_alone() -> None:
    unchanged('HELP = "this script replaced transformers_neuronx"\nprint(HELP)\n', "NM170")
