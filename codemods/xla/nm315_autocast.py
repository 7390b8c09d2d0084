"""NM315 xla-autocast: ``torch.autocast("xla")`` / ``torch_xla.amp.autocast`` become ``torch.autocast`` on the accelerator.

What it does:

* ``torch.autocast("xla", ...)`` / ``torch.autocast(device_type="xla", ...)`` and
  ``torch_xla.amp.autocast(device, ...)`` become ``torch.autocast(device_type=<accelerator type>, ...)`` using
  ``codemods/_lib/device.py`` (``neuron`` on Trainium, ``cpu`` elsewhere; ``"neuron"`` with
  ``--device-style neuron``).
* A device held in a variable (``device = "xla"``) gives ``torch.autocast(device_type=device.type)`` (see
  docs/rules-xla.md, "Values followed through variables").
* **The dtype.** An XLA autocast without a dtype computes in bfloat16. ``torch.autocast("xla")`` takes
  ``torch.get_autocast_dtype("xla")``, bfloat16. ``torch_xla/amp/autocast_mode.py`` (``autocast.__init__``, read in
  torch_xla 2.5.0) sets ``dtype = torch.bfloat16`` when none is given and runs the ``xla`` autocast on XLA:TPU,
  float16 on XLA:GPU (the family runs on Neuron projects only, see ``_base.py``); with any other dtype outside
  XLA:GPU it warns "Disabling autocast" and turns itself off. ``torch.autocast`` on the accelerator takes that
  device's default instead: float16 on ``neuron`` (it follows the CUDA conventions), bfloat16 on ``cpu``. So
  ``dtype=torch.bfloat16`` is written when the call gave none; a given dtype is kept. ``torch_xla.amp.autocast`` with
  a dtype other than ``torch.bfloat16`` (or an expression not known to be it) stays, with a todo: that block did not
  compute in the dtype it names.
* Positional arguments after the device become keywords: the two signatures differ
  (``torch_xla.amp.autocast(device, enabled, dtype, cache_enabled)``,
  ``torch.autocast(device_type, dtype, enabled, cache_enabled)``). A call with ``*args`` / ``**kwargs`` stays, with
  a todo (the dtype they may carry is not known).
* ``torch.amp.GradScaler("xla", ...)`` / ``GradScaler(device="xla", ...)`` takes a device type too (a str, as
  autocast does): its device argument becomes the same accelerator type expression, in its place
  (``GradScaler(device.type)`` for a followed variable). ``torch.cuda.amp.GradScaler`` and other device types
  are left alone.

Why:

Autocast is keyed by the device type; on TorchNeuron that type is the accelerator's, ``neuron``.

Before::

    with torch_xla.amp.autocast(device):
        loss = model(x)

    @torch_xla.amp.autocast(device, False)
    def evaluate(x): ...

After::

    with torch.autocast(device_type=(torch.accelerator.current_accelerator() or torch.device("cpu")).type, dtype=torch.bfloat16):
        loss = model(x)

    @torch.autocast(device_type=(torch.accelerator.current_accelerator() or torch.device("cpu")).type, dtype=torch.bfloat16, enabled=False)
    def evaluate(x): ...

Safety: safe. bf16 is supported on both. Precision set through the environment (``XLA_USE_BF16``) is NM316's. A
program that changed the XLA default itself (``torch.set_autocast_dtype("xla", ...)``) is not looked at.

References:

* docs/device-expression.md
* https://pytorch.org/docs/stable/amp.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib import device as dev
from codemods._lib.cst import Import
from codemods.xla import _values as values
from codemods.xla._base import Safety, XlaRule, arg, has_star, is_xla_string

TORCH_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})
XLA_AUTOCAST = frozenset({"torch_xla.amp.autocast", "torch_xla.amp.autocast_mode.autocast"})
BF16 = frozenset({"torch.bfloat16"})
#: the parameters after the device, in order: torch.autocast(device_type, dtype, enabled, cache_enabled) and
#: torch_xla.amp.autocast(device, enabled, dtype, cache_enabled) (torch_xla/amp/autocast_mode.py)
TORCH_POSITIONS = ("dtype", "enabled", "cache_enabled")
XLA_POSITIONS = ("enabled", "dtype", "cache_enabled")
DEFAULT_NOTE = ("XLA autocast without a dtype computed in bfloat16; torch.autocast on the accelerator without one "
                "takes that device's default (float16 on neuron, as on cuda).")
NOT_BF16_NOTE = ("torch_xla.amp.autocast with a dtype other than torch.bfloat16 (or one not known here) is not "
                 "rewritten: outside XLA:GPU it supports only bfloat16 and turns itself off for any other dtype "
                 "(warning 'Disabling autocast'), so this block did not compute in that dtype. To keep float32, "
                 "remove the autocast; for bfloat16 compute, use torch.autocast(device_type="
                 "(torch.accelerator.current_accelerator() or torch.device(\"cpu\")).type, dtype=torch.bfloat16)")


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(keyword=cst.Name(name), value=value,
                   equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


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
        spelled = "torch_xla.amp.autocast" if is_xla else "torch.autocast(\"xla\")"
        if has_star(original):
            self.todo(original, f"{spelled} with *args/**kwargs: not rewritten (the dtype they may carry is not "
                                f"known here). {DEFAULT_NOTE} Write torch.autocast(device_type=<accelerator type>, "
                                f"dtype=torch.bfloat16, ...) with the arguments spelled out")
            return updated
        # positional arguments after the device become keywords (torch_xla's order is not torch's)
        positions = XLA_POSITIONS if is_xla else TORCH_POSITIONS
        keywords: list[tuple[str, cst.Arg]] = []
        positional = 0  # positional arguments after the device
        for o, a in zip(original.args, updated.args):
            if o is device_arg:
                continue
            if o.keyword is None:
                if positional >= len(positions):
                    return updated  # more positional arguments than the signature has: the call fails as it is
                keywords.append((positions[positional], a))
                positional += 1
            else:
                keywords.append((o.keyword.value, a))
        given = {name: a for name, a in keywords}
        dtype = given.get("dtype")
        if is_xla and dtype is not None and not self.ctx.matches(dtype.value, BF16):
            self.todo(original, NOT_BF16_NOTE)
            return updated
        device_type = self.emit(dev.autocast_device_type(self.ctx.options.device_style, device_source))
        args = [_keyword("device_type", device_type)]
        if dtype is None:  # the XLA default, which the accelerator's own default is not (see the module docstring)
            args.append(_keyword("dtype", self.expr("torch.bfloat16", Import("torch"))))
        args.extend(_keyword(name, a.value) if a.keyword is None else a for name, a in keywords)
        for i, a in enumerate(args[:-1]):
            args[i] = a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        added = "; dtype=torch.bfloat16 written: the XLA autocast default, not the accelerator's" if dtype is None else ""
        self.fixed(original, f"XLA autocast -> torch.autocast on the accelerator device type{added}")
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
