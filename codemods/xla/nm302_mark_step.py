"""NM302 mark-step: lazy-tensor step boundaries disappear, since TorchNeuron executes eagerly.

What it does:

* Removes ``xm.mark_step()`` / ``torch_xla.sync()`` statements and the no-op graph helpers
  ``xm.optimization_barrier_(...)`` / ``xm.unlazy(...)``; a block left empty gets ``pass``.
* A ``mark_step()`` right before a clock read (``time.time()``, ``time.perf_counter()``, ``time.monotonic()``,
  their ``_ns`` forms, ``timeit.default_timer()``: on the next statement, or in the first line of the ``if`` /
  ``with`` that follows) becomes ``torch.accelerator.synchronize()`` instead: eager dispatch is asynchronous, so
  without it the clock reads before the queued device work has finished and the timing measures dispatch only.
* A ``mark_step()`` in the body of a loop that sits between two clock reads of its block (timing around the loop)
  is removed, and one ``torch.accelerator.synchronize()`` is put after the loop, before the second read.
* ``xm.wait_device_ops()`` becomes ``torch.accelerator.synchronize()`` (the wait is still meaningful before
  timing).
* Each ``synchronize()`` is guarded by ``torch.accelerator.is_available()``: without an accelerator (a CPU machine)
  it raises.
* A ``mark_step()`` used as a value (rare) gets a ``todo``.

Why:

On torch_xla, ``mark_step`` cut the lazily recorded graph and sent it to the device. TorchNeuron executes eagerly,
so there is no graph to cut and the call has nothing left to do, except where the code reads the clock next: there
the wait for the device is what the timing relies on.

Before::

    loss.backward()
    optimizer.step()
    xm.mark_step()
    xm.wait_device_ops()
    for batch in loader:
        output = model(batch)
        xm.mark_step()
        start = time.time()

After::

    loss.backward()
    optimizer.step()
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    for batch in loader:
        output = model(batch)
        if torch.accelerator.is_available():
            torch.accelerator.synchronize()
        start = time.time()

Safety: safe. A reviewer checks timings taken in other ways (a clock read further away from the step): they need
``torch.accelerator.synchronize()`` before the read too.

References:

* https://pytorch.org/docs/stable/accelerator.html
* https://pytorch.org/xla/master/learn/api-guide.html
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from codemods._lib.cst import Import
from codemods.xla._base import XM, Safety, XlaRule, names
from migrate import cstwalk

STEP = names((XM, ["mark_step", "optimization_barrier_", "unlazy"]), ("torch_xla", ["sync"]))
WAIT = names((XM, ["wait_device_ops"]))
#: clock reads a step timing is taken with (the device must have finished before them)
CLOCKS = names(("time", ["time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns"]),
               ("timeit", ["default_timer"]))
#: torch.accelerator.synchronize() raises on a machine without an accelerator: the migrated script runs on CPU too
SYNCHRONIZE = "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"
SYNCHRONIZE_BEFORE_CLOCK = ("xm.mark_step() before a clock read -> torch.accelerator.synchronize() (when an "
                            "accelerator is present): eager dispatch is asynchronous, the timing waits for the device as before")
SYNCHRONIZE_AFTER_LOOP = ("step boundary removed: TorchNeuron executes eagerly; the loop is timed, so "
                          "torch.accelerator.synchronize() (when an accelerator is present) now runs after it, before "
                          "the clock is read")
LOOPS = (cst.For, cst.While)


class MarkStep(XlaRule):
    """Remove xm.mark_step()/torch_xla.sync() (a synchronize where the clock is read next); xm.wait_device_ops() ->
    torch.accelerator.synchronize() when there is an accelerator."""

    id = "NM302"
    name = "mark-step"
    safety = Safety.SAFE

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._before_clock: set[int] = set()  # ids of the mark_step lines whose next statement reads the clock
        #: id(block) -> for each loop of it that a clock read follows, in order: whether a synchronize goes between
        self._timed_loops: dict[int, list[bool]] = {}
        self._in_timed_loop: set[int] = set()  # ids of the mark_step lines in the body of such a loop

    # ------------------------------------------------------------------ where the clock is read
    def _reads_clock(self, statement: cst.CSTNode) -> bool:
        """Whether ``statement`` reads the clock: anywhere in a simple line, or in the head or first line of an
        ``if`` / ``with`` (``if step < WARMUP: start = time.time()``)."""
        def clock(node: cst.CSTNode) -> bool:
            return isinstance(node, cst.Call) and bool(self.ctx.matches(node.func, CLOCKS))

        if isinstance(statement, cst.SimpleStatementLine):
            return cstwalk.find(statement, clock)
        if isinstance(statement, cst.If):
            head: Sequence[cst.CSTNode] = [statement.test]
        elif isinstance(statement, cst.With):
            head = list(statement.items)
        else:
            return False
        if any(cstwalk.find(node, clock) for node in head):
            return True
        body = statement.body.body
        return bool(body) and self._reads_clock(body[0])

    def _scan(self, block: cst.CSTNode, body: Sequence[cst.CSTNode]) -> None:
        clock_before = False  # an earlier statement of the block reads the clock: a loop after it may be timed
        for statement, following in zip(body, body[1:]):
            if self.call_of(statement, STEP) is not None and self._reads_clock(following):
                self._before_clock.add(id(statement))
            elif isinstance(statement, LOOPS) and self._reads_clock(following):
                # the loop sits between two clock reads: it is timed, and the clock must wait for its device work
                timed = clock_before and isinstance(statement.body, cst.IndentedBlock) \
                    and self._times_steps(statement.body.body)
                self._timed_loops.setdefault(id(block), []).append(timed)
            clock_before = clock_before or self._reads_clock(statement)

    def _times_steps(self, body: Sequence[cst.CSTNode]) -> bool:
        """A loop body with a step boundary of its own, none of which already becomes a synchronize (the clock is
        read right after it): the step boundaries it has are then noted as moved after the loop."""
        steps = [index for index, statement in enumerate(body) if self.call_of(statement, STEP) is not None]
        if not steps or any(index + 1 < len(body) and self._reads_clock(body[index + 1]) for index in steps):
            return False
        self._in_timed_loop.update(id(body[index]) for index in steps)
        return True

    def visit_Module(self, node: cst.Module) -> None:
        self._scan(node, node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._scan(node, node.body)

    def _synchronize_after_loops(self, original: cst.CSTNode, body: Sequence[cst.BaseStatement]):
        """``body`` with a synchronize between each timed loop and the clock read after it; None when none is."""
        timed = list(self._timed_loops.get(id(original), ()))
        if not any(timed):
            return None
        new: list[cst.BaseStatement] = []
        for index, statement in enumerate(body):
            if timed and index and isinstance(body[index - 1], LOOPS) and self._reads_clock(statement):
                if timed.pop(0):
                    new.append(self.statement(SYNCHRONIZE, Import("torch")))
            new.append(statement)
        return new

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = self._synchronize_after_loops(original, updated.body)
        return updated if body is None else updated.with_changes(body=body)

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = self._synchronize_after_loops(original, updated.body)
        return updated if body is None else updated.with_changes(body=body)

    # ------------------------------------------------------------------ the rewrites
    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call = self.line_call(original, updated, STEP)
        if call is not None and id(original) in self._before_clock:
            self.fixed(call, SYNCHRONIZE_BEFORE_CLOCK)
            return self.replace_line(original, updated, self.statement(SYNCHRONIZE, Import("torch")))
        if call is not None:
            timed = id(original) in self._in_timed_loop
            self.fixed(call, SYNCHRONIZE_AFTER_LOOP if timed else "step boundary removed: TorchNeuron executes eagerly")
            return cst.RemoveFromParent()
        call = self.line_call(original, updated, WAIT)
        if call is not None:
            self.fixed(call, "xm.wait_device_ops() -> torch.accelerator.synchronize() (when an accelerator is present)")
            return self.replace_line(original, updated, self.statement(SYNCHRONIZE, Import("torch")))
        return updated

    def leave_SimpleStatementSuite(self, original: cst.SimpleStatementSuite, updated: cst.SimpleStatementSuite):
        # `if cond: xm.mark_step()` on one line
        body = [
            stmt for stmt in updated.body
            if not (isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and self.ctx.matches(stmt.value.func, STEP))
        ]
        if len(body) == len(updated.body):
            return updated
        self.fixed(original, "step boundary removed: TorchNeuron executes eagerly")
        return updated.with_changes(body=body or [cst.Pass()])

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.matches(node.func, STEP) and self.used_as_value(node):
            self.todo(node, "xm.mark_step()/torch_xla.sync() used as a value: TorchNeuron is eager, remove the call")
