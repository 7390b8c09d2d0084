"""NM318: torch_xla APIs with no automatic rewrite (FSDP, SPMD ...) get a precise todo; the code stays."""

from tests.rules.case import findings, migrate, unchanged


def test_xla_fsdp_gets_a_todo() -> None:
    source = """
        import torch
        from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP

        model = FSDP(model, compute_dtype=torch.bfloat16)
        """
    result = migrate(source, "NM318")
    assert "model = FSDP(model, compute_dtype=torch.bfloat16)" in result.text
    assert "fully_shard" in result.text  # the note names the stock replacement
    assert (4, "todo") in findings(result, "NM318")
    assert "fixed" not in {severity for _, severity in findings(result, "NM318")}


def test_torch_fsdp_is_left_alone() -> None:
    unchanged(
        """
        import torch_xla.core.xla_model as xm
        from torch.distributed.fsdp import fully_shard

        fully_shard(model)
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM318",
    )
