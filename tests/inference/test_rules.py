"""Edge cases of the inference rules (NM1xx) that the golden fixtures do not show, and rule metadata."""

from __future__ import annotations

import ast
import textwrap

import pytest

from migrate.registry import all_rules
from migrate.rule import Safety
from migrate.testing import apply_rules


def migrate(source: str, **options):
    result = apply_rules(textwrap.dedent(source), select=["NM1"], **options)
    ast.parse(result.text)
    again = apply_rules(result.text, select=["NM1"], **options)
    assert again.text == result.text, "not idempotent"
    return result


def todos(result) -> list[str]:
    return [f.message for f in result.findings if f.severity.value == "todo"]


def test_opaque_splat_is_kept_with_a_todo() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        model = NeuronModelForCausalLM.from_pretrained("gpt2", export=True, **vars(args))
    """)
    assert "**vars(args)" in result.text
    assert any("cannot be resolved statically" in m for m in todos(result))
    # the load, its import and the file stay on optimum-neuron: a stock call would get the splat's export keys
    assert 'NeuronModelForCausalLM.from_pretrained("gpt2", export=True, **vars(args))' in result.text
    assert "from optimum.neuron import NeuronModelForCausalLM" in result.text
    assert not [f for f in result.findings if f.severity.value == "fixed"]


def test_mutated_dict_is_not_expanded() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForSequenceClassification
        shapes = {"batch_size": 1}
        shapes["sequence_length"] = 128
        model = NeuronModelForSequenceClassification.from_pretrained("bert", export=True, **shapes)
    """)
    assert "**shapes" in result.text and 'shapes = {"batch_size": 1}' in result.text


def test_dict_used_twice_is_expanded_but_kept() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForSequenceClassification
        shapes = {"batch_size": 1, "sequence_length": 128}
        model = NeuronModelForSequenceClassification.from_pretrained("bert", export=True, **shapes)
        print(shapes)
    """)
    assert "**shapes" not in result.text and 'shapes = {"batch_size": 1, "sequence_length": 128}' in result.text


def test_get_neuron_config_used_elsewhere_is_kept_with_todo() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        cfg = NeuronModelForCausalLM.get_neuron_config("m", batch_size=1, sequence_length=128)
        print(cfg)
        model = NeuronModelForCausalLM.export("m", neuron_config=cfg)
    """)
    # the getter's result is read elsewhere, so it cannot be folded: the file stays on optimum-neuron as a whole
    # (renamed, AutoModelForCausalLM.get_neuron_config would raise AttributeError), with a todo saying why
    assert "NeuronModelForCausalLM.get_neuron_config(" in result.text
    assert "from optimum.neuron import NeuronModelForCausalLM" in result.text
    assert "AutoModelForCausalLM.get_neuron_config" not in "\n".join(
        line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert any("NM110 leaves this file on optimum-neuron" in m for m in todos(result))


def test_tp_one_keeps_device_map_and_no_distributed_config() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        model = NeuronModelForCausalLM.from_pretrained("m", export=True, num_cores=1, sequence_length=64, auto_cast_type="bf16")
    """)
    assert "DistributedConfig" not in result.text
    assert 'device_map=torch.accelerator.current_accelerator() or torch.device("cpu")' in result.text
    assert "dtype=torch.bfloat16" in result.text and "max_cache_len=64" in result.text


def test_training_causal_lm_is_not_touched() -> None:
    source = "from optimum.neuron.models.training import NeuronModelForCausalLM\nm = NeuronModelForCausalLM.from_pretrained('m', cfg)\n"
    assert migrate(source).text == source


def test_unassigned_decoder_call_gets_setup_as_todo() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        def load():
            return NeuronModelForCausalLM.from_pretrained("m", export=True, sequence_length=32, num_cores=1)
    """)
    code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("generation_config.update" in line or "CompileConfig" in line for line in code)
    assert any("max_cache_len=32" in m for m in todos(result))


def test_no_inline_notes_option() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        model = NeuronModelForCausalLM.from_pretrained("m", export=True, num_cores=2)
    """, inline_notes=False)
    assert "neuron-migrate:" not in result.text and todos(result)


NM1 = [rule for rule in all_rules() if rule.id.startswith("NM1")]


@pytest.mark.parametrize("rule", NM1, ids=[rule.id for rule in NM1])
def test_rule_metadata(rule) -> None:
    assert 100 <= int(rule.id[2:]) <= 199
    doc = rule.explanation()
    assert "Before" in doc and "After" in doc and "safety" in doc.lower()
    assert isinstance(rule.safety, Safety)
    assert all(len(trigger) > 8 for trigger in rule.triggers)


def test_unknown_keyword_from_a_neuron_dict_is_dropped_but_a_direct_one_keeps_the_file() -> None:
    """A key of a dict that holds Neuron shapes is optimum's (the stock from_pretrained raises TypeError on
    it); a keyword written directly may be a config override (rope_theta) or optimum's: the file stays, and the
    todo gives the config route the rule then migrates."""
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        shapes = {"batch_size": 1, "sequence_length": 64, "prompt_len": 16}
        model = NeuronModelForCausalLM.from_pretrained("m", export=True, num_cores=1, **shapes)
    """)
    code_lines = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("prompt_len" in line for line in code_lines)
    assert any("`prompt_len=16` (from **shapes" in m for m in todos(result))
    direct = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        model = NeuronModelForCausalLM.from_pretrained("m", export=True, num_cores=1, rope_theta=1e6)
    """)
    assert "NeuronModelForCausalLM.from_pretrained(" in direct.text and "AutoModelForCausalLM" not in direct.text
    assert any("`rope_theta=1e6`" in m and 'config=AutoConfig.from_pretrained("m", <key>=<value>)' in m
               for m in todos(direct))
    routed = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        from transformers import AutoConfig
        model = NeuronModelForCausalLM.from_pretrained(
            "m", export=True, num_cores=1, config=AutoConfig.from_pretrained("m", rope_theta=1e6))
    """)
    assert "AutoModelForCausalLM.from_pretrained(" in routed.text


def test_a_dict_without_neuron_keys_is_not_treated_as_optimums() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForSequenceClassification
        overrides = {"num_labels": 3}
        model = NeuronModelForSequenceClassification.from_pretrained("bert", export=True, batch_size=1, **overrides)
    """)
    assert "num_labels=3" in result.text
    assert not any("num_labels" in m and "dropped" in m for m in todos(result))
