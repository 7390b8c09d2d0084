"""Pure symbol moves of the optimum-neuron TRAINING API (trainers, arguments, parsers, accelerate, PEFT, models).

Every import path a symbol had across 0.0.x-0.4.x is listed (top-level ``optimum.neuron`` re-exports and
the defining modules). The inference ``NeuronModelForCausalLM`` (``optimum.neuron``,
``optimum.neuron.modeling*``) is NOT here: it belongs to the inference family; only the training one
(``optimum.neuron.models.training*``) is.
"""

from __future__ import annotations

ON = "optimum.neuron"


def _paths(name: str, *modules: str) -> list[str]:
    return [f"{module}.{name}" for module in modules]


_GROUPS: list[tuple[list[str], str]] = [
    (_paths("NeuronTrainer", ON, f"{ON}.trainers", f"{ON}.trainers.transformers", f"{ON}.trainers.trainer")
     + _paths("TrainiumTrainer", ON, f"{ON}.trainers"), "transformers.Trainer"),
    (_paths("Seq2SeqNeuronTrainer", ON, f"{ON}.trainers") + _paths("Seq2SeqTrainiumTrainer", ON, f"{ON}.trainers"),
     "transformers.Seq2SeqTrainer"),
    (_paths("NeuronTrainingArguments", ON, f"{ON}.training_args", f"{ON}.trainers", f"{ON}.trainers.training_args")
     + _paths("TrainiumTrainingArguments", ON, f"{ON}.training_args"), "transformers.TrainingArguments"),
    (_paths("Seq2SeqNeuronTrainingArguments", ON, f"{ON}.training_args")
     + _paths("Seq2SeqTrainiumTrainingArguments", ON, f"{ON}.training_args"), "transformers.Seq2SeqTrainingArguments"),
    (_paths("NeuronHfArgumentParser", ON, f"{ON}.hf_argparser") + _paths("TrainiumHfArgumentParser", ON, f"{ON}.hf_argparser"),
     "transformers.HfArgumentParser"),
    (_paths("NeuronSFTTrainer", ON, f"{ON}.trainers", f"{ON}.trainers.sft_trainer", f"{ON}.trainers.trl_utils"), "trl.SFTTrainer"),
    (_paths("NeuronSFTConfig", ON, f"{ON}.utils", f"{ON}.utils.trl_utils", f"{ON}.trainers", f"{ON}.trainers.sft_config"),
     "trl.SFTConfig"),
    (_paths("NeuronORPOTrainer", ON, f"{ON}.trainers"), "trl.experimental.orpo.ORPOTrainer"),
    (_paths("NeuronORPOConfig", ON, f"{ON}.utils", f"{ON}.utils.trl_utils"), "trl.experimental.orpo.ORPOConfig"),
    (_paths("NeuronAccelerator", ON, f"{ON}.accelerate", f"{ON}.accelerate.accelerator"), "accelerate.Accelerator"),
    (_paths("NeuronAcceleratorState", ON, f"{ON}.accelerate", f"{ON}.accelerate.state"), "accelerate.state.AcceleratorState"),
    (_paths("NeuronPartialState", ON, f"{ON}.accelerate", f"{ON}.accelerate.state"), "accelerate.PartialState"),
    (_paths("get_peft_model", ON, f"{ON}.utils", f"{ON}.peft", f"{ON}.peft.mapping_func"), "peft.get_peft_model"),
    (_paths("NeuronPeftModel", f"{ON}.utils", f"{ON}.peft", f"{ON}.peft.peft_model"), "peft.PeftModel"),
    (_paths("NeuronPeftModelForCausalLM", f"{ON}.peft", f"{ON}.peft.peft_model"), "peft.PeftModelForCausalLM"),
    (_paths("NeuronLoraModel", f"{ON}.peft.tuners", f"{ON}.peft.tuners.lora", f"{ON}.peft.tuners.lora.model"), "peft.LoraModel"),
    (_paths("NeuronModelForCausalLM", f"{ON}.models.training", f"{ON}.models.training.modeling_auto"), "transformers.AutoModelForCausalLM"),
    (_paths("NeuronModel", f"{ON}.models.training", f"{ON}.models.training.modeling_auto"), "transformers.AutoModel"),
    (_paths("LlamaForCausalLM", f"{ON}.models.training", f"{ON}.models.training.llama", f"{ON}.models.training.llama.modeling_llama"),
     "transformers.LlamaForCausalLM"),
    (_paths("GraniteForCausalLM", f"{ON}.models.training", f"{ON}.models.training.granite", f"{ON}.models.training.granite.modeling_granite"),
     "transformers.GraniteForCausalLM"),
    (_paths("Qwen3ForCausalLM", f"{ON}.models.training", f"{ON}.models.training.qwen3", f"{ON}.models.training.qwen3.modeling_qwen3"),
     "transformers.Qwen3ForCausalLM"),
    (_paths("TrainingNeuronConfig", f"{ON}.models.training", f"{ON}.models.training.config"), "transformers.distributed.DistributedConfig"),
    (_paths("skip_first_batches", f"{ON}.utils.training_utils", f"{ON}.models.training.training_utils"), "accelerate.skip_first_batches"),
]

#: qualified optimum-neuron name -> stock qualified name
TRAINING_MOVES: dict[str, str] = {old: new for olds, new in _GROUPS for old in olds}

#: which stock argument class a (Neuron or stock) arguments class builds
ARGS_CLASSES: dict[str, str] = {
    "transformers.TrainingArguments": "TrainingArguments",
    "transformers.training_args.TrainingArguments": "TrainingArguments",
    "transformers.Seq2SeqTrainingArguments": "Seq2SeqTrainingArguments",
    "trl.SFTConfig": "SFTConfig",
    "trl.trainer.sft_config.SFTConfig": "SFTConfig",
    "trl.ORPOConfig": "ORPOConfig",
    "trl.experimental.orpo.ORPOConfig": "ORPOConfig",
}
NEURON_ARGS_CLASSES: dict[str, str] = {old: ARGS_CLASSES[new] for old, new in TRAINING_MOVES.items() if new in ARGS_CLASSES}

TRAINER_CLASSES = {"transformers.Trainer", "transformers.Seq2SeqTrainer", "trl.SFTTrainer", "trl.experimental.orpo.ORPOTrainer"}
NEURON_TRAINERS: dict[str, str] = {old: new for old, new in TRAINING_MOVES.items() if new in TRAINER_CLASSES}
#: stock trainers whose tokenizer= became processing_class= (transformers 5 / trl 1.x)
STOCK_TRAINERS = {
    "transformers.Trainer", "transformers.Seq2SeqTrainer", "transformers.trainer.Trainer",
    "trl.SFTTrainer", "trl.DPOTrainer", "trl.KTOTrainer", "trl.RewardTrainer", "trl.GRPOTrainer", "trl.RLOOTrainer",
    "trl.ORPOTrainer", "trl.CPOTrainer", "trl.experimental.orpo.ORPOTrainer",
}
