"""NM322: accelerate never sets DistributedType.XLA on TorchNeuron: a test of it becomes the native Neuron check
where the branch is ported, a todo elsewhere; other distributed types are left alone."""

from codemods._lib.device import ON_NEURON
from tests.rules.case import findings, migrate, unchanged


def test_an_xla_type_test_becomes_the_native_check() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm
        from accelerate.utils import DistributedType, set_seed

        def run(accelerator):
            if accelerator.distributed_type == DistributedType.XLA:
                print(xm.xla_device())
            set_seed(0)
        """,
        "NM322",
        family="NM3",
    )
    assert result.text == (
        "import torch\n"
        "from accelerate.utils import set_seed\n\n"
        "def run(accelerator):\n"
        f"    if {ON_NEURON}:\n"
        '        print(torch.accelerator.current_accelerator() or torch.device("cpu"))\n'
        "    set_seed(0)\n"
    )
    assert findings(result, "NM322") == {(5, "fixed")}


def test_a_negated_test_in_a_boolean_operation() -> None:
    result = migrate(
        """
        import accelerate

        def pad(state, verbose):
            if verbose or state.distributed_type != accelerate.DistributedType.TPU:
                return 0
        """,
        "NM322",
        family="NM3",
    )
    assert f"if verbose or not ({ON_NEURON}):" in result.text
    assert findings(result, "NM322") == {(4, "fixed")}


def test_a_value_outside_an_if_test_gets_a_todo() -> None:
    result = migrate(
        """
        from accelerate import DistributedType

        def flag(accelerator):
            return accelerator.distributed_type == DistributedType.XLA
        """,
        "NM322",
        family="NM3",
    )
    assert "return accelerator.distributed_type == DistributedType.XLA" in result.text
    assert findings(result, "NM322") == {(4, "todo")}


def test_other_distributed_types_are_left_alone() -> None:
    unchanged(
        """
        from accelerate.utils import DistributedType

        def run(accelerator):
            if accelerator.distributed_type == DistributedType.MULTI_GPU:
                print("cuda")
        """,
        "NM322",
        family="NM3",
    )
