# GPU baseline (A100): same recipe with stock trl, for loss-curve comparison
import sys
import torch
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser
from trl import ORPOConfig, ORPOTrainer

sys.path.insert(0, "scripts")
from data_utils import load_preference_data  # noqa: E402

MODEL = "meta-llama/Llama-3.2-1B-Instruct"


def main():
    (args,) = HfArgumentParser(ORPOConfig).parse_args_into_dataclasses()
    tok = AutoTokenizer.from_pretrained(MODEL)
    tok.pad_token = tok.pad_token or tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2").to("cuda")
    ds = load_preference_data("mlabonne/orpo-dpo-mix-40k", tok, 2000)
    trainer = ORPOTrainer(model=model, args=args, train_dataset=ds, tokenizer=tok,
                          peft_config=LoraConfig(r=16, lora_alpha=32, task_type="CAUSAL_LM"))
    trainer.train()


if __name__ == "__main__":
    main()
