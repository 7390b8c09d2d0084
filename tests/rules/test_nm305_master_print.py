"""NM305: xm.master_print -> print on global rank 0, with no second guard inside a global rank 0 block."""

from tests.rules.case import findings, migrate

GUARD = 'if int(os.environ.get("RANK", 0)) == 0:'


def test_master_print_inside_a_global_rank_zero_block_is_a_plain_print() -> None:
    result = migrate(
        """
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm

        def report(flags, accuracy):
            is_root = xm.is_master_ordinal(local=False)
            if is_root:
                xm.master_print("accuracy", accuracy)
                xm.master_print("done")
            if dist.get_rank() == 0 and flags.verbose:
                xm.master_print("verbose")
            else:
                xm.master_print("on the other branch")
        """,
        "NM3",
        family="NM3",
    )
    assert '    if is_root:\n        print("accuracy", accuracy)\n        print("done")\n' in result.text
    assert '        print("verbose")\n    else:\n        ' + GUARD + '\n            print("on the other branch")' in (
        result.text)
    assert result.text.count(GUARD) == 1  # the else branch only
    assert findings(result, "NM305") == {(7, "fixed"), (8, "fixed"), (10, "fixed"), (12, "fixed")}


def test_local_master_block_keeps_the_global_guard() -> None:
    """xm.is_master_ordinal() is true on every host's local master; master_print printed on global rank 0 only."""
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def report(loss):
            if xm.is_master_ordinal():
                xm.master_print("loss", loss)
        """,
        "NM3",
        family="NM3",
    )
    local = '    if int(os.environ.get("LOCAL_RANK", 0)) == 0:\n'
    assert local + '        ' + GUARD + '\n            print("loss", loss)' in result.text
