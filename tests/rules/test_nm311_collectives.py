"""NM311: xm.all_reduce(xm.REDUCE_SUM, t) -> dist.all_reduce(t, op=dist.ReduceOp.SUM); other collectives: todo."""

from tests.rules.case import findings, migrate, unchanged


def test_returned_value_form_becomes_a_clone_and_an_in_place_reduce() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def average(loss, world):
            total = xm.all_reduce(xm.REDUCE_SUM, loss, scale=1.0 / world)
            return total
        """,
        "NM311",
    )
    assert (
        "    total = loss.clone()\n"
        "    if dist.is_initialized():\n"
        "        dist.all_reduce(total, op=dist.ReduceOp.SUM)\n"
        "    total.mul_(1.0 / world)\n"
    ) in result.text
    assert findings(result, "NM311") == {(4, "fixed")}


def test_an_all_reduce_in_a_return_is_rewritten_like_the_assigned_form() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def average(loss, world):
            return xm.all_reduce(xm.REDUCE_SUM, loss, scale=1.0 / world)  # mean over ranks
        """,
        "NM311",
    )
    assert (
        "    reduced = loss.clone()\n"
        "    if dist.is_initialized():\n"
        "        dist.all_reduce(reduced, op=dist.ReduceOp.SUM)\n"
        "    reduced.mul_(1.0 / world)\n"
        "    return reduced  # mean over ranks\n"
    ) in result.text
    assert findings(result, "NM311") == {(4, "fixed")}


def test_the_returned_copy_gets_a_name_the_file_does_not_use() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def total(reduced):
            return xm.all_reduce(xm.REDUCE_SUM, reduced)
        """,
        "NM311",
    )
    assert "    reduced_2 = reduced.clone()\n" in result.text and "    return reduced_2\n" in result.text


def test_an_all_reduce_inside_an_expression_is_computed_on_the_lines_before() -> None:
    source = """
        import torch_xla.core.xla_model as xm

        def norm(t):
            return xm.all_reduce(xm.REDUCE_SUM, t * t).sqrt()

        def log(t, meter):
            print(xm.all_reduce(xm.REDUCE_SUM, t))  # every rank
            meter.total += xm.all_reduce(xm.REDUCE_SUM, t, scale=0.5)
        """
    result = migrate(source, "NM311")
    assert (
        "    reduced = (t * t).clone()\n"
        "    if dist.is_initialized():\n"
        "        dist.all_reduce(reduced, op=dist.ReduceOp.SUM)\n"
        "    return reduced.sqrt()\n"
    ) in result.text
    assert (
        "    reduced = t.clone()\n"
        "    if dist.is_initialized():\n"
        "        dist.all_reduce(reduced, op=dist.ReduceOp.SUM)\n"
        "    print(reduced)  # every rank\n"
        "    reduced = t.clone()\n"
        "    if dist.is_initialized():\n"
        "        dist.all_reduce(reduced, op=dist.ReduceOp.SUM)\n"
        "    reduced.mul_(0.5)\n"
        "    meter.total += reduced\n"
    ) in result.text
    assert "xm." not in result.text
    assert findings(result, "NM311") == {(4, "fixed"), (7, "fixed"), (8, "fixed")}


def test_a_returned_or_bare_mesh_reduce_calls_fn_once_after_one_guard() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def average_loss(loss_value):
            return xm.mesh_reduce("loss_reduce", loss_value, lambda xs: sum(xs) / len(xs))

        def sync():
            xm.mesh_reduce("sync", 0, print)
        """,
        "NM311",
    )
    assert (
        "def average_loss(loss_value):\n"
        "    _per_rank = [loss_value]\n"  # a name: read again for the gather, fn written once
        "    if dist.is_initialized():\n"
        "        _per_rank = [None] * dist.get_world_size()\n"
        "        dist.all_gather_object(_per_rank, loss_value)\n"
        "    return (lambda xs: sum(xs) / len(xs))(_per_rank)\n"
    ) in result.text
    assert (
        "def sync():\n"
        "    _per_rank = [0]\n"
        "    if dist.is_initialized():\n"
        "        _per_rank = [None] * dist.get_world_size()\n"
        "        dist.all_gather_object(_per_rank, 0)\n"
        "    print(_per_rank)\n"
    ) in result.text
    assert "xm." not in result.text and "torch_xla" not in result.text  # the import goes with its last use
    assert findings(result, "NM311") == {(4, "fixed"), (7, "fixed")}


