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
    assert "torchrun --nproc_per_node 8 train.py ..." in result.text
    assert findings(result, "NM310") == {(9, "todo")}


def test_a_literal_count_above_one_stops_a_plain_python_run() -> None:
    """xmp.spawn started 8 processes itself: run without a launcher, the direct call would train 1."""
    result = migrate(
        """
        import torch_xla.distributed.xla_multiprocessing as xmp

        if __name__ == "__main__":
            xmp.spawn(_mp_fn, args=(FLAGS,), nprocs=8)
        """,
        "NM310",
    )
    assert (
        '    if "WORLD_SIZE" not in os.environ:  # xmp.spawn started the processes itself\n'
        '        raise SystemExit(f"{sys.argv[0]} now runs one process per torchrun worker, where xmp.spawn started 8 '
        "itself: launch it with torchrun --nproc_per_node 8 {' '.join(sys.argv)}\")\n"
    ) in result.text
    assert "import sys\n" in result.text


def test_a_count_from_a_parsed_argument_is_checked_before_the_call() -> None:
    result = migrate(
        """
        import argparse
        import torch_xla.distributed.xla_multiprocessing as xmp

        if __name__ == "__main__":
            ap = argparse.ArgumentParser()
            ap.add_argument("--num-cores", type=int, default=8)
            flags = ap.parse_args()
            xmp.spawn(_mp_fn, args=(flags,), nprocs=flags.num_cores)
        """,
        "NM310",
    )
    assert (
        '    if "WORLD_SIZE" not in os.environ and flags.num_cores > 1:  # xmp.spawn started the processes itself\n'
        '        raise SystemExit(f"{sys.argv[0]} now runs one process per torchrun worker, where xmp.spawn started '
        "{flags.num_cores} itself: launch it with torchrun --nproc_per_node {flags.num_cores} {' '.join(sys.argv)}\")\n"
        '    if int(os.environ.get("WORLD_SIZE", 1)) > 1 and not dist.is_initialized():'
    ) in result.text
    assert "--num-cores no longer starts processes, torchrun's --nproc_per_node does" in result.text
    assert "torchrun --nproc_per_node <the --num-cores value> train.py ..." in result.text
    assert findings(result, "NM310") == {(8, "todo")}


def test_no_check_where_one_process_was_asked_or_the_count_is_not_known_to_be_an_int() -> None:
    """nprocs=1 / absent (one process, or every device: a count the file does not hold); an argument without
    type=int or with no int default (None > 1 would raise), bound twice, parsed in another function, a call."""
    base = """
        import argparse
        import torch_xla.distributed.xla_multiprocessing as xmp

        def main():
            ap = argparse.ArgumentParser()
            ap.add_argument("--num-cores", OPTION)
            flags = ap.parse_args()
            SPAWN
        """
    good = "type=int, default=8"
    spawn = "xmp.spawn(_mp_fn, args=(flags,), nprocs=flags.num_cores)"
    sources = [
        base.replace("OPTION", good).replace("SPAWN", spawn.replace("flags.num_cores", "1")),
        base.replace("OPTION", good).replace("SPAWN", spawn.replace(", nprocs=flags.num_cores", "")),
        base.replace("OPTION", good).replace("SPAWN", spawn.replace("flags.num_cores", "None")),
        base.replace("OPTION", "default=8").replace("SPAWN", spawn),
        base.replace("OPTION", "type=int").replace("SPAWN", spawn),
        base.replace("OPTION", "type=int, default=None").replace("SPAWN", spawn),
        base.replace("OPTION", good).replace("SPAWN", "flags = ap.parse_args([])\n            " + spawn),
        base.replace("OPTION", good).replace("SPAWN", "run(flags)\n\n        def run(flags):\n            " + spawn),
        base.replace("OPTION", good).replace("SPAWN", spawn.replace("flags.num_cores", "xr.device_count()")),
        base.replace("OPTION", good).replace("SPAWN", spawn.replace("flags.num_cores", "flags.cores")),
    ]
    for source in sources:
        result = migrate(source, "NM310")
        assert "xmp.spawn(" not in result.text and "_mp_fn(int(" in result.text, source
        assert "SystemExit" not in result.text and "import sys" not in result.text, source
        assert "torchrun --nproc_per_node <NeuronCores>" in result.text, source


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
