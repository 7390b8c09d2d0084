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


def test_an_all_reduce_inside_an_expression_stays_with_a_todo() -> None:
    source = """
        import torch_xla.core.xla_model as xm

        def norm(t):
            return xm.all_reduce(xm.REDUCE_SUM, t * t).sqrt()

        def log(t):
            print(xm.all_reduce(xm.REDUCE_SUM, t))
        """
    result = migrate(source, "NM311")
    assert "return xm.all_reduce(xm.REDUCE_SUM, t * t).sqrt()" in result.text
    assert "print(xm.all_reduce(xm.REDUCE_SUM, t))" in result.text
    assert findings(result, "NM311") == {(4, "todo"), (7, "todo")}
    assert "give its result a line of its own" in result.text


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
