"""Execution proof (NM408, trl ModelConfig ``torch_dtype`` -> ``dtype``): a trl recipe parsing trl's ModelConfig reads
a YAML recipe with ``torch_dtype: bfloat16`` and is launched with ``--torch_dtype bfloat16``. trl 1.x renamed the
field: the installed trl's TrlParser stops on the recipe as it was ("Unknown arguments from config file") and on the
flag; the migrated recipe and launch line parse, with the value kept."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

import pytest
from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

pytestmark = pytest.mark.execution

SCRIPT = textwrap.dedent('''
    from trl import ModelConfig, ScriptArguments, TrlParser

    from optimum.neuron import NeuronSFTConfig

    parser = TrlParser((ScriptArguments, NeuronSFTConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_and_config()
    ''').lstrip("\n")
RECIPE = textwrap.dedent('''
    model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
    torch_dtype: bfloat16
    dataset_name: trl-lib/Capybara
    output_dir: out/sft
    learning_rate: 2.0e-4
    report_to: none
    use_cpu: true
    ''').lstrip("\n")
LAUNCH = "torchrun --nproc_per_node 2 sft.py --config recipe.yaml --torch_dtype float16\n"
PROJECT = {"sft.py": SCRIPT, "recipe.yaml": RECIPE, "run.sh": LAUNCH}


def _parse(args: list[str]):
    # the script as NM201 migrates it parses trl's SFTConfig in place of NeuronSFTConfig
    return TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config(args=args)


def test_the_migrated_recipe_and_flag_parse_with_trl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recipe = apply_rules(RECIPE, path="recipe.yaml", kind=FileKind.YAML, project=PROJECT, select=["NM408"]).text
    assert "dtype: bfloat16" in recipe and "torch_dtype" not in recipe
    (tmp_path / "recipe.yaml").write_text(recipe)
    _, _, model_args = _parse(["--config", "recipe.yaml"])
    assert model_args.dtype == "bfloat16"

    launch = apply_rules(LAUNCH, path="run.sh", kind=FileKind.SHELL, project=PROJECT, select=["NM408"]).text
    words = shlex.split(launch.splitlines()[-1])
    assert "--torch_dtype" not in words and words[words.index("--dtype") + 1] == "float16"
    _, _, model_args = _parse(words[words.index("--config"):])
    assert model_args.dtype == "float16"  # the flag overrides the recipe's value, as before

    # as they were: trl 1.x's ModelConfig has no torch_dtype
    (tmp_path / "legacy.yaml").write_text(RECIPE)
    with pytest.raises(ValueError, match=r"Unknown arguments from config file: \['--torch_dtype', 'bfloat16'\]"):
        _parse(["--config", "legacy.yaml"])
    with pytest.raises(ValueError, match=r"not used by the HfArgumentParser: \['--torch_dtype', 'float16'\]"):
        _parse(["--config", "recipe.yaml", "--torch_dtype", "float16"])
