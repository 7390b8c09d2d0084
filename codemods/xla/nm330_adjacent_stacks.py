"""NM330 adjacent-stacks: ``torch_neuronx.trace`` and NKI kernels are reported and left untouched.

What it does:

The rule reports each use with its TorchNeuron counterpart and changes nothing:

* ``torch_neuronx.trace(model, example)`` -> ``torch.compile(model, backend="neuron", fullgraph=True,
  dynamic=False)`` (JIT, NEFF cache; no saved traced artifact).
* ``torch_neuronx.nki_jit`` / ``neuronxcc.nki.jit`` / ``nki.jit`` kernels -> ``@nki.jit`` +
  ``@torch_neuronx.nki_op(...)`` registration (TorchNeuron custom op). A kernel whose ``nki.jit`` pins a mode that
  runs it off the device (``mode="simulation"``, ``"baremetal"``, ``"benchmark"``, ``"jax"``) needs no port: no note.
* A file (or notebook) that launches NKI kernels on the XLA device is also left on torch_xla as a whole (``blockers``
  in ``codemods/xla/_base.py``; NM318 writes its note): this rule's per-kernel notes stay.

It runs in projects that show Neuron markers (a real user of torch_neuronx imports it at module level).

Why:

``torch_neuronx.trace`` (ahead-of-time tracing to a TorchScript NEFF) and NKI kernels launched on the XLA device
belong to stacks next to torch_xla; half-migrating them would break them. A kernel called on tensors of the XLA
device is not a TorchNeuron call once the device is ported: on TorchNeuron it is registered as an op and called as
that op, so the file's device stays with it.

Before::

    traced = torch_neuronx.trace(model, example)

After::

    # neuron-migrate: torch_neuronx.trace is the XLA-era AOT tracer (left untouched): on TorchNeuron use torch.compile(...
    traced = torch_neuronx.trace(model, example)

Safety: manual-only. The code is unchanged; an inline note above each call names the counterpart.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/nki/index.html
"""

from __future__ import annotations

import libcst as cst

from codemods.xla._base import NKI_JIT, Safety, XlaRule, nki_host_mode

MESSAGES = {
    "torch_neuronx.trace": "torch_neuronx.trace is the XLA-era AOT tracer (left untouched): on TorchNeuron use torch.compile(model, backend=\"neuron\", fullgraph=True, dynamic=False); there is no saved traced artifact",
    "torch_neuronx.xla_impl": "torch_neuronx.xla_impl is XLA-only (left untouched): replace with TorchNeuron APIs",
    "torch_neuronx.nki_jit": "NKI kernel via torch_neuronx.nki_jit (left untouched): on TorchNeuron register it with @torch_neuronx.nki_op(\"ns::op\", mutates_args=...) around an @nki.jit kernel",
    "neuronxcc.nki.jit": "NKI kernel (left untouched): on TorchNeuron register it with @torch_neuronx.nki_op(\"ns::op\", mutates_args=...) and call the op",
    "nki.jit": "NKI kernel (left untouched): on TorchNeuron register it with @torch_neuronx.nki_op(\"ns::op\", mutates_args=...) and call the op",
    "torch_neuronx.experimental": "torch_neuronx.experimental (XLA-era, left untouched): check the TorchNeuron equivalent",
}


class AdjacentStacks(XlaRule):
    """Report torch_neuronx.trace / NKI kernels (adjacent stacks) without changing them."""

    id = "NM330"
    name = "adjacent-stacks"
    safety = Safety.MANUAL_ONLY
    # a project that really uses torch_neuronx imports it at module level, which marks it as a Neuron project;
    # libraries that only probe for it (transformers' availability check) are left alone, and unparsed
    scope = "neuron-project"
    triggers = ("torch_neuronx", "neuronxcc", "import nki", "from nki")
    legacy_modules = ()

    def _report(self, node: cst.CSTNode, target: cst.CSTNode) -> None:
        for qualified in sorted(self.ctx.qualnames(target)):
            for prefix, message in MESSAGES.items():
                if qualified == prefix or qualified.startswith(prefix + "."):
                    self.todo(node, message)
                    return

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.matches(node.func, NKI_JIT) and nki_host_mode(node):
            return  # the simulator, NumPy arrays, a profiling run: no XLA device, nothing to port
        self._report(node, node.func)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if not isinstance(node.decorator, cst.Call):
            self._report(node, node.decorator)
