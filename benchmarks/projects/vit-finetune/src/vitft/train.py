#!/usr/bin/env python
"""Fine-tune an image classifier on Trainium with optimum-neuron."""
import argparse
import os

from datasets import load_dataset
from transformers import AutoConfig, AutoImageProcessor, AutoModelForImageClassification
from optimum.neuron import NeuronTrainingArguments as TrainingArguments

from .collator import StaticImageCollator
from .metrics import compute_metrics
from .trainer import SmoothedTrainer


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name", default="google/vit-base-patch16-224-in21k")
    p.add_argument("--data_dir", required=True)
    p.add_argument("--output_dir", default="outputs")
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--epochs", type=float, default=3)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--max_steps", type=int, default=-1)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--tp", type=int, default=1, help="tensor parallel degree")
    return p.parse_args()


def main():
    args = parse_args()
    # neuron_parallel_compile sets MAX_STEPS for the short compile pass
    max_steps = int(os.environ.get("MAX_STEPS", args.max_steps))

    ds = load_dataset("imagefolder", data_dir=args.data_dir)
    labels = ds["train"].features["label"].names
    processor = AutoImageProcessor.from_pretrained(args.model_name)

    def transform(batch):
        batch["pixel_values"] = processor(
            [img.convert("RGB") for img in batch["image"]], return_tensors="pt")["pixel_values"]
        return batch

    ds = ds.with_transform(transform)
    config = AutoConfig.from_pretrained(args.model_name, num_labels=len(labels),
                                        id2label=dict(enumerate(labels)),
                                        label2id={l: i for i, l in enumerate(labels)})
    model = AutoModelForImageClassification.from_pretrained(
        args.model_name, config=config, ignore_mismatched_sizes=True)

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        num_train_epochs=args.epochs,
        max_steps=max_steps,
        learning_rate=args.lr,
        warmup_ratio=0.1,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        logging_steps=10,
        bf16=args.bf16,
        dataloader_drop_last=True,
        remove_unused_columns=False,
        tensor_parallel_size=args.tp,
        overwrite_output_dir=True,
    )

    trainer = SmoothedTrainer(
        model=model,
        args=training_args,
        data_collator=StaticImageCollator(processor),
        train_dataset=ds["train"],
        eval_dataset=ds["validation"] if "validation" in ds else None,
        tokenizer=processor,
        compute_metrics=compute_metrics,
        label_smoothing=0.1,
    )
    trainer.train()
    trainer.save_model(args.output_dir)
    if training_args.world_size > 1:
        print(f"data-parallel replicas: {training_args.world_size}")


if __name__ == "__main__":
    main()
