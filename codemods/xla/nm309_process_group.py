"""NM309 xla-process-group: ``init_process_group("xla")`` gets the native backend (map 3.E E1, E24; trap T36).

Rewrites ``dist.init_process_group("xla", init_method="xla://")`` (also ``backend="xla"`` and
``init_method="pjrt://"``) to the backend expression of ``codemods/_lib/device.py``
(``dist.get_default_backend_for_device(...)`` in portable style: ``neuron`` on Trainium, ``gloo`` on
CPU; ``"neuron"`` with ``--device-style neuron``) and drops the XLA ``init_method`` (torchrun's
``env://`` is the default). Removes the side-effect imports that registered the XLA backend:
``import torch_xla.distributed.xla_backend`` and ``import torch_xla.experimental.pjrt_backend``.

Before::

    import torch.distributed as dist
    import torch_xla.distributed.xla_backend
    dist.init_process_group("xla", init_method="xla://")

After::

    import torch
    import torch.distributed as dist
    dist.init_process_group(dist.get_default_backend_for_device(torch.accelerator.current_accelerator() or torch.device("cpu")))

Fix safety: safe. Launch with ``torchrun`` (see NM310 for ``xmp.spawn``).
"""

from __future__ import annotations

import libcst as cst

from codemods._lib import device as dev
from codemods.xla._common import Safety, XlaRule, arg, is_xla_string

INIT = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})
SIDE_EFFECT = ("torch_xla.distributed.xla_backend", "torch_xla.experimental.pjrt_backend")
XLA_METHODS = ("xla://", "pjrt://")


class XlaProcessGroup(XlaRule):
    """init_process_group("xla") -> the native backend; drop the xla_backend side-effect import."""

    id = "NM309"
    name = "xla-process-group"
    safety = Safety.SAFE

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.ctx.matches(original.func, INIT):
            return updated
        backend = arg(original, 0, "backend")
        if backend is None or not is_xla_string(backend.value):
            return updated
        new_backend = self.emit(dev.process_group_backend(self.ctx.options.device_style, dev.PORTABLE_DEVICE))
        args = []
        for o, a in zip(original.args, updated.args):
            if o is backend:
                args.append(a.with_changes(value=new_backend))
            elif o.keyword is not None and o.keyword.value == "init_method" and isinstance(o.value, cst.SimpleString) and any(
                str(o.value.evaluated_value).startswith(m) for m in XLA_METHODS
            ):
                continue
            else:
                args.append(a)
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.fixed(original, 'init_process_group("xla") -> native backend (neuron on Trainium, gloo on CPU)')
        return updated.with_changes(args=args)

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        keep = []
        for alias in updated.names:
            full = cst.Module(body=[]).code_for_node(alias.name)
            if full in SIDE_EFFECT and alias.asname is None:
                self.fixed(original, f"side-effect import {full} removed (the neuron backend registers itself)")
                continue
            keep.append(alias)
        if len(keep) == len(updated.names):
            return updated
        if not keep:
            return cst.RemoveFromParent()
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=keep)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        # from torch_xla.distributed import xla_backend  (side effect only)
        if original.module is None or original.relative or isinstance(original.names, cst.ImportStar):
            return updated
        module = cst.Module(body=[]).code_for_node(original.module)
        keep = [a for a in updated.names if f"{module}.{cst.Module(body=[]).code_for_node(a.name)}" not in SIDE_EFFECT]
        if len(keep) == len(updated.names):
            return updated
        self.fixed(original, "side-effect import of the XLA process-group backend removed")
        if not keep:
            return cst.RemoveFromParent()
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=keep)
