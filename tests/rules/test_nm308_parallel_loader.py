"""NM308: pl.MpDeviceLoader(loader, device) -> loader, with each batch moved to the device in the loop."""

from tests.rules.case import findings, migrate, unchanged


def test_device_loader_becomes_the_loader_and_the_loop_moves_batches() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl

        device = xm.xla_device()
        train_device_loader = pl.MpDeviceLoader(train_loader, device)
        for step, (x, y) in enumerate(train_device_loader):
            loss = loss_fn(model(x), y)
        """,
        "NM308",
    )
    assert "train_device_loader = train_loader\n" in result.text
    assert "    x, y = x.to(device), y.to(device)\n    loss = loss_fn(model(x), y)" in result.text
    assert "parallel_loader" not in result.text
    assert findings(result, "NM308") == {(5, "fixed")}


def test_a_plain_dataloader_loop_is_left_alone() -> None:
    unchanged(
        """
        import torch_xla.core.xla_model as xm

        for step, (x, y) in enumerate(train_loader):
            loss = loss_fn(model(x.to(device)), y.to(device))
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM308",
    )
