"""NM309: init_process_group("xla") -> the native backend; the xla_backend side-effect import goes."""

from tests.rules.case import findings, migrate, unchanged


def test_xla_backend_becomes_the_native_backend() -> None:
    result = migrate(
        """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # registers "xla"

        dist.init_process_group(backend="xla")
        """,
        "NM309",
    )
    assert "torch_xla" not in result.text
    assert "dist.init_process_group(backend=dist.get_default_backend_for_device(" in result.text
    assert findings(result, "NM309") == {(2, "fixed"), (4, "fixed")}


def test_a_native_backend_is_left_alone() -> None:
    unchanged(
        """
        import torch_xla.core.xla_model as xm
        import torch.distributed as dist

        dist.init_process_group("gloo")
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM309",
    )
