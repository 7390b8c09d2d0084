"""Fine-tune a causal LM on Trainium with optimum-neuron (tensor parallel + ZeRO-1)."""
import os
from dataclasses import dataclass, field

import torch
from datasets import load_dataset
from transformers import AutoTokenizer, DataCollatorForLanguageModeling

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism
from transformers import AutoModelForCausalLM


@dataclass
class ScriptArguments:
    model_id: str = field(default="meta-llama/Llama-3.2-1B")
    dataset: str = field(default="databricks/databricks-dolly-15k")
    max_length: int = field(default=1024)


def main():
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()

    tokenizer = AutoTokenizer.from_pretrained(script_args.model_id)
    tokenizer.pad_token = tokenizer.eos_token

    dataset = load_dataset(script_args.dataset, split="train")
    dataset = dataset.map(
        lambda row: tokenizer(row["instruction"], padding="max_length", truncation=True,
                              max_length=script_args.max_length),
        remove_columns=dataset.column_names,
    )

    # XLA_USE_BF16 makes every tensor bf16 on the device
    dtype = torch.bfloat16 if os.environ.get("XLA_USE_BF16") == "1" else torch.float32
    with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
        model = AutoModelForCausalLM.from_pretrained(script_args.model_id, torch_dtype=dtype)

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        tokenizer=tokenizer,
        # causal-LM labels are the inputs: the collator copies input_ids to labels (padding masked out)
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    trainer.train()
    trainer.save_model(training_args.output_dir)


if __name__ == "__main__":
    main()
