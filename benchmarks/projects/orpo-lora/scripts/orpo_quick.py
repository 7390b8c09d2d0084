"""Quick ORPO smoke run with everything in code (no YAML), used for CI on a trn1.2xlarge."""
import argparse
import os

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from peft import LoraConfig, get_peft_model

from optimum.neuron.utils import NeuronORPOConfig
from optimum.neuron import NeuronORPOTrainer as ORPOTrainer

from data_utils import load_preference_data

TP_DEGREE = 2
MAX_LEN = 512


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="meta-llama/Llama-3.2-1B-Instruct")
    ap.add_argument("--data", default="mlabonne/orpo-dpo-mix-40k")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--out", default="output/quick")
    a = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(a.model)
    tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(a.model, torch_dtype=torch.bfloat16)
    model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, task_type="CAUSAL_LM"))

    cfg = NeuronORPOConfig(
        output_dir=a.out,
        max_steps=a.steps,
        per_device_train_batch_size=1,
        learning_rate=5e-6,
        beta=0.1,
        max_length=MAX_LEN,
        max_prompt_length=MAX_LEN // 2,
        bf16=True,
        tensor_parallel_size=TP_DEGREE,
        zero_1=False,
        logging_steps=1,
    )
    if os.environ.get("NEURON_EXTRACT_GRAPHS_ONLY") == "1":
        cfg.max_steps = 3  # compile pass only
    trainer = ORPOTrainer(model=model, args=cfg, train_dataset=load_preference_data(a.data, tok, 64), tokenizer=tok)
    trainer.train()


if __name__ == "__main__":
    main()
