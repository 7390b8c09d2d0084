"""NM101 availability-checks: optimum-neuron availability helpers -> stock checks.

What it does:

* ``is_neuronx_available`` / ``is_torch_neuronx_available`` (``optimum.neuron``, ``optimum.neuron.utils``)
  -> ``transformers.utils.is_torch_neuron_available`` (true when TorchNeuron is installed);
* ``is_torch_xla_available`` / ``is_accelerate_available`` -> the ``transformers.utils`` functions of the
  same name;
* calls of ``is_neuronx_distributed_available()``, ``is_transformers_neuronx_available()``,
  ``is_trl_available()`` -> ``importlib.util.find_spec("<package>") is not None``;
* calls of ``is_neuron_available()`` (Inf1 ``torch-neuron``, which has no TorchNeuron path) -> ``False``
  with a ``todo`` to delete the dead branch;
* left alone: an availability function passed around as a value (not called) keeps its import, with a
  ``todo``; an Inf1 flow as a whole (torch-neuron tracing, neuron-cc, ``optimum[neuron]``, an ``ml.inf1``
  instance or an Inf1 file name, see ``inf1_flow`` in codemods/inference/_base.py): every NM1xx rule leaves
  the file (or notebook) alone, and this rule writes the one ``todo`` that says so (in a script that never imports
  optimum.neuron too: its ``torch.neuron.trace`` wakes the rule, which would leave it silent otherwise).

Why:

optimum-neuron shipped its own probes for the Neuron software stack (``torch-neuronx``, ``neuronx-distributed``,
``transformers-neuronx``, Inf1's ``torch-neuron``). After the migration optimum-neuron is no longer a
dependency, so its ``utils`` module cannot be imported; transformers 5 has the equivalent probe for TorchNeuron
(``is_torch_neuron_available``) and for torch_xla / accelerate, and a plain ``importlib.util.find_spec`` answers
the same question for the other packages without importing them. Inf1 (``torch-neuron``) has no TorchNeuron
path at all, so its check is always false on the migrated code.

Before::

    from optimum.neuron.utils import is_neuronx_available, is_neuron_available

    if is_neuronx_available():
        device = "neuron"
    if is_neuron_available():
        import torch_neuron

After::

    from transformers.utils import is_torch_neuron_available

    if is_torch_neuron_available():
        device = "neuron"
    # neuron-migrate: is_neuron_available() checked for Inf1 torch-neuron, which TorchNeuron does not support: ...
    if False:
        import torch_neuron

Safety: safe. The renames are exact; the ``False`` written for the Inf1 check comes with a ``todo`` asking to
delete the dead branch.

References:

* https://huggingface.co/docs/transformers/main/en/internal/file_utils
* https://docs.python.org/3/library/importlib.html#importlib.util.find_spec
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
"""

from __future__ import annotations

import libcst as cst

from codemods._tables.inference_symbols import AVAILABILITY_FIND_SPEC, AVAILABILITY_MODULES, availability_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import InferenceRule
from migrate.rule import Safety
from migrate.snippets import parse_expression

MOVES = availability_moves()
FIND_SPEC = {f"{m}.{name}": package for name, package in AVAILABILITY_FIND_SPEC.items() for m in AVAILABILITY_MODULES}


class AvailabilityChecks(InferenceRule):
    """is_neuronx_available & co. -> transformers.utils.is_torch_neuron_available / find_spec / False."""

    id = "NM101"
    name = "availability-checks"
    safety = Safety.SAFE
    # an Inf1 script that never imports optimum.neuron (``torch.neuron.trace``, ``import torch_neuron``) gets the
    # one Inf1 todo too: it would be silent otherwise (rtF probes7)
    triggers = (*OPTIMUM_NEURON_IMPORTS, "torch.neuron.trace", "torch_neuron.trace")
    moves = {**MOVES, **{name: None for name in FIND_SPEC}}
    legacy_modules = ("optimum.neuron",)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.matches(original.func, FIND_SPEC)
        if qualified is None:
            return updated
        package = FIND_SPEC[qualified]
        name = qualified.rsplit(".", 1)[1]
        if package is None:
            self.todo(original, f"{name}() checked for Inf1 torch-neuron, which TorchNeuron does not support: it is "
                      "now False - delete the branch it guards")
            return cst.Name("False")
        self.ctx.add_import("importlib.util")
        self.fixed(original, f"{name}() -> importlib.util.find_spec(\"{package}\") is not None")
        return parse_expression(f'importlib.util.find_spec("{package}") is not None')
