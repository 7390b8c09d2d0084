"""Small shell-editing cases the golden files do not isolate: spacing, continuations, blocks, quoting."""

from __future__ import annotations

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules


def shell(text: str, select=("NM4",), kind=FileKind.SHELL, path="run.sh") -> str:
    return apply_rules(text, kind, select=list(select), path=path, inline_notes=False).text


@pytest.mark.parametrize(
    "before, after",
    [
        ("neuron_parallel_compile torchrun x.py\n", "torchrun x.py\n"),
        ("neuron_parallel_compile --num_parallel=4 python x.py\n", "python x.py\n"),
        ("srun -N 2 neuron_parallel_compile bash x.sh\n", "srun -N 2 bash x.sh\n"),
        ('CMD="neuron_parallel_compile torchrun x.py"\n', 'CMD="torchrun x.py"\n'),
        ("echo neuron_parallel_compile torchrun x.py\n", "echo neuron_parallel_compile torchrun x.py\n"),
        ("neuron_parallel_compile is a tool\n", "neuron_parallel_compile is a tool\n"),
        ("neuron_parallel_compile --command analyze torchrun x.py\n", "neuron_parallel_compile --command analyze torchrun x.py\n"),
        # removing the last line of a continued command closes the continuation
        ("export A=1 \\\n    XLA_USE_BF16=1\necho done\n", "export A=1\necho done\n"),
        # a block that would become empty gets ':'
        ("if true; then\n  export XLA_USE_BF16=1\nfi\n", "if true; then\n  :\nfi\n"),
        ("export XLA_USE_BF16=1; python x.py\n", "python x.py\n"),
        ("setup() { export XLA_USE_BF16=1; }\n", "setup() { :; }\n"),
        ("if [ -n \"$A\" ]; then export PJRT_DEVICE=NEURON; fi\n", "if [ -n \"$A\" ]; then :; fi\n"),
        ("env XLA_USE_BF16=1 PJRT_DEVICE=NEURON python x.py\n", "env python x.py\n"),
        ("export XLA_USE_BF16=1 A=2  # comment\n", "export A=2  # comment\n"),
        ("python x.py --max_seq_length=128 --no_cuda\n", "python x.py --max_length=128 --use_cpu\n"),
        ("python x.py --adafactor false --output_dir o\n", "python x.py --output_dir o\n"),
        ("python x.py --tensor-parallel-size 8 --output_dir o\n", "python x.py --output_dir o\n"),
    ],
)
def test_shell_edit(before: str, after: str) -> None:
    assert shell(before) == after


def test_optimum_cli_flags_are_not_trainer_flags() -> None:
    text = "optimum-cli export neuron -m gpt2 --batch_size 1 --num_cores 2 --tensor_parallel_size 2 out/\n"
    assert shell(text) == text


def test_dockerfile_env_forms() -> None:
    before = "ENV XLA_USE_BF16 1\nENV A=1 XLA_DOWNCAST_BF16=1\nENV XLA_USE_BF16=1 \\\n    B=2\n"
    assert shell(before, kind=FileKind.DOCKERFILE, path="Dockerfile") == "ENV A=1\nENV B=2\n"


def test_yaml_env_list_and_mapping() -> None:
    before = "env:\n  - name: XLA_USE_BF16\n    value: \"1\"\n  - name: KEEP\n    value: x\nenvironment:\n  PJRT_DEVICE: NEURON\n  OTHER: 1\n"
    after = "env:\n  - name: KEEP\n    value: x\nenvironment:\n  OTHER: 1\n"
    assert shell(before, kind=FileKind.YAML, path="job.yaml") == after


def test_pip_install_quotes_globs_and_leaves_options() -> None:
    before = "pip install -i https://example.invalid/simple optimum-neuron==0.0.25 --no-deps\n"
    out = shell(before, select=("NM5",))
    assert out.startswith('pip install -i https://example.invalid/simple "torch-neuronx==2.14.*" "torch==2.14.*"')
    assert out.rstrip().endswith("--no-deps")


def test_json_that_is_not_an_argument_config_is_left_alone() -> None:
    text = '{\n  "tensor_parallel_size": 2,\n  "sequence_length": 2048,\n  "auto_cast_type": "bf16"\n}\n'
    assert apply_rules(text, FileKind.JSON, select=["NM4"], path="neuron_config.json").text == text


def test_a_variable_set_to_off_is_removed_without_a_todo() -> None:
    result = apply_rules("export XLA_USE_BF16=0\ntorchrun x.py\n", FileKind.SHELL, select=["NM4"], path="run.sh")
    assert result.text == "torchrun x.py\n"
    assert [f.severity.value for f in result.findings] == ["fixed"]


def test_note_of_a_removed_last_line_is_kept_and_does_not_drop_other_notes() -> None:
    text = "export NEURON_RT_VISIBLE_CORES=0\ntorchrun x.py\nexport XLA_USE_BF16=1\n"
    out = apply_rules(text, FileKind.SHELL, select=["NM4"], path="run.sh").text
    assert out.startswith("# neuron-migrate: review NEURON_RT_VISIBLE_CORES")
    assert out.endswith("torchrun x.py\n# neuron-migrate: XLA_USE_BF16 made torch_xla hold every fp32 tensor in bf16; removed: to keep "
                        "full-bf16 numerics load the model with dtype=torch.bfloat16 (or model.to(torch.bfloat16)), or use "
                        "bf16=True / torch.autocast(device_type, dtype=torch.bfloat16) for mixed precision\n")
