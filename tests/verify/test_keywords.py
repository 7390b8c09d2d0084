"""NM702: keyword arguments the target stock APIs do not accept. Each reported case is also run for
real (it raises TypeError), each not-reported one runs through or is outside what is certain."""

from __future__ import annotations

import pytest

from tests.verify.helpers import check, outcomes

TINY_MODEL = """
import tempfile
from transformers import LlamaConfig, LlamaForCausalLM
folder = tempfile.mkdtemp()
LlamaForCausalLM(LlamaConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
                             num_key_value_heads=1, vocab_size=32)).save_pretrained(folder)
"""

REPORTED = {
    "training_arguments": (
        "from transformers import TrainingArguments\n"
        "args = TrainingArguments(output_dir='out', tensor_parallel_size=2)", "tensor_parallel_size"),
    "alias_and_module_path": (
        "import transformers as tf\n"
        "args = tf.training_args.TrainingArguments(output_dir='out', zero_1=True)", "zero_1"),
    "sft_config": ("from trl import SFTConfig\nconfig = SFTConfig(output_dir='out', max_seq_length=512)", "max_seq_length"),
    "lora_config": ("from peft import LoraConfig\nLoraConfig(r=8, lora_alphaa=16)", "lora_alphaa"),
    "distributed_config": (
        "from transformers.distributed import DistributedConfig\nDistributedConfig(tp_size=1, tensor_parallel_size=2)",
        "tensor_parallel_size"),
    "function": ("import torch.distributed as dist\ndist.init_process_group(backend='gloo', rank_id=0)", "rank_id"),
    "method_of_typed_value": (
        "from transformers import TrainingArguments\n"
        "args = TrainingArguments(output_dir='out')\nargs.to_json_string(indent=2)", "indent"),
    "user_dataclass_subclass": (
        "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
        "@dataclass\nclass Args(TrainingArguments):\n    lora_r: int = 8\n"
        "Args(output_dir='out', lora_r=4, lora_rank=2)", "lora_rank"),
    # rt6K K1: an __init__ that passes **kwargs unchanged to super().__init__ hands the keyword to the stock base
    "forwarding_subclass": (
        "from transformers import TrainingArguments\n"
        "class Args(TrainingArguments):\n    def __init__(self, *args, tp=1, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n        self.tp = tp\n"
        "Args(output_dir='out', tp=2, tensor_parallel_size=2)", "tensor_parallel_size"),
    "forwarding_trainer_chain": (
        "from transformers import Trainer\n"
        "class Weighted(Trainer):\n    def __init__(self, *args, weight=1.0, **kwargs):\n"
        "        super(Weighted, self).__init__(*args, **kwargs)\n"
        "class Logged(Weighted):\n    pass\n"
        "Logged(weight=2.0, tokenizer=None)", "tokenizer"),
    "forwarding_sft_subclass": (
        "from trl import SFTTrainer\n"
        "class Packed(SFTTrainer):\n    def __init__(self, model, *args, **kwargs):\n"
        "        super().__init__(model, *args, **kwargs)\n"
        "Packed(model=None, dataset_text_field='text')", "dataset_text_field"),
    "from_pretrained_removed": (
        TINY_MODEL + "from transformers import AutoModelForCausalLM\n"
        "AutoModelForCausalLM.from_pretrained(folder, use_flash_attention_2=True)", "use_flash_attention_2"),
}


@pytest.mark.parametrize("name", REPORTED)
def test_refused_keyword_is_reported(name: str) -> None:
    source, keyword = REPORTED[name]
    found = check(source)
    assert [rule for rule, _, _ in found] == ["NM702"], found
    assert f"`{keyword}`" in found[0][2] and "will raise TypeError" in found[0][2]
    assert found[0][1] == source.count("\n") + 1  # the call's line


NOT_REPORTED = {
    "accepted": "from transformers import TrainingArguments\nTrainingArguments(output_dir='out', torch_compile=True)",
    "kwargs_callee": "from transformers import GenerationConfig\nGenerationConfig(max_new_tokens=4, my_flag=1)",
    "spread_only": "from transformers import TrainingArguments\nkw = {'output_dir': 'out'}\nTrainingArguments(**kw)",
    "subclass_field": (
        "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
        "@dataclass\nclass Args(TrainingArguments):\n    lora_r: int = 8\nArgs(output_dir='out', lora_r=4)"),
    "subclass_own_init": (
        "from transformers import TrainingArguments\n"
        "class Args(TrainingArguments):\n    def __init__(self, tp=1, **kw):\n        super().__init__(**kw)\n"
        "Args(tp=2, output_dir='out')"),
    "forwarding_subclass_takes_it": (
        "from transformers import TrainingArguments\n"
        "class Args(TrainingArguments):\n    def __init__(self, *args, tokenizer=None, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n"
        "Args(output_dir='out', tokenizer=1)"),
    "forwarding_subclass_pops_it": (
        "from transformers import TrainingArguments\n"
        "class Args(TrainingArguments):\n    def __init__(self, *args, **kwargs):\n"
        "        kwargs.pop('zero_1', None)\n        super().__init__(*args, **kwargs)\n"
        "Args(output_dir='out', zero_1=True)"),
    "forwarding_subclass_rebuilds_it": (
        "from transformers import TrainingArguments\n"
        "class Args(TrainingArguments):\n    def __init__(self, *args, **kwargs):\n"
        "        options = {k: v for k, v in kwargs.items() if k != 'zero_1'}\n"
        "        super().__init__(*args, **options)\n"
        "Args(output_dir='out', zero_1=True)"),
    "from_pretrained_config_attribute": (
        TINY_MODEL + "from transformers import AutoModelForCausalLM\n"
        "AutoModelForCausalLM.from_pretrained(folder, num_labels=3, low_cpu_mem_usage=True, dtype='float32')"),
    "type_error_expected": (
        "from transformers import TrainingArguments\n"
        "try:\n    TrainingArguments(output_dir='out', old_flag=1)\nexcept TypeError:\n    pass"),
    "other_version_branch": (
        "import transformers\nfrom transformers import TrainingArguments\n"
        "if transformers.__version__ < '4.46':\n    TrainingArguments(output_dir='out', evaluation_strategy='steps')\n"
        "else:\n    TrainingArguments(output_dir='out', eval_strategy='steps')"),
    "shadowed_name": (
        "from transformers import TrainingArguments\n"
        "def TrainingArguments(**kw):\n    return kw\nTrainingArguments(anything=1)"),
}


@pytest.mark.parametrize("name", NOT_REPORTED)
def test_accepted_or_uncertain_keyword_is_not_reported(name: str) -> None:
    assert check(NOT_REPORTED[name]) == []


def test_reported_calls_raise_and_the_others_run() -> None:
    found = outcomes([source for source, _ in REPORTED.values()] + list(NOT_REPORTED.values()))
    assert found == ["TypeError"] * len(REPORTED) + [""] * len(NOT_REPORTED)


def test_a_local_class_name_bound_again_is_not_followed() -> None:
    source = ("from transformers import TrainingArguments\n"
              "class Args(TrainingArguments):\n    pass\n"
              "Args = dict\nArgs(anything=1)\n")
    assert check(source) == []
