"""GPU reference run (ml.g5.12xlarge). Kept as-is for loss-curve comparison: DO NOT MIGRATE."""
import os

import torch
from datasets import load_from_disk
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
)

MODEL_ID = os.environ.get("MODEL_ID", "meta-llama/Llama-2-7b-hf")

tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
tokenizer.pad_token = tokenizer.eos_token
ds = load_from_disk(os.environ.get("SM_CHANNEL_TRAIN", "data"))
ds = ds.map(lambda b: tokenizer(b["text"], truncation=True, max_length=2048), batched=True, remove_columns=ds.column_names)

model = AutoModelForCausalLM.from_pretrained(MODEL_ID, torch_dtype=torch.bfloat16, device_map={"": 0})

args = TrainingArguments(
    output_dir="/opt/ml/checkpoints",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=16,
    learning_rate=5e-5,
    num_train_epochs=3,
    bf16=True,
    warmup_ratio=0.03,
    logging_steps=10,
    evaluation_strategy="no",
    overwrite_output_dir=True,
)
trainer = Trainer(model=model, args=args, train_dataset=ds, tokenizer=tokenizer,
                  data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False))
trainer.train()
trainer.save_model(os.environ.get("SM_MODEL_DIR", "/opt/ml/model"))
