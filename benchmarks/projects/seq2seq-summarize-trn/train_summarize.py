#!/usr/bin/env python
"""Fine-tune a T5/BART style model for summarization on Trainium (optimum-neuron)."""
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from datasets import load_dataset, load_from_disk
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    HfArgumentParser,
    set_seed,
)
from optimum.neuron import Seq2SeqNeuronTrainer as NeuronSeq2SeqTrainer
from optimum.neuron import Seq2SeqNeuronTrainingArguments as TrainingArgs

from metrics import build_compute_metrics

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="google/flan-t5-small")
    source_prefix: Optional[str] = field(default="summarize: ")


@dataclass
class DataArguments:
    dataset_name: Optional[str] = field(default="cnn_dailymail")
    dataset_config: Optional[str] = field(default="3.0.0")
    dataset_path: Optional[str] = field(default=None, metadata={"help": "load_from_disk folder"})
    text_column: str = field(default="article")
    summary_column: str = field(default="highlights")
    max_source_length: int = field(default=512)
    max_target_length: int = field(default=128)
    max_train_samples: Optional[int] = field(default=None)
    max_eval_samples: Optional[int] = field(default=None)


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArgs))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, data_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()

    logging.basicConfig(level=logging.INFO if training_args.should_log else logging.WARN)
    set_seed(training_args.seed)

    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_args.model_name_or_path)

    if data_args.dataset_path:
        raw = load_from_disk(data_args.dataset_path)
    else:
        raw = load_dataset(data_args.dataset_name, data_args.dataset_config)

    prefix = model_args.source_prefix or ""

    def preprocess(batch):
        inputs = [prefix + t for t in batch[data_args.text_column]]
        # static shapes: pad everything to max length so the graphs compile once
        enc = tokenizer(inputs, max_length=data_args.max_source_length, padding="max_length", truncation=True)
        labels = tokenizer(text_target=batch[data_args.summary_column], max_length=data_args.max_target_length,
                           padding="max_length", truncation=True)
        enc["labels"] = [[(t if t != tokenizer.pad_token_id else -100) for t in l] for l in labels["input_ids"]]
        return enc

    train_ds = raw["train"]
    eval_ds = raw["validation"]
    if data_args.max_train_samples:
        train_ds = train_ds.select(range(data_args.max_train_samples))
    if data_args.max_eval_samples:
        eval_ds = eval_ds.select(range(data_args.max_eval_samples))
    cols = train_ds.column_names
    train_ds = train_ds.map(preprocess, batched=True, remove_columns=cols)
    eval_ds = eval_ds.map(preprocess, batched=True, remove_columns=cols)

    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100, pad_to_multiple_of=8)

    trainer = NeuronSeq2SeqTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds if training_args.do_train else None,
        eval_dataset=eval_ds if training_args.do_eval else None,
        tokenizer=tokenizer,
        data_collator=collator,
        compute_metrics=build_compute_metrics(tokenizer) if training_args.predict_with_generate else None,
    )

    if training_args.do_train:
        result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
        trainer.save_model()
        trainer.log_metrics("train", result.metrics)
        trainer.save_metrics("train", result.metrics)
        trainer.save_state()

    if training_args.do_eval:
        metrics = trainer.evaluate(max_length=training_args.generation_max_length,
                                   num_beams=training_args.generation_num_beams, metric_key_prefix="eval")
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)


if __name__ == "__main__":
    main()
