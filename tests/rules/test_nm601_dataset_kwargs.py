"""NM601 / NM202: trl 0.11 ``dataset_kwargs`` keys that trl 1.x SFTTrainer ignores (it reads only
``skip_prepare_dataset``; ``REMOVED_DATASET_KWARGS``, generated from the trl wheels) get a finding: a todo where
trl 1.x does something else (``add_special_tokens: False``: it adds the tokenizer's special tokens to plain-text
examples), an info where the value is what trl 1.x does anyway (rt3C #14). The code stays: the key is ignored."""

import inspect

from codemods._tables.drift_data import REMOVED_DATASET_KWARGS
from codemods.drift import nm601_training_args_drift as nm601
from tests.rules.case import migrate

STOCK = """
from trl import SFTConfig

cfg = SFTConfig(output_dir="o", dataset_kwargs={kwargs})
"""
NEURON = STOCK.replace("from trl import SFTConfig", "from optimum.neuron import NeuronSFTConfig as SFTConfig")


def _found(result, rule):
    return sorted((f.severity.value, f.message.split(" is ignored")[0]) for f in result.findings
                  if f.rule == rule and f.message.startswith("dataset_kwargs"))


def test_the_table_is_what_the_installed_trl_ignores() -> None:
    from trl.trainer import sft_trainer

    source = inspect.getsource(sft_trainer)
    assert set(REMOVED_DATASET_KWARGS) == {"add_special_tokens", "append_concat_token"}
    for key in REMOVED_DATASET_KWARGS:
        assert f'dataset_kwargs.get("{key}"' not in source and key in nm601._NOW
    assert 'dataset_kwargs.get("skip_prepare_dataset"' in source


def test_stock_and_neuron_configs_get_the_findings() -> None:
    kwargs = '{"add_special_tokens": False, "append_concat_token": True}'
    expected = [("info", 'dataset_kwargs "append_concat_token": True'),
                ("todo", 'dataset_kwargs "add_special_tokens": False')]
    assert _found(migrate(STOCK.format(kwargs=kwargs), "NM601"), "NM601") == expected
    assert _found(migrate(NEURON.format(kwargs=kwargs), "NM202"), "NM202") == expected


def test_values_that_change_the_tokens_are_todos() -> None:
    kwargs = '{"add_special_tokens": special, "append_concat_token": False}'
    result = migrate(STOCK.format(kwargs=kwargs), "NM601")
    assert _found(result, "NM601") == [("todo", 'dataset_kwargs "add_special_tokens": special'),
                                      ("todo", 'dataset_kwargs "append_concat_token": False')]
    assert 'dataset_kwargs={"add_special_tokens": special, "append_concat_token": False})' in result.text


def test_a_key_trl_1_reads_gets_nothing() -> None:
    result = migrate(STOCK.format(kwargs='{"skip_prepare_dataset": True}'), "NM601")
    assert _found(result, "NM601") == []
