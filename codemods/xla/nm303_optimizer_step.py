"""NM303 optimizer-step: ``xm.optimizer_step(opt)`` becomes an explicit gradient average and ``opt.step()``.

What it does:

* ``xm.optimizer_step(opt)`` becomes the same two steps in native ``torch.distributed``: an explicit average over
  ``opt.param_groups`` (only when a process group of more than one rank is up: a single process steps as before)
  and ``opt.step()``; ``optimizer_args={...}`` become the keywords of ``step``; ``barrier=`` is dropped (eager
  execution has no graph to cut).
* When the function holding the call (the module's own statements for a module-level call) hands a model to a
  wrapper that averages gradients itself (``DistributedDataParallel``, FSDP2 ``fully_shard``, ``Trainer``) or
  passes this optimizer to ``<accelerator>.prepare``, ``opt.step()`` alone is enough. A wrapper in another
  function says nothing about the objects reaching this call: there the average is written. Averaging twice
  (a model wrapped elsewhere) would still be correct (the replicas already agree), only slower.
* ``xm.reduce_gradients(opt)`` becomes the same average without the step.
* A call with ``groups=`` (the data-parallel replica groups of a tensor-parallel run) is left with a ``todo``: an
  average over the whole world would mix the shards of different tensor-parallel ranks. ``groups=None`` and one
  group of every rank (``groups=[list(range(xr.world_size()))]``, or a name the file binds once to a world-size
  call) are the world: ported like no groups.
* On a line of several statements (``loss.backward(); xm.optimizer_step(opt)``) the call is rewritten the same
  way, and the line is split around the average; the other statements stay.
* A call that is not a statement of its own (inside an expression, a one-line ``if x: xm.optimizer_step(o)``, or
  with ``*args``) is left as it is with a ``todo``: the average cannot be placed there.

Why:

``xm.optimizer_step`` all-reduced (averaged) the gradients over all replicas and then stepped; a plain
``opt.step()`` in a multi-process run would let the replicas drift apart silently.

Before::

    loss.backward()
    xm.optimizer_step(optimizer, optimizer_args={"closure": None})

After::

    loss.backward()
    if dist.is_initialized() and dist.get_world_size() > 1:  # average the gradients over the replicas (as optimizer_step did on XLA)
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    dist.all_reduce(param.grad)
                    param.grad /= dist.get_world_size()
    optimizer.step(**{"closure": None})

Safety: needs-review. The averaging is explicit: once the model is wrapped in DDP or FSDP2 it can go. Calls with
replica ``groups=`` or in an expression keep a ``todo``.

References:

* https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_reduce
* https://pytorch.org/docs/stable/notes/ddp.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import Import, source_of
from codemods.xla._base import XM, Safety, XlaRule, arg, has_star, names, replica_groups

OPTIMIZER_STEP = names((XM, ["optimizer_step"]))
REDUCE_GRADIENTS = names((XM, ["reduce_gradients"]))
#: Calls that hand a model to a wrapper averaging its gradients (XLA FSDP is not one: it is a blocker of its own).
MODEL_WRAPPERS = frozenset({"DistributedDataParallel", "DDP", "fully_shard", "FullyShardedDataParallel", "FSDP",
                            "Trainer"})
DIST = Import("torch.distributed", alias="dist")
AVERAGE = """if dist.is_initialized() and dist.get_world_size() > 1:  # average the gradients over the replicas (as {name} did on XLA)
    for group in {optimizer}.param_groups:
        for param in group["params"]:
            if param.grad is not None:
                dist.all_reduce(param.grad)
                param.grad /= dist.get_world_size()
