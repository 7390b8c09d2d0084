"""NM303 optimizer-step: ``xm.optimizer_step(opt)`` becomes ``opt.step()`` (map 3.E E4, E5; trap T38).

``xm.optimizer_step`` all-reduced (averaged) the gradients over all replicas and then stepped. With native
``torch.distributed`` the averaging is done by ``DistributedDataParallel`` / FSDP2 ``fully_shard`` / the
``Trainer`` / ``Accelerator``. When the file visibly uses one of them the rewrite is reported as ``fixed``;
otherwise it carries a ``todo``: single-process runs are fine, multi-process runs must wrap the model in
DDP (or all-reduce the gradients) or the replicas drift apart.

``xm.reduce_gradients(opt)`` is removed when DDP/FSDP is visible, else left with a ``todo``.

Before::

    loss.backward()
    xm.optimizer_step(optimizer, optimizer_args={"closure": None})

After::

    loss.backward()
    # neuron-migrate: xm.optimizer_step averaged gradients across replicas; ...
    optimizer.step(**{"closure": None})

Fix safety: needs review (see above). ``barrier=`` is dropped (eager execution has no graph to cut).
"""

from __future__ import annotations

import libcst as cst

from codemods.xla._common import XM, Safety, XlaRule, arg, has_star, names

OPTIMIZER_STEP = names((XM, ["optimizer_step"]))
REDUCE_GRADIENTS = names((XM, ["reduce_gradients"]))
#: Text that shows gradients are averaged by a wrapper (DDP, FSDP, Trainer, Accelerator).
WRAPPERS = ("DistributedDataParallel", "fully_shard", "FullyShardedDataParallel", "Trainer(", "accelerator.prepare", "Accelerator(")


class OptimizerStep(XlaRule):
    """xm.optimizer_step(opt) -> opt.step(); todo unless DDP/FSDP/Trainer averages gradients."""

    id = "NM303"
    name = "optimizer-step"
    safety = Safety.NEEDS_REVIEW

    def _wrapped(self) -> bool:
        source = self.code_text().replace("XlaFullyShardedDataParallel", "")
        return any(w in source for w in WRAPPERS)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.ctx.matches(original.func, OPTIMIZER_STEP):
            return updated
        optimizer = arg(updated, 0, "optimizer")
        if optimizer is None or has_star(original):
            self.todo(original, "xm.optimizer_step with unusual arguments: call optimizer.step() yourself (gradients must be averaged by DDP/FSDP)")
            return updated
        extra = arg(updated, None, "optimizer_args")
        args = []
        if extra is not None:
            args = [cst.Arg(value=extra.value, star="**")]
        if self._wrapped():
            self.fixed(original, "xm.optimizer_step(opt) -> opt.step(); gradients are averaged by the DDP/FSDP/Trainer wrapper")
        else:
            self.todo(original, "xm.optimizer_step averaged gradients across replicas; for multi-process runs wrap the model in torch.nn.parallel.DistributedDataParallel (or FSDP2 fully_shard) so optimizer.step() sees averaged gradients")
        return cst.Call(func=cst.Attribute(value=optimizer.value.with_changes(), attr=cst.Name("step")), args=args)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call = self.line_call(original, updated, REDUCE_GRADIENTS)
        if call is None:
            return updated
        if self._wrapped():
            self.fixed(call, "xm.reduce_gradients removed: the DDP/FSDP wrapper averages gradients")
            return cst.RemoveFromParent()
        self.todo(call, "xm.reduce_gradients(opt): wrap the model in DistributedDataParallel, or replace with: for p in model.parameters(): dist.all_reduce(p.grad); p.grad /= dist.get_world_size()")
        return updated
