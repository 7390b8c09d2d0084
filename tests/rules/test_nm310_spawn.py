"""NM310: xmp.spawn(fn, args=(...)) -> fn(LOCAL_RANK, ...) under torchrun, with a todo for the launcher."""

from tests.rules.case import findings, migrate, unchanged


def test_spawn_becomes_a_direct_call_per_torchrun_process() -> None:
    result = migrate(
        """
        import torch_xla.distributed.xla_multiprocessing as xmp


        def _mp_fn(index, flags):
            train(flags)


        if __name__ == "__main__":
            xmp.spawn(_mp_fn, args=(FLAGS,), nprocs=8)
        """,
        "NM310",
    )
    assert '    _mp_fn(int(os.environ.get("LOCAL_RANK", 0)), FLAGS)' in result.text
    assert "import torch_xla" not in result.text and "xmp.spawn(" not in result.text
    assert "torchrun --nproc_per_node" in result.text
    assert findings(result, "NM310") == {(9, "todo")}


def test_multiprocessing_spawn_is_left_alone() -> None:
    unchanged(
        """
        import torch_xla.core.xla_model as xm
        import torch.multiprocessing as mp

        if __name__ == "__main__":
            mp.spawn(main, nprocs=2)
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM310",
    )
