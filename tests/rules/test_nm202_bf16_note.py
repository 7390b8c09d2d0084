"""NM202: the bf16=True todo (optimum cast the model to bf16; stock bf16=True is autocast over fp32 weights) is
said only where the model the trainer gets is not already loaded in bf16, and its version part follows the
project's optimum-neuron pin (redteam-final #10)."""

from tests.rules.case import migrate

PINNED_03 = {"requirements.txt": "optimum-neuron==0.3.0\n"}
PINNED_04 = {"requirements.txt": "optimum-neuron==0.4.1\n"}
SCRIPT = """
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments


def main():
    model = AutoModelForCausalLM.from_pretrained("m", {dtype})
    model = get_peft_model(model, LoraConfig(r=8))
    cfg = NeuronTrainingArguments(output_dir="out", bf16=True)
    trainer = NeuronTrainer(model=model, args=cfg)
    trainer.train()
"""


def _bf16_todos(result) -> list[str]:
    return [f.message for f in result.findings if f.rule == "NM202" and f.severity.value == "todo"
            and f.message.startswith("bf16=True meant")]


def test_a_model_loaded_in_bf16_gets_no_bf16_note() -> None:
    for dtype in ("torch_dtype=torch.bfloat16", "dtype=torch.bfloat16"):
        assert _bf16_todos(migrate(SCRIPT.format(dtype=dtype), "NM202", project=PINNED_03)) == []


def test_a_model_loaded_in_float32_keeps_the_note_worded_for_the_pinned_line() -> None:
    old = _bf16_todos(migrate(SCRIPT.format(dtype="low_cpu_mem_usage=True"), "NM202", project=PINNED_03))
    assert len(old) == 1
    assert 'optimum-neuron <= 0.3.0 (its default half_precision_backend "xla" cast the model' in old[0]
    assert "0.4.x" not in old[0]
    new = _bf16_todos(migrate(SCRIPT.format(dtype="dtype=torch.float32"), "NM202", project=PINNED_04))
    assert len(new) == 1 and "optimum-neuron 0.4.x (without use_autocast it cast the model to bf16)" in new[0]
    unpinned = _bf16_todos(migrate(SCRIPT.format(dtype="dtype=torch.float32"), "NM202"))
    assert len(unpinned) == 1 and "0.4.x without use_autocast, and up to 0.3.0" in unpinned[0]


def test_a_model_bound_again_to_something_else_keeps_the_note() -> None:
    source = SCRIPT.format(dtype="dtype=torch.bfloat16").replace(
        "    cfg =", "    model = torch.load('other.pt')\n    cfg =")
    assert len(_bf16_todos(migrate(source, "NM202", project=PINNED_03))) == 1


def test_a_load_on_one_branch_only_keeps_the_note() -> None:
    source = SCRIPT.format(dtype="dtype=torch.bfloat16").replace(
        '    model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.bfloat16)\n',
        '    model = None\n    if True:\n'
        '        model = AutoModelForCausalLM.from_pretrained("m", dtype=torch.bfloat16)\n')
    assert len(_bf16_todos(migrate(source, "NM202", project=PINNED_03))) == 1


def test_model_init_kwargs_in_bf16_get_no_note() -> None:
    source = """
    from optimum.neuron import NeuronSFTConfig

    cfg = NeuronSFTConfig(output_dir="out", bf16=True, model_init_kwargs={"torch_dtype": "bfloat16"})
    """
    assert _bf16_todos(migrate(source, "NM202", project=PINNED_03)) == []
