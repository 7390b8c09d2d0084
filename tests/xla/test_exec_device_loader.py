"""Execution proof for NM308's added class: a torch_xla script whose device loaders are passed to a
``train_loop_fn(loader, epoch)`` and iterated with the batch kept in one name (a dict batch from a collate_fn)
is migrated with the NM3 rules and then RUN on CPU against the installed torch and transformers. Over two
epochs every batch must arrive with the values the plain DataLoader yields, every tensor on the script's
device, and every container in its own type (tuple, namedtuple, list, dict, OrderedDict, BatchEncoding);
``len()`` of the loader must be the DataLoader's."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
import textwrap

import torch

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

#: shared by the script and the test: what a batch looks like, tensors by device type and values
DESCRIBE = textwrap.dedent(
    '''
    def describe(value):
        if isinstance(value, torch.Tensor):
            return {"tensor": value.tolist(), "device": value.device.type}
        if isinstance(value, (tuple, list)):
            return {"type": type(value).__name__, "items": [describe(item) for item in value]}
        if hasattr(value, "items"):
            return {"type": type(value).__name__, "items": {key: describe(item) for key, item in value.items()}}
        return {"type": type(value).__name__, "value": value}
    '''
)

DATA = textwrap.dedent(
    '''
    import collections

    from torch.utils.data import DataLoader, Dataset, TensorDataset
    from torch.utils.data import default_collate
    from transformers import BatchEncoding

    Pair = collections.namedtuple("Pair", ["features", "label"])


    class TokenizedDataset(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, index):
            return {"input_ids": torch.arange(4) + index,
                    "pair": Pair(torch.tensor([index, -index]), torch.tensor(index % 2)),
                    "masks": [torch.ones(2) * index, torch.zeros(1)], "name": f"example-{index}"}


    def collate(examples):
        batch = default_collate(examples)
        batch["meta"] = collections.OrderedDict(position=torch.arange(len(examples)), source="train")
        return BatchEncoding(batch)


    def loaders():
        features = TensorDataset(torch.arange(20.0).reshape(10, 2), torch.arange(10))
        return DataLoader(features, batch_size=4), DataLoader(TokenizedDataset(), batch_size=4, collate_fn=collate)
    '''
)

LEGACY = (
    "import json\nimport sys\n\nimport torch\nimport torch_xla.core.xla_model as xm\n"
    "import torch_xla.distributed.parallel_loader as pl\n"
    + DATA + DESCRIBE
    + textwrap.dedent(
        '''

        def train_loop_fn(loader, epoch, seen):
            for step, (data, target) in enumerate(loader):
                seen.append(describe((data, target)))
            return len(loader)


        def main(out):
            device = xm.xla_device()
            feature_loader, token_loader = loaders()
            train_device_loader = pl.MpDeviceLoader(feature_loader, device)
            token_device_loader = pl.MpDeviceLoader(token_loader, device)
            lengths = [len(train_device_loader), len(token_device_loader)]
            result = {"device": torch.device(device).type, "lengths": lengths, "epochs": []}
            for epoch in range(2):
                seen = []
                train_loop_fn(train_device_loader, epoch, seen)
                for step, batch in enumerate(token_device_loader):
                    seen.append(describe(batch))
                result["epochs"].append(seen)
            with open(out, "w") as f:
                json.dump(result, f)


        if __name__ == "__main__":
            main(sys.argv[1])
        '''
    )
)


def _device_types(described) -> set[str]:
    if isinstance(described, dict):
        found = {described["device"]} if "device" in described else set()
        items = described.get("items", [])
        for value in items.values() if isinstance(items, dict) else items:
            found |= _device_types(value)
        return found
    return set()


def test_migrated_loaders_move_every_batch_and_keep_its_structure(tmp_path) -> None:
    migrated = apply_rules(LEGACY, FileKind.PYTHON, select=["NM3"], path="train.py")
    assert "torch_xla" not in migrated.text
    assert migrated.text.count("class _DeviceLoader") == 1
    assert "train_device_loader = _DeviceLoader(feature_loader, device)" in migrated.text
    assert "token_device_loader = _DeviceLoader(token_loader, device)" in migrated.text
    assert {f.severity.value for f in migrated.findings if f.rule == "NM308"} == {"fixed"}
    script = tmp_path / "train.py"
    script.write_text(migrated.text)
    out = tmp_path / "result.json"
    run = subprocess.run([sys.executable, str(script), str(out)], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())

    namespace: dict = {"torch": torch}
    exec(DATA + DESCRIBE, namespace)  # the same data, read through the plain DataLoaders
    feature_loader, token_loader = namespace["loaders"]()
    describe = namespace["describe"]
    expected = [describe((data, target)) for data, target in feature_loader]
    expected += [describe(batch) for batch in token_loader]

    assert result["lengths"] == [len(feature_loader), len(token_loader)] == [3, 2]
    assert len(result["epochs"]) == 2
    for seen in result["epochs"]:  # the loader is iterated again each epoch, with the same batches
        assert _without_devices(seen) == _without_devices(json.loads(json.dumps(expected)))
        assert set().union(*(_device_types(batch) for batch in seen)) == {result["device"]}
    token_batch = result["epochs"][0][3]
    assert token_batch["type"] == "BatchEncoding"
    assert token_batch["items"]["pair"]["type"] == "Pair"
    assert token_batch["items"]["masks"]["type"] == "list"
    assert token_batch["items"]["meta"]["type"] == "OrderedDict"
    assert token_batch["items"]["meta"]["items"]["source"] == {"type": "str", "value": "train"}
    assert result["epochs"][0][0]["type"] == "tuple"


def test_the_added_class_moves_every_tensor_of_a_nested_batch(tmp_path) -> None:
    """On a CPU machine the device is the CPU, where .to() is a no-op: the class of the migrated script is run
    again with torch's meta device, so a tensor it did not move would show."""
    migrated = apply_rules(LEGACY, FileKind.PYTHON, select=["NM3"], path="train.py")
    namespace: dict = {"__name__": "migrated"}
    exec(compile(migrated.text, str(tmp_path / "train.py"), "exec"), namespace)
    feature_loader, token_loader = namespace["loaders"]()
    meta = torch.device("meta")
    device_loader = namespace["_DeviceLoader"](token_loader, meta)
    assert len(device_loader) == len(token_loader)
    for epoch in range(2):
        batches = list(device_loader)
        assert len(batches) == 2
        for batch in batches:
            assert type(batch).__name__ == "BatchEncoding" and type(batch["pair"]).__name__ == "Pair"
            assert _tensor_devices(batch) == {"meta"}
            assert batch["name"][0].startswith("example-")
    assert _tensor_devices(next(iter(token_loader))) == {"cpu"}  # the DataLoader itself is untouched


