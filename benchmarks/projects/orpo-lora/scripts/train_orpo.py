#!/usr/bin/env python
# ORPO + LoRA on Trainium with optimum-neuron
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import torch
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronORPOConfig, NeuronORPOTrainer
from optimum.neuron.distributed import lazy_load_for_parallelism

sys.path.insert(0, os.path.dirname(__file__))
from data_utils import load_preference_data  # noqa: E402


@dataclass
class ScriptArguments:
    model_id: str = field(default="meta-llama/Llama-3.2-1B-Instruct", metadata={"help": "model to tune"})
    dataset_id: str = field(default="mlabonne/orpo-dpo-mix-40k")
    max_samples: Optional[int] = field(default=None)
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    config: Optional[str] = field(default=None, metadata={"help": "YAML file with all arguments"})


def parse_args():
    parser = HfArgumentParser((ScriptArguments, NeuronORPOConfig))
    if "--config" in sys.argv:
        idx = sys.argv.index("--config")
        yaml_path = sys.argv[idx + 1]
        overrides = sys.argv[1:idx] + sys.argv[idx + 2:]
        script_args, orpo_args = parser.parse_yaml_file(os.path.abspath(yaml_path))
        # command-line flags (e.g. --max_steps for the compile pass) win over the YAML
        if overrides:
            for k, v in zip(overrides[::2], overrides[1::2]):
                setattr(orpo_args, k.lstrip("-"), type(getattr(orpo_args, k.lstrip("-")))(v))
        return script_args, orpo_args
    return parser.parse_args_into_dataclasses()


def main():
    script_args, training_args = parse_args()
    set_seed(training_args.seed)

    tokenizer = AutoTokenizer.from_pretrained(script_args.model_id)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token

    train_ds = load_preference_data(script_args.dataset_id, tokenizer, script_args.max_samples)

    dtype = torch.bfloat16 if training_args.bf16 else torch.float32
    with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
        model = AutoModelForCausalLM.from_pretrained(script_args.model_id, torch_dtype=dtype)

    peft_config = LoraConfig(
        r=script_args.lora_r,
        lora_alpha=script_args.lora_alpha,
        lora_dropout=script_args.lora_dropout,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
        task_type="CAUSAL_LM",
    )

    trainer = NeuronORPOTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        tokenizer=tokenizer,
        peft_config=peft_config,
    )
    trainer.train()
    trainer.save_model(training_args.output_dir)
    if trainer.is_world_process_zero():
        tokenizer.save_pretrained(training_args.output_dir)


if __name__ == "__main__":
    main()
