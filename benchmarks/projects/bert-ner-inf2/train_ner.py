import argparse

import numpy as np
from datasets import load_dataset
from transformers import AutoModelForTokenClassification, AutoTokenizer, DataCollatorForTokenClassification

from optimum.neuron import NeuronTrainer, NeuronTrainingArguments

SEQ_LEN = 128


def tokenize_and_align(tok, label_all_tokens=False):
    def fn(examples):
        enc = tok(examples["tokens"], is_split_into_words=True, truncation=True, max_length=SEQ_LEN,
                  padding="max_length")
        labels = []
        for i, tags in enumerate(examples["ner_tags"]):
            word_ids = enc.word_ids(batch_index=i)
            prev = None
            row = []
            for w in word_ids:
                if w is None:
                    row.append(-100)
                elif w != prev:
                    row.append(tags[w])
                else:
                    row.append(tags[w] if label_all_tokens else -100)
                prev = w
            labels.append(row)
        enc["labels"] = labels
        return enc
    return fn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bert-base-cased")
    ap.add_argument("--dataset", default="conll2003")
    ap.add_argument("--data_files", default=None, help="json file with tokens/ner_tags")
    ap.add_argument("--output_dir", default="bert-ner")
    ap.add_argument("--epochs", type=float, default=3)
    ap.add_argument("--max_steps", type=int, default=-1)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-5)
    args = ap.parse_args()

    if args.data_files:
        ds = load_dataset("json", data_files={"train": args.data_files, "validation": args.data_files})
        label_list = sorted({t for row in ds["train"]["ner_tags"] for t in row})
        label_list = [f"L{i}" for i in range(max(label_list) + 1)]
    else:
        ds = load_dataset(args.dataset)
        label_list = ds["train"].features["ner_tags"].feature.names

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForTokenClassification.from_pretrained(
        args.model, num_labels=len(label_list),
        id2label=dict(enumerate(label_list)), label2id={l: i for i, l in enumerate(label_list)},
    )
    tokenized = ds.map(tokenize_and_align(tok), batched=True, remove_columns=ds["train"].column_names)

    training_args = NeuronTrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.bs,
        per_device_eval_batch_size=args.bs,
        learning_rate=args.lr,
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        logging_steps=50,
        bf16=True,
        dataloader_drop_last=True,
        save_safetensors=True,
        report_to="none",
    )

    def metrics(p):
        preds = np.argmax(p.predictions, axis=-1)
        mask = p.label_ids != -100
        return {"token_acc": float((preds[mask] == p.label_ids[mask]).mean())}

    trainer = NeuronTrainer(
        model=model,
        args=training_args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"],
        data_collator=DataCollatorForTokenClassification(tok, pad_to_multiple_of=SEQ_LEN),
        tokenizer=tok,
        compute_metrics=metrics,
    )
    trainer.train()
    trainer.save_model(args.output_dir)
    tok.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
