"""What the launch-layer and dependency rules emit exists in the installed stock libraries."""

from __future__ import annotations

import importlib
import importlib.metadata

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from codemods.deps import _plan as plan
from codemods.launch._base import flag_plan
from codemods._tables.training_args import TRAINING_ARGS, FieldAction

OWNERS = {
    "TrainingArguments": ("transformers", "TrainingArguments"),
    "Seq2SeqTrainingArguments": ("transformers", "Seq2SeqTrainingArguments"),
    "SFTConfig": ("trl", "SFTConfig"),
    "ORPOConfig": ("trl.experimental.orpo", "ORPOConfig"),
}
RENAMES = sorted(name for name, mapping in TRAINING_ARGS.items() if mapping.action is FieldAction.RENAME)


def _parser(owner: str):
    from transformers import HfArgumentParser

    module, name = OWNERS.get(owner, OWNERS["TrainingArguments"])
    return HfArgumentParser(getattr(importlib.import_module(module), name))


@pytest.mark.parametrize("source", RENAMES)
def test_renamed_flags_exist_and_boolean_renames_parse(source: str) -> None:
    mapping = TRAINING_ARGS[source]
    plan = flag_plan(mapping, f"--{source}", "true" if mapping.value is not None else None)
    assert plan is not None and plan.words
    parser = _parser(mapping.owner)
    assert plan.words[0] in parser._option_string_actions, f"{plan.words[0]} is not a {mapping.owner} flag"
    if mapping.value is not None:  # the flag and the value the rule writes are accepted together
        (parsed,) = parser.parse_args_into_dataclasses(args=[*plan.words, "--output_dir", "out", "--use_cpu", "true"])
        assert getattr(parsed, mapping.target) not in (None, False)


def test_transformers_env_command_exists() -> None:
    from transformers.cli.transformers import app

    assert "env" in app.commands  # `optimum-cli env` -> `transformers env` (NM406)


def test_emitted_requirements_parse_and_stock_minimums_are_installed() -> None:
    planner = plan.Planner()
    rewrite = plan.rewrite("optimum-neuron[neuronx,training,diffusers,sentence-transformers]==0.4.5", planner)
    assert rewrite is not None
    names = set()
    for spec in rewrite.specs:
        requirement = Requirement(spec)
        names.add(requirement.name)
        if requirement.name in plan.STOCK_MIN:  # the minimum we write is satisfied by what this project tests with
            assert requirement.specifier.contains(Version(importlib.metadata.version(requirement.name)))
    assert {"torch-neuronx", "torch", "transformers", "accelerate", "trl", "peft", "diffusers", "sentence-transformers"} <= names
    assert Version(importlib.metadata.version("torch")).major == 2
