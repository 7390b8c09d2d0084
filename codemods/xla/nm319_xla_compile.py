"""NM319 xla-compile: ``torch_xla.compile(fn)`` becomes ``torch.compile(fn, backend="neuron")`` on the neuron device.

What it does:

* ``torch_xla.compile(fn)`` and ``torch_xla.experimental.compile(fn)`` (``fn`` a name, an attribute or a
  lambda) -> ``torch.compile(fn, backend="neuron")``; ``full_graph=True`` -> ``fullgraph=True``.
* Portable style (the default, docs/device-expression.md): compiled only where the accelerator is the neuron
  device, the function itself elsewhere (eager, on the CPU or a GPU):
  ``torch.compile(fn, backend="neuron") if (<device>).type == "neuron" else fn``.
* ``--device-style neuron``: unguarded ``torch.compile(fn, backend="neuron")``.
* The outermost decorator ``@torch_xla.compile`` (or ``@torch_xla.compile(full_graph=...)``) is removed and the
  same compile follows the def as ``name = torch.compile(name, backend="neuron") ...``.
* Left alone (the file stays on torch_xla, NM318 says why): ``name=`` / ``num_different_graphs_allowed=``,
  ``*args``, any other function expression, ``@torch_xla.compile`` below another decorator.

Why:

``torch_xla.compile(fn)`` ran ``fn`` in lazy (graph) mode with a sync before and after, so that its body became
one XLA graph. TorchNeuron runs eagerly, so the function is correct as it is; ``torch.compile`` with the
``neuron`` dynamo backend is the graph-capture counterpart. That backend exists only where torch-neuronx is
installed (``torch.compile(fn, backend="neuron")`` raises ``InvalidBackend`` on CPU even with ``disable=True``),
hence the device test in the portable style, as for the other compile steps the rules write.

Before::

    if flags.torch_xla_compile:
        train_loop_fn = torch_xla.compile(train_loop_fn)

After::

    if flags.torch_xla_compile:
        train_loop_fn = torch.compile(train_loop_fn, backend="neuron") if (torch.accelerator.current_accelerator() or torch.device("cpu")).type == "neuron" else train_loop_fn

Safety: needs-review. The first call compiles (minutes for a large graph) and each new input shape recompiles;
graph breaks run eagerly unless ``fullgraph=True``. Check that the function's inputs have static shapes.

References:

* https://docs.pytorch.org/xla/master/learn/eager.html (torch_xla.compile and eager mode)
* https://docs.pytorch.org/docs/stable/generated/torch.compile.html
* docs/device-expression.md
"""

from __future__ import annotations

import libcst as cst

from codemods._lib import device as dev
from codemods._lib.cst import source_of
from codemods.xla._base import Safety, XlaRule, arg, compile_decorator, compile_target
from migrate.snippets import parse_expression, parse_statement


class XlaCompile(XlaRule):
    """torch_xla.compile(fn) -> torch.compile(fn, backend="neuron") on the neuron device, fn itself elsewhere."""

    id = "NM319"
    name = "xla-compile"
    safety = Safety.NEEDS_REVIEW

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._bare: set[int] = set()  # ids of calls whose value needs no parentheses (an assignment, a return)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._bare.add(id(node.value))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._bare.add(id(node.value))

    def _compiled(self, source: str, full_graph: bool, lambda_: bool = False) -> str:
        """``torch.compile(<source>, backend="neuron")``, behind the device test in the portable style."""
        compiled = f'torch.compile({source}, backend="neuron"{", fullgraph=True" if full_graph else ""})'
        self.ctx.add_import("torch")
        if self.ctx.options.device_style is dev.DeviceStyle.NEURON:
            return compiled
        device_type = dev.autocast_device_type(self.ctx.options.device_style)
        for module, name, asname in device_type.imports:
            self.ctx.add_import(module, name, asname)
        fallback = f"({source})" if lambda_ else source  # `else lambda` reads as one
        return f'{compiled} if {device_type.source} == "neuron" else {fallback}'

    def _message(self) -> str:
        if self.ctx.options.device_style is dev.DeviceStyle.NEURON:
            return 'torch_xla.compile(fn) -> torch.compile(fn, backend="neuron")'
        return 'torch_xla.compile(fn) -> torch.compile(fn, backend="neuron") on the neuron device, the function ' \
               "itself (eager) elsewhere"

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        function = compile_target(self.ctx, original)
        if function is None:
            return updated
        new_function = next(new.value for old, new in zip(original.args, updated.args) if old is function)
        full_graph = arg(original, None, "full_graph")
        expression = self._compiled(source_of(new_function), full_graph is not None and _is_true(full_graph.value),
                                    isinstance(new_function, cst.Lambda))
        if id(original) not in self._bare and self.ctx.options.device_style is not dev.DeviceStyle.NEURON:
            expression = f"({expression})"
        self.fixed(original, self._message())
        return parse_expression(self.quote_safe(expression))

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        """``@torch_xla.compile`` (outermost): the def without it, then ``name = torch.compile(name, ...)``."""
        full_graph = compile_decorator(self.ctx, original)
        if full_graph is None or not updated.decorators:
            return updated
        first, *rest = updated.decorators
        if rest:
            rest[0] = rest[0].with_changes(leading_lines=[*first.leading_lines, *rest[0].leading_lines])
            function = updated.with_changes(decorators=rest)
        else:
            function = updated.with_changes(decorators=[], leading_lines=[*updated.leading_lines, *first.leading_lines])
        name = original.name.value
        self.fixed(original.decorators[0], self._message())
        assignment = parse_statement(f"{name} = {self._compiled(name, full_graph)}\n")
        blank = cst.EmptyLine(indent=False)  # no trailing spaces on the line between the def and the assignment
        return cst.FlattenSentinel([function, assignment.with_changes(leading_lines=[blank])])


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"
