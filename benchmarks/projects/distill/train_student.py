import argparse
import os

import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  registers the xla backend
import yaml
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM

from metrics_utils import RunningMean


class SoftTargetDataset(Dataset):
    def __init__(self, path, vocab_size):
        self.rows = []
        for rec in torch.load(path):
            for b in range(rec["sequences"].shape[0]):
                self.rows.append((rec["sequences"][b], rec["topk_vals"][b], rec["topk_idx"][b]))
        self.vocab_size = vocab_size

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        seq, vals, idx = self.rows[i]
        return {"input_ids": seq, "topk_vals": vals, "topk_idx": idx}


def distill_loss(logits, batch, T, alpha):
    gen_len = batch["topk_vals"].shape[1]
    s = logits[:, -gen_len - 1 : -1, :]
    s_top = torch.gather(s, -1, batch["topk_idx"])
    kl = F.kl_div(F.log_softmax(s_top / T, -1), F.softmax(batch["topk_vals"] / T, -1), reduction="batchmean")
    ce = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), batch["input_ids"][:, 1:].reshape(-1))
    return alpha * kl * T * T + (1 - alpha) * ce


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/distill.yaml")
    ap.add_argument("--targets", default="data/soft_targets.pt")
    args = ap.parse_args()
    cfg = yaml.safe_load(open(args.config))

    if cfg["device"] == "xla":
        torch.distributed.init_process_group("xla")
        device = xm.xla_device()
    else:
        device = torch.device(cfg["device"])
    world = xm.xrt_world_size()
    rank = xm.get_ordinal()

    student = AutoModelForCausalLM.from_pretrained(cfg["student_id"]).to(device)
    ds = SoftTargetDataset(args.targets, student.config.vocab_size)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True)
    loader = DataLoader(ds, batch_size=cfg["batch_size"], sampler=sampler, drop_last=True)
    train_loader = pl.MpDeviceLoader(loader, device)
    opt = torch.optim.AdamW(student.parameters(), lr=cfg["lr"])

    step = 0
    meter = RunningMean()
    student.train()
    while step < cfg["steps"]:
        for batch in train_loader:
            logits = student(input_ids=batch["input_ids"]).logits
            loss = distill_loss(logits, batch, cfg["temperature"], cfg["alpha"])
            loss.backward()
            xm.optimizer_step(opt)
            opt.zero_grad()
            step += 1
            if step % cfg["ckpt_every"] == 0:
                xm.rendezvous("ckpt")
                xm.save(student.state_dict(), os.path.join(cfg["out_dir"], f"student-{step}.pt"))
            if step >= cfg["steps"]:
                break

    # eval on the same loader, averaged across workers
    student.eval()
    with torch.no_grad():
        for batch in train_loader:
            logits = student(input_ids=batch["input_ids"]).logits
            meter.update(distill_loss(logits, batch, cfg["temperature"], cfg["alpha"]).item())
    eval_loss = xm.mesh_reduce("eval_loss", meter.value, lambda xs: sum(xs) / len(xs))
    if xm.is_master_ordinal():
        print(f"eval loss {eval_loss:.4f}")
        student.save_pretrained(os.path.join(cfg["out_dir"], "final"))


if __name__ == "__main__":
    main()
