"""Supervised fine-tuning with NeuronSFTTrainer (optimum-neuron >= 0.0.25)."""
from dataclasses import dataclass, field

import torch
from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoTokenizer, HfArgumentParser

from optimum.neuron import NeuronSFTConfig, NeuronSFTTrainer
from optimum.neuron.models.training import NeuronModelForCausalLM


@dataclass
class ScriptArguments:
    model_id: str = field(default="meta-llama/Llama-3.2-1B")
    dataset_path: str = field(default="data/train.jsonl")
    lora_r: int = field(default=16)


def formatting_func(example):
    return f"### Instruction:\n{example['instruction']}\n\n### Response:\n{example['response']}"


def train(script_args, training_args):
    tokenizer = AutoTokenizer.from_pretrained(script_args.model_id)
    tokenizer.pad_token = tokenizer.eos_token

    dataset = load_dataset("json", data_files=script_args.dataset_path, split="train")

    trn_config = training_args.trn_config
    dtype = torch.bfloat16 if training_args.bf16 else torch.float32
    model = NeuronModelForCausalLM.from_pretrained(
        script_args.model_id,
        trn_config,
        torch_dtype=dtype,
        # NKI flash attention kernel
        attn_implementation="flash_attention_2",
    )

    peft_config = LoraConfig(
        r=script_args.lora_r,
        lora_alpha=2 * script_args.lora_r,
        lora_dropout=0.05,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
        task_type="CAUSAL_LM",
    )

    trainer = NeuronSFTTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        tokenizer=tokenizer,
        peft_config=peft_config,
        formatting_func=formatting_func,
    )
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    parser = HfArgumentParser([ScriptArguments, NeuronSFTConfig])
    script_args, training_args = parser.parse_args_into_dataclasses()
    train(script_args, training_args)
