#!/usr/bin/env python
# coding=utf-8
"""LoRA fine-tuning of a causal LM on Trainium with optimum-neuron.

Launch with torchrun (see scripts/run.sh).
"""
import os
import logging
from dataclasses import dataclass, field
from typing import Optional

import torch
from peft import LoraConfig, get_peft_model
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    default_data_collator,
    set_seed,
)

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism

from data import load_instruction_dataset

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_id: str = field(default="meta-llama/Llama-3.2-1B", metadata={"help": "Hub id or local path."})
    dataset_path: str = field(default="data/train.jsonl")
    max_length: int = field(default=1024)
    lora_r: int = field(default=16)
    lora_alpha: int = field(default=32)
    lora_dropout: float = field(default=0.05)
    target_modules: Optional[str] = field(default="q_proj,v_proj")


def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()

    logging.basicConfig(level=logging.INFO)
    set_seed(training_args.seed)

    tokenizer = AutoTokenizer.from_pretrained(model_args.model_id)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    # XLA_USE_BF16 in run.sh makes the whole model bf16 on device
    dtype = torch.bfloat16 if os.environ.get("XLA_USE_BF16", "0") == "1" else torch.float32

    with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
        model = AutoModelForCausalLM.from_pretrained(
            model_args.model_id,
            torch_dtype=dtype,
            low_cpu_mem_usage=True,
        )

    lora_config = LoraConfig(
        r=model_args.lora_r,
        lora_alpha=model_args.lora_alpha,
        lora_dropout=model_args.lora_dropout,
        target_modules=model_args.target_modules.split(","),
        bias="none",
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora_config)
    if training_args.local_rank in (-1, 0):
        model.print_trainable_parameters()

    train_dataset = load_instruction_dataset(model_args.dataset_path, tokenizer, max_length=model_args.max_length)

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        tokenizer=tokenizer,
        data_collator=default_data_collator,
    )

    # shorten the run during neuron_parallel_compile
    if os.environ.get("NEURON_EXTRACT_GRAPHS_ONLY"):
        logger.info("graph extraction pass: skipping final save")
        trainer.train()
        return

    result = trainer.train()
    trainer.log_metrics("train", result.metrics)
    trainer.save_model(training_args.output_dir)
    tokenizer.save_pretrained(training_args.output_dir)


if __name__ == "__main__":
    main()
