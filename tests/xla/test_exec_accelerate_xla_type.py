"""Execution proof for NM322 (rt6K K7): ``accelerator.distributed_type == DistributedType.XLA`` in a Neuron project
becomes the native Neuron check. The migrated loop RUNS on CPU with accelerate's real Accelerator and a tiny model:
the CPU host takes the non-Neuron side, as it did off XLA, and the script no longer names DistributedType.XLA /
TPU (accelerate 1.15 has no TPU member; XLA is never set on TorchNeuron)."""

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
    import sys

    import torch
    import torch_xla.core.xla_model as xm
    from accelerate import Accelerator
    from accelerate.utils import DistributedType
    from transformers import AutoModelForCausalLM, LlamaConfig


    def main(out):
        accelerator = Accelerator()
        if accelerator.distributed_type == DistributedType.XLA:
            side = "neuron"
            device = xm.xla_device()
        else:
            side = "other"
            device = accelerator.device
        pad = 128
        if accelerator.state.distributed_type != DistributedType.TPU:
            pad = 0
        torch.manual_seed(0)
        config = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
                             num_key_value_heads=2, vocab_size=64)
        model = AutoModelForCausalLM.from_config(config)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        model, optimizer = accelerator.prepare(model, optimizer)
        ids = torch.randint(0, 64, (2, 8)).to(device)
        loss = model(input_ids=ids, labels=ids).loss
        accelerator.backward(loss)
        optimizer.step()
        with open(out, "w") as f:
            json.dump({"side": side, "pad": pad, "device": str(device), "loss": loss.item(),
                       "type": str(accelerator.distributed_type)}, f)


    if __name__ == "__main__":
        main(sys.argv[1])
    '''
).lstrip()


def test_the_migrated_loop_takes_the_cpu_side_on_cpu(tmp_path: Path) -> None:
    result = apply_rules(LEGACY, select=["NM3"], path="train.py")
    assert "torch_xla" not in result.text and "DistributedType" not in result.text, result.text
    assert result.text.count('current_accelerator().type == "neuron"') == 2, result.text
    assert [f.severity.value for f in result.findings if f.rule == "NM322"] == ["fixed", "fixed"]
    script = tmp_path / "train.py"
    script.write_text(result.text)
    out = tmp_path / "out.json"
    run = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads(out.read_text())
    assert data["side"] == "other" and data["pad"] == 0 and data["device"] == "cpu"
    assert data["type"] == "DistributedType.NO" and data["loss"] > 0
