#!/usr/bin/env python
"""Stage 2: a Bradley-Terry reward model on (chosen, rejected) pairs with NeuronTrainer."""
import argparse

import torch
import torch.nn.functional as F
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from optimum.neuron import NeuronTrainer as Trainer

from callbacks import ThroughputCallback
from config_loader import load_yaml, reward_args

MAX_LEN = 512


class PairCollator:
    def __init__(self, tok):
        self.tok = tok

    def __call__(self, rows):
        chosen = [r["chosen_text"] for r in rows]
        rejected = [r["rejected_text"] for r in rows]
        enc = self.tok(chosen + rejected, padding="max_length", max_length=MAX_LEN, truncation=True,
                       return_tensors="pt")
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}


class RewardTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        scores = model(**inputs).logits.squeeze(-1)
        n = scores.shape[0] // 2
        loss = -F.logsigmoid(scores[:n] - scores[n:]).mean()
        return (loss, scores) if return_outputs else loss


def flatten(tok):
    def fn(ex):
        return {
            "chosen_text": tok.apply_chat_template(ex["chosen"], tokenize=False),
            "rejected_text": tok.apply_chat_template(ex["rejected"], tokenize=False),
        }
    return fn


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/qwen2_pref.yaml")
    ap.add_argument("--sft_checkpoint", default="out/sft/final")
    ap.add_argument("--dataset_path", default=None)
    ap.add_argument("--max_steps", type=int, default=None)
    ns = ap.parse_args()
    cfg = load_yaml(ns.config)
    targs = reward_args(cfg, **({"max_steps": ns.max_steps} if ns.max_steps else {}))
    targs.remove_unused_columns = False

    tok = AutoTokenizer.from_pretrained(ns.sft_checkpoint)
    tok.pad_token = tok.pad_token or tok.eos_token
    model = AutoModelForSequenceClassification.from_pretrained(ns.sft_checkpoint, num_labels=1, torch_dtype=torch.bfloat16)
    model.config.pad_token_id = tok.pad_token_id
    if targs.gradient_checkpointing:
        model.gradient_checkpointing_enable()

    if ns.dataset_path:
        ds = load_dataset("json", data_files=ns.dataset_path, split="train")
    else:
        ds = load_dataset(cfg["data"]["dataset"], split="train")
    ds = ds.map(flatten(tok), remove_columns=ds.column_names)

    trainer = RewardTrainer(model=model, args=targs, train_dataset=ds, data_collator=PairCollator(tok),
                            tokenizer=tok, callbacks=[ThroughputCallback(seq_len=MAX_LEN)])
    trainer.train()
    trainer.save_model(targs.output_dir)
