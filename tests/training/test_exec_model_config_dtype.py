"""Execution proof (NM604, trl ModelConfig): a trl recipe script written for trl 0.x reads
``model_args.torch_dtype`` of the ModelConfig its TrlParser parses (the "auto" / None / torch dtype by name idiom)
and loads the model with it. trl 1.x renamed the field to ``dtype``: the unmigrated read raises AttributeError,
the migrated script (``model_args.dtype``, ``dtype=`` at from_pretrained) parses ``--dtype float32`` with the
installed trl and loads the tiny model in that dtype."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import run_script

pytestmark = pytest.mark.execution

LEGACY = textwrap.dedent('''
    import json

    import torch
    from transformers import AutoModelForCausalLM
    from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser


    def load(model_args):
        name = model_args.torch_dtype
        torch_dtype = name if name in ["auto", None] else getattr(torch, name)
        return AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, torch_dtype=torch_dtype)


    def main():
        parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
        script_args, training_args, model_args = parser.parse_args_and_config()
        model = load(model_args)
        print("RESULT=" + json.dumps({"dtype": str(model.dtype)}))


    if __name__ == "__main__":
        main()
    ''').lstrip("\\n")


def test_the_migrated_recipe_reads_the_renamed_model_config_field(tmp_path: Path, tiny_assets) -> None:
    result = apply_rules(LEGACY, path="recipe.py", project={"recipe.py": LEGACY}, select=["NM6", "NM7"])
    migrated = result.text
    assert "model_args.torch_dtype" not in migrated and "name = model_args.dtype" in migrated
    assert "from_pretrained(model_args.model_name_or_path, dtype=torch_dtype)" in migrated
    assert not [f for f in result.findings if f.severity.value == "error"], result.findings
    args = ("--model_name_or_path", tiny_assets["MODEL_DIR"], "--dtype", "float32", "--output_dir",
            str(tmp_path / "out"), "--dataset_name", "unused", "--report_to", "none", "--use_cpu", "true")
    env = {**tiny_assets, "CUDA_VISIBLE_DEVICES": ""}
    (tmp_path / "recipe.py").write_text(migrated)
    assert run_script(tmp_path / "recipe.py", env, args=args) == {"dtype": "torch.float32"}
    # the script as it was: trl 1.x's ModelConfig has no torch_dtype
    (tmp_path / "legacy.py").write_text(LEGACY.replace("torch_dtype=torch_dtype", "dtype=torch_dtype"))
    with pytest.raises(AssertionError, match="AttributeError: 'ModelConfig' object has no attribute 'torch_dtype'"):
        run_script(tmp_path / "legacy.py", env, args=args)
