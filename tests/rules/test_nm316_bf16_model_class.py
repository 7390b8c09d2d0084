"""NM316 (and NM403 through the same fact): a model built by a transformers model class called with its config
(``BertForMaskedLM(BertConfig(...))``, ``LlamaForCausalLM(config)``), moved once, carries XLA_USE_BF16 as a
``from_pretrained`` load does; where nothing carries it, the todo names the condition that failed (rt5G D7: it said
"does not build its model in one place" of a script that did)."""

from __future__ import annotations

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

BUILT = """\
import os

# before torch_xla
os.environ["XLA_USE_BF16"] = "1"

import torch
import torch_xla.core.xla_model as xm
from transformers import BertConfig, BertForMaskedLM


def run(cfg):
    dev = xm.xla_device()
    mlm = BertForMaskedLM(BertConfig(**cfg)).to(dev)
    ids = torch.zeros(2, 8, dtype=torch.long).to(dev)
    return mlm(input_ids=ids).logits
"""

SEPARATE = """\
import os

os.environ["XLA_USE_BF16"] = "1"

import torch
import torch_xla.core.xla_model as xm
from transformers import LlamaConfig, LlamaForCausalLM


def run(hidden):
    dev = xm.xla_device()
    lm = LlamaForCausalLM(config=LlamaConfig(hidden_size=hidden))
    lm.to(dev)
    return torch.optim.SGD(lm.parameters(), lr=0.1)
"""

KEPT = "# neuron-migrate: XLA_USE_BF16 was left as it is: TorchNeuron ignores it"


def _reason(result) -> str:
    (todo,) = [f.message for f in result.findings if f.rule == "NM316" and f.severity.value == "todo"
               and "XLA_USE_BF16 was left" in f.message]
    return todo


def test_a_class_called_with_its_config_and_moved_in_its_binding_carries_bf16() -> None:
    result = migrate(BUILT, "NM316")
    assert 'os.environ["XLA_USE_BF16"]' not in result.text
    assert "    mlm = BertForMaskedLM(BertConfig(**cfg)).to(dev, dtype=torch.bfloat16)\n" in result.text
    assert "torch.zeros(2, 8, dtype=torch.long).to(dev)\n" in result.text  # a tensor's move is no model move
    assert findings(result, "NM316") == {(4, "fixed"), (13, "fixed")}


def test_a_class_called_with_config_keyword_then_moved_carries_bf16() -> None:
    result = migrate(SEPARATE, "NM316")
    assert 'os.environ["XLA_USE_BF16"]' not in result.text
    assert "    lm.to(dev, dtype=torch.bfloat16)\n" in result.text


def test_each_condition_that_fails_is_the_one_the_todo_names() -> None:
    cases = {
        # the class gets more than its config: not the plain float32 build
        ("BertForMaskedLM(BertConfig(**cfg))", "BertForMaskedLM(BertConfig(**cfg), extra)"):
            "the model moved to the device (`mlm`) is not built, in the function that moves it, by a transformers "
            "text model class",
        # not moved by this file
        (".to(dev)\n    ids", "\n    ids"): "no statement moves a model to the device with `<model>.to(device)`",
        # cast again
        ("    return mlm", "    mlm.half()\n    return mlm"): "`mlm` is cast or moved again (`mlm.half(...)`)",
        # two models
        ("    ids =", "    aux = BertForMaskedLM(BertConfig(**cfg)).to(dev)\n    ids ="):
            "several models are moved to the device (`mlm`, `aux`)",
        # the setting is read
        ("    return mlm", "    print(os.environ.get('XLA_USE_BF16'))\n    return mlm"):
            "this file also names XLA_USE_BF16 outside a module-level setting",
        # torch is not bound as `torch`
        ("import torch\n", "import torch as T\n"):
            "no module-level `import torch`, which dtype=torch.bfloat16 on `mlm` needs",
    }
    for (old, new), reason in cases.items():
        source = BUILT.replace(old, new)
        assert source != BUILT, old
        result = migrate(source, "NM316")
        assert KEPT in result.text and ", dtype=torch.bfloat16)\n" not in result.text, old
        message = _reason(result)
        assert reason in message, (old, message)
        assert "does not build its model in one place" not in message


LAUNCHER = "#!/bin/bash\nexport XLA_USE_BF16=1\ntorchrun --nproc_per_node=2 mlm.py\n"


def test_nm403_removes_the_export_for_a_script_whose_class_built_model_carries_it() -> None:
    project = {"run.sh": LAUNCHER, "mlm.py": BUILT}
    launcher = migrate(LAUNCHER, "NM403", kind=FileKind.SHELL, path="run.sh", project=project)
    assert "XLA_USE_BF16" not in launcher.text
    assert findings(launcher, "NM403") == {(2, "fixed")}
    kept = BUILT.replace("BertForMaskedLM(BertConfig(**cfg))", "BertForMaskedLM(BertConfig(**cfg), extra)")
    project = {"run.sh": LAUNCHER, "mlm.py": kept}
    launcher = migrate(LAUNCHER, "NM403", kind=FileKind.SHELL, path="run.sh", project=project)
    assert "export XLA_USE_BF16=1" in launcher.text and findings(launcher, "NM403") == {(2, "todo")}
