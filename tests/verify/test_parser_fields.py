"""NM705: a field of a local dataclass that a stock class parsed by the same HfArgumentParser / TrlParser declares.
Each reported case is also built for real (argparse raises ArgumentError), each not-reported one builds."""

from __future__ import annotations

import pytest

from tests.verify.helpers import check, outcomes

DATACLASS = "from dataclasses import dataclass, field\nfrom typing import ClassVar\n"

REPORTED = {
    "trl_parser_sft_config": (
        DATACLASS + "from trl import ScriptArguments, SFTConfig, TrlParser\n"
        "@dataclass\nclass Extra:\n    chat_template_path: str = field(default=None, metadata={'help': 'jinja'})\n"
        "parser = TrlParser((ScriptArguments, SFTConfig, Extra))", "chat_template_path", "trl.SFTConfig"),
    "hf_parser_list": (
        DATACLASS + "from transformers import HfArgumentParser, TrainingArguments\n"
        "@dataclass\nclass ScriptArgs:\n    seed: int = 3\n"
        "parser = HfArgumentParser([ScriptArgs, TrainingArguments])", "seed", "transformers.TrainingArguments"),
    "dataclass_types_keyword_and_module_alias": (
        DATACLASS + "import transformers\n"
        "@dataclass\nclass ScriptArgs:\n    learning_rate: float = 1e-4\n"
        "parser = transformers.HfArgumentParser(dataclass_types=(ScriptArgs, transformers.TrainingArguments))",
        "learning_rate", "transformers.TrainingArguments"),
    "inherited_from_local_base": (
        DATACLASS + "from trl import ModelConfig, TrlParser\n"
        "@dataclass\nclass Base:\n    dtype: str = 'bfloat16'\n"
        "@dataclass\nclass Extra(Base):\n    steps: int = 1\n"
        "parser = TrlParser((ModelConfig, Extra))", "dtype", "trl.ModelConfig"),
}


@pytest.mark.parametrize("name", REPORTED)
def test_conflicting_field_is_reported(name: str) -> None:
    source, field, stock = REPORTED[name]
    found = check(source)
    assert [rule for rule, _, _ in found] == ["NM705"], found
    assert f"--{field} is declared by" in found[0][2] and f"and by {stock} (" in found[0][2]
    assert "will raise argparse.ArgumentError" in found[0][2]
    assert found[0][1] == source.count("\n") + 1  # the parser's line


NOT_REPORTED = {
    "distinct_fields": (
        DATACLASS + "from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser\n"
        "@dataclass\nclass Extra:\n    template_file: str = None\n"
        "parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig, Extra))"),
    "class_var_and_init_false": (
        DATACLASS + "from transformers import HfArgumentParser, TrainingArguments\n"
        "@dataclass\nclass ScriptArgs:\n    seed: ClassVar[int] = 3\n"
        "    output_dir: str = field(default='x', init=False)\n    model_id: str = 'gpt2'\n"
        "parser = HfArgumentParser((ScriptArgs, TrainingArguments))"),
    "subclass_redeclares_its_own_base_field": (
        DATACLASS + "from transformers import HfArgumentParser, TrainingArguments\n"
        "@dataclass\nclass Args(TrainingArguments):\n    output_dir: str = 'out'\n    lora_r: int = 8\n"
        "parser = HfArgumentParser((Args,))"),
    "not_a_parser": (
        DATACLASS + "from transformers import TrainingArguments\n"
        "@dataclass\nclass ScriptArgs:\n    seed: int = 3\n"
        "classes = (ScriptArgs, TrainingArguments)"),
}


@pytest.mark.parametrize("name", NOT_REPORTED)
def test_distinct_or_unknown_fields_are_not_reported(name: str) -> None:
    assert check(NOT_REPORTED[name]) == []


def test_reported_parsers_raise_and_the_others_build() -> None:
    found = outcomes([source for source, _, _ in REPORTED.values()] + list(NOT_REPORTED.values()))
    assert found == ["ArgumentError"] * len(REPORTED) + [""] * len(NOT_REPORTED)


def test_a_class_the_file_does_not_define_is_not_checked() -> None:
    source = ("from transformers import HfArgumentParser, TrainingArguments\n"
              "from script_args import ScriptArgs\n"
              "parser = HfArgumentParser((ScriptArgs, TrainingArguments))\n")
    assert check(source) == []


def test_a_dataclass_with_an_unknown_base_is_not_checked() -> None:
    source = (DATACLASS + "from transformers import HfArgumentParser, TrainingArguments\n"
              "from common import Base\n"
              "@dataclass\nclass ScriptArgs(Base):\n    seed: int = 3\n"
              "parser = HfArgumentParser((ScriptArgs, TrainingArguments))\n")
    assert check(source) == []
