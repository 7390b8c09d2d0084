import os
from dataclasses import dataclass, field
from typing import Optional

import torch
from datasets import load_from_disk
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    HfArgumentParser,
    set_seed,
)

from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism


@dataclass
class ScriptArguments:
    model_id: str = field(default="meta-llama/Llama-2-7b-hf", metadata={"help": "Hub id or local path"})
    dataset_path: str = field(default=os.environ.get("SM_CHANNEL_TRAIN", "data"), metadata={"help": "load_from_disk dir"})
    max_seq_length: int = field(default=2048)
    hf_token: Optional[str] = field(default=None)


def main():
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()
    set_seed(training_args.seed)

    tokenizer = AutoTokenizer.from_pretrained(script_args.model_id, token=script_args.hf_token)
    tokenizer.pad_token = tokenizer.eos_token

    dataset = load_from_disk(script_args.dataset_path)

    def tok(batch):
        return tokenizer(batch["text"], truncation=True, padding="max_length", max_length=script_args.max_seq_length)

    dataset = dataset.map(tok, batched=True, remove_columns=dataset.column_names)

    dtype = torch.bfloat16 if training_args.bf16 else torch.float32
    with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
        model = AutoModelForCausalLM.from_pretrained(
            script_args.model_id,
            torch_dtype=dtype,
            low_cpu_mem_usage=True,
            use_cache=False if training_args.gradient_checkpointing else True,
            token=script_args.hf_token,
        )

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        tokenizer=tokenizer,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    trainer.train()
    # SageMaker uploads /opt/ml/model to S3 at the end of the job
    trainer.save_model(os.environ.get("SM_MODEL_DIR", training_args.output_dir))
    if training_args.world_size > 1:
        print(f"data-parallel replicas: {training_args.world_size}")


if __name__ == "__main__":
    main()
