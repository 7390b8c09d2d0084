"""NM318: torch_xla APIs with no automatic rewrite (FSDP, SPMD ...) get a precise todo; the code stays."""

import json

from codemods.xla._base import python_chunks
from migrate.filekinds import FileKind
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


NKI = """
    import torch
    import torch_xla.core.xla_model as xm
    {imports}


    {kernel}
    def double_kernel(x):
        return x


    device = xm.xla_device()
    x = torch.rand(128, 512).to(device)
    y = {launch}
    xm.mark_step()
    """


def _kept_for_nki(result) -> bool:
    return "device = xm.xla_device()" in result.text and "no rule ports (NKI kernels on the XLA device)" in result.text


def test_an_nki_kernel_launched_on_the_xla_device_keeps_the_file_on_torch_xla() -> None:
    """Every spelling of the kernel's jit (aliases, the newer nki package, torch_neuronx.nki_jit, a pinned device
    mode, jit(f) bound to a name, a grid launch): porting the device would leave the kernel called on tensors of a
    device it was not registered for."""
    spellings = [
        ("import neuronxcc.nki as nki", "@nki.jit", "double_kernel(x)"),
        ("from neuronxcc import nki", "@nki.jit()", "double_kernel[1](x)"),
        ("from neuronxcc.nki import jit", "@jit", "double_kernel(x)"),
        ("from neuronxcc.nki import jit as kernel", '@kernel(mode="torchxla")', "double_kernel(x)"),
        ("import nki", "@nki.jit", "double_kernel(x)"),
        ("import torch_neuronx", "@torch_neuronx.nki_jit", "double_kernel(x)"),
        ("from torch_neuronx.xla_impl.ops import nki_jit", "@nki_jit()", "double_kernel(x)"),
        ("import neuronxcc.nki as nki", "", 'nki.jit(double_kernel, mode="torchxla")(x)'),
        ("import neuronxcc.nki as nki", '@nki.jit(mode=MODE)', "double_kernel(x)"),  # not a literal: maybe the device
    ]
    for imports, kernel, launch in spellings:
        source = NKI.format(imports=imports, kernel=kernel, launch=launch)
        result = migrate(source, "NM3", family="NM3")
        assert _kept_for_nki(result), (imports, kernel, launch)
        assert "xm.mark_step()" in result.text
        assert [severity for _, severity in findings(result, "NM318")] == ["todo"]  # the file's one note
        assert "@torch_neuronx.nki_op(" in result.text  # the note says what to do by hand


def test_an_nki_kernel_off_the_xla_device_leaves_the_file_to_the_other_rules() -> None:
    """A mode that does not touch the device (the simulator, NumPy arrays, a profiling run), a kernel only ever
    run by nki.simulate_kernel / nki.baremetal, or a file with no XLA device: ported as any other file."""
    cases = [
        ("import neuronxcc.nki as nki", '@nki.jit(mode="simulation")', "double_kernel(x.cpu().numpy())"),
        ("from neuronxcc import nki", '@nki.jit(mode="baremetal")', "double_kernel(x.cpu().numpy())"),
        ("import nki", '@nki.jit(mode="benchmark")', "double_kernel(x.cpu().numpy())"),
        ("import neuronxcc.nki as nki", "@nki.jit", "nki.simulate_kernel(double_kernel, x.cpu().numpy())"),
        ("from neuronxcc import nki", "@nki.jit", "nki.baremetal(double_kernel)(x.cpu().numpy())"),
        ("import neuronxcc.nki as nki", "", 'nki.jit(double_kernel, mode="simulation")(x.cpu().numpy())'),
    ]
    for imports, kernel, launch in cases:
        result = migrate(NKI.format(imports=imports, kernel=kernel, launch=launch), "NM3", family="NM3")
        assert "xm." not in result.text, (imports, kernel, launch)
        assert "no rule ports" not in result.text
    no_device = """
        import torch_xla.core.xla_model as xm
        import neuronxcc.nki as nki


        @nki.jit
        def double_kernel(x):
            return x


        xm.master_print("kernel compiled")
        """
    result = migrate(no_device, "NM3", family="NM3")
    assert "no rule ports" not in result.text and "xm.master_print" not in result.text


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": cell.splitlines(keepends=True)} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def _cells(text: str) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(text)["cells"]]


KERNEL_CELL = "import neuronxcc.nki as nki\n\n@nki.jit\ndef double_kernel(x):\n    return x\n"
DEVICE_CELL = "import torch\nimport torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\n"


def test_a_notebook_that_launches_a_kernel_of_one_cell_on_the_device_of_another_stays_whole() -> None:
    """The cells run in one kernel: the device cell stays (with the note), and so does a later cell that launches
    the kernel and steps the graph, though it names neither torch_xla import nor kernel definition itself."""
    launch = "y = double_kernel(torch.rand(128, 512).to(device))\nxm.mark_step()\n"
    shell = "%%bash\nneuron-ls | head -n 3\n"  # a cell that is no Python: the scan goes on past it
    result = migrate(_notebook(shell, DEVICE_CELL, launch, KERNEL_CELL), "NM3", kind=FileKind.NOTEBOOK,
                     path="demo.ipynb", family="NM3")
    cells = _cells(result.text)
    assert "device = xm.xla_device()" in cells[1] and "no rule ports (NKI kernels on the XLA device)" in cells[1]
    assert cells[2] == launch
    assert [severity for _, severity in findings(result, "NM318")] == ["todo"]


def test_a_notebook_blocker_in_one_cell_keeps_the_device_of_another() -> None:
    zero = ("from torch_xla.distributed.zero_redundancy_optimizer import ZeroRedundancyOptimizer\n\n"
            "opt = ZeroRedundancyOptimizer([], torch.optim.AdamW, lr=1e-3)\n")
    result = migrate(_notebook(DEVICE_CELL, zero), "NM3", kind=FileKind.NOTEBOOK, path="demo.ipynb", family="NM3")
    cells = _cells(result.text)
    assert "device = xm.xla_device()" in cells[0] and "no rule ports (XLA ZeroRedundancyOptimizer)" in cells[0]
    # without the other cell, the device cell is ported
    alone = _cells(migrate(_notebook(DEVICE_CELL, "print(1)\n"), "NM3", kind=FileKind.NOTEBOOK, path="demo.ipynb",
                           family="NM3").text)
    assert "xm." not in alone[0] and "no rule ports" not in alone[0]


def test_python_chunks_skip_what_does_not_parse_and_go_on() -> None:
    text = ("import torch\n%%bash\nexport X=1\ncd /tmp && ls\ndef broken(:\n    pass\n"
            "@nki.jit\ndef kernel(x):\n    return x\n!ls\ny = kernel(1)\n")
    chunks = [chunk.code for chunk in python_chunks(text)]
    assert chunks[0].startswith("import torch\n")
    assert "def kernel(x):" in chunks[-1] and "y = kernel(1)" in chunks[-1]
    assert not any("broken" in chunk or "export" in chunk for chunk in chunks)
