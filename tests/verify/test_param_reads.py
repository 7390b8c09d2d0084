"""NM703 across modules: a function of another project module that reads a Neuron-era field on the arguments object
a script hands it (rtE p3_sm: ``describe_world(training_args)`` in code/helpers.py read
``training_args.tensor_parallel_size``; the script was migrated, the helper raised AttributeError)."""

from __future__ import annotations

import textwrap

from codemods.verify._param_reads import param_reads
from migrate.findings import Severity
from migrate.testing import apply_rules

HELPERS = textwrap.dedent("""\
    import os


    def _summary(args):
        return f"tp={args.tensor_parallel_size} rank={os.environ.get('RANK', 0)}"


    def describe_world(training_args, *, verbose=False):
        print(_summary(training_args), training_args.learning_rate)


    def probe(args):
        if hasattr(args, "zero_1"):
            print(args.zero_1)
        try:
            print(args.trn_config)
        except AttributeError:
            pass
        return getattr(args, "pipeline_parallel_size", 1)


    class RunLogger:
        def __init__(self, name, args):
            self.degree = args.tensor_parallel_size


    def rebinds(args):
        args = dict(args)
        return args.zero_1
""")

SCRIPT = """\
from transformers import HfArgumentParser
from optimum.neuron import NeuronTrainingArguments
{imports}


def main():
    (training_args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()
    {call}


if __name__ == "__main__":
    main()
"""


def _run(imports: str, call: str, path: str = "train.py", helpers: str = "helpers.py"):
    source = SCRIPT.format(imports=imports, call=call)
    return apply_rules(source, select=["NM2", "NM7"], path=path, project={helpers: HELPERS})


def test_fact_follows_parameters_through_the_module() -> None:
    reads = param_reads(HELPERS)
    assert reads == {
        "_summary": [(0, "args", "tensor_parallel_size", 5)],
        "describe_world": [(0, "training_args", "tensor_parallel_size", 5)],
        "RunLogger": [(1, "args", "tensor_parallel_size", 24)],
    }  # probe's guarded reads and rebinds' rebound parameter are not counted


def test_cross_module_read_withdraws_the_rename() -> None:
    for imports, call in [("from helpers import describe_world", "describe_world(training_args)"),
                          ("import helpers", "helpers.describe_world(training_args=training_args)"),
                          ("from helpers import RunLogger", 'RunLogger("run", training_args)')]:
        result = _run(imports, call)
        assert "NeuronTrainingArguments" in result.text, call  # the file stays as it was
        withdrawn = [f for f in result.findings if f.rule == "NM201" and f.severity is Severity.TODO]
        assert withdrawn and "helpers.py:" in withdrawn[0].message, call
        assert apply_rules(result.text, select=["NM2", "NM7"], project={"helpers.py": HELPERS}).text == result.text


def test_relative_import_in_a_package() -> None:
    result = _run("from .helpers import describe_world", "describe_world(training_args)", path="pkg/train.py",
                  helpers="pkg/helpers.py")
    assert "NeuronTrainingArguments" in result.text
    assert any("on it in pkg/helpers.py" in f.message for f in result.findings if f.rule == "NM201")


def test_guarded_or_unrelated_reads_do_not_block() -> None:
    for imports, call in [("from helpers import probe", "probe(training_args)"),
                          ("from helpers import rebinds", "rebinds(training_args)"),
                          ("from helpers import describe_world", "describe_world(None)"),
                          ("from other import describe_world", "describe_world(training_args)")]:
        result = _run(imports, call)
        assert "NeuronTrainingArguments" not in result.text, call
        assert not any(f.rule == "NM703" for f in result.findings), call
