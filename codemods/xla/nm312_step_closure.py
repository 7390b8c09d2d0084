"""NM312 step-closure: ``xm.add_step_closure(fn, args)`` becomes ``fn(*args)``; ``xm.set_rng_state`` a manual seed.

What it does:

* ``xm.add_step_closure(fn, args=(a, b))`` -> ``fn(a, b)``; ``run_async=True`` closures become synchronous.
* ``xm.set_rng_state(seed)`` -> ``torch.manual_seed(seed)``.
* ``xm.get_rng_state()`` and ``add_step_closure`` with non-literal ``args`` get a ``todo``.

Why:

The closure ran after the lazy graph executed; in eager mode the values are ready, so it runs in place. The XLA RNG
state was a seed of the device generator, which ``torch.manual_seed`` sets on every device.

Before::

    xm.add_step_closure(log_loss, args=(step, loss))
    xm.set_rng_state(42)

After::

    log_loss(step, loss)
    torch.manual_seed(42)

Safety: safe. The same function runs with the same values, earlier.

References:

* https://pytorch.org/docs/stable/generated/torch.manual_seed.html
* https://pytorch.org/xla/master/learn/api-guide.html
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib.cst import Import
from codemods.xla._base import XM, Safety, XlaRule, arg, has_star, names

CLOSURE = names((XM, ["add_step_closure"]))
SET_RNG = names((XM, ["set_rng_state"]))
GET_RNG = names((XM, ["get_rng_state"]))


class StepClosure(XlaRule):
    """xm.add_step_closure(fn, args) -> fn(*args); xm.set_rng_state(s) -> torch.manual_seed(s)."""

    id = "NM312"
    name = "step-closure"
    safety = Safety.SAFE

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.matches(original.func, SET_RNG):
            seed = arg(updated, 0, "seed")
            if seed is None:
                return updated
            self.fixed(original, "xm.set_rng_state(seed) -> torch.manual_seed(seed)")
            return cst.Call(func=self.expr("torch.manual_seed", Import("torch")), args=[cst.Arg(seed.value)])
        if self.ctx.matches(original.func, GET_RNG):
            self.todo(original, "xm.get_rng_state(): use torch.get_rng_state() / torch.random.initial_seed() (different return types)")
            return updated
        if self.ctx.matches(original.func, CLOSURE):
            fn, args = arg(updated, 0, "closure"), arg(updated, 1, "args")
            if fn is None or has_star(original) or (args is not None and not isinstance(args.value, (cst.Tuple, cst.List))):
                self.todo(original, "xm.add_step_closure: call the closure directly, closure(*args) (eager execution: values are ready)")
                return updated
            elements = cast("cst.Tuple | cst.List", args.value).elements if args is not None else []  # checked above
            call_args = [cst.Arg(e.value, star="*" if isinstance(e, cst.StarredElement) else "") for e in elements]
            self.fixed(original, "xm.add_step_closure(fn, args) -> fn(*args) (eager execution)")
            return cst.Call(func=fn.value, args=call_args)
        return updated
