"""NM308: a device loader used beyond loops that unpack the batch becomes ``_DeviceLoader(loader, device)``, a class
added once to the module; uses a plain loader cannot carry keep the line, with a todo."""

import json
import textwrap

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

HEADER = """
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
"""


def script(body: str) -> str:
    """The torch_xla imports, then ``body``."""
    return HEADER + textwrap.dedent(body)


def test_a_loader_passed_to_a_loop_function_becomes_the_added_class() -> None:
    result = migrate(
        script("""

        def train_loop_fn(loader, epoch):
            for step, batch in enumerate(loader):
                print(epoch, step, len(loader), batch["input_ids"].shape)


        def main(train_loader, eval_loader, device):
            train_device_loader = pl.MpDeviceLoader(train_loader, device)
            for epoch in range(2):
                train_loop_fn(train_device_loader, epoch)
                train_loop_fn(pl.MpDeviceLoader(eval_loader, device, device_prefetch_size=2), epoch)
        """),
        "NM308",
    )
    text = result.text
    assert text.count("class _DeviceLoader:") == 1
    assert "    train_device_loader = _DeviceLoader(train_loader, device)\n" in text
    assert "        train_loop_fn(_DeviceLoader(eval_loader, device), epoch)\n" in text
    assert "parallel_loader" not in text
    assert "import copy\n" in text and "import collections.abc\n" in text
    # after the imports, before the first definition
    assert text.index("class _DeviceLoader") < text.index("def train_loop_fn")
    assert text.index("import copy") < text.index("class _DeviceLoader")
    assert findings(result, "NM308") == {(12, "fixed"), (15, "fixed")}


def test_today_unpacked_loops_still_get_the_plain_loader() -> None:
    result = migrate(
        script("""
        device = xm.xla_device()
        for x, y in pl.MpDeviceLoader(loader, device):
            step(x, y)
        """),
        "NM308",
    )
    assert "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n" in result.text
    assert "_DeviceLoader" not in result.text


def test_an_isinstance_test_of_the_xla_class_keeps_every_loader() -> None:
    source = script("""

    def train_loop_fn(loader):
        if isinstance(loader, pl.MpDeviceLoader):
            print("xla")
        for batch in loader:
            print(batch)


    train_loop_fn(pl.MpDeviceLoader(train_loader, device))
    """)
    result = migrate(source, "NM308")
    assert "train_loop_fn(pl.MpDeviceLoader(train_loader, device))" in result.text
    assert "_DeviceLoader" not in result.text
    assert "which a port would change" in result.text
    assert findings(result, "NM308") == {(13, "todo")}


def test_a_read_of_the_xla_loader_attributes_in_the_callee_keeps_that_loader() -> None:
    result = migrate(
        script("""

        def train_loop_fn(model, loader):
            print(len(loader._loader.dataset))
            for batch in loader:
                model(batch)


        def evaluate(loader):
            return [batch for batch in loader]


        def main(model, train_loader, eval_loader, device):
            train_device_loader = pl.MpDeviceLoader(train_loader, device)
            train_loop_fn(model, loader=train_device_loader)
            evaluate(pl.MpDeviceLoader(eval_loader, device))
        """),
        "NM308",
    )
    assert "    train_device_loader = pl.MpDeviceLoader(train_loader, device)\n" in result.text
    assert "`loader._loader` reads an attribute of the XLA loader" in result.text
    assert "    evaluate(_DeviceLoader(eval_loader, device))\n" in result.text
    assert findings(result, "NM308") == {(17, "todo"), (19, "fixed")}


def test_an_attribute_read_on_the_loader_variable_keeps_it() -> None:
    result = migrate(
        script("""
        device_loader = pl.MpDeviceLoader(train_loader, device)
        print(device_loader._device)
        for batch in device_loader:
            print(batch)
        """),
        "NM308",
    )
    assert "device_loader = pl.MpDeviceLoader(train_loader, device)\n" in result.text
    assert "`device_loader._device` reads an attribute" in result.text


