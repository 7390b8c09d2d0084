"""NM307: xm.save(obj, path) -> torch.save(obj, path) on global rank 0."""

from tests.rules.case import findings, migrate, unchanged


def test_xm_save_becomes_torch_save_on_rank_zero() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def checkpoint(model, step):
            xm.save(model.state_dict(), f"ckpt-{step}.pt")
        """,
        "NM307",
    )
    assert '    if int(os.environ.get("RANK", 0)) == 0:\n        torch.save(model.state_dict(), f"ckpt-{step}.pt")' in (
        result.text
    )
    assert "xm." not in result.text
    assert findings(result, "NM307") == {(4, "fixed")}


def test_torch_save_is_left_alone() -> None:
    unchanged(
        """
        import torch
        import torch_xla.core.xla_model as xm

        torch.save(model.state_dict(), "model.pt")
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM307",
    )
