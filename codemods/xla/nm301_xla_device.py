"""NM301 xla-device: torch_xla devices become the accelerator device expression.

What it does:

* ``xm.xla_device()``, ``torch_xla.device()``, ``torch.device("xla")`` and literal ``"xla"`` devices
  (``.to("xla")``, ``device="xla"``, ``device = "xla"``) become the device expression of
  ``codemods/_lib/device.py``: ``torch.accelerator.current_accelerator() or torch.device("cpu")`` in the default
  portable style, ``torch.device("neuron")`` with ``--device-style neuron``.
* A variable holding ``"xla"`` is rewritten only when every read of it takes a device (the reads are followed
  through the variable, see docs/rules-xla.md, "Values followed through variables"); any other ``"xla"`` literal
  in torch_xla code gets a ``todo``.
* ``xm.xla_device_hw(d)`` and ``xr.device_type()`` become the device type in upper case (``NEURON`` on Trainium as
  before, ``CPU`` on a CPU).
* A comparison with ``"xla"`` (``cfg["device"] == "xla"``) gets a ``todo``; where the value compared is read from
  data (``cfg["device"]``, ``cfg.device``, ``cfg.get("device")``), the note names it and, when the name holds a
  config file's contents (``yaml.safe_load(open(...))``, ``json.load``, ``OmegaConf.load`` in the file), the load:
  that file's ``device: xla`` must change with the check.
* ``xm.xla_device(n)`` / ``torch.device("xla", n)`` picked core ``n`` of a multi-core process: the index is dropped
  with a ``todo``. ``xm.get_xla_supported_devices()`` becomes a ``todo`` (one device per process now).
* Device strings built at run time (``f"xla:{i}"``) are not recognised.

Why:

TorchNeuron registers ``neuron`` as the PyTorch accelerator, so ``torch.accelerator.current_accelerator()`` is the
NeuronCore of the process on Trainium, and on a laptop the same script runs on the CPU. TorchNeuron runs one
process per NeuronCore, so a device index inside a process has no meaning any more.

Before::

    import torch_xla.core.xla_model as xm
    device = xm.xla_device()
    batch = batch.to("xla")

After::

    import torch
    device = torch.accelerator.current_accelerator() or torch.device("cpu")
    batch = batch.to(torch.accelerator.current_accelerator() or torch.device("cpu"))

Safety: safe. The device is the same NeuronCore; what a reviewer checks is only the ``todo`` left for a device
index or a list of devices.

References:

* docs/device-expression.md
* https://pytorch.org/docs/stable/accelerator.html
* https://pytorch.org/xla/master/learn/api-guide.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib import device as dev
from codemods._lib.cst import Import, source_of
from codemods.xla import _values as values
from codemods.xla._base import XM, XR, Safety, XlaRule, arg, is_xla_string, names
from migrate import cstwalk

DEVICE_CALLS = names((XM, ["xla_device"]), ("torch_xla", ["device"]))
TORCH_DEVICE = frozenset({"torch.device"})
#: calls that read a config file: a name bound to their result holds the file's values
CONFIG_LOADS = frozenset({"yaml.safe_load", "yaml.load", "yaml.full_load", "json.load", "json.loads",
                          "omegaconf.OmegaConf.load", "toml.load", "tomllib.load"})
SUPPORTED = names((XM, ["get_xla_supported_devices"]))
HARDWARE = names((XM, ["xla_device_hw"]))
RUNTIME_TYPE = names((XR, ["device_type"]))


class XlaDevice(XlaRule):
    """Replace torch_xla devices (xm.xla_device(), "xla") with the accelerator device expression."""

    id = "NM301"
    name = "xla-device"
    safety = Safety.SAFE

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._noted_literals: set[tuple[int, str]] = set()

    def _device(self) -> cst.BaseExpression:
        return self.emit(dev.device(self.ctx.options.device_style))

    def _is_device_call(self, call: cst.CSTNode) -> bool:
        if not isinstance(call, cst.Call):
            return False
        if self.ctx.matches(call.func, DEVICE_CALLS):
            return True
        if self.ctx.matches(call.func, TORCH_DEVICE):
            first = arg(call, 0, "type")
            return first is not None and is_xla_string(first.value)
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.matches(original.func, HARDWARE) and len(updated.args) == 1 and not updated.args[0].star:
            # "NEURON" on Trainium as before, "CPU" on a CPU machine as torch_xla's CPU device said
            self.fixed(original, "xm.xla_device_hw(device) -> torch.device(device).type.upper()")
            device = source_of(updated.args[0].value)
            return self.expr(f"torch.device({device}).type.upper()", Import("torch"))
        if self.ctx.matches(original.func, RUNTIME_TYPE) and not original.args:
            self.fixed(original, "xr.device_type() -> the accelerator's type, upper case (NEURON on Trainium)")
            return self.expr(f"({dev.device(self.ctx.options.device_style).source}).type.upper()", Import("torch"))
        if self.ctx.matches(original.func, SUPPORTED):
            self.todo(original, "xm.get_xla_supported_devices(): TorchNeuron runs one process per NeuronCore; use the process's device (torch.accelerator.current_accelerator()) and launch one process per core with torchrun")
            return updated
        if self._is_device_call(original):
            index = arg(original, 0, "n") if self.ctx.matches(original.func, DEVICE_CALLS) else arg(original, 1, "index")
            has_index = index is not None
            device_type = arg(original, 0, "type") if self.ctx.matches(original.func, TORCH_DEVICE) else None
            if device_type is not None and isinstance(device_type.value, cst.SimpleString):
                value = device_type.value.evaluated_value
                if isinstance(value, str) and ":" in value:  # torch.device("xla:1")
                    has_index = True
            if has_index:
                self.todo(original, "the xla device index picked one core of a multi-core process; TorchNeuron uses one NeuronCore per process (torchrun sets LOCAL_RANK), so the index was dropped")
            else:
                self.fixed(original, "xla device -> accelerator device")
            return self._device()
        # literal "xla" passed as a device: .to("xla"), device="xla"
        changed = False
        new_args = []
        is_to = isinstance(original.func, cst.Attribute) and original.func.attr.value == "to"
        if self.ctx.matches(original.func, values.SCALERS):
            return updated  # GradScaler(device="xla") takes a device type: NM315 writes it
        for i, (o, a) in enumerate(zip(original.args, updated.args)):
            if is_xla_string(o.value) and ((is_to and i == 0 and o.keyword is None) or (o.keyword is not None and o.keyword.value == "device")):
                new_args.append(a.with_changes(value=self._device()))
                changed = True
            else:
                new_args.append(a)
        if changed:
            self.fixed(original, '"xla" device -> accelerator device')
            return updated.with_changes(args=new_args)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        # xm.xla_device().type -> (device expression).type
        if isinstance(updated, cst.Attribute) and self._is_device_call(original.value) and isinstance(updated.value, cst.BooleanOperation):
            return updated.with_changes(value=updated.value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        # device = "xla": rewritten only when every read of the name takes the new value (codemods/xla/_values.py)
        if not is_xla_string(original.value) or len(original.targets) != 1:
            return updated
        value = values.plan(self).values.get(id(original))
        if value is None:
            return updated
        if value.kind == values.DEVICE:
            self.fixed(original, '"xla" device -> accelerator device')
            return updated.with_changes(value=self._device())
        device = dev.device(self.ctx.options.device_style).source
        if value.blocker is not None:
            self.todo(original, f'{value.name} = "xla" also reaches `{source_of(value.blocker).strip()}`, which may not accept a torch.device: set {value.name} to {device} and check that use (init_process_group wants dist.get_default_backend_for_device({value.name}), autocast {value.name}.type)')
        elif value.rebound and any(word in value.name.lower() for word in values.DEVICE_WORDS):
            self.todo(original, f'{value.name} is assigned more than once, so its uses were not followed: "xla" is not a TorchNeuron device, use {device} and check every use of {value.name}')
        return updated

    def leave_If(self, original: cst.If, updated: cst.If):
        return values.leave_if(self, original, updated, values.DEVICE)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        # an "xla" literal no rule rewrites (an option default, a choice, a dict key, a conditional value)
        what = values.plan(self).unhandled.get(id(node))
        statement = id(self.ctx.statement_stack[-1]) if self.ctx.statement_stack else 0
        if what is None or (statement, what) in self._noted_literals:
            return
        self._noted_literals.add((statement, what))  # one note per statement: `default="xla", choices=["xla", ...]`
        device = dev.device(self.ctx.options.device_style).source
        if what == "option":
            self.todo(node, f'option value "xla": TorchNeuron has no xla device or backend; default to None and resolve it in the code: device {device}, backend dist.get_default_backend_for_device(device)')
        else:
            self.todo(node, f'"xla" names the torch_xla device/backend, which TorchNeuron does not have: use the device {device} (type "neuron" on Trainium, "cpu" elsewhere) or the backend dist.get_default_backend_for_device(device)')

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # device.type == "xla": the device type is "neuron" (or "cpu") now
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        if not any(is_xla_string(o) for o in operands):
            return
        plan = values.plan(self)
        if id(node) in plan.decided or any(id(o) in plan.reads for o in operands):
            return  # a followed variable: decided with its if, or left holding "xla"
        message = 'comparison with "xla": the migrated device type is "neuron" on Trainium (and "cpu" elsewhere); update this check'
        source = next((o for o in operands if not is_xla_string(o)), None)
        origin = self._read_from(source) if source is not None else None
        if origin is not None:
            message += origin
        self.todo(node, message)

    def _read_from(self, operand: cst.BaseExpression) -> str | None:
        """Where a compared value that is not the file's own comes from: ``cfg["device"]`` / ``cfg.device`` /
        ``cfg.get("device")`` of a name bound to a config file's contents (``yaml.safe_load(open(...))``,
        ``json.load``, ``OmegaConf.load``) or of other data the file reads (the command line, a dict)."""
        base: cst.BaseExpression | None = None
        if isinstance(operand, cst.Subscript):
            base = operand.value
        elif isinstance(operand, cst.Attribute) and operand.attr.value != "type" and not self.ctx.qualnames(operand):
            base = operand.value
        elif isinstance(operand, cst.Call) and isinstance(operand.func, cst.Attribute) and operand.func.attr.value == "get":
            base = operand.func.value
        if not isinstance(base, cst.Name) or self.ctx.qualnames(base):
            return None
        read = source_of(operand).strip()
        module = self.module
        loaders = []
        if module is not None:
            name = base.value

            class Loads(cst.CSTVisitor):
                def visit_Assign(inner, node: cst.Assign) -> None:
                    if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets) \
                            and cstwalk.find(node.value, lambda n: isinstance(n, cst.Call) and any(
                                q in CONFIG_LOADS for q in self.ctx.qualnames(n.func))):
                        loaders.append(source_of(node.value).strip())

            cstwalk.visit(module, Loads())
        key = None
        if isinstance(operand, cst.Subscript) and len(operand.slice) == 1:
            index = operand.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                key = index.value.evaluated_value
        elif isinstance(operand, cst.Attribute):
            key = operand.attr.value
        elif isinstance(operand, cst.Call) and operand.args and isinstance(operand.args[0].value, cst.SimpleString):
            key = operand.args[0].value.evaluated_value
        setting = f"`{key}: xla`" if isinstance(key, str) else '"xla"'
        if loaders:
            return (f". The value compared, {read}, is read from the config file that `{loaders[0]}` loads: change its "
                    f"{setting} there together with this check (a check changed alone sends \"xla\" on to the other "
                    "branch)")
        return (f". The value compared, {read}, is data this file reads (a config, the command line): change its "
                "\"xla\" value where it is set, together with this check")
