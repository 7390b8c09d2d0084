"""NM306: xm.rendezvous(tag) -> dist.barrier(), guarded for single-process runs."""

from tests.rules.case import findings, migrate, unchanged


def test_rendezvous_becomes_a_guarded_barrier() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def save(model):
            if xm.is_master_ordinal():
                model.save_pretrained("out")
            xm.rendezvous("saved")
        """,
        "NM306",
    )
    assert "import torch.distributed as dist" in result.text
    assert "    if dist.is_initialized():\n        dist.barrier()\n" in result.text
    assert "rendezvous" not in result.text
    assert findings(result, "NM306") == {(6, "fixed")}


def test_a_barrier_already_native_is_left_alone() -> None:
    unchanged(
        """
        import torch_xla.core.xla_model as xm
        import torch.distributed as dist

        dist.barrier()
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM306",
    )
