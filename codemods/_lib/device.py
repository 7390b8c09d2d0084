"""The one place that decides how migrated code names its device and its process-group backend.

Every rule that emits a device goes through here, so ``--device-style`` flips them all at once.

* ``portable`` (default): ``torch.accelerator.current_accelerator() or torch.device("cpu")``. On a
  Trainium host TorchNeuron registers ``neuron`` as the accelerator, so this IS the neuron device; on a
  laptop or CI runner the same script runs on the CPU (or a GPU), which is what lets migrated scripts be
  tested anywhere. The process-group backend follows the device:
  ``dist.get_default_backend_for_device(device)`` gives ``neuron`` there and ``gloo`` on CPU.
* ``neuron``: the literal ``torch.device("neuron")`` and backend ``"neuron"``, for users who want the
  target spelled out (and a hard failure anywhere else).

Each function returns source code (a string) plus the imports it needs; rules call ``emit(ctx, code)``
to get a libcst expression with its imports scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass

from codemods._lib.cst import Import
from migrate.rule import DeviceStyle
from migrate.snippets import parse_expression

PORTABLE_DEVICE = 'torch.accelerator.current_accelerator() or torch.device("cpu")'
NEURON_DEVICE = 'torch.device("neuron")'
#: True on a Trainium host running TorchNeuron, False on a GPU or CPU host (and with no accelerator at all)
ON_NEURON = 'torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "neuron"'
TORCH = Import("torch")
TORCH_DISTRIBUTED = Import("torch.distributed", alias="dist")


@dataclass(frozen=True)
class Code:
    source: str
    imports: tuple[Import, ...] = ()  # each unpacks as ctx.add_import's (module, name, asname)


def device(style: DeviceStyle) -> Code:
    """An expression that evaluates to the torch.device migrated code should use."""
    if style is DeviceStyle.NEURON:
        return Code(NEURON_DEVICE, (TORCH,))
    return Code(PORTABLE_DEVICE, (TORCH,))


def on_neuron(style: DeviceStyle, negated: bool = False) -> Code:
    """A test that is True only where TorchNeuron runs (the native spelling of "on the accelerator" for a
    dual-path project); ``negated``: its ``not``. The same under every ``--device-style``."""
    return Code(f"not ({ON_NEURON})" if negated else ON_NEURON, (TORCH,))


def device_map(style: DeviceStyle) -> Code:
    """The ``device_map=`` value for ``from_pretrained`` (a torch.device is accepted there)."""
    if style is DeviceStyle.NEURON:
        return Code('"neuron"')
    return device(style)


def process_group_backend(style: DeviceStyle, device_source: str | None = None) -> Code:
    """The ``backend=`` for ``init_process_group``. ``device_source`` names a device variable in scope."""
    if style is DeviceStyle.NEURON:
        return Code('"neuron"')
    target = device_source or PORTABLE_DEVICE  # an argument needs no parentheses around the `or`
    return Code(f"dist.get_default_backend_for_device({target})", (TORCH, TORCH_DISTRIBUTED))


def autocast_device_type(style: DeviceStyle, device_source: str | None = None) -> Code:
    """``device_type=`` for ``torch.autocast``."""
    if style is DeviceStyle.NEURON:
        return Code('"neuron"')
    target = device_source or f"({PORTABLE_DEVICE})"
    return Code(f"{target}.type", (TORCH,))


def emit(ctx, code: Code):
    """Schedule ``code``'s imports on the rule context and return it as a libcst expression."""
    for module, name, asname in code.imports:
        ctx.add_import(module, name, asname)
    return parse_expression(code.source)
