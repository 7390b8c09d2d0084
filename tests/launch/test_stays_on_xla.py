"""The project fact ``launch.stays-on-xla``: which project scripts the torch_xla rules leave on torch_xla as a whole,
read from the text in the scan pass, so that a launcher running one keeps what it still needs."""

from __future__ import annotations

from codemods._lib.launch_targets import XSER_SAVE_ONLY, stays_on_xla, xla_blockers
from migrate.facts import ProjectFacts

HEAD = "import torch\nimport torch_xla.core.xla_model as xm\n"


def test_an_xla_fsdp_wrap_keeps_the_file_on_torch_xla() -> None:
    text = HEAD + ("from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP\n"
                   "model = FSDP(torch.nn.Linear(2, 2))\n")
    assert xla_blockers(text) == {"XLA FSDP"}


def test_a_plain_torch_xla_script_is_ported() -> None:
    text = HEAD + "device = xm.xla_device()\nxm.mark_step()\nxm.all_reduce(xm.REDUCE_SUM, torch.ones(1))\n"
    assert xla_blockers(text) is None


def test_libneuronxla_under_a_flag_is_a_debug_hook_but_under_a_version_test_a_blocker() -> None:
    hook = "    import libneuronxla\n    libneuronxla.register_hlo_snapshot_callback(cb)\n"
    flagged = HEAD + "if args.snapshot:\n" + hook
    versioned = HEAD + "if is_pt21_plus:\n" + hook
    assert xla_blockers(flagged) is None
    assert xla_blockers(versioned) == {"libneuronxla"}


def test_torch_xla_compile_of_a_function_is_ported_but_not_with_a_graph_name() -> None:
    assert xla_blockers("import torch_xla\nstep = torch_xla.compile(step)\n") is None
    assert xla_blockers("import torch_xla\nstep = torch_xla.compile(step, name='train')\n") == {"torch_xla.compile"}


def test_replica_groups_keep_the_file_but_the_world_group_does_not() -> None:
    world = HEAD + "xm.all_reduce(xm.REDUCE_SUM, t, groups=[list(range(xm.xrt_world_size()))])\n"
    pairs = HEAD + "xm.all_reduce(xm.REDUCE_SUM, t, groups=[[0, 1], [2, 3]])\n"
    assert xla_blockers(world) is None
    assert xla_blockers(pairs) == {"replica groups"}


def test_an_xser_save_blocks_only_where_the_project_reads_xser_checkpoints() -> None:
    text = HEAD + "import torch_xla.utils.serialization as xser\nxser.save(model.state_dict(), 'ckpt.pt')\n"
    assert xla_blockers(text) == {XSER_SAVE_ONLY}
    alone = ProjectFacts(frozenset({"train.py"}), {"launch.stays-on-xla": {"train.py": frozenset({XSER_SAVE_ONLY})}})
    read_back = ProjectFacts(alone.files | {"eval.py"}, {**alone.values, "xla-xser-load": {"eval.py": True}})
    assert stays_on_xla(alone, "train.py") == ()
    assert stays_on_xla(read_back, "train.py") == ("xser",)


def test_a_file_that_does_not_parse_records_nothing() -> None:
    assert xla_blockers("import torch_xla.distributed.fsdp as fsdp\ndef broken(:\n") is None
