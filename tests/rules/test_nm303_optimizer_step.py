"""NM303: whether a wrapper averages the gradients is decided for the function holding the step, not the file."""

from tests.rules.case import findings, migrate


def test_a_wrapper_in_another_function_does_not_count() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm


        def plain(opt):
            xm.optimizer_step(opt)


        def wrapped(accelerator, model, other):
            return accelerator.prepare(model, other)
        """,
        "NM303",
    )
    assert "dist.all_reduce(param.grad)" in result.text and "    opt.step()" in result.text
    assert findings(result, "NM303") == {(5, "fixed")}


def test_the_optimizer_prepared_in_the_same_function_is_wrapped() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm


        def train(accelerator, model, opt):
            model, opt = accelerator.prepare(model, opt)
            xm.optimizer_step(opt)
        """,
        "NM303",
    )
    assert "all_reduce" not in result.text and result.text.rstrip().endswith("    opt.step()")


def test_another_optimizer_prepared_in_the_same_function_does_not_count() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm


        def train(accelerator, model, opt, other):
            accelerator.prepare(model, other)
            xm.optimizer_step(opt)
        """,
        "NM303",
    )
    assert "dist.all_reduce(param.grad)" in result.text


def test_ddp_in_the_same_function_is_wrapped() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm
        from torch.nn.parallel import DistributedDataParallel


        def train(model, opt):
            model = DistributedDataParallel(model)
            xm.optimizer_step(opt)
        """,
        "NM303",
    )
    assert "all_reduce" not in result.text and result.text.rstrip().endswith("    opt.step()")
