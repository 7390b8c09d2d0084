"""rt5G D2: the SFT shape fields of the shared table (codemods/_tables/sft_shapes.py) reach the launch line and the
argument config the way NM202 writes them into a ``SFTConfig(...)`` call: ``pad_to_multiple_of`` = max_length and
``packing_strategy`` wrapped. Without them trl 1.x packs padding-free (bfd), a new shape per batch. The migrated
flags and keys are PARSED with the installed trl's SFTConfig to show the run is one-shape."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from transformers import HfArgumentParser
from trl import SFTConfig

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

SFT_CLI = (
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronSFTConfig, NeuronSFTTrainer\n"
    "(args,) = HfArgumentParser(NeuronSFTConfig).parse_args_into_dataclasses()\n"
    "NeuronSFTTrainer(model='m', args=args).train()\n"
)
SFT_YAML = (
    "import sys\n"
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronSFTConfig\n"
    "(args,) = HfArgumentParser(NeuronSFTConfig).parse_yaml_file(sys.argv[1])\n"
)
ORPO_CLI = SFT_CLI.replace("NeuronSFTConfig", "NeuronORPOConfig").replace("NeuronSFTTrainer", "NeuronORPOTrainer")
LINE = "torchrun --nproc_per_node 2 train.py --output_dir out --packing true --max_seq_length 512\n"


def _argv(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith("torchrun"))
    words = shlex.split(line)
    return words[words.index("train.py") + 1:]


def _parsed(argv: list[str]) -> SFTConfig:
    (args,) = HfArgumentParser(SFTConfig).parse_args_into_dataclasses(args=[*argv, "--use_cpu", "true"])
    return args


def test_launch_line_of_an_sft_script_gets_the_shape_flags_and_parses_one_shape() -> None:
    result = apply_rules(LINE, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": SFT_CLI})
    argv = _argv(result.text)
    assert argv[argv.index("--pad_to_multiple_of") + 1] == "512"
    assert argv[argv.index("--packing_strategy") + 1] == "wrapped"
    args = _parsed(argv)
    shape = (args.max_length, args.pad_to_multiple_of, args.packing, args.packing_strategy)
    assert shape == (512, 512, True, "wrapped")
    assert not args.padding_free
    messages = [f.message for f in result.findings]
    assert any(m.startswith("--pad_to_multiple_of 512 added (the --max_length value)") for m in messages)
    # the same flags without the tool's additions: trl trains padding-free with the bfd strategy
    assert _parsed(["--output_dir", "out", "--packing", "true", "--max_length", "512"]).packing_strategy == "bfd"


def test_packing_off_gets_no_strategy_and_an_orpo_script_gets_neither() -> None:
    off = LINE.replace("--packing true", "--packing false")
    result = apply_rules(off, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": SFT_CLI})
    argv = _argv(result.text)
    assert "--packing_strategy" not in argv and argv[argv.index("--pad_to_multiple_of") + 1] == "512"
    orpo = "torchrun train.py --output_dir out --max_length 512\n"
    result = apply_rules(orpo, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": ORPO_CLI})
    assert "--pad_to_multiple_of" not in result.text  # ORPOConfig declares no such field: its parser would raise


def test_flags_already_given_or_the_scripts_own_stay_alone() -> None:
    given = LINE.replace("--packing true", "--packing true --packing_strategy bfd --pad_to_multiple_of 64")
    result = apply_rules(given, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": SFT_CLI})
    argv = _argv(result.text)
    assert argv.count("--packing_strategy") == 1 and argv.count("--pad_to_multiple_of") == 1
    own_class = "from dataclasses import dataclass\n@dataclass\nclass S:\n    max_length: int = 1\n"
    own = SFT_CLI.replace("from optimum", own_class + "from optimum").replace(
        "HfArgumentParser(NeuronSFTConfig)", "HfArgumentParser((S, NeuronSFTConfig))")
    line = "torchrun train.py --output_dir out --max_length 512\n"
    result = apply_rules(line, FileKind.SHELL, select=["NM408"], path="run.sh", project={"train.py": own})
    assert "--pad_to_multiple_of" not in result.text


def test_yaml_config_of_an_sft_script_gets_the_shape_keys(tmp_path: Path) -> None:
    config = "output_dir: out\nzero_1: true\npacking: true  # pack\nmax_seq_length: 1024\nuse_cpu: true\n"
    project = {"train.py": SFT_YAML, "run.sh": "torchrun train.py sft.yaml\n"}
    result = apply_rules(config, FileKind.YAML, select=["NM408"], path="sft.yaml", project=project)
    assert "packing_strategy: wrapped\n" in result.text and "pad_to_multiple_of: 1024\n" in result.text
    (tmp_path / "sft.yaml").write_text(result.text)
    (args,) = HfArgumentParser(SFTConfig).parse_yaml_file(str(tmp_path / "sft.yaml"))
    assert (args.pad_to_multiple_of, args.packing_strategy, args.padding_free) == (1024, "wrapped", False)


def test_json_config_last_member_takes_a_comma_and_stays_valid(tmp_path: Path) -> None:
    config = json.dumps({"output_dir": "out", "zero_1": True, "use_cpu": True, "packing": True, "max_seq_length": 256},
                        indent=2) + "\n"
    script = SFT_YAML.replace("parse_yaml_file", "parse_json_file")
    project = {"train.py": script, "run.sh": "torchrun train.py sft.json\n"}
    result = apply_rules(config, FileKind.JSON, select=["NM408"], path="sft.json", project=project)
    loaded = json.loads(result.text)
    assert loaded["pad_to_multiple_of"] == 256 and loaded["packing_strategy"] == "wrapped"
    (tmp_path / "sft.json").write_text(result.text)
    (args,) = HfArgumentParser(SFTConfig).parse_json_file(str(tmp_path / "sft.json"))
    assert (args.max_length, args.pad_to_multiple_of) == (256, 256)


def test_a_config_with_no_sft_only_key_read_by_an_orpo_script_gets_nothing() -> None:
    config = "output_dir: out\nzero_1: true\nmax_length: 1024\nbeta: 0.1\n"
    script = SFT_YAML.replace("NeuronSFTConfig", "NeuronORPOConfig")
    project = {"train.py": script, "run.sh": "torchrun train.py orpo.yaml\n"}
    result = apply_rules(config, FileKind.YAML, select=["NM408"], path="orpo.yaml", project=project)
    assert "\nzero_1: true" not in result.text  # the config is edited ...
    assert "pad_to_multiple_of" not in result.text  # ... but ORPOConfig has no pad_to_multiple_of
