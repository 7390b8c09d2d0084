import json
import os
from dataclasses import dataclass, field
from typing import Optional

import torch
from transformers import AutoTokenizer, set_seed

from optimum.neuron import NeuronHfArgumentParser, NeuronTrainer, NeuronTrainingArguments
from optimum.neuron.models.training import NeuronModelForCausalLM

from .data import build_dataset, build_eval_dataset, collator


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="mistralai/Mistral-7B-v0.3")
    tokenizer_name: Optional[str] = None


@dataclass
class DataArguments:
    train_file: str = field(default="data/corpus.txt")
    block_size: int = field(default=4096)
    eval_texts: Optional[str] = None


def latest_checkpoint(output_dir):
    if not os.path.isdir(output_dir):
        return None
    ckpts = [d for d in os.listdir(output_dir) if d.startswith("checkpoint-")]
    if not ckpts:
        return None
    return os.path.join(output_dir, sorted(ckpts, key=lambda d: int(d.split("-")[1]))[-1])


def main():
    parser = NeuronHfArgumentParser((ModelArguments, DataArguments, NeuronTrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    set_seed(training_args.seed)

    trn_config = training_args.trn_config
    tp = trn_config.tensor_parallel_size
    pp = trn_config.pipeline_parallel_size
    dp = training_args.world_size
    global_bs = training_args.per_device_train_batch_size * training_args.gradient_accumulation_steps * dp
    if training_args.should_log:
        print(json.dumps({"tp": tp, "pp": pp, "dp": dp, "global_batch_size": global_bs}))

    tokenizer = AutoTokenizer.from_pretrained(model_args.tokenizer_name or model_args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token

    model = NeuronModelForCausalLM.from_pretrained(
        model_args.model_name_or_path,
        trn_config,
        torch_dtype=torch.bfloat16,
    )

    train_ds = build_dataset(tokenizer, data_args.train_file, data_args.block_size)
    eval_ds = None
    if data_args.eval_texts:
        with open(data_args.eval_texts) as fh:
            eval_ds = build_eval_dataset(tokenizer, fh.read().splitlines(), data_args.block_size)

    trainer = NeuronTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=collator(tokenizer, data_args.block_size),
        processing_class=tokenizer,
    )
    resume = training_args.resume_from_checkpoint or latest_checkpoint(training_args.output_dir)
    trainer.train(resume_from_checkpoint=resume)
    trainer.save_model()
    with open(os.path.join(training_args.output_dir, "parallel.json"), "w") as fh:
        json.dump({"tp": tp, "pp": pp, "seed": training_args.seed}, fh)


if __name__ == "__main__":
    main()
