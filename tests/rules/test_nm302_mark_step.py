"""NM302: step boundaries are removed, except right before a clock read, where the device must be waited for."""

from tests.rules.case import findings, migrate, unchanged

SYNC = "if torch.accelerator.is_available():\n{pad}    torch.accelerator.synchronize()\n"


def test_mark_step_followed_by_a_clock_read_becomes_a_synchronize() -> None:
    result = migrate(
        """
        import time
        import torch_xla.core.xla_model as xm

        def bench(model, batches):
            for step, batch in enumerate(batches):
                model(batch)
                xm.mark_step()
                if step == 2:
                    start = time.perf_counter()
            return start
        """,
        "NM302",
    )
    assert "        model(batch)\n        " + SYNC.format(pad="        ") + "        if step == 2:" in result.text
    assert "xm." not in result.text
    assert findings(result, "NM302") == {(7, "fixed")}


def test_timed_loop_gets_one_synchronize_after_it() -> None:
    result = migrate(
        """
        import time
        import torch_xla.core.xla_model as xm

        def bench(model, batches):
            start = time.time()
            for batch in batches:
                model(batch)
                xm.mark_step()
            elapsed = time.time() - start
            for batch in batches:
                model(batch)
                xm.mark_step()
            return elapsed
        """,
        "NM302",
    )
    # one wait after the timed loop, none in its body; the loop no clock read follows gets none at all
    assert "        model(batch)\n    " + SYNC.format(pad="    ") + "    elapsed = time.time() - start" in result.text
    assert result.text.count("synchronize()") == 1
    assert findings(result, "NM302") == {(8, "fixed"), (12, "fixed")}
    assert any("after it" in f.message for f in result.findings if f.line == 8)


def test_mark_step_without_a_clock_read_next_is_removed() -> None:
    result = migrate(
        """
        import time
        import torch_xla.core.xla_model as xm

        def train(model, batches, optimizer):
            for batch in batches:
                model(batch).backward()
                optimizer.step()
                xm.mark_step()
                print("step done")
            print("the clock is read elsewhere", time.time())
        """,
        "NM302",
    )
    assert "synchronize" not in result.text and "mark_step" not in result.text
    assert findings(result, "NM302") == {(8, "fixed")}


def test_clock_reads_without_torch_xla_are_left_alone() -> None:
    unchanged(
        """
        import time
        import torch

        def bench(model, batch):
            model(batch)
            torch.accelerator.synchronize()
            return time.time()
        """,
        "NM302",
    )


def test_migrated_timing_runs_on_a_machine_without_an_accelerator() -> None:
    """The synchronize is guarded: torch.accelerator.synchronize() raises where no accelerator exists."""
    import torch

    result = migrate(
        """
        import time
        import torch_xla.core.xla_model as xm

        def bench(model, batches):
            start = time.perf_counter()
            for batch in batches:
                model(batch)
                xm.mark_step()
            xm.wait_device_ops()
            return time.perf_counter() - start
        """,
        "NM302",
    )
    namespace: dict = {}
    exec(compile(result.text, "bench.py", "exec"), namespace)
    assert namespace["bench"](torch.nn.Linear(2, 2), [torch.ones(1, 2)] * 3) >= 0.0
    assert result.text.count("torch.accelerator.synchronize()") == 1  # the wait: the loop is not timed by itself


def test_an_arm_left_with_only_pass_goes_where_the_chain_stays_the_same() -> None:
    result = migrate(
        """
        import torch
        import torch_xla.core.xla_model as xm

        def sync(device):
            if device.type == "xla":
                xm.mark_step()
            elif device.type == "cuda":
                torch.cuda.synchronize()

        def step(device):
            if device.type == "xla":
                xm.mark_step()

        def last(device):
            if device.type == "cuda":
                torch.cuda.synchronize()
            elif device.type == "xla":
                xm.mark_step()
        """,
        "NM302",
    )
    assert 'def sync(device):\n    if device.type == "cuda":\n        torch.cuda.synchronize()\n' in result.text
    assert 'def step(device):\n    pass\n' in result.text
    assert 'def last(device):\n    if device.type == "cuda":\n        torch.cuda.synchronize()\n' in result.text
    assert "xla" not in result.text.split("import torch_xla.core.xla_model as xm")[-1]


def test_an_arm_the_next_one_does_not_exclude_stays() -> None:
    result = migrate(
        """
        import torch
        import torch_xla.core.xla_model as xm

        def sync(device, flush):
            if device.type == "xla":
                xm.mark_step()
            elif flush:
                torch.cuda.synchronize()
            if on_xla():
                xm.mark_step()
        """,
        "NM302",
    )
    assert '    if device.type == "xla":\n        pass\n    elif flush:' in result.text
    assert "    if on_xla():\n        pass\n" in result.text  # the test calls a function: it stays


def test_the_synchronize_goes_into_the_if_that_reads_the_clock_on_logging_steps() -> None:
    # rt4F 7: the clock is read on logging steps only; a sync on every step stalls the device queue
    result = migrate(
        """
        import time
        import torch_xla.core.xla_model as xm

        def train(model, batches, log_every, log):
            t0 = time.time()
            for step, batch in enumerate(batches):
                model(batch).sum().backward()
                if step % log_every == 0:
                    log(step, t0)
                xm.mark_step()
                if step % log_every == 0:
                    t0 = time.time()
        """,
        "NM302",
    )
    assert ("        if step % log_every == 0:\n            " + SYNC.format(pad="            ")
            + "            t0 = time.time()") in result.text
    assert result.text.count("synchronize()") == 1
    assert findings(result, "NM302") == {(10, "fixed")}


def test_the_synchronize_stays_before_the_if_where_a_read_after_the_loop_relies_on_it() -> None:
    result = migrate(
        """
        import time
        import torch_xla.core.xla_model as xm

        def bench(model, batches):
            for step, batch in enumerate(batches):
                model(batch)
                xm.mark_step()
                if step == 2:
                    start = time.perf_counter()
            return time.perf_counter() - start
        """,
        "NM302",
    )
    assert "        model(batch)\n        " + SYNC.format(pad="        ") + "        if step == 2:" in result.text


def test_an_else_left_with_only_step_boundaries_goes() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def train(model, batches, optimizer, accum):
            for micro, batch in enumerate(batches):
                model(batch).backward()
                if micro % accum == 0:
                    optimizer.step()
                else:
                    xm.mark_step()
            else:
                xm.mark_step()
                xm.mark_step()
            while False:
                pass
            else:
                xm.mark_step()
        """,
        "NM302",
    )
    assert "else" not in result.text and "pass" not in result.text.split("while False:")[0]
    assert "            optimizer.step()\n    while False:\n        pass\n" in result.text
    assert findings(result, "NM302") == {(9, "fixed"), (11, "fixed"), (12, "fixed"), (16, "fixed")}


def test_an_else_that_keeps_other_work_or_a_comment_stays() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def step(optimizer, micro, accum):
            if micro % accum == 0:
                optimizer.step()
            else:  # accumulate: the graph is cut here
                xm.mark_step()
            if micro:
                optimizer.zero_grad()
            else:
                xm.mark_step()
                print("accumulating")
        """,
        "NM302",
    )
    assert "    else:  # accumulate: the graph is cut here\n        pass\n" in result.text
    assert "    else:\n        print(\"accumulating\")\n" in result.text
