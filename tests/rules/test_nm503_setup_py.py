"""NM503: optimum-neuron / torch-xla requirements in setup.py -> the TorchNeuron stack."""

from tests.rules.case import findings, migrate, unchanged


def test_a_module_level_list_named_by_install_requires_and_extras_lists_are_rewritten() -> None:
    result = migrate(
        """
        from setuptools import setup

        REQUIRED = ["optimum-neuron[neuronx]==0.0.20", "torch-xla"]

        setup(
            name="trainer",
            install_requires=REQUIRED,
            extras_require={"train": ['trl==0.11.0']},
        )
        """,
        "NM503",
        path="setup.py",
    )
    assert 'REQUIRED = ["torch-neuronx==2.14.*", "torch==2.14.*", "transformers>=5.24", "accelerate>=1.15"]' \
        in result.text
    assert "extras_require={\"train\": ['trl>=1.16']}" in result.text  # each element keeps its quotes
    assert findings(result, "NM503") == {(3, "fixed"), (3, "todo"), (8, "fixed")}


def test_a_list_that_setup_does_not_receive_is_left_alone() -> None:
    unchanged(
        """
        from setuptools import setup

        OPTIONAL = ["optimum-neuron==0.0.20"]

        setup(name="trainer", install_requires=["transformers>=5.24"])
        """,
        "NM503",
        path="setup.py",
    )
