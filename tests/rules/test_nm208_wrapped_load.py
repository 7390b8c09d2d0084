"""NM202 + NM208 as one transaction (redteam-final 2): the built tensor_parallel_size leaves the arguments, and
save_only_model is added, only where NM208 gives the model load its distributed_config. The load is the
``from_pretrained`` that created the object the trainer gets; later bindings of the name that wrap that object
(``model = get_peft_model(model, ...)``, ``model = prepare_model_for_kbit_training(model)``) lead back to it."""

from tests.rules.case import findings, migrate

SOURCE = """
import torch
from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import {loader}

TP_DEGREE = 2


def main():
    model = {loader}.from_pretrained("gpt2", dtype=torch.bfloat16)
    {rebind}
    args = TrainingArguments(output_dir="out", tensor_parallel_size=TP_DEGREE, logging_steps=1)
    trainer = Trainer(model=model, args=args)
    trainer.train()
"""

WRAPPED = ("model = prepare_model_for_kbit_training(model)\n"
           "    model = get_peft_model(model, LoraConfig(r=8, task_type=\"CAUSAL_LM\"))")


def _run(rebind: str, loader: str = "AutoModelForCausalLM", **options):
    return migrate(SOURCE.format(loader=loader, rebind=rebind), "NM208", family="NM2", **options)


def _code(result) -> str:
    """The output without the ``# neuron-migrate:`` notes (they quote the keywords)."""
    return "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))


def _degree_findings(result) -> list[str]:
    return [f.severity.value for f in result.findings
            if f.rule == "NM202" and f.message.startswith("tensor_parallel_size")]


def _kept(result) -> bool:
    return "tensor_parallel_size=TP_DEGREE, logging_steps=1" in _code(result) and "save_only_model" not in _code(result)


def test_wrappers_lead_back_to_the_load() -> None:
    result = _run(WRAPPED)
    load = next(line for line in result.text.splitlines() if ".from_pretrained(" in line)
    assert "distributed_config=(DistributedConfig(tp_size=TP_DEGREE" in load
    # the wrappers are not touched
    assert "get_peft_model(model, LoraConfig(r=8, task_type=\"CAUSAL_LM\"))\n" in result.text
    assert "prepare_model_for_kbit_training(model)\n" in result.text
    assert "tensor_parallel_size" not in _code(result)
    assert "save_only_model=TP_DEGREE > 1" in _code(result)
    assert (11, "fixed") in findings(result, "NM208")
    assert _degree_findings(result) == ["fixed"]
    assert not any(f.rule.startswith("NM7") for f in result.findings)


def test_another_object_bound_to_the_name_keeps_the_degree() -> None:
    result = _run("model = torch.load(\"model.pt\")")
    assert "distributed_config" not in _code(result)
    assert _kept(result)
    assert findings(result, "NM208") == set()
    assert _degree_findings(result) == ["todo"]


def test_without_nm208_the_degree_stays_with_a_todo() -> None:
    result = _run(WRAPPED, ignore=["NM208"])
    assert "distributed_config" not in _code(result)
    assert _kept(result)
    todo = next(f.message for f in result.findings if f.rule == "NM202" and "tensor_parallel_size" in f.message)
    assert "left in place" in todo and "NM208" in todo


def test_a_class_without_tp_plan_gets_no_mesh_and_stops_above_one() -> None:
    result = _run("", loader="AlbertForMaskedLM")
    assert "distributed_config" not in _code(result)
    # no mesh can carry the degree: it leaves the arguments and a degree above 1 stops the run (NM202)
    assert "tensor_parallel_size" not in _code(result) and "save_only_model" not in _code(result)
    assert "    if TP_DEGREE > 1:\n        raise SystemExit(" in result.text
    fixed = next(f.message for f in result.findings if f.rule == "NM202" and "tensor_parallel_size" in f.message)
    assert "AlbertForMaskedLM has no tensor-parallel plan" in fixed


def _load_message(result) -> str:
    return next(f.message for f in result.findings
                if f.rule == "NM208" and f.severity.value == "fixed" and "from_pretrained now gets" in f.message)


def test_a_class_known_only_at_run_time_gets_the_plan_condition() -> None:
    # rt3A 9: AutoModelForCausalLM of "gpt2" (or of a model id argument): GPT-2, BERT, RoBERTa have no tp_plan
    message = _load_message(_run(WRAPPED))
    assert "works only for a model whose config has a tensor-parallel plan (base_model_tp_plan" in message
    assert "has no tp_plan" in message


def test_a_stock_class_with_a_plan_gets_no_condition() -> None:
    result = _run(WRAPPED, loader="LlamaForCausalLM")
    assert "distributed_config=(DistributedConfig(tp_size=TP_DEGREE" in _code(result)
    assert "base_model_tp_plan" not in _load_message(result)