"""


class OptimizerStep(XlaRule):
    """xm.optimizer_step(opt) -> an explicit gradient average and opt.step(); reduce_gradients -> the average."""

    id = "NM303"
    name = "optimizer-step"
    safety = Safety.NEEDS_REVIEW

    def _wrapped(self, optimizer: cst.BaseExpression) -> bool:
        """Whether the function holding the call (the module's own statements for a module-level call) hands its
        model to a wrapper that averages gradients (DDP, FSDP, fully_shard, Trainer) or ``optimizer`` to
        ``<accelerator>.prepare``: text elsewhere in the file says nothing about the objects reaching this call."""
        scope = self._functions[-1] if self._functions else self.ctx.shared.get("module")
        if scope is None:
            return False
        optimizer_code = source_of(optimizer)
        for call in _own_calls(scope):
            name = _last_name(call.func)
            if name in MODEL_WRAPPERS and not any(q.startswith("torch_xla") for q in self.ctx.qualnames(call.func)):
                return True  # (XLA FSDP imported as FSDP is not one)
            if name == "prepare" and any(not a.star and source_of(a.value) == optimizer_code for a in call.args):
                return True
        return False

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._statement_calls: set[cst.Call] = set()  # calls that are a statement line of their own
        self._functions: list[cst.FunctionDef] = []  # the functions being visited, innermost last

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._functions.pop()
        return updated

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        super().visit_SimpleStatementLine(node)
        for small in node.body:  # `opt.zero_grad(); xm.optimizer_step(opt)` too: each is a statement of its own
            call = self.small_call(small, OPTIMIZER_STEP | REDUCE_GRADIENTS)
            if call is not None and not has_star(call):
                self._statement_calls.add(call)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        # statement-level calls are rewritten in leave_SimpleStatementLine; any other place cannot hold the average
        if self.ctx.matches(original.func, OPTIMIZER_STEP | REDUCE_GRADIENTS) and original not in self._statement_calls:
            self.todo(original, "xm.optimizer_step / reduce_gradients inside an expression or a one-line block: put it on "
                      "a line of its own (the rule then rewrites it), or average the gradients yourself "
                      "(dist.all_reduce(p.grad); p.grad /= dist.get_world_size()) before optimizer.step()")
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if len(original.body) > 1:
            return self.split_statements(original, updated)
        call = self.line_call(original, updated, OPTIMIZER_STEP | REDUCE_GRADIENTS)
        if call is None or call not in self._statement_calls:
            return updated
        statements = self._rewrite(call)
        return updated if statements is None else self.replace_line(original, updated, statements)

    def small_statement(self, line: cst.SimpleStatementLine, index: int, small: cst.BaseSmallStatement):
        """``opt.zero_grad(); xm.optimizer_step(opt)``: the call is rewritten as on a line of its own, the line split
        around the average."""
        call = self.small_call(small, OPTIMIZER_STEP | REDUCE_GRADIENTS)
        if call is None or call not in self._statement_calls:
            return None
        return self._rewrite(call)

    def _rewrite(self, call: cst.Call) -> list[cst.BaseStatement] | None:
        """The statements that replace the statement ``call`` (reported), or None where it stays with a todo."""
        stepping = self.ctx.matches(call.func, OPTIMIZER_STEP)
        optimizer = arg(call, 0, "optimizer")
        # replica groups (data-parallel ranks beside tensor parallelism) are not the world; one group of every rank is
        groups = replica_groups(self.ctx, call, "optimizer_step" if stepping else "reduce_gradients")
        if groups is not None:
            self.todo(call, "xm.optimizer_step / reduce_gradients over replica groups: average each gradient over "
                      "that group only (dist.all_reduce(p.grad, group=dist.new_group(ranks)); p.grad /= len(ranks)), "
                      "or wrap the model in DDP/FSDP2 on a device mesh; averaging over the whole world would mix "
                      "tensor-parallel shards")
            return None
        if optimizer is None:
            self.todo(call, "xm.optimizer_step without an optimizer argument: call optimizer.step() yourself after "
                      "averaging the gradients")
            return None
        optimizer_code = source_of(optimizer.value)
        statements: list[cst.BaseStatement] = []
        wrapped = self._wrapped(optimizer.value)
        if not wrapped:
            name = "optimizer_step" if stepping else "reduce_gradients"
            statements.append(self.statement(AVERAGE.format(name=name, optimizer=optimizer_code), DIST))
        if stepping:
            extra = arg(call, None, "optimizer_args")
            step = f"{optimizer_code}.step(**{source_of(extra.value)})" if extra is not None else f"{optimizer_code}.step()"
            statements.append(self.statement(step + "\n"))
        if wrapped:
            self.fixed(call, "xm.optimizer_step(opt) -> opt.step(); gradients are averaged by the DDP/FSDP/Trainer/"
                       "accelerate wrapper this function hands the model or optimizer to"
                       if stepping else "xm.reduce_gradients removed: the DDP/FSDP wrapper averages gradients")
        else:
            self.fixed(call, ("xm.optimizer_step(opt) -> the same gradient average in torch.distributed, then opt.step()"
                              if stepping else "xm.reduce_gradients(opt) -> the same gradient average in torch.distributed")
                       + "; once the model is wrapped in DistributedDataParallel or FSDP2 the average can go")
        return statements



def _last_name(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Name):
        return func.value
    return func.attr.value if isinstance(func, cst.Attribute) else None


def _own_calls(scope: cst.CSTNode) -> list[cst.Call]:
    """The calls of ``scope`` outside the functions, classes and lambdas nested in it."""
    calls: list[cst.Call] = []

    def walk(node: cst.CSTNode) -> None:
        if node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return
        if isinstance(node, cst.Call):
            calls.append(node)
        for child in node.children:
            walk(child)

    walk(scope)
    return calls
