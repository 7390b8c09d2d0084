"""NM703: attributes read on values of known stock type that the type does not have. Types come from
local inference only; every reported read is run for real (AttributeError), the others run through."""

from __future__ import annotations

import pytest

from tests.verify.helpers import check, outcomes

REPORTED = {
    "constructed": (
        "from transformers import TrainingArguments\n"
        "training_args = TrainingArguments(output_dir='out')\n"
        "tp = training_args.tensor_parallel_size", "tensor_parallel_size"),
    "hf_argument_parser": (
        "import sys\nfrom dataclasses import dataclass, field\nfrom transformers import HfArgumentParser, TrainingArguments\n"
        "@dataclass\nclass ScriptArguments:\n    model_id: str = field(default='m')\n"
        "sys.argv = ['train.py', '--output_dir', 'out']\n"
        "parser = HfArgumentParser((ScriptArguments, TrainingArguments))\n"
        "script_args, training_args = parser.parse_args_into_dataclasses()\n"
        "config = training_args.trn_config", "trn_config"),
    "trl_parser": (
        "import sys\nfrom trl import SFTConfig, TrlParser\n"
        "sys.argv = ['train.py', '--output_dir', 'out', '--bf16', 'false']\n"
        "(config,) = TrlParser((SFTConfig,)).parse_args_and_config()\n"
        "print(config.max_seq_length)", "max_seq_length"),
    "annotated_parameter": (
        "from transformers import TrainingArguments\n"
        "def main(args: TrainingArguments):\n    return args.zero_1\n"
        "main(TrainingArguments(output_dir='out'))", "zero_1"),
    "getattr_without_default": (
        "from trl import SFTConfig\nconfig = SFTConfig(output_dir='out', bf16=False)\n"
        "size = getattr(config, 'tensor_parallel_size')", "tensor_parallel_size"),
    "user_subclass": (
        "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
        "@dataclass\nclass Args(TrainingArguments):\n    lora_r: int = 8\n"
        "args = Args(output_dir='out')\nprint(args.lora_r, args.pipeline_parallel_size)", "pipeline_parallel_size"),
    "receiver_of_a_subclass_method": (  # `self` of a method of a local subclass of a stock class (rtC-09)
        "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
        "@dataclass\nclass Args(TrainingArguments):\n    use_flash: bool = False\n"
        "    def __post_init__(self):\n        super().__post_init__()\n"
        "        print(self.use_flash and self.tensor_parallel_size)\n"
        "Args(output_dir='out', use_flash=True)", "tensor_parallel_size"),
    "auto_class_optimum_classmethod": (  # a class rename that reached optimum-neuron's classmethod
        "from transformers import AutoModelForCausalLM\n"
        "config = AutoModelForCausalLM.get_neuron_config('m', batch_size=1, sequence_length=128)", "get_neuron_config"),
    "auto_class_through_module": (
        "import transformers\nmodel = transformers.AutoModelForSeq2SeqLM.export('m', neuron_config=None)", "export"),
}


@pytest.mark.parametrize("name", REPORTED)
def test_missing_attribute_is_reported(name: str) -> None:
    source, attribute = REPORTED[name]
    found = check(source)
    assert [rule for rule, _, _ in found] == ["NM703"], found
    assert f"`{attribute}`" in found[0][2] and "will raise AttributeError" in found[0][2]
    assert found[0][1] == source.count("\n") + 1 - (1 if name in ("annotated_parameter", "receiver_of_a_subclass_method") else 0)


