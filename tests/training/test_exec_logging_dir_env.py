"""Execution proof (rt8P-10): ``logging_dir=`` of Neuron training arguments becomes the TENSORBOARD_LOGGING_DIR
setting transformers 5's TensorBoardCallback reads when the Trainer is built. The migrated script runs on CPU (a
tiny BERT from a config) and reports the variable its Trainer saw; the installed TensorBoardCallback is checked to
read that variable in ``__init__`` (tensorboard itself is not installed here, so the callback is not built)."""

from __future__ import annotations

import ast
import inspect

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import run_script

pytestmark = pytest.mark.execution

SCRIPT = '''
import json
import os
import sys

from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from transformers import AutoConfig, AutoModelForSequenceClassification


def main(out, tb_dir):
    config = AutoConfig.for_model("bert", vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, num_labels=2)
    model = AutoModelForSequenceClassification.from_config(config)
    args = NeuronTrainingArguments(output_dir=out, logging_dir=tb_dir, report_to="none", zero_1=False)
    NeuronTrainer(model=model, args=args)
    print("RESULT=" + json.dumps({"env": os.environ.get("TENSORBOARD_LOGGING_DIR")}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
'''


def test_tensorboard_callback_reads_the_variable():
    from transformers.integrations.integration_utils import TensorBoardCallback

    assert 'os.getenv("TENSORBOARD_LOGGING_DIR", None)' in inspect.getsource(TensorBoardCallback.__init__)


def test_logging_dir_reaches_the_trainer(tmp_path):
    result = apply_rules(SCRIPT, path="train.py", project={"train.py": SCRIPT}, select=["NM2", "NM6"])
    migrated = result.text
    ast.parse(migrated)
    assert "logging_dir" not in migrated.replace("neuron-migrate: logging_dir", "")
    assert any(f.rule == "NM202" and f.severity.value == "fixed" and "TENSORBOARD_LOGGING_DIR" in f.message
               for f in result.findings)
    script = tmp_path / "train.py"
    script.write_text(migrated)
    given = run_script(script, {"NM_TEST_DISABLE_DYNAMO": "1"}, args=(str(tmp_path / "out"), str(tmp_path / "tb")))
    assert given == {"env": str(tmp_path / "tb")}
    # no directory given: 4.x's default (output_dir/runs/<date>), whatever the environment said
    unset = run_script(script, {"NM_TEST_DISABLE_DYNAMO": "1", "TENSORBOARD_LOGGING_DIR": "/elsewhere"},
                       args=(str(tmp_path / "out"),))
    assert unset == {"env": None}
