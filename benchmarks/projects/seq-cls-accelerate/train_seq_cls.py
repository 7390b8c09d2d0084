#!/usr/bin/env python
# Sequence classification with HF accelerate (GPU or Trainium via accelerate's XLA backend).
import argparse
import json
import os

import torch
from accelerate import Accelerator, DistributedType
from accelerate.utils import is_torch_xla_available, set_seed
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_scheduler

from device_utils import main_print, pad_kwargs, step_boundary

if is_torch_xla_available():
    import torch_xla.core.xla_model as xm


def build_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    words = ["good", "bad", "great", "awful", "fine", "poor", "nice", "meh"]
    texts, labels = [], []
    for _ in range(n):
        k = int(torch.randint(3, 9, (1,), generator=g))
        idx = torch.randint(0, len(words), (k,), generator=g).tolist()
        texts.append(" ".join(words[i] for i in idx))
        labels.append(int(sum(1 if i % 2 == 0 else -1 for i in idx) > 0))
    return texts, labels


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", required=True)
    p.add_argument("--per_device_batch_size", type=int, default=8)
    p.add_argument("--gradient_accumulation_steps", type=int, default=2)
    p.add_argument("--learning_rate", type=float, default=5e-5)
    p.add_argument("--num_epochs", type=int, default=1)
    p.add_argument("--max_length", type=int, default=32)
    p.add_argument("--output_dir", default="outputs/seq-cls")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train_samples", type=int, default=128)
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision="bf16" if is_torch_xla_available() else "no",
    )
    set_seed(args.seed)
    tok = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=2)

    texts, labels = build_dataset(args.train_samples, args.seed)
    ev_texts, ev_labels = build_dataset(50, args.seed + 1)
    pk = pad_kwargs(accelerator, args.max_length)

    def collate(batch):
        enc = tok([b[0] for b in batch], truncation=True, return_tensors="pt", **pk)
        enc["labels"] = torch.tensor([b[1] for b in batch])
        return enc

    train_dl = DataLoader(list(zip(texts, labels)), batch_size=args.per_device_batch_size, shuffle=True,
                          collate_fn=collate, drop_last=accelerator.distributed_type == DistributedType.XLA)
    eval_dl = DataLoader(list(zip(ev_texts, ev_labels)), batch_size=args.per_device_batch_size, collate_fn=collate)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    sched = get_scheduler("linear", optimizer, num_warmup_steps=0,
                          num_training_steps=len(train_dl) * args.num_epochs // args.gradient_accumulation_steps)
    model, optimizer, train_dl, eval_dl, sched = accelerator.prepare(model, optimizer, train_dl, eval_dl, sched)

    step = 0
    for epoch in range(args.num_epochs):
        model.train()
        for batch in train_dl:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                sched.step()
                optimizer.zero_grad()
            step_boundary()
            if accelerator.sync_gradients:
                step += 1
                if step % 2 == 0:
                    main_print(accelerator, f"epoch {epoch} step {step} loss {loss.item():.4f}")

        model.eval()
        correct = total = 0
        for batch in eval_dl:
            with torch.no_grad():
                logits = model(**batch).logits
            preds = logits.argmax(-1)
            preds, refs = accelerator.gather_for_metrics((preds, batch["labels"]))
            correct += (preds == refs).sum().item()
            total += refs.numel()
            if accelerator.distributed_type == DistributedType.XLA:
                xm.mark_step()
        acc = correct / max(total, 1)
        main_print(accelerator, f"epoch {epoch} eval accuracy {acc:.3f} over {total}")

    accelerator.wait_for_everyone()
    accelerator.save_state(os.path.join(args.output_dir, "state"))
    if accelerator.is_main_process:
        with open(os.path.join(args.output_dir, "metrics.json"), "w") as f:
            json.dump({"eval_accuracy": acc, "eval_samples": total, "steps": step,
                       "distributed_type": str(accelerator.distributed_type)}, f)


if __name__ == "__main__":
    main()
