"""Same run through the neuronx_distributed.trainer helpers (config-driven ZeRO-1 + clipping)."""
import json
import sys

import torch
import torch_xla.core.xla_model as xm
import neuronx_distributed as nxd

from data import build_loader
from modeling_llama_tp import TinyLlama

TP = int(sys.argv[1]) if len(sys.argv) > 1 else 8
cfg = json.load(open("configs/llama_tiny.json"))

nxd_config = nxd.neuronx_distributed_config(
    tensor_parallel_size=TP,
    optimizer_config={"zero_one_enabled": True, "grad_clipping": True, "max_grad_norm": 1.0},
    mixed_precision_config={"use_master_weights": True, "use_fp32_grad_acc": True},
)
model = nxd.initialize_parallel_model(nxd_config, TinyLlama, cfg)
optimizer = nxd.initialize_parallel_optimizer(nxd_config, torch.optim.AdamW, model.parameters(), lr=2e-4)

loader = build_loader(None, 512, 1, nxd.parallel_layers.parallel_state.get_data_parallel_size(),
                      nxd.parallel_layers.parallel_state.get_data_parallel_rank(), cfg["vocab_size"])
device = xm.xla_device()
for step, batch in enumerate(loader):
    loss = model(batch["input_ids"].to(device), labels=batch["labels"].to(device))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    xm.mark_step()
    if step == 50:
        break
nxd.save_checkpoint("nxd_ckpt", tag="step50", model=model, optimizer=optimizer, use_xser=True)
