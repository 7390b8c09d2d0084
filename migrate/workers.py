"""A process pool that survives its workers: every task ends as a result or as a failure of that task.

``multiprocessing.Pool`` waits forever for a task whose worker died (a segfault in the parser on a
5,000-deep expression, the OOM killer) and cannot bound the time of one task. Here each worker gets
one task at a time over its own pipe, so the parent always knows which task a dead or overdue worker
held: that task becomes a failure, the worker is replaced and the run goes on. Workers ignore SIGINT
(the parent handles Ctrl-C and ends them) and exit when the parent's end of the pipe closes.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterator, Sequence


def run_tasks(
    function: Callable[[Any], Any],
    items: Sequence,
    initializer: Callable[[Any], None],
    state: Any,
    jobs: int,
    time_limit: float | None,
) -> Iterator[tuple[Any, Any, str | None]]:
    """Yield ``(item, result, None)`` or ``(item, None, reason)`` for every item, in completion order.

    ``initializer(state)`` runs once in each worker (inherited by fork, pickled by spawn). A worker that
    dies or runs past ``time_limit`` seconds on a task costs that task only."""
    if not items:
        return
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    pending = list(enumerate(items))
    pending.reverse()  # pop() from the end hands the items out in order
    workers: list[_Worker] = []
    try:
        for _ in range(max(1, min(jobs, len(items)))):
            workers.append(_Worker.start(context, function, initializer, state))
        for index in range(len(workers)):
            workers[index] = _given(workers[index], pending, context, function, initializer, state)
        while any(worker.task is not None for worker in workers):
            busy = [worker for worker in workers if worker.task is not None]
            timeout = None
            if time_limit is not None:
                timeout = max(0.0, min(worker.started + time_limit for worker in busy) - time.monotonic())
            ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy], timeout))
            for index, worker in enumerate(workers):
                if worker.task is None:
                    continue
                item = items[worker.task]
                if worker.connection in ready and worker.connection.poll():
                    try:
                        outcome, value = worker.connection.recv()
                    except (EOFError, OSError):
                        outcome, value = "died", None
                    if outcome == "ok":
                        yield item, value, None
                    elif outcome == "raised":
                        yield item, None, value
                    else:
                        yield item, None, _death(worker)
                        workers[index] = worker = worker.replace(context, function, initializer, state)
                    worker.task = None
                elif worker.process.sentinel in ready or worker.connection in ready:
                    yield item, None, _death(worker)
                    workers[index] = worker = worker.replace(context, function, initializer, state)
                elif time_limit is not None and time.monotonic() - worker.started >= time_limit:
                    yield item, None, f"took longer than {time_limit:g} s (the per-file time limit); stopped"
                    workers[index] = worker = worker.replace(context, function, initializer, state)
                else:
                    continue
                workers[index] = _given(worker, pending, context, function, initializer, state)
    finally:
        for worker in workers:
            worker.stop()


def _given(worker: "_Worker", pending, context, function, initializer, state) -> "_Worker":
    """``worker`` with the next pending task, or a fresh worker with it if this one died while idle."""
    if worker.give(pending):
        return worker
    worker = worker.replace(context, function, initializer, state)
    worker.give(pending)
    return worker


def _death(worker: "_Worker") -> str:
    worker.process.join(5)
    code = worker.process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory?)" if -code == signal.SIGKILL else ""
        return f"the worker processing this file was killed by {name}{hint}"
    return f"the worker processing this file exited unexpectedly (exit code {code})"


class _Worker:
    def __init__(self, process, connection: Connection) -> None:
        self.process = process
        self.connection = connection
        self.task: int | None = None
        self.started = 0.0

    @classmethod
    def start(cls, context, function, initializer, state) -> "_Worker":
        parent_end, child_end = context.Pipe()
        process = context.Process(target=_serve, args=(child_end, function, initializer, state), daemon=True)
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C during the fork must not reach the child
        try:
            process.start()
        finally:
            signal.signal(signal.SIGINT, handler)
        child_end.close()
        return cls(process, parent_end)

    def give(self, pending: list[tuple[int, Any]]) -> bool:
        """Send the next task; False (the task stays pending) when the worker died while idle."""
        if not pending:
            return True
        index, item = pending[-1]
        try:
            self.connection.send((item,))
        except OSError:
            return False
        pending.pop()
        self.task, self.started = index, time.monotonic()
        return True

    def replace(self, context, function, initializer, state) -> "_Worker":
        self.stop()
        return _Worker.start(context, function, initializer, state)

    def stop(self) -> None:
        """End the worker: politely when idle, with SIGKILL when busy or deaf."""
        if self.process.is_alive() and self.task is None:
            try:
                self.connection.send(None)
            except OSError:
                pass
            self.process.join(1)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.connection.close()


def _serve(connection: Connection, function, initializer, state) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    initializer(state)
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if message is None:
            return
        (item,) = message
        try:
            reply = ("ok", function(item))
        except BaseException as error:  # the function's own guard failed: report it, keep serving
            reply = ("raised", f"internal error {type(error).__name__}: {error}")
        connection.send(reply)
