"""NM406 / NM120 (rt5H D6): one casting decision for `--auto_cast matmul --auto_cast_type bf16` on the command line
and `auto_cast="matmul", auto_cast_type="bf16"` in code: float32 at the load, with the same note at both ends."""

from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from tests.rules.case import migrate

EXPORT = "optimum-cli export neuron --model org/enc --batch_size 1 --sequence_length 32 {cast}out/enc/\n"
LOAD = """
from optimum.neuron import NeuronModelForFeatureExtraction

model = NeuronModelForFeatureExtraction.from_pretrained("out/enc")
"""


def test_a_matmul_only_export_says_what_the_load_of_its_folder_does() -> None:
    script = EXPORT.format(cast="--auto_cast matmul --auto_cast_type bf16 ")
    (note,) = [f.message for f in migrate(script, "NM406", kind=FileKind.SHELL, path="export.sh").findings]
    load = apply_rules(LOAD, select=["NM120"], path="cli.py", project={"export.sh": script})
    assert "dtype=torch.float32, device_map" in load.text and "dtype=torch.bfloat16, device_map" not in load.text
    (cast_note,) = [f.message for f in load.findings if "cast only the matmuls" in f.message]
    shared = cast_note.split(" cast only the matmuls", 1)[1]
    assert note.endswith(shared) and "-> dtype= at load" not in note
    assert cast_note.startswith("export.sh's --auto_cast matmul --auto_cast_type bf16")


def test_a_matmul_only_export_without_a_cast_type_uses_the_cli_default_bf16() -> None:
    script = EXPORT.format(cast="--auto_cast matmul ")
    (note,) = [f.message for f in migrate(script, "NM406", kind=FileKind.SHELL, path="export.sh").findings]
    assert "--auto_cast matmul --auto_cast_type bf16 cast only the matmuls" in note


def test_an_export_with_a_whole_model_cast_keeps_the_dtype_note() -> None:
    script = EXPORT.format(cast="--auto_cast all --auto_cast_type bf16 ")
    (note,) = [f.message for f in migrate(script, "NM406", kind=FileKind.SHELL, path="export.sh").findings]
    assert "--auto_cast_type/--torch_dtype bf16 -> dtype= at load" in note and "matmuls" not in note
