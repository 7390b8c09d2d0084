"""Lines of several statements (``opt.step(); xm.mark_step()``): the rules that rewrite a statement of their own
rewrite it there too, keeping its siblings on the line (rt5I entry 5: the step boundary stayed, so did torch_xla)."""

from tests.rules.case import findings, migrate

SYNC = "if torch.accelerator.is_available():\n{pad}    torch.accelerator.synchronize()\n"


def test_step_boundary_goes_and_its_sibling_stays() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def train(model, optimizer, batches):
            for batch in batches:
                model(batch).sum().backward()
                optimizer.step(); xm.mark_step()  # one step
                xm.mark_step(); optimizer.zero_grad(); xm.mark_step()
        """,
        "NM302",
    )
    assert "        optimizer.step()  # one step\n        optimizer.zero_grad()\n" in result.text
    assert "xm" not in result.text and ";" not in result.text
    assert findings(result, "NM302") == {(6, "fixed"), (7, "fixed")}
    assert len([f for f in result.findings if f.rule == "NM302"]) == 3


def test_a_line_of_step_boundaries_only_goes_whole() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def train(model, batches):
            for batch in batches:
                model(batch)
                xm.mark_step(); xm.mark_step()
            return model
        """,
        "NM302",
    )
    assert "        model(batch)\n    return model\n" in result.text and "xm" not in result.text


def test_clock_read_later_on_the_line_or_next_keeps_its_wait() -> None:
    result = migrate(
        """
        import time
        import torch_xla.core.xla_model as xm

        def bench(model, batch):
            model(batch); xm.mark_step(); start = time.perf_counter()
            model(batch); xm.mark_step()
            end = time.perf_counter()
            n = 1; xm.wait_device_ops()
            return end - start, n
        """,
        "NM302",
    )
    sync = SYNC.format(pad="    ")
    assert f"    model(batch)\n    {sync}    start = time.perf_counter()\n" in result.text
    assert f"    model(batch)\n    {sync}    end = time.perf_counter()\n" in result.text
    assert f"    n = 1\n    {sync}    return" in result.text
    assert result.text.count("synchronize()") == 3


def test_a_step_in_a_timed_loop_moves_its_wait_after_the_loop() -> None:
    result = migrate(
        """
        import time
        import torch_xla.core.xla_model as xm

        def bench(model, batches):
            start = time.time()
            for batch in batches:
                model(batch); xm.mark_step()
            return time.time() - start
        """,
        "NM302",
    )
    assert "        model(batch)\n    " + SYNC.format(pad="    ") + "    return time.time() - start" in result.text
    assert result.text.count("synchronize()") == 1


def test_one_line_block_keeps_no_dangling_semicolon() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def train(model, batch, flag):
            if flag: model(batch); xm.mark_step()
        """,
        "NM302",
    )
    assert "    if flag: model(batch)\n" in result.text


def test_optimizer_step_and_rendezvous_split_the_line() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def train(model, optimizer, batch):
            model(batch).sum().backward(); xm.optimizer_step(optimizer); optimizer.zero_grad()
            print("saved"); xm.rendezvous("saved")
        """,
        "NM303",
        family="NM3",
    )
    text = result.text
    assert "    model(batch).sum().backward()\n    if dist.is_initialized() and dist.get_world_size() > 1:" in text
    assert "    optimizer.step(); optimizer.zero_grad()\n" in text  # a simple replacement stays on the line
    assert '    print("saved")\n    if dist.is_initialized():\n        dist.barrier()\n' in text
    assert "xm" not in text
    assert findings(result, "NM303") == {(4, "fixed")}
    assert findings(result, "NM306") == {(5, "fixed")}


def test_each_rule_judges_its_own_statement_whichever_leaves_the_line_first() -> None:
    # NM302 and NM303 both rewrite this line: one of them splits it for both
    for select in ("NM3", "NM303"):
        result = migrate(
            """
            import torch_xla.core.xla_model as xm

            def train(optimizer):
                xm.optimizer_step(optimizer); xm.mark_step()
            """,
            "NM303",
            family=select,
        )
        alone = select == "NM303"  # NM302 does not run: its statement stays, next to the rewritten one
        assert ("    optimizer.step(); xm.mark_step()\n" if alone else "    optimizer.step()\n") in result.text
        assert ("xm." in result.text) is alone
        assert findings(result, "NM303") == {(4, "fixed")}


def test_metrics_report_goes_beside_work_and_stays_alone() -> None:
    result = migrate(
        """
        import torch_xla.debug.metrics as met

        def train(loss, debug):
            loss.backward(); print(met.metrics_report())
            if debug:
                print(met.metrics_report()); print(met.short_metrics_report())
        """,
        "NM313",
    )
    assert "    loss.backward()\n" in result.text
    # a line of reports only may be all a flag's block does: it stays with the todo
    assert "        print(met.metrics_report()); print(met.short_metrics_report())\n" in result.text
    assert findings(result, "NM313") == {(4, "fixed"), (6, "todo")}
