"""NM315 xla-autocast: ``torch.autocast("xla")`` / ``torch_xla.amp.autocast`` become ``torch.autocast`` on the accelerator.

What it does:

* ``torch.autocast("xla", ...)`` / ``torch.autocast(device_type="xla", ...)`` and
  ``torch_xla.amp.autocast(device, ...)`` become ``torch.autocast(device_type=<accelerator type>, ...)`` using
  ``codemods/_lib/device.py`` (``neuron`` on Trainium, ``cpu`` elsewhere; ``"neuron"`` with
  ``--device-style neuron``).
* A device held in a variable (``device = "xla"``) gives ``torch.autocast(device_type=device.type)`` (see
  docs/rules-xla.md, "Values followed through variables").
* ``torch.amp.GradScaler("xla", ...)`` / ``GradScaler(device="xla", ...)`` takes a device type too (a str, as
  autocast does): its device argument becomes the same accelerator type expression, in its place
  (``GradScaler(device.type)`` for a followed variable). ``torch.cuda.amp.GradScaler`` and other device types
  are left alone.

Why:

Autocast is keyed by the device type; on TorchNeuron that type is the accelerator's, ``neuron``.

Before::

    with torch_xla.amp.autocast(device, dtype=torch.bfloat16):
        loss = model(x)

After::

    with torch.autocast(device_type=(torch.accelerator.current_accelerator() or torch.device("cpu")).type, dtype=torch.bfloat16):
        loss = model(x)

Safety: safe. bf16 is supported on both; fp16 autocast on CPU/Neuron is unverified. Precision set through the
environment (``XLA_USE_BF16``) is NM316's.

References:

* docs/device-expression.md
* https://pytorch.org/docs/stable/amp.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib import device as dev
from codemods._lib.cst import Import
from codemods.xla import _values as values
from codemods.xla._base import Safety, XlaRule, arg, is_xla_string

TORCH_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast"})
XLA_AUTOCAST = frozenset({"torch_xla.amp.autocast", "torch_xla.amp.autocast_mode.autocast"})


class XlaAutocast(XlaRule):
    """torch.autocast("xla") / torch_xla.amp.autocast(device) -> torch.autocast(device_type=<accelerator>)."""

    id = "NM315"
    name = "xla-autocast"
    safety = Safety.SAFE

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.matches(original.func, values.SCALERS):
            return self._scaler(original, updated)
        is_xla = self.ctx.matches(original.func, XLA_AUTOCAST)
        if not is_xla and not self.ctx.matches(original.func, TORCH_AUTOCAST):
            return updated
        device_arg = arg(original, 0, "device_type") if not is_xla else arg(original, 0, "device")
        if device_arg is None:
            return updated
        value = values.plan(self).type_reads.get(id(device_arg.value))
        if value is not None and value.kind == values.DEVICE:
            device_source = value.name  # a variable that held "xla" and holds the device now (NM301)
        elif is_xla or is_xla_string(device_arg.value):
            device_source = dev.PORTABLE_DEVICE.join("()")
        else:
            return updated
        device_type = self.emit(dev.autocast_device_type(self.ctx.options.device_style, device_source))
        args = [cst.Arg(keyword=cst.Name("device_type"), value=device_type, equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
        for o, a in zip(original.args, updated.args):
            if o is not device_arg:
                args.append(a)
        for i, a in enumerate(args[:-1]):
            if a.comma is cst.MaybeSentinel.DEFAULT:
                args[i] = a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.fixed(original, "XLA autocast -> torch.autocast on the accelerator device type")
        return cst.Call(func=self.expr("torch.autocast", Import("torch")), args=args)

    def _scaler(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``torch.amp.GradScaler("xla", ...)``: its device argument is a device type, as autocast's is; it becomes
        the accelerator's type, in the same place (positional or ``device=``)."""
        device_arg = arg(original, 0, "device")
        if device_arg is None:
            return updated
        value = values.plan(self).type_reads.get(id(device_arg.value))
        if value is not None and value.kind == values.DEVICE:
            device_source = value.name  # a variable that held "xla" and holds the device now (NM301)
        elif is_xla_string(device_arg.value):
            device_source = dev.PORTABLE_DEVICE.join("()")
        else:
            return updated
        device_type = self.emit(dev.autocast_device_type(self.ctx.options.device_style, device_source))
        args = [a.with_changes(value=device_type) if o is device_arg else a for o, a in zip(original.args, updated.args)]
        self.fixed(original, "GradScaler(\"xla\") -> GradScaler on the accelerator device type (what autocast gets)")
        return updated.with_changes(args=args)
