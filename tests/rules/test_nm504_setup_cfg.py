"""NM504: optimum-neuron / torch-xla requirements in setup.cfg -> the TorchNeuron stack."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def test_install_requires_moves_to_the_torchneuron_stack() -> None:
    result = migrate(
        """
        [metadata]
        name = my-finetune

        [options]
        install_requires =
            optimum-neuron[neuronx]>=0.0.25
            datasets
        """,
        "NM504",
        kind=FileKind.SETUP_CFG,
        path="setup.cfg",
    )
    assert "optimum-neuron" not in result.text
    assert "    torch-neuronx==" in result.text and "    transformers>=" in result.text
    assert "    datasets\n" in result.text
    assert (6, "fixed") in findings(result, "NM504")


def test_a_stock_setup_cfg_is_left_alone() -> None:
    unchanged(
        """
        [options]
        install_requires =
            transformers>=5.24
            accelerate>=1.15
        """,
        "NM504",
        kind=FileKind.SETUP_CFG,
        path="setup.cfg",
    )