NOT_REPORTED = {
    "existing_field_property_method": (
        "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='out')\n"
        "print(args.output_dir, args.world_size, args.to_dict, args.distributed_state, args.torch_compile)"),
    "set_before_read": (
        "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='out')\n"
        "args.tensor_parallel_size = 2\nprint(args.tensor_parallel_size)"),
    "hasattr_guard": (
        "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='out')\n"
        "if hasattr(args, 'trn_config'):\n    print(args.trn_config)"),
    "getattr_with_default": (
        "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='out')\n"
        "tp = getattr(args, 'tensor_parallel_size', 1)"),
    "except_attribute_error": (
        "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='out')\n"
        "try:\n    tp = args.tensor_parallel_size\nexcept AttributeError:\n    tp = 1"),
    "rebound_to_something_else": (
        "import argparse\nfrom transformers import TrainingArguments\nargs = TrainingArguments(output_dir='out')\n"
        "args = argparse.Namespace(tensor_parallel_size=2)\nprint(args.tensor_parallel_size)"),
    "dynamic_model_attributes": (
        "import tempfile\nfrom transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM\n"
        "folder = tempfile.mkdtemp()\n"
        "LlamaForCausalLM(LlamaConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,"
        " num_key_value_heads=1, vocab_size=32)).save_pretrained(folder)\n"
        "model = AutoModelForCausalLM.from_pretrained(folder)\nprint(model.lm_head, model.model.layers)"),
    "auto_class_stock_attributes": (
        "from transformers import AutoModel, AutoModelForCausalLM\n"
        "print(AutoModelForCausalLM.from_pretrained, AutoModelForCausalLM.from_config, AutoModel.register)"),
    "kwargs_class": (
        "from transformers import GenerationConfig\nconfig = GenerationConfig(my_flag=1)\nprint(config.my_flag)"),
    "annotated_may_be_a_subclass": (  # a subclass from another module may add the field: only Neuron names count
        "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
        "def main(args: TrainingArguments):\n    return args.lora_rank\n"
        "@dataclass\nclass Elsewhere(TrainingArguments):\n    lora_rank: int = 8\n"
        "main(Elsewhere(output_dir='out'))"),
    "user_subclass_with_getattr": (
        "from transformers import TrainingArguments\n"
        "class Args(TrainingArguments):\n    def __getattr__(self, name):\n        return 1\n"
        "args = Args(output_dir='out')\nprint(args.tensor_parallel_size)"),
    "receiver_own_and_stock_attributes": (  # its fields, what its methods set, the stock base's; not a static
        "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
        "@dataclass\nclass Args(TrainingArguments):\n    use_flash: bool = False\n"
        "    def __post_init__(self):\n        super().__post_init__()\n        self.extra = 1\n"
        "        print(self.use_flash, self.output_dir, self.extra, self.lora_rank if self.extra > 1 else 0)\n"
        "    @staticmethod\n    def degree(config):\n        return config.tensor_parallel_size\n"
        "Args(output_dir='out')\nprint(Args.degree(type('C', (), {'tensor_parallel_size': 2})()))"),
    "loop_variable": (
        "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='out')\n"
        "for args in [type('A', (), {'trn_config': 1})()]:\n    print(args.trn_config)"),
    "other_module_global": (
        "from transformers import TrainingArguments\n"
        "def show():\n    global args\n    args = type('A', (), {'trn_config': 1})()\n    print(args.trn_config)\n"
        "args = TrainingArguments(output_dir='out')\nshow()"),
}


@pytest.mark.parametrize("name", NOT_REPORTED)
def test_existing_dynamic_or_guarded_attribute_is_not_reported(name: str) -> None:
    assert check(NOT_REPORTED[name]) == []


def test_reported_reads_raise_and_the_others_run() -> None:
    found = outcomes([source for source, _ in REPORTED.values()] + list(NOT_REPORTED.values()))
    assert found == ["AttributeError"] * len(REPORTED) + [""] * len(NOT_REPORTED)


def test_auto_class_attribute_table_matches_installed_transformers() -> None:
    # every model Auto class of the installed transformers has exactly the class attributes NM703 knows of
    import transformers

    from codemods.verify.nm703_stock_attributes import AUTO_CLASS_ATTRIBUTES, AUTO_MODEL_CLASS

    names = [name for name in dir(transformers) if AUTO_MODEL_CLASS.fullmatch(f"transformers.{name}")]
    assert "AutoModelForCausalLM" in names and len(names) > 20
    for name in names:
        found = {a for a in dir(getattr(transformers, name)) if not a.startswith("__")}
        assert found == AUTO_CLASS_ATTRIBUTES, name