def _tensor_devices(value) -> set[str]:
    if isinstance(value, torch.Tensor):
        return {value.device.type}
    if isinstance(value, (tuple, list)):
        return set().union(*(_tensor_devices(item) for item in value))
    if hasattr(value, "items"):
        return set().union(*(_tensor_devices(item) for item in value.values()))
    return set()


def _without_devices(described):
    if isinstance(described, dict):
        return {key: _without_devices(value) for key, value in described.items() if key != "device"}
    if isinstance(described, list):
        return [_without_devices(value) for value in described]
    return described


OBJECT_BATCHES = textwrap.dedent(
    '''
    import dataclasses
    import sys

    import torch
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl
    from torch.utils.data import DataLoader, Dataset


    @dataclasses.dataclass
    class Batch:
        images: torch.Tensor
        labels: torch.Tensor
        extras: dict = dataclasses.field(default_factory=dict)


    @dataclasses.dataclass(frozen=True)
    class Frozen:
        mask: torch.Tensor


    class Plain:
        def __init__(self, weights, parent=None):
            self.weights, self.parent, self.note = weights, parent, "plain"


    class Images(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, index):
            return torch.full((3,), float(index)), torch.tensor(index % 2)


    def collate(examples):
        images = torch.stack([image for image, _ in examples])
        labels = torch.stack([label for _, label in examples])
        plain = Plain(labels.float())
        plain.parent = plain  # a cycle: MpDeviceLoader's mover ended it, so must the migrated one
        return Batch(images, labels, extras={"frozen": Frozen(images > 2), "plain": plain, "same": labels})


    def make_loader():
        return DataLoader(Images(), batch_size=4, collate_fn=collate)


    def train(loader):
        total = 0.0
        for step, batch in enumerate(loader):
            total += float(batch.images.sum())
        return total


    def main():
        device = xm.xla_device()
        train_loader = pl.MpDeviceLoader(make_loader(), device)
        print(train(train_loader))


    if __name__ == "__main__":
        main()
    '''
)


def test_the_added_class_moves_the_tensors_of_object_batches(tmp_path) -> None:
    """A collate_fn that returns a @dataclass (or any object with a __dict__): torch_xla's MpDeviceLoader moved
    its tensors (send_cpu_data_to_device copies such an object and moves each attribute), so the migrated loader
    must too. Run with torch's meta device, where a tensor left on the CPU shows."""
    migrated = apply_rules(OBJECT_BATCHES, FileKind.PYTHON, select=["NM3"], path="train.py")
    assert "torch_xla" not in migrated.text
    assert "train_loader = _DeviceLoader(make_loader(), device)" in migrated.text
    assert {f.severity.value for f in migrated.findings if f.rule == "NM308"} == {"fixed"}
    script = tmp_path / "train.py"
    script.write_text(migrated.text)
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert float(run.stdout.strip()) == sum(range(8)) * 3.0

    namespace = runpy.run_path(str(script), run_name="migrated")  # a module in sys.modules: @dataclass reads it
    loader = namespace["make_loader"]()
    meta = torch.device("meta")
    device_loader = namespace["_DeviceLoader"](loader, meta)
    for epoch in range(2):
        batches = list(device_loader)
        assert len(batches) == len(device_loader) == 2
        for batch in batches:
            assert type(batch) is namespace["Batch"]
            assert batch.images.device == meta and batch.labels.device == meta
            frozen, plain = batch.extras["frozen"], batch.extras["plain"]
            assert type(frozen) is namespace["Frozen"] and frozen.mask.device == meta
            assert type(plain) is namespace["Plain"] and plain.weights.device == meta and plain.note == "plain"
            assert plain.parent is plain  # the cycle is kept, on the moved copy
            assert batch.extras["same"] is batch.labels  # a tensor the batch holds twice is moved once
    original = next(iter(loader))
    assert original.images.device.type == "cpu" and original.extras["plain"].weights.device.type == "cpu"
    model = torch.nn.Linear(3, 1).to(meta)
    assert model(batches[0].images).device == meta  # what the red team's D(batch.images) raised on