def test_a_mesh_reduce_inside_a_statement_is_computed_into_a_name_first() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def log(meter, t, reduced):
            print("norm", xm.mesh_reduce("norm", t.item(), max))
            meter.avg = xm.mesh_reduce("avg", t.item(), sum) / 2
        """,
        "NM311",
    )
    assert (
        "    if dist.is_initialized():\n"
        "        _reduced_2_per_rank = [None] * dist.get_world_size()\n"
        "        dist.all_gather_object(_reduced_2_per_rank, t.item())\n"
        "        reduced_2 = max(_reduced_2_per_rank)\n"
        "    else:\n"
        "        reduced_2 = max([t.item()])\n"
        '    print("norm", reduced_2)\n'
    ) in result.text
    assert "        reduced_2 = sum(_reduced_2_per_rank)\n" in result.text
    assert "    meter.avg = reduced_2 / 2\n" in result.text
    assert "xm." not in result.text
    assert findings(result, "NM311") == {(4, "fixed"), (5, "fixed")}


def test_a_collective_that_would_run_at_another_time_stays_with_a_todo() -> None:
    """Moved before its statement, each would run before a call Python started first, run where Python skipped it
    (and/or, a conditional expression, a lambda, a comprehension), or one of two would run first: todo."""
    lines = [
        'print(step(), xm.mesh_reduce("x", 1, sum))',
        'ok = ready and xm.mesh_reduce("y", 1, sum)',
        'value = xm.mesh_reduce("z", 1, sum) if ready else 0',
        'fns = [lambda: xm.mesh_reduce("w", 1, sum)]',
        'totals = [xm.all_reduce(xm.REDUCE_SUM, t) for t in ts]',
        'print(xm.mesh_reduce("a", 1, sum), xm.mesh_reduce("b", 1, sum))',
        'assert xm.mesh_reduce("c", 1, sum) > 0',
        'table[xm.mesh_reduce("d", 1, sum)] = 1',
        'print(xm.all_reduce(xm.REDUCE_SUM, [a, b]))',
        'print(xm.mesh_reduce("e", 1))',
    ]
    for line in lines:
        source = f"import torch_xla.core.xla_model as xm\n\n\ndef f(step, ready, ts, table, a, b):\n    {line}\n"
        result = migrate(source, "NM311")
        assert f"    {line}\n" in result.text, line
        assert "reduced" not in result.text, line
        assert {severity for _, severity in findings(result, "NM311")} == {"todo"}, line


def test_a_returned_list_is_not_rewritten() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def both(a, b):
            return xm.all_reduce(xm.REDUCE_SUM, [a, b])
        """,
        "NM311",
    )
    assert "    return xm.all_reduce(xm.REDUCE_SUM, [a, b])\n" in result.text
    assert findings(result, "NM311") == {(4, "todo")}


def test_native_collectives_are_left_alone() -> None:
    unchanged(
        """
        import torch.distributed as dist
        import torch_xla.core.xla_model as xm

        device = xm.xla_device()  # another rule's business: the import stays
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        """,
        "NM311",
    )


def test_one_group_of_every_rank_is_the_world() -> None:
    """``groups=[list(range(world))]`` is every rank: the collective and the gradient average are ported."""
    result = migrate(
        """
        import torch_xla.core.xla_model as xm
        import torch_xla.runtime as xr

        world = xr.world_size()

        def step(optimizer, loss):
            total = xm.all_reduce(xm.REDUCE_SUM, loss, groups=[list(range(world))])
            xm.optimizer_step(optimizer, groups=[list(range(0, xm.xrt_world_size()))])
            return total
        """,
        "NM3",
        family="NM3",
    )
    assert "groups=" not in result.text and "no rule ports" not in result.text
    assert "dist.all_reduce(total, op=dist.ReduceOp.SUM)" in result.text
    assert "param.grad /= dist.get_world_size()" in result.text
    assert findings(result, "NM311") == {(7, "fixed")}
    assert findings(result, "NM303") == {(8, "fixed")}


def test_groups_that_may_not_be_every_rank_keep_the_file_on_torch_xla() -> None:
    """A part of the world, a name bound twice or a parameter, a list of several groups, groups passed by
    position: replica groups (a dist.new_group each)."""
    base = """
        import torch_xla.core.xla_model as xm
        import torch_xla.runtime as xr

        world = xr.world_size()

        def step(loss):
            return xm.all_reduce(xm.REDUCE_SUM, loss, groups=GROUPS)
        """
    sources = [base.replace("GROUPS", groups) for groups in (
        "[list(range(world // 2))]", "[list(range(world))[::2]]", "[list(range(4))]",
        "[list(range(0, world)), list(range(world))]", "[list(range(xr.global_ordinal()))]")]
    sources.append(base.replace("GROUPS", "[list(range(world))]").replace("def step(loss)", "def step(loss, world)"))
    sources.append(base.replace("GROUPS", "[list(range(world))]") + "\n        world = 8\n")
    sources.append(base.replace("loss, groups=GROUPS", "loss, 1.0, [[0, 1]]"))
    for source in sources:
        result = migrate(source, "NM3", family="NM3")
        assert "no rule ports (replica groups)" in result.text, source
        assert findings(result, "NM311") == set(), source


