#!/usr/bin/env python
# LoRA SFT of Llama-3 on Trainium with optimum-neuron.
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import torch
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronSFTConfig, NeuronSFTTrainer, NeuronTrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism

from data_utils import CHAT_TEMPLATE, format_dolly, load_train_dataset


@dataclass
class ScriptArguments:
    model_id: str = field(default="meta-llama/Meta-Llama-3-8B", metadata={"help": "model to fine-tune"})
    dataset_name: str = field(default="databricks/databricks-dolly-15k")
    tokenizer_id: Optional[str] = field(default=None)
    max_seq_length: int = field(default=1024)
    packing: bool = field(default=True)
    use_chat_template: bool = field(default=False)
    lora_r: int = field(default=16)
    lora_alpha: int = field(default=16)
    lora_dropout: float = field(default=0.05)


def training_function(script_args, training_args):
    dataset = load_train_dataset(script_args.dataset_name)

    tokenizer = AutoTokenizer.from_pretrained(script_args.tokenizer_id or script_args.model_id)
    tokenizer.pad_token = tokenizer.eos_token
    if script_args.use_chat_template:
        tokenizer.chat_template = CHAT_TEMPLATE

    with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size,
                                   pipeline_parallel_size=training_args.pipeline_parallel_size):
        model = AutoModelForCausalLM.from_pretrained(
            script_args.model_id,
            torch_dtype=torch.bfloat16 if training_args.bf16 else torch.float32,
            low_cpu_mem_usage=True,
        )

    lora_config = LoraConfig(
        r=script_args.lora_r,
        lora_alpha=script_args.lora_alpha,
        lora_dropout=script_args.lora_dropout,
        target_modules=["q_proj", "v_proj", "k_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        bias="none",
        task_type="CAUSAL_LM",
    )

    args = training_args.to_dict()
    sft_config = NeuronSFTConfig(
        max_seq_length=script_args.max_seq_length,
        packing=script_args.packing,
        dataset_kwargs={"add_special_tokens": False, "append_concat_token": True},
        **args,
    )

    trainer = NeuronSFTTrainer(
        args=sft_config,
        model=model,
        peft_config=lora_config,
        tokenizer=tokenizer,
        train_dataset=dataset,
        formatting_func=format_dolly,
    )
    trainer.train()
    trainer.save_model()  # sharded checkpoint, consolidate afterwards


def main():
    parser = HfArgumentParser([ScriptArguments, NeuronTrainingArguments])
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        script_args, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
    else:
        script_args, training_args = parser.parse_args_into_dataclasses()

    set_seed(training_args.seed)
    training_function(script_args, training_args)


if __name__ == "__main__":
    main()
