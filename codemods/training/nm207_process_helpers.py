"""NM207 process-helpers: optimum-neuron ``is_main_worker()`` and ``is_precompilation()`` become their stock answers.

What it does:

* ``is_main_worker()`` (``optimum.neuron.utils``, ``...utils.misc``) -> ``PartialState().is_main_process``
  (``from accelerate import PartialState``).
* ``is_precompilation()`` -> ``False`` with a todo to simplify the branch it guards (no ``neuron_parallel_compile``
  pass any more).

Why:

``is_main_worker()`` asked whether this is global rank 0: ``accelerate.PartialState().is_main_process`` is the
stock answer. ``is_precompilation()`` was true during the ``neuron_parallel_compile`` graph-extraction pass, which
no longer exists on TorchNeuron (compilation is just in time).

Before::

    from optimum.neuron.utils import is_main_worker, is_precompilation
    if is_main_worker():
        print("saving")
    if not is_precompilation():
        evaluate()

After::

    from accelerate import PartialState
    if PartialState().is_main_process:
        print("saving")
    # neuron-migrate: is_precompilation() is always False on TorchNeuron ...
    if not False:
        evaluate()

Safety: needs-review. The precompilation branch should be simplified by hand (the todo marks it).

References:

* https://huggingface.co/docs/accelerate/package_reference/state
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
"""

from __future__ import annotations

import libcst as cst

from migrate.rule import PythonRule, Safety
from migrate.snippets import parse_expression

_MODULES = ("optimum.neuron", "optimum.neuron.utils", "optimum.neuron.utils.misc", "optimum.neuron.utils.training_utils")
MAIN_WORKER = {f"{m}.is_main_worker" for m in _MODULES}
PRECOMPILATION = {f"{m}.is_precompilation" for m in _MODULES}


class ProcessHelpers(PythonRule):
    """is_main_worker() -> PartialState().is_main_process; is_precompilation() -> False."""

    id = "NM207"
    name = "process-helpers"
    safety = Safety.NEEDS_REVIEW
    triggers = ("is_main_worker", "is_precompilation")
    # stock names trigger it: only a project that targets Neuron is ours to change (and to parse)
    scope = "neuron-project"
    legacy_modules = ("optimum.neuron",)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if original.args:
            return updated
        if self.ctx.matches(original.func, MAIN_WORKER):
            self.ctx.add_import("accelerate", "PartialState")
            self.fixed(original, "is_main_worker() -> PartialState().is_main_process")
            return parse_expression("PartialState().is_main_process")
        if self.ctx.matches(original.func, PRECOMPILATION):
            self.todo(original, "is_precompilation() is always False on TorchNeuron (no neuron_parallel_compile extraction pass): simplify the branch")
            return cst.Name("False")
        return updated
