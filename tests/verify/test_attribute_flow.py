"""NM703 follows a stock value to the names it reaches (T2): a plain alias (``args = training_args``) and an
unannotated parameter of a module-level function that every call of the function passes the value
(``def build(targs): ...`` called as ``build(training_args)``). A read of a removed Neuron field through either
raised AttributeError after migration with no word. Every reported read is run for real (AttributeError), the
others run through."""

from __future__ import annotations

import pytest

from tests.verify.helpers import check, outcomes

ARGS = "from transformers import TrainingArguments\ntraining_args = TrainingArguments(output_dir='out')\n"

REPORTED = {
    "alias": (ARGS + "args = training_args\nif args.zero_1:\n    print('zero')", "zero_1", 4),
    "alias_in_function": (
        "from transformers import TrainingArguments\n"
        "def main():\n    training_args = TrainingArguments(output_dir='out')\n    args = training_args\n"
        "    return args.tensor_parallel_size\nmain()", "tensor_parallel_size", 5),
    "alias_of_alias": (ARGS + "a = training_args\nb = a\nprint(b.trn_config)", "trn_config", 5),
    "parameter_every_call": (
        ARGS + "def build(targs):\n    return targs.tensor_parallel_size\n"
        "build(training_args)\nbuild(targs=training_args)", "tensor_parallel_size", 4),
    "parameter_second_position": (
        ARGS + "def build(name, targs, scale=1):\n    return targs.zero_1\nbuild('x', training_args)", "zero_1", 4),
    "parameter_of_constructed_value": (
        "from transformers import TrainingArguments\n"
        "def build(targs):\n    return targs.trn_config\nbuild(TrainingArguments(output_dir='out'))", "trn_config", 3),
}


@pytest.mark.parametrize("name", REPORTED)
def test_read_through_alias_or_parameter_is_reported(name: str) -> None:
    source, attribute, line = REPORTED[name]
    found = check(source)
    assert [rule for rule, _, _ in found] == ["NM703"], found
    assert f"`{attribute}`" in found[0][2] and "will raise AttributeError" in found[0][2]
    assert found[0][1] == line


NOT_REPORTED = {
    "alias_of_another_object": (
        ARGS + "import argparse\nns = argparse.Namespace(zero_1=True)\nargs = ns\nprint(args.zero_1)"),
    "alias_bound_twice": (
        ARGS + "import argparse\nargs = training_args\nargs = argparse.Namespace(zero_1=True)\nprint(args.zero_1)"),
    "parameter_also_called_with_other_objects": (
        ARGS + "import argparse\ndef build(targs):\n    return targs.tensor_parallel_size\n"
        "build(argparse.Namespace(tensor_parallel_size=2))\nif False:\n    build(training_args)"),
    "parameter_left_to_default": (
        ARGS + "import argparse\ndef build(targs=argparse.Namespace(zero_1=1)):\n    return targs.zero_1\n"
        "build()\nif False:\n    build(training_args)"),
    "function_passed_around": (
        ARGS + "import argparse\ndef build(targs):\n    return targs.zero_1\n"
        "run = build\nrun(argparse.Namespace(zero_1=1))\nif False:\n    build(training_args)"),
    "decorated_function": (
        ARGS + "import argparse, functools\n"
        "def swap(f):\n    return lambda a: f(argparse.Namespace(zero_1=1))\n"
        "@swap\ndef build(targs):\n    return targs.zero_1\nbuild(training_args)"),
    "method_parameter": (
        ARGS + "import argparse\nclass Holder:\n    def build(self, targs):\n        return targs.zero_1\n"
        "Holder().build(argparse.Namespace(zero_1=1))\nif False:\n    Holder.build(None, training_args)"),
    "splatted_call": (
        ARGS + "import argparse\ndef build(targs):\n    return targs.zero_1\n"
        "build(*[argparse.Namespace(zero_1=1)])\nif False:\n    build(training_args)"),
    "parameter_reads_stock_field": (ARGS + "def build(targs):\n    return targs.output_dir\nbuild(training_args)"),
}


@pytest.mark.parametrize("name", NOT_REPORTED)
def test_other_objects_or_unknown_flows_are_not_reported(name: str) -> None:
    assert check(NOT_REPORTED[name]) == []


def test_reported_reads_raise_and_the_others_run() -> None:
    found = outcomes([source for source, _, _ in REPORTED.values()] + list(NOT_REPORTED.values()))
    assert found == ["AttributeError"] * len(REPORTED) + [""] * len(NOT_REPORTED)
