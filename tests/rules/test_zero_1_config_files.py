"""The zero_1 fact reads the ``zero_1:`` key of a YAML / JSON argument config that a launcher passes to the script
(``--config X.yaml``, a bare ``X.json`` argument) or that the script parses itself (``parse_yaml_file("X.yaml")``),
and NM408's removal note of it on a second run (redteam-final 8)."""

from tests.rules.case import migrate
from tests.rules.test_zero_1_mesh import LAZY, PINNED_03

CONFIG = "output_dir: out\nlearning_rate: 1.0e-5\ntensor_parallel_size: 8\nzero_1: {value}\n"
LAUNCH = 'CONFIG=${1:-configs/train.yaml}\ntorchrun --nproc_per_node=32 src/train.py --config $CONFIG\n'


def _run(project: dict[str, str], source: str = LAZY):
    return migrate(source, "NM205", family="NM2", path="src/train.py", project={**PINNED_03, **project})


def _said(result) -> str:
    return " ".join(f.message for f in result.findings if f.rule == "NM205")


def test_a_config_the_launcher_passes_with_zero_1_true_makes_the_mesh_fsdp() -> None:
    result = _run({"launch.sh": LAUNCH, "configs/train.yaml": CONFIG.format(value="true")})
    assert "fsdp_size=_data_parallel_size(" in result.text and "dp_replicate_size" not in result.text
    said = _said(result)
    assert "zero_1: true in configs/train.yaml, the config launch.sh passes" in said
    assert "defaulted to False" not in said


def test_nm408s_removal_note_still_counts_on_a_second_run() -> None:
    migrated = ("output_dir: out\nlearning_rate: 1.0e-5\n# neuron-migrate: zero_1: ZeRO-1 has no stock switch: the "
                "closest is FSDP2 sharding; removed (was zero_1: true)\n")
    result = _run({"launch.sh": LAUNCH, "configs/train.yaml": migrated})
    assert "fsdp_size=_data_parallel_size(" in result.text


def test_a_bare_json_argument_and_a_false_value() -> None:
    config = '{\n  "output_dir": "out",\n  "zero_1": false\n}\n'
    result = _run({"run.sh": "torchrun src/train.py configs/train.json\n", "configs/train.json": config})
    assert "dp_replicate_size=_data_parallel_size(" in result.text
    assert "zero_1: false in configs/train.json" in _said(result)


def test_the_scripts_own_parse_yaml_file() -> None:
    source = LAZY.replace("parser.parse_args_into_dataclasses()", 'parser.parse_yaml_file("../configs/train.yaml")')
    result = _run({"configs/train.yaml": CONFIG.format(value="true")}, source)
    assert "fsdp_size=_data_parallel_size(" in result.text


def test_a_config_passed_to_another_script_or_not_passed_does_not_count() -> None:
    other = LAUNCH.replace("src/train.py", "src/pretrain.py")
    result = _run({"launch.sh": other, "configs/train.yaml": CONFIG.format(value="true")})
    assert "dp_replicate_size=_data_parallel_size(" in result.text and "defaulted to False" in _said(result)
    alone = _run({"launch.sh": "torchrun src/train.py\n", "configs/train.yaml": CONFIG.format(value="true")})
    assert "dp_replicate_size=_data_parallel_size(" in alone.text
