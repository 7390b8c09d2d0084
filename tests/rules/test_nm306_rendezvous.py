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


def test_a_rendezvous_right_after_a_ported_save_adds_no_second_barrier() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def finish(model, path):
            xm.save(model.state_dict(), path)
            xm.rendezvous("done")
            xm.rendezvous("again")


        xm.save({"step": 1}, "last.pt")
        xm.rendezvous("saved")
        """,
        "NM306", family="NM3",
    )
    assert result.text.count("dist.barrier()") == 2  # one after each save: the rendezvous add none
    assert "rendezvous" not in result.text
    merged = [f for f in result.findings if f.rule == "NM306"]
    assert [f.line for f in merged] == [5, 6, 10]
    assert all("already waits for every process" in f.message for f in merged)


def test_a_rendezvous_after_other_work_keeps_its_barrier() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def finish(model, path):
            xm.save(model.state_dict(), path)
            print("saved")
            # every replica waits here
            xm.rendezvous("done")
        """,
        "NM306", family="NM3",
    )
    assert result.text.count("dist.barrier()") == 2
    assert "    # every replica waits here\n    if dist.is_initialized():\n        dist.barrier()\n" in result.text
