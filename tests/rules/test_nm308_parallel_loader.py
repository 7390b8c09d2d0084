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


ISINSTANCE_ONLY = """
    import torch_xla.distributed.parallel_loader as pl
    from transformers import Trainer


    class PrefetchTrainer(Trainer):
        def get_train_dataloader(self):
            loader = super().get_train_dataloader()
            if isinstance(loader, pl.MpDeviceLoader):
                loader._parallel_loader_kwargs = {"device_prefetch_size": 4}
            elif isinstance(loader, pl.ParallelLoader):
                raise TypeError("one device per process")
            else:
                print("plain")
            return loader
    """


def test_isinstance_tests_that_are_the_last_torch_xla_use_are_folded_to_their_else() -> None:
    result = migrate(ISINSTANCE_ONLY, "NM3", family="NM3")
    assert "torch_xla" not in result.text and "isinstance" not in result.text
    folded = '        loader = super().get_train_dataloader()\n        print("plain")\n        return loader'
    assert folded in result.text
    assert findings(result, "NM308") == {(8, "fixed"), (10, "fixed")}


def test_isinstance_test_beside_another_torch_xla_use_stays_with_a_todo() -> None:
    source = ISINSTANCE_ONLY + """
    def device():
        return xm.xla_device()
    """
    source = source.replace("from transformers import Trainer",
                            "import torch_xla.core.xla_model as xm\n    from transformers import Trainer")
    result = migrate(source, "NM3", family="NM3")
    assert "if isinstance(loader, pl.MpDeviceLoader):" in result.text
    assert "keep only the else branch" in result.text
    assert findings(result, "NM308") == {(9, "todo"), (11, "todo")}
