"""NM314: torch_xla.utils.checkpoint and torch_xla.amp.syncfree optimizers -> stock torch."""

from tests.rules.case import findings, migrate, unchanged


def test_checkpoint_and_syncfree_become_stock_torch() -> None:
    result = migrate(
        """
        import torch_xla.utils.checkpoint as xla_ckpt
        from torch_xla.amp import syncfree

        h = xla_ckpt.checkpoint(block, h)
        opt = syncfree.SGD(model.parameters(), lr=0.1, momentum=0.9)
        """,
        "NM314",
    )
    assert "use_reentrant=True" in result.text  # torch_xla's checkpoint is the reentrant one
    assert "SGD(model.parameters(), lr=0.1, momentum=0.9)" in result.text
    assert "torch_xla" not in result.text
    assert (5, "fixed") in findings(result, "NM314")


def test_stock_checkpoint_is_left_alone() -> None:
    unchanged(
        """
        import torch_xla.core.xla_model as xm
        from torch.utils.checkpoint import checkpoint

        h = checkpoint(block, h, use_reentrant=False)
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM314",
    )
