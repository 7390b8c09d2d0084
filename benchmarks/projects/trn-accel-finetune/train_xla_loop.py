# Older variant of train.py kept for the throughput benchmarks: plain accelerate.Accelerator on the XLA device,
# hyper-parameters from dataclasses (HfArgumentParser), explicit MpDeviceLoader.
import os
from dataclasses import dataclass, field
from typing import Optional

os.environ["XLA_USE_BF16"] = "1"        # full bf16 on the device (weights + optimizer state)
os.environ.setdefault("NEURON_CC_FLAGS", "--model-type=transformer")

import torch
import torch_xla.core.xla_model as xla
import torch_xla.distributed.parallel_loader as pl
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, HfArgumentParser, default_data_collator

from src.trnft.data import load_text_dataset, tokenize_and_group


@dataclass
class Args:
    train_file: str = field(metadata={"help": "jsonl with a 'text' column"})
    output_dir: str = "runs/xla-loop"
    config_name: Optional[str] = None
    model_name_or_path: Optional[str] = None
    tokenizer_name: Optional[str] = None
    block_size: int = 512
    batch_size: int = 2
    lr: float = 5e-5
    max_steps: int = 100
    save_every: int = 50


def main():
    (args,) = HfArgumentParser(Args).parse_args_into_dataclasses()
    accelerator = Accelerator(cpu=False)
    device = xla.xla_device()

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer_name or args.model_name_or_path)
    if args.config_name:
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(args.config_name))
    else:
        model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    model.to(device)

    ds = tokenize_and_group(load_text_dataset(args.train_file), tokenizer, args.block_size)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                        collate_fn=default_data_collator)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer = accelerator.prepare(model, optimizer)
    device_loader = pl.MpDeviceLoader(loader, device)

    step = 0
    model.train()
    while step < args.max_steps:
        for batch in device_loader:
            loss = model(**batch).loss
            loss.backward()
            xla.optimizer_step(optimizer)
            optimizer.zero_grad()
            step += 1
            if step % 10 == 0 and xla.is_master_ordinal():
                print(f"[{xla.get_ordinal()}/{xla.xrt_world_size()}] step {step} loss {loss.item():.4f}")
            if step % args.save_every == 0:
                xla.save(model.state_dict(), os.path.join(args.output_dir, f"model_{step}.pt"))
            if step >= args.max_steps:
                break
    xla.rendezvous("done")


if __name__ == "__main__":
    main()
