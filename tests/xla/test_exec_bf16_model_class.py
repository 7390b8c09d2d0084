"""Execution proof for rt5G D7: a torch_xla pretraining script that sets ``XLA_USE_BF16=1`` and builds its model
with the model class called with a config, moved in the same binding
(``model = BertForMaskedLM(BertConfig(...)).to(device)``), is migrated with the NM3 rules and RUN on CPU: the
weights and optimizer state are bf16, as torch_xla held them (before, the setting stayed and the run was fp32)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from migrate.testing import apply_rules

LEGACY = textwrap.dedent(
    '''
    import json
    import os
    import sys

    os.environ["XLA_USE_BF16"] = "1"

    import torch
    import torch_xla.core.xla_model as xm
    from transformers import BertConfig, BertForMaskedLM


    def main(out):
        device = xm.xla_device()
        torch.manual_seed(0)
        cfg = dict(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
        model = BertForMaskedLM(BertConfig(**cfg)).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        ids = torch.randint(0, 64, (2, 8)).to(device)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        xm.optimizer_step(optimizer)
        weights = sorted({str(v.dtype) for v in model.state_dict().values() if v.is_floating_point()})
        state = sorted({str(v.dtype) for s in optimizer.state.values() for v in s.values() if v.dim()})
        with open(out, "w") as f:
            json.dump({"weights": weights, "optimizer": state, "loss": loss.item()}, f)


    if __name__ == "__main__":
        main(sys.argv[1])
    '''
).lstrip()


def test_the_migrated_class_built_model_trains_in_bf16(tmp_path: Path) -> None:
    result = apply_rules(LEGACY, select=["NM3"], path="pretrain.py")
    assert "torch_xla" not in result.text and "XLA_USE_BF16" not in result.text
    assert "model = BertForMaskedLM(BertConfig(**cfg)).to(device, dtype=torch.bfloat16)" in result.text
    script = tmp_path / "pretrain.py"
    script.write_text(result.text)
    out = tmp_path / "out.json"
    run = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["weights"] == ["torch.bfloat16"] and report["optimizer"] == ["torch.bfloat16"], report
    assert report["loss"] == report["loss"]  # a number, not NaN
