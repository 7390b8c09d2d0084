"""Execution proof for the keywords of a Neuron encoder export that the stock load rejects (rtB B3).

``num_cores=2`` on ``NeuronModelForSequenceClassification.from_pretrained(..., export=True)`` used to reach the
stock ``from_pretrained`` (TypeError in ``BertForSequenceClassification.__init__``): it is now dropped with the
torchrun / DistributedConfig todo, and a stock keyword beside it (``num_labels=3``) still reaches the load. A keyword
no table sorts keeps the file on optimum-neuron instead of reaching the stock call. The migrated script runs on CPU
against the installed transformers with a tiny BERT built from a config (no mocks, offline).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.testing import apply_rules
from tests.inference import tiny
from tests.inference.test_exec_inference import migrate, run, values

pytestmark = pytest.mark.execution

ENCODER_ON_TWO_CORES = '''
import torch
from optimum.neuron import NeuronModelForSequenceClassification
from transformers import AutoTokenizer

MODEL = {model!r}
tokenizer = AutoTokenizer.from_pretrained(MODEL)
model = NeuronModelForSequenceClassification.from_pretrained(
    MODEL, export=True, batch_size=2, sequence_length=16, num_cores=2, num_labels=3
)
batch = tokenizer(["good day", "the dog is bad"], padding="max_length", max_length=16, truncation=True,
                  return_tensors="pt")
with torch.no_grad():
    logits = model(**batch).logits
print("RESULT shape=%s" % list(logits.shape))
print("RESULT finite=%s" % bool(torch.isfinite(logits).all()))
'''


def test_num_cores_of_an_encoder_export_is_dropped_and_the_load_runs(tmp_path: Path) -> None:
    model = tiny.bert(tmp_path / "bert", num_labels=3)
    script = migrate(ENCODER_ON_TWO_CORES.format(model=str(model)))
    code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    assert "num_cores=" not in code and "num_labels=3" in code
    assert "`num_cores=2` dropped" in script and "torchrun --nproc_per_node 2" in script
    result = values(run(script, tmp_path))
    assert result["shape"] == "[2, 3]"  # the stock load of a 3-label checkpoint, num_labels=3 passed on
    assert result["finite"] == "True"


def test_an_unsorted_export_keyword_keeps_the_load_on_optimum_neuron() -> None:
    source = ('from optimum.neuron import NeuronModelForSequenceClassification\n\n'
              'model = NeuronModelForSequenceClassification.from_pretrained("m", export=True, batch_size=1, '
              'sequence_length=16, fuse_layernorm=True)\n')
    result = apply_rules(source, select=["NM1"], device_style="portable")
    code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert "\n".join(code) == source.rstrip("\n")
    assert any(finding.rule == "NM120" and "`fuse_layernorm=True`" in finding.message
               and "leaves this file on optimum-neuron" in finding.message for finding in result.findings)


DECODER_WITH_A_STOCK_KEYWORD = '''
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

MODEL = {model!r}
tokenizer = AutoTokenizer.from_pretrained(MODEL)
model = NeuronModelForCausalLM.from_pretrained(
    MODEL, export=True, batch_size=1, sequence_length=32, auto_cast_type="fp32", use_safetensors=True
)
inputs = tokenizer("hello world", return_tensors="pt")
output = model.generate(**inputs, max_new_tokens=4, do_sample=False)
print("RESULT new=%d" % (output.shape[1] - inputs["input_ids"].shape[1]))
print("RESULT cache=%s" % model.generation_config.cache_implementation)
'''


def test_a_stock_keyword_of_a_decoder_export_reaches_the_stock_load_and_it_generates(tmp_path: Path) -> None:
    model = tiny.llama(tmp_path / "llama")
    script = migrate(DECODER_WITH_A_STOCK_KEYWORD.format(model=str(model)))
    assert "use_safetensors=True" in script and "check it is valid" not in script
    result = values(run(script, tmp_path))
    assert result == {"new": "4", "cache": "static"}