def test_a_dataloader_attribute_read_before_the_loader_replaced_it_does_not_count() -> None:
    result = migrate(
        script("""
        def train(loader, device):
            print(len(loader.dataset))
            loader = pl.MpDeviceLoader(loader, device)
            for batch in loader:
                print(batch)
        """),
        "NM308",
    )
    assert "    loader = _DeviceLoader(loader, device)\n" in result.text


def test_a_keyword_with_no_plain_equivalent_keeps_the_loader() -> None:
    result = migrate(
        script("""
        for batch in pl.MpDeviceLoader(train_loader, device, batchdim=1):
            print(batch)
        """),
        "NM308",
    )
    assert "pl.MpDeviceLoader(train_loader, device, batchdim=1)" in result.text
    assert "`batchdim=` has no plain-loader equivalent" in result.text


def test_the_added_class_takes_a_free_name_and_the_device_as_written() -> None:
    result = migrate(
        script("""

        class _DeviceLoader:
            pass


        for batch in pl.MpDeviceLoader(train_loader, args.device):
            print(batch)
        """),
        "NM308",
    )
    assert "class _DeviceLoader2:" in result.text
    assert "for batch in _DeviceLoader2(train_loader, args.device):" in result.text


def test_a_module_that_binds_copy_otherwise_keeps_its_loader() -> None:
    result = migrate(
        script("""
        from copy import copy

        for batch in pl.MpDeviceLoader(train_loader, device):
            print(copy(batch))
        """),
        "NM308",
    )
    assert "pl.MpDeviceLoader(train_loader, device)" in result.text
    assert "binds `copy` to something else" in result.text


def test_a_parallel_loader_made_each_epoch_and_passed_on_becomes_the_loader_and_the_class() -> None:
    result = migrate(
        script("""
        for epoch in range(2):
            para_loader = pl.ParallelLoader(train_loader, [device])
            train_loop_fn(para_loader.per_device_loader(device))
        """),
        "NM308",
    )
    assert "    para_loader = train_loader\n    train_loop_fn(_DeviceLoader(para_loader, device))\n" in result.text
    assert "parallel_loader" not in result.text


def test_a_parallel_loader_over_several_devices_is_kept() -> None:
    result = migrate(
        script("""
        para_loader = pl.ParallelLoader(train_loader, devices)
        train_loop_fn(para_loader.per_device_loader(device))
        """),
        "NM308",
    )
    assert "para_loader = pl.ParallelLoader(train_loader, devices)\n" in result.text
    assert "train_loop_fn(para_loader.per_device_loader(device))" in result.text
    assert "_DeviceLoader" not in result.text


def test_reads_in_functions_defined_above_the_assignment_count() -> None:
    result = migrate(
        script("""

        def train():
            def log():
                print(epoch_loader._loader.batch_size)
            epoch_loader = pl.MpDeviceLoader(train_loader, device)
            for batch in epoch_loader:
                log()


        def evaluate():
            print(len(eval_loader._loader))


        if __name__ == "__main__":
            eval_loader = pl.MpDeviceLoader(loader, device)
            evaluate()
        """),
        "NM308",
    )
    assert "epoch_loader = pl.MpDeviceLoader(train_loader, device)" in result.text
    assert "eval_loader = pl.MpDeviceLoader(loader, device)" in result.text
    assert "_DeviceLoader" not in result.text


def test_in_a_notebook_the_class_goes_to_the_cell_and_earlier_imports_count() -> None:
    cells = [
        "import torch\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.parallel_loader as pl\n",
        "def train_loop_fn(loader):\n    for batch in loader:\n        print(batch)\n",
        "train_loop_fn(pl.MpDeviceLoader(train_loader, device))\n",
    ]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": cell.splitlines(True)} for cell in cells],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result = migrate(json.dumps(notebook, indent=1), "NM308", kind=FileKind.NOTEBOOK, path="nb.ipynb")
    sources = ["".join(cell["source"]) for cell in json.loads(result.text)["cells"]]
    assert "class _DeviceLoader" in sources[2] and "train_loop_fn(_DeviceLoader(train_loader, device))" in sources[2]
    assert "import torch\n" not in sources[2]  # the first cell imports it: the kernel has it
    assert "import copy\n" in sources[2]
