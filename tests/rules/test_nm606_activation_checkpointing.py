"""NM606: transformers 5's deprecated gradient_checkpointing_* model methods become activation_checkpointing_* where
the receiver is certainly a transformers model; other receivers get a todo, overrides are left alone. The renamed
calls run on the installed transformers without the FutureWarning the old ones print."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.rules.case import findings, migrate, unchanged


def test_a_loaded_model_gets_the_new_names() -> None:
    result = migrate(
        """
        from transformers import AutoModelForCausalLM

        def main(name):
            model = AutoModelForCausalLM.from_pretrained(name).to("cpu")
            model = model.to("cpu")
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if model.is_gradient_checkpointing:
                model.gradient_checkpointing_disable()
        """,
        "NM606",
    )
    new_call = 'model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})'
    assert new_call in result.text
    assert "if model.is_activation_checkpointing:" in result.text
    assert "model.activation_checkpointing_disable()" in result.text
    assert "gradient_checkpointing" not in result.text
    assert findings(result, "NM606") == {(6, "fixed"), (7, "fixed"), (8, "fixed")}


def test_a_receiver_that_is_not_certainly_a_transformers_model_gets_a_todo() -> None:
    source = """
        from peft import get_peft_model
        from transformers import AutoModelForCausalLM

        def main(name, other):
            model = AutoModelForCausalLM.from_pretrained(name)
            model = get_peft_model(model, None)
            model.gradient_checkpointing_enable()
            other.gradient_checkpointing_enable()
        """
    result = migrate(source, "NM606")
    code = [line for line in result.text.splitlines() if "# neuron-migrate:" not in line]
    assert code == textwrap.dedent(source).lstrip("\n").splitlines()
    assert findings(result, "NM606") == {(7, "todo"), (8, "todo")}
    assert all("activation_checkpointing_enable" in f.message for f in result.findings if f.rule == "NM606")


def test_an_override_and_its_super_call_are_left_alone() -> None:
    unchanged(
        """
        from transformers import LlamaForCausalLM

        class Mine(LlamaForCausalLM):
            def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None, **kwargs):
                super().gradient_checkpointing_enable(gradient_checkpointing_kwargs, **kwargs)
        """,
        "NM606",
    )


RUN = """
import warnings
from transformers import LlamaConfig, LlamaForCausalLM
config = LlamaConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
                     num_key_value_heads=1, vocab_size=32)
LlamaForCausalLM.from_config = classmethod(lambda cls, c: cls(c))
def main():
    model = LlamaForCausalLM.from_config(config)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    assert model.is_gradient_checkpointing
    model.gradient_checkpointing_disable()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    main()
print(sum(issubclass(w.category, FutureWarning) and "checkpointing" in str(w.message) for w in caught))
"""


def test_the_renamed_calls_run_without_the_deprecation_warning() -> None:
    migrated = migrate(RUN, "NM606").text
    assert "activation_checkpointing_enable(activation_checkpointing_kwargs=" in migrated
    counts = [subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
              for program in (textwrap.dedent(RUN), migrated)]
    assert [c.returncode for c in counts] == [0, 0], counts[-1].stderr[-2000:]
    assert [int(c.stdout.split()[-1]) for c in counts] == [3, 0]
