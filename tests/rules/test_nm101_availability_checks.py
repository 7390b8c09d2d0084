"""NM101: optimum-neuron availability helpers become the stock checks; the Inf1 check becomes False with a todo."""

from tests.rules.case import findings, migrate, unchanged


def test_neuronx_check_renamed_and_inf1_check_becomes_false() -> None:
    result = migrate(
        """
        from optimum.neuron.utils import is_neuronx_available, is_neuron_available

        if is_neuronx_available():
            device = "neuron"
        if is_neuron_available():
            import torch_neuron
        """,
        "NM101",
    )
    assert "from transformers.utils import is_torch_neuron_available" in result.text
    assert "if is_torch_neuron_available():" in result.text
    assert "if False:" in result.text
    assert "from optimum" not in result.text
    assert findings(result, "NM101") == {(1, "fixed"), (5, "todo")}


def test_package_probe_becomes_find_spec() -> None:
    result = migrate(
        """
        from optimum.neuron.utils import is_neuronx_distributed_available

        USE_NXD = is_neuronx_distributed_available()
        """,
        "NM101",
    )
    assert 'importlib.util.find_spec("neuronx_distributed") is not None' in result.text
    assert "from optimum" not in result.text


def test_stock_check_is_left_alone() -> None:
    unchanged(
        """
        from transformers.utils import is_torch_neuron_available

        if is_torch_neuron_available():
            device = "neuron"
        """,
        "NM101",
    )
