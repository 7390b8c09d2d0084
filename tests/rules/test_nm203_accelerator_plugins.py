"""NM203: a Neuron-only accelerator keyword whose value is a name bound to an optimum-neuron plugin (``mp_plugin =
ModelParallelismPlugin(...)``) takes that binding with it when nothing else reads it, so the file no longer imports
optimum.neuron on that path (rt5I 1: the binding and its import stayed, ModuleNotFoundError on the default run).
A binding something else reads keeps the keyword and the file stays on NeuronAccelerator (verification withdraws
the class move), instead of a "fixed" Accelerator beside an optimum.neuron import."""

import textwrap

from migrate.testing import apply_rules
from tests.rules.case import findings, migrate

BOUND = """
from optimum.neuron import NeuronAccelerator
from optimum.neuron.accelerate.utils import ModelParallelismPlugin


def build(args):
    mp_plugin = ModelParallelismPlugin({plugin_args})
    {extra}return NeuronAccelerator(mp_plugin=mp_plugin, gradient_accumulation_steps=args.grad_accum)
"""


def _source(plugin_args: str = "tensor_parallel_size=args.tp_size", extra: str = "") -> str:
    return BOUND.format(plugin_args=plugin_args, extra=extra)


def _todos(result) -> list[str]:
    return [finding.message for finding in result.findings if finding.rule == "NM203"]


def test_binding_read_only_by_the_keyword_goes_with_it_and_its_import_too():
    result = migrate(_source(), "NM203", family="NM2")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code
    assert "mp_plugin" not in code
    assert "return Accelerator(gradient_accumulation_steps=args.grad_accum)" in code
    [todo] = _todos(result)
    # the degree the plugin carried is named, with where it must go now
    assert "tensor parallel degree `args.tp_size` is not applied now" in todo
    assert "DistributedConfig(tp_size=args.tp_size" in todo and "ParallelismConfig(tp_size=args.tp_size" in todo
    assert findings(result, "NM201") == {(1, "fixed")}


def test_other_plugin_settings_are_named():
    result = migrate(_source("tensor_parallel_size=8, pipeline_parallel_size=2"), "NM203", family="NM2")
    [todo] = _todos(result)
    assert "degree `8`" in todo and "other settings (pipeline_parallel_size=2)" in todo


def test_module_level_binding_goes_too():
    source = """
    from optimum.neuron import NeuronAccelerator
    from optimum.neuron.accelerate.utils import ModelParallelismPlugin

    plugin = ModelParallelismPlugin(tensor_parallel_size=int("2"))
    accelerator = NeuronAccelerator(mp_plugin=plugin)
    """
    result = migrate(source, "NM203", family="NM2")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code and "plugin" not in code
    assert "accelerator = Accelerator()" in code


def test_module_level_binding_read_in_a_function_goes_too():
    source = """
    from optimum.neuron import NeuronAccelerator
    from optimum.neuron.accelerate.utils import ModelParallelismPlugin

    PLUGIN = ModelParallelismPlugin(tensor_parallel_size=2)


    def build():
        return NeuronAccelerator(mp_plugin=PLUGIN)
    """
    result = migrate(source, "NM203", family="NM2")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code and "PLUGIN" not in code and "return Accelerator()" in code
    # read by a second function too: kept
    also_read = textwrap.dedent(source) + "\n\ndef degree():\n    return PLUGIN.tensor_parallel_size\n"
    kept = migrate(also_read, "NM203", family="NM2")
    assert "PLUGIN = ModelParallelismPlugin(tensor_parallel_size=2)" in kept.text
    assert "mp_plugin=PLUGIN" in kept.text


def test_annotated_binding_goes_too():
    source = """
    from optimum.neuron import NeuronAccelerator
    from optimum.neuron.accelerate.utils import ModelParallelismPlugin


    def build():
        plugin: ModelParallelismPlugin = ModelParallelismPlugin(tensor_parallel_size=4)
        return NeuronAccelerator(mp_plugin=plugin)
    """
    result = migrate(source, "NM203", family="NM2")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code and "plugin" not in code and "return Accelerator()" in code


def test_binding_read_elsewhere_keeps_the_keyword_and_says_why():
    result = migrate(_source(extra='print(mp_plugin.tensor_parallel_size)\n    '), "NM203", family="NM2")
    assert "mp_plugin = ModelParallelismPlugin(tensor_parallel_size=args.tp_size)" in result.text
    assert "mp_plugin=mp_plugin" in result.text
    [todo] = _todos(result)
    assert "mp_plugin=mp_plugin kept" in todo and "used 1 more time in this scope" in todo


def test_binding_read_elsewhere_keeps_the_file_on_neuron_accelerator_under_verification():
    text = textwrap.dedent(_source(extra='print(mp_plugin.tensor_parallel_size)\n    ')).lstrip("\n")
    result = apply_rules(text, select=["NM2", "NM7"], path="train.py")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert code == text.rstrip("\n")  # the code stays as it was: only notes are added
    assert not [finding for finding in result.findings if finding.severity.value in ("fixed", "error")]
    assert any(finding.rule == "NM201" and "not rewritten" in finding.message for finding in result.findings)


def test_binding_bound_twice_is_kept():
    source = """
    from optimum.neuron import NeuronAccelerator
    from optimum.neuron.accelerate.utils import ModelParallelismPlugin


    def build(tp):
        mp_plugin = ModelParallelismPlugin(tensor_parallel_size=tp)
        if tp == 1:
            mp_plugin = ModelParallelismPlugin()
        return NeuronAccelerator(mp_plugin=mp_plugin)
    """
    result = migrate(source, "NM203", family="NM2")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert code.count("ModelParallelismPlugin(") == 2
    [todo] = _todos(result)
    assert "kept" in todo


def test_construction_that_calls_code_is_kept():
    result = migrate(_source("tensor_parallel_size=ask_degree()"), "NM203", family="NM2")
    assert "mp_plugin = ModelParallelismPlugin(tensor_parallel_size=ask_degree())" in result.text
    [todo] = _todos(result)
    assert "ask_degree" in todo and "kept" in todo


def test_name_bound_to_other_code_keeps_the_binding_and_drops_the_keyword_as_before():
    source = """
    from optimum.neuron import NeuronAccelerator

    from helpers import make_plugin


    def build(tp):
        mp_plugin = make_plugin(tp)
        return NeuronAccelerator(mp_plugin=mp_plugin)
    """
    result = migrate(source, "NM203", family="NM2")
    assert "mp_plugin = make_plugin(tp)" in result.text
    assert "return Accelerator()" in result.text
    [todo] = _todos(result)
    assert todo.startswith("mp_plugin=mp_plugin removed (NeuronAccelerator only): ")


def test_inline_plugin_goes_with_the_keyword_as_before():
    source = """
    from optimum.neuron import NeuronAccelerator
    from optimum.neuron.accelerate.utils import ModelParallelismPlugin

    accelerator = NeuronAccelerator(mp_plugin=ModelParallelismPlugin(tensor_parallel_size=8))
    """
    result = migrate(source, "NM203", family="NM2")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code and "accelerator = Accelerator()" in code
