"""NM317: is_torch_xla_available() is False on TorchNeuron: the non-XLA branch is kept."""

from tests.rules.case import findings, migrate, unchanged


def test_the_else_branch_is_kept() -> None:
    result = migrate(
        """
        import torch
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            import torch_xla.core.xla_model as xm
            device = xm.xla_device()
        else:
            device = torch.device("cpu")
        """,
        "NM317",
    )
    assert result.text.rstrip().endswith('\ndevice = torch.device("cpu")')
    assert "xla_device" not in result.text
    assert findings(result, "NM317") == {(4, "fixed")}


def test_a_project_flag_with_a_similar_name_is_left_alone() -> None:
    unchanged(
        """
        def is_torch_xla_available_in_config(config):
            return config.get("xla", False)

        if is_torch_xla_available_in_config({}):
            print("xla")
        """,
        "NM317",
    )
