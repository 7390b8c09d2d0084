"""rt8Q-12 as a class: NM110's run-time auto_cast_type -> dtype mapping applies to any side-effect-free expression
(a conditional, ``or`` of reads and literals), not only to a name or an environment read; a call that may have
side effects, or a torch dtype in a branch (no auto_cast_type string), keeps the todo."""

import libcst as cst
import torch

from tests.rules.case import migrate


def _load_call(text: str) -> cst.Call:
    calls = [node.value for line in cst.parse_module(text).body if isinstance(line, cst.SimpleStatementLine)
             for node in line.body if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)]
    return next(call for call in calls if cst.Module([]).code_for_node(call.func).endswith("from_pretrained"))


def _dtype(call: cst.Call) -> cst.Arg | None:
    return next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "dtype"), None)


def _dtype_expression(text: str) -> str:
    arg = _dtype(_load_call(text))
    assert arg is not None
    return cst.Module([]).code_for_node(arg.value)


def _run(source: str) -> str:
    return migrate(
        f"""
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained(
            "m", export=True, batch_size=1, sequence_length=128, num_cores=1, auto_cast_type={source})
        """,
        "NM110",
    ).text


def test_a_conditional_of_literals_maps_to_the_same_dtype_at_run_time() -> None:
    text = _run('"bf16" if args.bf16 else "fp16"')
    expression = _dtype_expression(text)
    assert expression.endswith('.get("bf16" if args.bf16 else "fp16", "auto")')

    class Args:
        bf16 = True

    assert eval(expression, {"torch": torch, "args": Args}) is torch.bfloat16
    Args.bf16 = False
    assert eval(expression, {"torch": torch, "args": Args}) is torch.float16


def test_an_or_default_maps_and_an_unknown_string_leaves_the_checkpoint_dtype() -> None:
    expression = _dtype_expression(_run('cfg.get_dtype or "fp32"'))

    class Cfg:
        get_dtype = ""

    assert eval(expression, {"torch": torch, "cfg": Cfg}) is torch.float32
    Cfg.get_dtype = "tf32"
    assert eval(expression, {"torch": torch, "cfg": Cfg}) == "auto"


def test_a_torch_dtype_branch_or_a_call_keeps_the_todo() -> None:
    for source in ('torch.bfloat16 if args.bf16 else torch.float16', '"bf16" if pick() else "fp16"'):
        result = migrate(
            f"""
            import torch
            from optimum.neuron import NeuronModelForCausalLM

            model = NeuronModelForCausalLM.from_pretrained(
                "m", export=True, batch_size=1, sequence_length=128, num_cores=1, auto_cast_type={source})
            """,
            "NM110",
        )
        assert _dtype(_load_call(result.text)) is None
        assert any(f"auto_cast_type={source}" in f.message and f.severity.value == "todo" for f in result.findings)