def test_a_list_unpacked_into_its_own_names_is_reduced_in_place() -> None:
    """`a, b = xm.all_reduce(op, [a, b])`: the list form reduces in place and returns the same list."""
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def totals(nll_sum, n_tok, meter, world):
            nll_sum, n_tok = xm.all_reduce(xm.REDUCE_SUM, [nll_sum, n_tok])  # every rank
            [meter.loss, meter.stats["n"]] = xm.all_reduce("max", (meter.loss, meter.stats["n"]), scale=1.0 / world)
            return nll_sum / n_tok
        """,
        "NM311",
    )
    assert (
        "    if dist.is_initialized():\n"
        "        dist.all_reduce(nll_sum, op=dist.ReduceOp.SUM)\n"
        "        dist.all_reduce(n_tok, op=dist.ReduceOp.SUM)  # every rank\n"
        "    if dist.is_initialized():\n"
        "        dist.all_reduce(meter.loss, op=dist.ReduceOp.MAX)\n"
        '        dist.all_reduce(meter.stats["n"], op=dist.ReduceOp.MAX)\n'
        "    meter.loss.mul_(1.0 / world)\n"
        '    meter.stats["n"].mul_(1.0 / world)\n'
        "    return nll_sum / n_tok\n"
    ) in result.text
    assert "xm." not in result.text
    assert findings(result, "NM311") == {(4, "fixed"), (5, "fixed")}


def test_a_statement_list_keeps_its_trailing_comment() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def totals(correct, total):
            xm.all_reduce(xm.REDUCE_SUM, [correct, total])  # accuracy over every rank
        """,
        "NM311",
    )
    assert "        dist.all_reduce(total, op=dist.ReduceOp.SUM)  # accuracy over every rank\n" in result.text


def test_list_forms_the_rule_cannot_port_get_a_todo_worded_by_their_shape() -> None:
    cases = {
        "x, y = xm.all_reduce(xm.REDUCE_SUM, [a, b])":
            "x, y = xm.all_reduce(op, [a, b]): the list's tensors are reduced in place and the same list is returned: "
            "dist.all_reduce(a, op=dist.ReduceOp.SUM); dist.all_reduce(b, op=dist.ReduceOp.SUM), then x, y = [a, b]",
        "b, a = xm.all_reduce(xm.REDUCE_SUM, [a, b])": "then b, a = [a, b]",
        "a, *b = xm.all_reduce(xm.REDUCE_SUM, [a, b])": "then a, *b = [a, b]",
        "a, b = xm.all_reduce(xm.REDUCE_SUM, grads)":
            "xm.all_reduce(op, grads) unpacked: a list of tensors is reduced in place and returned: for t in grads: "
            "dist.all_reduce(t, op=dist.ReduceOp.SUM), then unpack grads",
        "a, b = xm.all_reduce(xm.REDUCE_SUM, [a + b, b])":
            "xm.all_reduce on the list [a + b, b]: its tensors are reduced in place",
        "xm.all_reduce(xm.REDUCE_SUM, [*grads])":
            "xm.all_reduce on the list [*grads]: its tensors are reduced in place",
        "xm.all_reduce(xm.REDUCE_SUM, [a, a])": "a list of distinct names, attributes or subscripts only",
        "xm.all_reduce(xm.REDUCE_SUM, [g[i + 1], a])": "xm.all_reduce on the list [g[i + 1], a]",
        "xm.all_reduce(xm.REDUCE_SUM, grads, scale=0.5)":
            "xm.all_reduce(op, grads) as a statement: if grads is a list of tensors it is reduced in place: for t in "
            "grads: dist.all_reduce(t, op=dist.ReduceOp.SUM) then t.mul_(0.5); if it is one tensor, the reduced copy "
            "xm.all_reduce returned is thrown away",
    }
    for line, note in cases.items():
        source = f"import torch_xla.core.xla_model as xm\n\n\ndef f(a, b, grads, g, i):\n    {line}\n"
        result = migrate(source, "NM311")
        assert f"    {line}\n" in result.text, line
        assert note in result.text, (line, result.text)
        assert "inside an expression" not in result.text and "import torch.distributed" not in result.text, line
        assert findings(result, "NM311") == {(5, "todo")}, line


def test_native_in_place_reductions_of_a_list_are_left_alone() -> None:
    unchanged(
        """
        import torch.distributed as dist

        def totals(nll_sum, n_tok):
            for t in [nll_sum, n_tok]:
                dist.all_reduce(t, op=dist.ReduceOp.SUM)
            nll_sum, n_tok = [nll_sum, n_tok]
            return nll_sum / n_tok
        """,
        "NM311",
    )
