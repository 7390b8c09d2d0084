"""NM302 mark-step: lazy-tensor step boundaries disappear, since TorchNeuron executes eagerly.

What it does:

* Removes ``xm.mark_step()`` / ``torch_xla.sync()`` statements and the no-op graph helpers
  ``xm.optimization_barrier_(...)`` / ``xm.unlazy(...)``; a block left empty gets ``pass``.
* A ``mark_step()`` right before a clock read (``time.time()``, ``time.perf_counter()``, ``time.monotonic()``,
  their ``_ns`` forms, ``timeit.default_timer()``: on the next statement, or in the first line of the ``if`` /
  ``with`` that follows) becomes ``torch.accelerator.synchronize()`` instead: eager dispatch is asynchronous, so
  without it the clock reads before the queued device work has finished and the timing measures dispatch only.
* Where that ``if`` reads the clock only in its body (``if step % log_every == 0: t0 = time.time()``), in a loop
  whose function reads the clock nowhere else but before the loop, the ``synchronize()`` goes at the start of the
  body instead: the steps that do not read the clock do not wait for the device (a sync on every step stalls the
  device queue). A read after the loop (a benchmark's end time), or a use there of what the ``if`` read
  (``return start``), relies on every step's wait: the ``synchronize()`` stays before the ``if`` there.
* A ``mark_step()`` in the body of a loop that sits between two clock reads of its block (timing around the loop)
  is removed, and one ``torch.accelerator.synchronize()`` is put after the loop, before the second read.
* ``xm.wait_device_ops()`` becomes ``torch.accelerator.synchronize()`` (the wait is still meaningful before
  timing).
* Each ``synchronize()`` is guarded by ``torch.accelerator.is_available()``: without an accelerator (a CPU machine)
  it raises.
* An ``if`` / ``elif`` arm whose only statements were step boundaries, with a test that calls nothing
  (``if device.type == "xla": xm.mark_step()``), goes where the chain does the same without it: an ``if`` of its
  own, a last ``elif``, or a first arm whose ``elif`` excludes it (``== "xla"`` / ``elif ... == "cuda"`` on the
  same value: the ``elif`` becomes the ``if``); the todos other rules left on its test go with it. Elsewhere
  (an ``else`` after it, an ``elif`` that does not exclude it) it stays as ``pass``.
* An ``else:`` block (of an ``if``, ``for`` or ``while``) whose only statements were step boundaries
  (``else: xm.mark_step()`` after the accumulation branch) goes instead of staying as ``else: pass``, unless a
  comment sits on it or the ``if`` test calls something (``is_torch_xla_available()``: NM317 decides that one).
* A step boundary on a line of several statements (``optimizer.step(); xm.mark_step()``) is judged the same
  way: it goes (or becomes the synchronize where the clock is read next, later on the line or on the next
  statement), its siblings stay on the line, and the line goes when nothing else is on it. ``if c: a();
  xm.mark_step()`` keeps ``a()``.
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

from typing import Sequence, TypeVar, cast

import libcst as cst

from codemods._lib.cst import Import
from codemods.xla._base import XM, Safety, XlaRule, names
from migrate import cstwalk

_Else = TypeVar("_Else", cst.If, cst.For, cst.While)  # a statement with an ``else:`` block
_CODE = cst.Module(body=[])

STEP = names((XM, ["mark_step", "optimization_barrier_", "unlazy"]), ("torch_xla", ["sync"]))
WAIT = names((XM, ["wait_device_ops"]))
#: clock reads a step timing is taken with (the device must have finished before them)
CLOCKS = names(("time", ["time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns"]),
               ("timeit", ["default_timer"]))
#: torch.accelerator.synchronize() raises on a machine without an accelerator: the migrated script runs on CPU too
SYNCHRONIZE = "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"
SYNCHRONIZE_BEFORE_CLOCK = ("xm.mark_step() before a clock read -> torch.accelerator.synchronize() (when an "
                            "accelerator is present): eager dispatch is asynchronous, the timing waits for the device as before")
SYNCHRONIZE_INTO_IF = ("xm.mark_step() before a clock read under the `if` that follows -> "
                       "torch.accelerator.synchronize() (when an accelerator is present) at the start of that `if`, "
                       "before the read: the timing waits for the device as before, and the other steps do not wait")
SYNCHRONIZE_AFTER_LOOP = ("step boundary removed: TorchNeuron executes eagerly; the loop is timed, so "
                          "torch.accelerator.synchronize() (when an accelerator is present) now runs after it, before "
                          "the clock is read")
LOOPS = (cst.For, cst.While)
#: what a test may not hold for its arm to go (it would no longer run)
SIDE_EFFECTS = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr)


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
        self._elifs: set[int] = set()  # ids of the `if` nodes that are the elif of another
        self._into_if: set[int] = set()  # mark_step lines before an `if` whose body reads the clock first
        self._sync_into: set[int] = set()  # those `if` nodes: the synchronize opens their body
        self._loops: list[cst.For | cst.While] = []  # the loops the visit is in
        self._scopes: list[cst.CSTNode] = []  # the module and the functions the visit is in

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

    def _head_reads_clock(self, statement: cst.If) -> bool:
        return cstwalk.find(statement.test, lambda node: isinstance(node, cst.Call)
                            and bool(self.ctx.matches(node.func, CLOCKS)))

    def _reads_only_in(self, scope: cst.CSTNode, loop: cst.CSTNode, guard: cst.If) -> bool:
        """Whether every clock read of ``scope`` (the function) is before ``loop`` or in the body of ``guard`` (in
        the loop), and nothing after the loop uses a name those reads set: no other read relies on the wait of every
        step (a benchmark's read after the loop, or its ``return start``, does)."""
        rule = self
        # the names the guarded reads set (t0 = time.time()): a use of them after the loop measures the loop too
        timed = {target.target.value for statement in cast(cst.IndentedBlock, guard.body).body
                 if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
                 if isinstance(small, cst.Assign) for target in small.targets if isinstance(target.target, cst.Name)}

        class Reads(cst.CSTVisitor):
            def __init__(inner) -> None:
                inner.state, inner.guarded, inner.ok = "before", 0, True

            def on_visit(inner, node: cst.CSTNode) -> bool:
                if node is loop:
                    inner.state = "in"
                if node is guard.body:
                    inner.guarded += 1
                if isinstance(node, cst.Call) and rule.ctx.matches(node.func, CLOCKS) \
                        and inner.state != "before" and not inner.guarded:
                    inner.ok = False
                if inner.state == "after" and isinstance(node, cst.Name) and node.value in timed:
                    inner.ok = False
                return inner.ok

            def on_leave(inner, node: cst.CSTNode) -> None:
                if node is loop:
                    inner.state = "after"
                if node is guard.body:
                    inner.guarded -= 1

        reads = Reads()
        scope.visit(reads)
        return reads.ok

    def visit_For(self, node: cst.For) -> None:
        self._loops.append(node)

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        self._loops.pop()
        return self._without_emptied_else(original, updated)

    def visit_While(self, node: cst.While) -> None:
        self._loops.append(node)

    def leave_While(self, original: cst.While, updated: cst.While) -> cst.While:
        self._loops.pop()
        return self._without_emptied_else(original, updated)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._scopes.pop()
        return updated

    def _scan(self, block: cst.CSTNode, body: Sequence[cst.CSTNode]) -> None:
        clock_before = False  # an earlier statement of the block reads the clock: a loop after it may be timed
        for statement, following in zip(body, body[1:]):
            if self._has_step(statement) and self._reads_clock(following):
                if self.call_of(statement, STEP) is not None and isinstance(following, cst.If) and not self._head_reads_clock(following) \
                        and self._loops and self._loops[-1].body is block and self._scopes \
                        and self._reads_only_in(self._scopes[-1], self._loops[-1], following):
                    # `if step % log_every == 0: t0 = time.time()`: the clock is read on logging steps only, so
                    # the wait goes there, not on every step
                    self._into_if.add(id(statement))
                    self._sync_into.add(id(following))
                else:
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
        steps = [index for index, statement in enumerate(body) if self._has_step(statement)]
        if not steps or any(index + 1 < len(body) and self._reads_clock(body[index + 1]) for index in steps) \
                or any(self._clock_after(cast(cst.SimpleStatementLine, body[index])) for index in steps):
            return False
        self._in_timed_loop.update(id(body[index]) for index in steps)
        return True

    def _has_step(self, statement: cst.CSTNode) -> bool:
        """A simple line with a step boundary among its statements (``opt.step(); xm.mark_step()`` too)."""
        return isinstance(statement, cst.SimpleStatementLine) \
            and any(self.small_call(small, STEP) is not None for small in statement.body)

    def _clock_after(self, line: cst.SimpleStatementLine, index: int = -1) -> bool:
        """Whether a statement of ``line`` after its ``index``-th (after its first step boundary by default) reads
        the clock (``xm.mark_step(); t0 = time.time()``)."""
        if index < 0:
            index = next((k for k, small in enumerate(line.body) if self.small_call(small, STEP) is not None), len(line.body))
        return any(cstwalk.find(small, lambda node: isinstance(node, cst.Call) and bool(self.ctx.matches(node.func, CLOCKS)))
                   for small in line.body[index + 1:])

    def visit_Module(self, node: cst.Module) -> None:
        self._scopes.append(node)
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
        if len(original.body) > 1:
            return self.split_statements(original, updated)
        call = self.line_call(original, updated, STEP)
        if call is not None and id(original) in self._into_if:
            self.fixed(call, SYNCHRONIZE_INTO_IF)
            return cst.RemoveFromParent()
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

    def small_statement(self, line: cst.SimpleStatementLine, index: int, small: cst.BaseSmallStatement):
        """One statement of a line of several (``opt.step(); xm.mark_step()``): a step boundary goes, or becomes a
        synchronize where the clock is read next (later on the line, or on the next statement after the line's last
        one); xm.wait_device_ops() becomes the synchronize. None for the others (they stay on the line)."""
        call = self.small_call(small, STEP)
        if call is not None:
            last = not any(self.small_call(later, STEP) is not None for later in line.body[index + 1:])
            if self._clock_after(line, index) or (last and id(line) in self._before_clock):
                self.fixed(call, SYNCHRONIZE_BEFORE_CLOCK)
                return [self.statement(SYNCHRONIZE, Import("torch"))]
            timed = id(line) in self._in_timed_loop
            self.fixed(call, SYNCHRONIZE_AFTER_LOOP if timed else "step boundary removed: TorchNeuron executes eagerly")
            return []
        call = self.small_call(small, WAIT)
        if call is not None:
            self.fixed(call, "xm.wait_device_ops() -> torch.accelerator.synchronize() (when an accelerator is present)")
            return [self.statement(SYNCHRONIZE, Import("torch"))]
        return None

    def leave_SimpleStatementSuite(self, original: cst.SimpleStatementSuite, updated: cst.SimpleStatementSuite):
        # `if cond: xm.mark_step()` on one line
        body = [
            stmt for stmt in updated.body
            if not (isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and self.ctx.matches(stmt.value.func, STEP))
        ]
        if len(body) == len(updated.body):
            return updated
        self.fixed(original, "step boundary removed: TorchNeuron executes eagerly")
        if body:  # `if c: a(); xm.mark_step()` -> `if c: a()`, not `a();`
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(body=body or [cst.Pass()])

    # ------------------------------------------------------------------ arms left empty
    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.BaseStatement | cst.RemovalSentinel:
        """An arm whose only statements were step boundaries (``if device.type == "xla": xm.mark_step()``), with a
        test that only tests, goes where the chain stays the same without it: an ``if`` of its own, the first arm
        before an ``elif`` that excludes it (``== "xla"`` / ``== "cuda"`` on the same value), a last ``elif``."""
        if id(original) in self._sync_into and isinstance(updated.body, cst.IndentedBlock):
            updated = updated.with_changes(body=updated.body.with_changes(
                body=[self.statement(SYNCHRONIZE, Import("torch")), *updated.body.body]))
        if not cstwalk.find(original.test, lambda n: isinstance(n, SIDE_EFFECTS)):
            # a test that calls something may be another rule's guard (NM317's is_torch_xla_available(), whose
            # else is its XLA side): that else stays for it
            updated = self._without_emptied_else(original, updated)
        if id(original) not in self._elifs and self._emptied_arm(original, updated):
            if updated.orelse is None:
                self._drop_notes(original)
                return cst.RemoveFromParent()
            if isinstance(updated.orelse, cst.If) and isinstance(original.orelse, cst.If) \
                    and _exclusive(original.test, original.orelse.test):
                self._drop_notes(original)
                return updated.orelse.with_changes(leading_lines=updated.leading_lines)
        if isinstance(original.orelse, cst.If) and isinstance(updated.orelse, cst.If) and updated.orelse.orelse is None \
                and self._emptied_arm(original.orelse, updated.orelse):
            self._drop_notes(original.orelse)
            return updated.with_changes(orelse=None)
        return updated

    def _without_emptied_else(self, original: _Else, updated: _Else) -> _Else:
        """``updated`` without its ``else:`` when this rule removed every statement of it (``else: xm.mark_step()``,
        now ``else: pass``) and the block holds no comment: an ``else`` that does nothing goes."""
        before, after = original.orelse, updated.orelse
        if not (isinstance(before, cst.Else) and isinstance(after, cst.Else) and isinstance(before.body, cst.IndentedBlock)
                and isinstance(after.body, cst.IndentedBlock) and before.body.body):
            return updated
        emptied = (all(isinstance(statement, cst.SimpleStatementLine) and id(statement) not in self._before_clock
                       and all(self.small_call(small, STEP) is not None for small in statement.body)
                       for statement in before.body.body)
                   and len(after.body.body) == 1 and isinstance(after.body.body[0], cst.SimpleStatementLine)
                   and all(isinstance(small, cst.Pass) for small in after.body.body[0].body)
                   and "#" not in _CODE.code_for_node(before) + _CODE.code_for_node(after))  # a comment stays
        return updated.with_changes(orelse=None) if emptied else updated

    def _emptied_arm(self, original: cst.If, updated: cst.If) -> bool:
        """This rule removed every statement of the arm (now ``pass``), and its test has no side effects."""
        body, new = original.body, updated.body
        return (isinstance(body, cst.IndentedBlock) and isinstance(new, cst.IndentedBlock) and bool(body.body)
                and all(isinstance(statement, cst.SimpleStatementLine) and id(statement) not in self._before_clock
                        and all(self.small_call(small, STEP) is not None for small in statement.body)
                        for statement in body.body)
                and len(new.body) == 1 and isinstance(new.body[0], cst.SimpleStatementLine)
                and all(isinstance(small, cst.Pass) for small in new.body[0].body)
                and not cstwalk.find(original.test, lambda n: isinstance(n, SIDE_EFFECTS)))

    def _drop_notes(self, arm: cst.If) -> None:
        """The todos other rules left on the test of an arm that goes (``comparison with "xla"``) go with it."""
        inside: set[int] = set()

        def note(node: cst.CSTNode) -> bool:
            inside.add(id(node))
            return False

        cstwalk.find(arm.test, note)
        dropped = [f for f in self.ctx.findings if id(f.node) in inside]
        for finding in dropped:
            self.ctx.findings.remove(finding)
            messages = self.ctx.todos_by_statement.get(id(arm), [])
            if finding.message in messages:
                messages.remove(finding.message)
        if id(arm) in self.ctx.todos_by_statement and not self.ctx.todos_by_statement[id(arm)]:
            del self.ctx.todos_by_statement[id(arm)]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.matches(node.func, STEP) and self.used_as_value(node):
            self.todo(node, "xm.mark_step()/torch_xla.sync() used as a value: TorchNeuron is eager, remove the call")


def _exclusive(first: cst.BaseExpression, second: cst.BaseExpression) -> bool:
    """``X == "a"`` and ``X == "b"`` on the same X (no side effects) with different literals: never both true."""
    def equality(test: cst.BaseExpression):
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)):
            return None
        value = test.comparisons[0].comparator
        if not isinstance(value, (cst.SimpleString, cst.Integer)):
            return None
        return cst.Module(body=[]).code_for_node(test.left), value.evaluated_value

    a, b = equality(first), equality(second)
    return a is not None and b is not None and a[0] == b[0] and a[1] != b[1] \
        and not cstwalk.find(second, lambda n: isinstance(n, SIDE_EFFECTS))
