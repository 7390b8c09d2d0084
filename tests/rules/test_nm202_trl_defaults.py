"""NM202: trl 1.x SFTConfig / ORPOConfig change TrainingArguments defaults (codemods/_tables/training_defaults.py);
a run on optimum-neuron <= 0.3 (NeuronSFTConfig on trl 0.11 kept the TrainingArguments ones) must not train with
silently changed hyper-parameters (redteam-optimum entry 5)."""

from tests.rules.case import migrate

PINNED_03 = {"requirements.txt": "optimum-neuron==0.0.25\n"}
SFT = """
from optimum.neuron import NeuronSFTConfig

args = NeuronSFTConfig(output_dir="out", learning_rate=1e-4{extra})
"""
PARSED = """
from dataclasses import dataclass

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import {cls}


@dataclass
class ScriptArguments:
    model_id: str = "gpt2"


script_args, training_args = HfArgumentParser((ScriptArguments, {cls})).parse_args_into_dataclasses()
"""


def _todos(result) -> list[str]:
    return [f.message for f in result.findings if f.rule == "NM202" and f.severity.value == "todo"]


def test_a_pinned_0_0_sft_config_gets_the_old_defaults_written() -> None:
    result = migrate(SFT.replace("{extra}", ""), "NM202", project=PINNED_03)
    assert ("SFTConfig(output_dir=\"out\", learning_rate=1e-4, activation_checkpointing=False, bf16=False, "
            "logging_steps=500, torch_compile=True)") in result.text
    assert not any("trl 1.x" in m for m in _todos(result))


def test_given_values_are_kept() -> None:
    result = migrate(SFT.replace("{extra}", ", bf16=True, logging_steps=5, gradient_checkpointing=True"), "NM202",
                     project=PINNED_03)
    assert "logging_steps=500" not in result.text and "gradient_checkpointing=False" not in result.text
    assert "bf16=False" not in result.text


def test_xla_bf16_in_the_file_leaves_bf16_to_the_user() -> None:
    source = 'import os\nos.environ["XLA_USE_BF16"] = "1"\n' + SFT.replace("{extra}", "")
    result = migrate(source, "NM202", project=PINNED_03)
    assert "bf16=False" not in result.text and "logging_steps=500" in result.text
    assert any(m.startswith("bf16: trl 1.x SFTConfig defaults to True") for m in _todos(result))


def test_an_unpinned_project_gets_a_todo_and_no_values() -> None:
    result = migrate(SFT.replace("{extra}", ""), "NM202")
    assert "logging_steps=" not in result.text
    todo = [m for m in _todos(result) if m.startswith("trl 1.x SFTConfig defaults differ")]
    assert todo and "logging_steps 10 (TrainingArguments: 500)" in todo[0] and "learning_rate" not in todo[0]


def test_orpo_defaults_are_named_not_written() -> None:
    source = 'from optimum.neuron import NeuronORPOConfig\n\nargs = NeuronORPOConfig(output_dir="out")\n'
    result = migrate(source, "NM202", project=PINNED_03)
    assert "learning_rate=" not in result.text
    assert any("learning_rate 1e-06 (TrainingArguments: 5e-5)" in m and "not in this tool's tables" in m
               for m in _todos(result))


def test_a_parsed_sft_config_lists_the_changed_defaults_and_no_stock_claim() -> None:
    result = migrate(PARSED.replace("{cls}", "NeuronSFTConfig"), "NM202", project=PINNED_03)
    parsed = [m for m in _todos(result) if m.startswith("arguments parsed")]
    flags = "--learning_rate 5e-5 --gradient_checkpointing false --bf16 false --logging_steps 500"
    assert parsed and flags in parsed[0]
    unpinned = migrate(PARSED.replace("{cls}", "NeuronSFTConfig"), "NM202")
    assert not any("kept the stock defaults" in m for m in _todos(unpinned))
    stock = migrate(PARSED.replace("{cls}", "NeuronTrainingArguments"), "NM202")
    assert any("(0.3.0 and older kept the stock defaults)" in m for m in _todos(stock))


def test_a_parsed_sft_config_leaves_out_what_the_launch_lines_set() -> None:
    launcher = ('CMD="torchrun src/sft.py \\\n  --learning_rate 2e-4 --bf16 true \\\n'
                '  --gradient_checkpointing true"\n$CMD\n')
    result = migrate(PARSED.replace("{cls}", "NeuronSFTConfig"), "NM202", path="src/sft.py",
                     project={**PINNED_03, "scripts/run_sft.sh": launcher})
    parsed = next(m for m in _todos(result) if m.startswith("arguments parsed"))
    assert "logging_steps 10 (TrainingArguments: 500)" in parsed and "(--logging_steps 500)" in parsed
    assert "learning_rate 2e-05" not in parsed
    assert "the project's launch lines or configs set bf16, gradient_checkpointing, learning_rate" in parsed


def test_a_parsed_sft_config_leaves_out_what_its_yaml_config_sets() -> None:
    """rt5G D3: the keys of the YAML / JSON config the launch line passes count as set, like its flags."""
    config = ("output_dir: out\nlearning_rate: 0.0002\nbf16: true\ngradient_checkpointing: true\n"
              "deepspeed_like:\n  logging_steps: {nested: 1}\n")
    launcher = "torchrun src/sft.py configs/sft.yaml\n"
    project = {**PINNED_03, "run.sh": launcher, "configs/sft.yaml": config}
    result = migrate(PARSED.replace("{cls}", "NeuronSFTConfig"), "NM202", path="src/sft.py", project=project)
    parsed = next(m for m in _todos(result) if m.startswith("arguments parsed"))
    assert "(--logging_steps 500)" in parsed and "learning_rate 2e-05" not in parsed and "bf16 false" not in parsed
    assert "the project's launch lines or configs set bf16, gradient_checkpointing, learning_rate" in parsed
    every = {**project, "configs/sft.yaml": config.replace("deepspeed_like:\n  logging_steps: {nested: 1}\n",
                                                           "logging_steps: 10\n")}
    result = migrate(PARSED.replace("{cls}", "NeuronSFTConfig"), "NM202", path="src/sft.py", project=every)
    assert not any("trl 1.x" in m for m in _todos(result))  # nothing left unset: no note at all
