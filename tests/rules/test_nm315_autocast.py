"""NM315: torch_xla.amp.autocast(device) / torch.autocast("xla") -> torch.autocast(device_type=<accelerator>)."""

from tests.rules.case import findings, migrate, unchanged


def test_xla_autocast_becomes_torch_autocast() -> None:
    result = migrate(
        """
        import torch
        import torch_xla.core.xla_model as xm
        from torch_xla.amp import autocast

        device = xm.xla_device()
        with autocast(device, dtype=torch.bfloat16):
            loss = model(x)
        """,
        "NM315",
    )
    assert "with torch.autocast(device_type=(torch.accelerator.current_accelerator()" in result.text
    assert "dtype=torch.bfloat16" in result.text
    assert findings(result, "NM315") == {(6, "fixed")}


def test_a_cuda_autocast_is_left_alone() -> None:
    unchanged(
        """
        import torch
        import torch_xla.core.xla_model as xm

        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x)
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM315",
    )
