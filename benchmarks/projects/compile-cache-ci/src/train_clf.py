"""Sentence classification fine-tuning on Trainium; arguments fixed in code for reproducible cache keys."""
import argparse
import os

import numpy as np
import torch
from datasets import load_dataset, load_from_disk
from transformers import AutoModelForSequenceClassification, AutoTokenizer, default_data_collator
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from optimum.neuron.utils import is_precompilation


def compute_metrics(p):
    preds = np.argmax(p.predictions, axis=-1)
    acc = (preds == p.label_ids).mean()
    tp = ((preds == 1) & (p.label_ids == 1)).sum()
    fp = ((preds == 1) & (p.label_ids == 0)).sum()
    fn = ((preds == 0) & (p.label_ids == 1)).sum()
    f1 = 2 * tp / max(2 * tp + fp + fn, 1)
    return {"accuracy": float(acc), "f1": float(f1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bert-base-uncased")
    ap.add_argument("--data", default=None)
    ap.add_argument("--out", default="runs/clf")
    ap.add_argument("--max_len", type=int, default=128)
    ap.add_argument("--max_steps", type=int, default=-1)
    ap.add_argument("--epochs", type=float, default=3)
    ap.add_argument("--bs", type=int, default=16)
    args = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2)
    raw = load_from_disk(args.data) if args.data else load_dataset("glue", "sst2")

    def enc(b):
        return tok(b["sentence"], padding="max_length", truncation=True, max_length=args.max_len)

    ds = raw.map(enc, batched=True).rename_column("label", "labels")
    ds = ds.remove_columns([c for c in ds["train"].column_names if c not in ("input_ids", "attention_mask",
                                                                              "token_type_ids", "labels")])

    # precompilation only needs a handful of steps to extract the graphs
    max_steps = 10 if is_precompilation() else args.max_steps

    training_args = NeuronTrainingArguments(
        output_dir=args.out,
        per_device_train_batch_size=args.bs,
        per_device_eval_batch_size=args.bs,
        gradient_accumulation_steps=4,
        learning_rate=2e-5,
        num_train_epochs=args.epochs,
        max_steps=max_steps,
        bf16=True,
        eval_strategy="steps",
        eval_steps=200,
        save_strategy="steps",
        save_steps=200,
        save_total_limit=2,
        logging_steps=20,
        logging_dir=os.path.join(args.out, "logs"),
        dataloader_drop_last=True,
        zero_1=False,
        report_to=["tensorboard"],
        seed=42,
    )

    trainer = NeuronTrainer(
        model=model,
        args=training_args,
        train_dataset=ds["train"],
        eval_dataset=ds["validation"],
        data_collator=default_data_collator,
        compute_metrics=compute_metrics,
        processing_class=tok,
    )
    trainer.train()
    if not is_precompilation():
        print(trainer.evaluate())
        trainer.save_model(os.path.join(args.out, "final"))


if __name__ == "__main__":
    main()
