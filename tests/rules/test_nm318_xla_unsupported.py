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
    # the file stays on torch_xla as a whole: one note (on its import), the call's own hint in the report only
    assert findings(result, "NM318") == {(2, "todo"), (4, "info")}
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


HOOK = """
    import os

    import torch_xla.core.xla_model as xm


    def train(args, callback):
        device = xm.xla_device()
        if {test}:
            import libneuronxla

            libneuronxla.register_hlo_snapshot_callback(callback)
        return device
    """


def test_a_libneuronxla_hook_under_a_flag_is_noted_and_the_rest_of_the_file_is_ported() -> None:
    for test in ("args.snapshot_steps", 'args.dump_mode == "hlo"', 'os.environ.get("DUMP_HLO") == "1"',
                 '"DUMP_HLO" in os.environ', "args.debug and args.snapshot_steps is not None"):
        result = migrate(HOOK.format(test=test), "NM3", family="NM3")
        assert "xm.xla_device()" not in result.text, test  # the rest of the file is ported
        assert "no rule ports" not in result.text, test
        branch = "        import libneuronxla\n\n        libneuronxla.register_hlo_snapshot_callback(callback)\n"
        assert branch in result.text  # the branch keeps its code
        assert "libneuronxla.register_hlo_snapshot_callback: an XLA-stack runtime hook" in result.text
        assert "TORCH_NEURONX_DEBUG_DIR" in result.text
        assert (9, "todo") in findings(result, "NM318"), test  # on the import


def test_libneuronxla_on_the_default_path_keeps_the_file_on_torch_xla() -> None:
    """A version test, a negated flag, an `or`, an `else:` branch or a module-level import: the branch runs on a
    plain run, so porting the rest would leave a file that fails on TorchNeuron."""
    sources = [HOOK.format(test=test) for test in ("IS_PT21_PLUS", "not args.no_snapshots", "args.x or ok",
                                                   "args.level == 0", "args.snapshot_steps is None")]
    in_else = "        if args.fast:\n            pass\n        else:\n"  # the hook's body moves under `else:`
    sources.append(HOOK.format(test="args.fast").replace("        if args.fast:\n", in_else))
    sources.append("import libneuronxla\nimport torch_xla.core.xla_model as xm\n\nif args.snapshots:\n"
                   "    libneuronxla.register_hlo_snapshot_callback(callback)\ndevice = xm.xla_device()\n")
    for source in sources:
        result = migrate(source, "NM3", family="NM3")
        assert "xm.xla_device()" in result.text, source
        assert "no rule ports (libneuronxla)" in result.text, source
