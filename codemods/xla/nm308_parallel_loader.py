"""NM308 parallel-loader: ``pl.MpDeviceLoader`` / ``pl.ParallelLoader`` become the plain loader (map 3.E E22).

Before::

    train_device_loader = pl.MpDeviceLoader(train_loader, device)
    loader = pl.ParallelLoader(train_loader, [device]).per_device_loader(device)

After::

    # neuron-migrate: MpDeviceLoader moved every batch to the device: ...
    train_device_loader = train_loader
    loader = train_loader

Fix safety: needs review. The XLA loaders moved each batch to the device in a background thread; the plain
``DataLoader`` yields CPU tensors, so the loop must move them (``batch = batch.to(device)`` or
``{k: v.to(device) for k, v in batch.items()}``): the ``todo`` says so. On the CPU the script runs as is;
on a NeuronCore a forgotten move fails loudly (device mismatch), never silently. For several processes
the loader also needs a ``DistributedSampler``. ``ParallelLoader(...)`` kept as an object (without the
chained ``per_device_loader``) gets a ``todo``.
"""

from __future__ import annotations

import libcst as cst

from codemods.xla._common import Safety, XlaRule, arg, names

PL = "torch_xla.distributed.parallel_loader"
MP_LOADER = names((PL, ["MpDeviceLoader"]))
PARALLEL_LOADER = names((PL, ["ParallelLoader"]))
MOVE = (
    "MpDeviceLoader/ParallelLoader moved every batch to the device: move batches in the loop "
    "(batch = batch.to(device) or {k: v.to(device) for k, v in batch.items()}) and give the DataLoader a "
    "DistributedSampler when several processes train"
)


class ParallelLoader(XlaRule):
    """pl.MpDeviceLoader(loader, device) -> loader (batches must be moved in the loop: todo)."""

    id = "NM308"
    name = "parallel-loader"
    safety = Safety.NEEDS_REVIEW

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.matches(original.func, MP_LOADER):
            loader = arg(updated, 0, "loader")
            if loader is None:
                return updated
            self.todo(original, MOVE)
            return loader.value
        # pl.ParallelLoader(loader, [device]).per_device_loader(device)
        func = original.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "per_device_loader"
            and isinstance(func.value, cst.Call)
            and self.ctx.matches(func.value.func, PARALLEL_LOADER)
        ):
            inner = updated.func.value if isinstance(updated.func, cst.Attribute) else None
            loader = arg(inner, 0, "loader") if isinstance(inner, cst.Call) else None
            if loader is not None:
                self.todo(original, MOVE)
                return loader.value
        return updated


    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        value = original.value
        if isinstance(value, cst.Call) and self.ctx.matches(value.func, PARALLEL_LOADER):
            self.todo(original, "pl.ParallelLoader object: iterate the underlying DataLoader directly (per_device_loader(device) -> the loader) and move batches with .to(device)")
        return updated
