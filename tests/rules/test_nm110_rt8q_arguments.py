"""NM110 / NM120 arguments the rt8Q red team found reported wrongly: continuous batching reported as a dropped
compiler-only argument (rt8Q-11), an inline environment read of auto_cast_type dropped (rt8Q-12), a compiled-config
read on a reload linked to an export left with a todo (rt8Q-13), and padding advice for a tokenizer call that
already pads (rt8Q-14)."""

from tests.rules.case import findings, migrate


def _code(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def test_continuous_batching_true_is_a_todo_saying_what_it_served_and_what_to_use_now() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained(
            MODEL_ID, export=True, continuous_batching=True, batch_size=BATCH_SIZE, sequence_length=2048, num_cores=1)
        """,
        "NM110",
    )
    messages = [f.message for f in result.findings if f.rule == "NM110"]
    assert not any("compiler-only" in m and "continuous_batching" in m for m in messages)
    todo = next(f for f in result.findings if f.severity.value == "todo" and "continuous_batching=True" in f.message)
    assert "concurrent requests" in todo.message and "generate_batch" in todo.message
    assert "init_continuous_batching" in todo.message and "--max-num-seqs" in todo.message
    assert "continuous_batching" not in _code(result.text)


def test_continuous_batching_false_is_dropped_as_done() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained(
            "m", export=True, continuous_batching=False, batch_size=1, sequence_length=128, num_cores=1)
        """,
        "NM110",
    )
    assert any(f.severity.value == "fixed" and "compiler-only arguments: export, continuous_batching" in f.message
               for f in result.findings)
    assert not any("continuous batching" in f.message for f in result.findings if f.severity.value == "todo")


def test_an_inline_environment_read_of_auto_cast_type_maps_to_dtype_at_run_time() -> None:
    result = migrate(
        """
        import os
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained(
            "m", export=True, batch_size=1, sequence_length=128, num_cores=1,
            auto_cast_type=os.environ.get("AUTO_CAST_TYPE", "bf16"))
        """,
        "NM110",
    )
    assert '.get(os.environ.get("AUTO_CAST_TYPE", "bf16"), "auto")' in result.text
    assert '"fp16": torch.float16' in result.text
    assert not any("pass dtype=" in f.message for f in result.findings)


def test_a_call_that_is_no_plain_read_keeps_the_auto_cast_todo() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained(
            "m", export=True, batch_size=1, sequence_length=128, num_cores=1, auto_cast_type=pick_dtype())
        """,
        "NM110",
    )
    assert "dtype=" not in _code(result.text).split("from_pretrained(")[1].split("\n")[0]
    assert any("auto_cast_type=pick_dtype()" in f.message and f.severity.value == "todo" for f in result.findings)


LINKED = """
from optimum.neuron import NeuronModelForCausalLM

model = NeuronModelForCausalLM.from_pretrained("org/llama", export=True, batch_size={batch}, sequence_length=256,
                                               num_cores=1)
model.save_pretrained("llama-neuron")
reloaded = NeuronModelForCausalLM.from_pretrained("llama-neuron")
print(reloaded.config.neuron["batch_size"], reloaded.neuron_config.sequence_length)
"""


def test_a_compiled_config_read_on_a_reload_linked_to_a_literal_export_becomes_the_literal() -> None:
    result = migrate(LINKED.format(batch=2), "NM110", project={"train.py": LINKED.format(batch=2)})
    assert "print(2, 256)" in result.text
    assert (7, "fixed") in findings(result, "NM110")


def test_a_reload_of_an_export_with_a_run_time_batch_size_is_not_linked_and_keeps_the_read() -> None:
    text = LINKED.format(batch="BS")
    result = migrate(text, "NM110", project={"train.py": text})
    assert 'reloaded.config.neuron["batch_size"]' in result.text  # the export's shapes are not constants


PADDED = """
import torch
from optimum.neuron import NeuronModelForSequenceClassification
from transformers import AutoTokenizer

model = NeuronModelForSequenceClassification.from_pretrained("m", export=True, batch_size=4, sequence_length=128)
tok = AutoTokenizer.from_pretrained("m")
enc = tok(["a", "b"], padding="max_length", max_length={length}, truncation=True, return_tensors="pt")
with torch.no_grad():
    logits = model(**enc).logits
"""


def test_nm120_padding_advice_is_left_out_when_the_tokenizer_call_already_pads_to_the_compiled_length() -> None:
    result = migrate(PADDED.format(length=128), "NM120")
    note = next(f.message for f in result.findings if "compiled static shapes" in f.message)
    assert "tokenize with padding" not in note
    assert "already pad to 128" in note and "keep every batch at 4" in note


def test_nm120_padding_advice_stays_when_the_tokenizer_pads_to_another_length() -> None:
    result = migrate(PADDED.format(length=64), "NM120")
    note = next(f.message for f in result.findings if "compiled static shapes" in f.message)
    assert 'tokenize with padding="max_length", max_length=128, truncation=True' in note
