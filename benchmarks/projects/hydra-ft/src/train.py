import logging
import os

import hydra
import torch
from datasets import load_dataset
from omegaconf import DictConfig, OmegaConf
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling

from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism

from src.metrics import perplexity

logger = logging.getLogger(__name__)


def build_dataset(tokenizer, path, max_length):
    ds = load_dataset("json", data_files=path, split="train")

    def tok(batch):
        return tokenizer(batch["text"], truncation=True, max_length=max_length, padding="max_length")

    return ds.map(tok, batched=True, remove_columns=ds.column_names)


@hydra.main(version_base=None, config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> None:
    logger.info(OmegaConf.to_yaml(cfg))
    training_args = NeuronTrainingArguments(**OmegaConf.to_container(cfg.trainer, resolve=True))

    tokenizer = AutoTokenizer.from_pretrained(cfg.model_id)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
        model = AutoModelForCausalLM.from_pretrained(cfg.model_id, torch_dtype=torch.bfloat16)

    train_ds = build_dataset(tokenizer, cfg.dataset_path, cfg.max_length)
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        tokenizer=tokenizer,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    result = trainer.train()
    if training_args.process_index == 0:
        logger.info("final ppl %.3f", perplexity(result.training_loss))
    trainer.save_model(os.path.join(training_args.output_dir, "final"))


if __name__ == "__main__":
    main()
