"""NM202: the advice for a tensor_parallel_size it leaves in place follows the model the file loads (rt4D 8). A class
transformers 5 knows has no tensor-parallel plan (no base_model_tp_plan: ViT) gets no DistributedConfig(tp_size=...)
advice, which raises "has no tp_plan" there; a class with a plan, several classes, or one the file does not import
from transformers (not known) get the load advice, which names base_model_tp_plan."""

from __future__ import annotations

import pytest

from tests.rules.case import migrate

TEMPLATE = """
import argparse
from transformers import {imports}
from optimum.neuron import NeuronTrainingArguments
from smoothing import SmoothedTrainer

def main(model_class=None):
    args = argparse.ArgumentParser().parse_args()
{loads}
    training_args = NeuronTrainingArguments(output_dir="out", tensor_parallel_size=args.tp)
    SmoothedTrainer(model=model, args=training_args).train()
"""


def _tp_todo(imports: str, loads: str) -> str:
    result = migrate(TEMPLATE.format(imports=imports, loads=loads), "NM202")
    found = [f.message for f in result.findings if f.rule == "NM202" and "tensor_parallel_size=args.tp" in f.message]
    assert len(found) == 1, found
    return found[0]


def test_planless_model_gets_data_parallel_advice_not_a_tp_size_that_raises() -> None:
    # a literal degree: the run always asked for it, a stop would only fail every run; the keyword stays
    template = TEMPLATE.replace("tensor_parallel_size=args.tp", "tensor_parallel_size=2")
    loads = ("    config = AutoConfig.from_pretrained('x')\n"
             "    model = AutoModelForImageClassification.from_pretrained('x', config=config)")
    result = migrate(template.format(imports="AutoConfig, AutoModelForImageClassification", loads=loads), "NM202")
    [message] = [f.message for f in result.findings if f.rule == "NM202" and "tensor_parallel_size=2" in f.message]
    assert "AutoModelForImageClassification has no tensor-parallel plan" in message
    assert "base_model_tp_plan" in message and "data parallelism" in message
    assert "dp_replicate_size" not in message and "fsdp_size=WORLD_SIZE)" in message


def test_planless_model_run_time_degree_leaves_with_a_stop_above_one() -> None:
    loads = "    model = AutoModelForImageClassification.from_pretrained('x')"
    result = migrate(TEMPLATE.format(imports="AutoModelForImageClassification", loads=loads), "NM202")
    assert "tensor_parallel_size" not in result.text
    stop = '    if args.tp > 1:\n        raise SystemExit(f"args.tp={args.tp}: AutoModelForImageClassification has no'
    assert stop in result.text
    [message] = [f.message for f in result.findings
                 if f.rule == "NM202" and "tensor_parallel_size=args.tp" in f.message]
    assert message.startswith("tensor_parallel_size=args.tp removed: AutoModelForImageClassification has no")
    assert "save_only_model" not in result.text  # no mesh: full checkpoints as before


@pytest.mark.parametrize("imports, loads", [
    ("AutoModelForCausalLM", "    model = AutoModelForCausalLM.from_pretrained('x')"),
    ("AutoModelForCausalLM, AutoModelForImageClassification",
     "    model = AutoModelForImageClassification.from_pretrained('x')\n"
     "    teacher = AutoModelForCausalLM.from_pretrained('y')"),
    ("AutoModelForImageClassification", "    model = model_class.from_pretrained('x')"),
])
def test_model_with_a_plan_or_not_known_gets_the_load_advice(imports: str, loads: str) -> None:
    message = _tp_todo(imports, loads)
    assert "DistributedConfig(tp_size=args.tp, " in message and "base_model_tp_plan" in message
    assert "has no tensor-parallel plan" not in message
