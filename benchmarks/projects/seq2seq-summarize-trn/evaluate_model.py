"""Reload the saved model and score it on the test split with ROUGE."""
import argparse
import json

from datasets import load_dataset, load_from_disk
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq
from optimum.neuron import Seq2SeqNeuronTrainer, Seq2SeqNeuronTrainingArguments

from metrics import build_compute_metrics

ap = argparse.ArgumentParser()
ap.add_argument("--model_dir", default="/opt/ml/model")
ap.add_argument("--dataset_path", default=None)
ap.add_argument("--split", default="test")
ap.add_argument("--num_samples", type=int, default=500)
ap.add_argument("--max_source_length", type=int, default=512)
ap.add_argument("--gen_len", type=int, default=128)
ap.add_argument("--beams", type=int, default=4)
ap.add_argument("--out", default="eval_results.json")
args = ap.parse_args()

tok = AutoTokenizer.from_pretrained(args.model_dir)
model = AutoModelForSeq2SeqLM.from_pretrained(args.model_dir)
ds = load_from_disk(args.dataset_path)[args.split] if args.dataset_path else \
    load_dataset("cnn_dailymail", "3.0.0", split=args.split)
ds = ds.select(range(min(args.num_samples, len(ds))))


def prep(b):
    enc = tok(["summarize: " + a for a in b["article"]], max_length=args.max_source_length,
              padding="max_length", truncation=True)
    enc["labels"] = tok(text_target=b["highlights"], max_length=args.gen_len, padding="max_length",
                        truncation=True)["input_ids"]
    return enc


ds = ds.map(prep, batched=True, remove_columns=ds.column_names)
eval_args = Seq2SeqNeuronTrainingArguments(
    output_dir="/tmp/eval", per_device_eval_batch_size=8, predict_with_generate=True,
    generation_max_length=args.gen_len, generation_num_beams=args.beams, bf16=True, report_to="none",
)
trainer = Seq2SeqNeuronTrainer(model=model, args=eval_args, tokenizer=tok,
                               data_collator=DataCollatorForSeq2Seq(tok, model=model),
                               compute_metrics=build_compute_metrics(tok))
res = trainer.predict(ds, metric_key_prefix="test")
print(json.dumps(res.metrics, indent=2))
json.dump(res.metrics, open(args.out, "w"), indent=2)
