"""Small shell-editing cases the golden files do not isolate: spacing, continuations, blocks, quoting."""

from __future__ import annotations

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules


#: the project's x.py: a script that parses optimum-neuron training arguments (so its flags are trainer flags)
NEURON_SCRIPT = (
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronTrainingArguments\n"
    "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()\n"
)
PROJECT = {"x.py": NEURON_SCRIPT}


def shell(text: str, select=("NM4",), kind=FileKind.SHELL, path="run.sh", project=PROJECT) -> str:
    return apply_rules(text, kind, select=list(select), path=path, inline_notes=False, project=project).text


@pytest.mark.parametrize(
    "before, after",
    [
        # a pre-compile pass before the real run of the same command goes, with its continuation lines
        ("neuron_parallel_compile torchrun x.py\ntorchrun x.py --torch_compile true\n", "torchrun x.py --torch_compile true\n"),
        ("neuron_parallel_compile --num_parallel=4 python x.py \\\n    --a 1\npython x.py --torch_compile true\n",
         "python x.py --torch_compile true\n"),
        ("srun -N 2 neuron_parallel_compile bash x.sh\nsrun -N 2 bash x.sh\n", "srun -N 2 bash x.sh\n"),
        ("neuron_parallel_compile torchrun x.py --max_steps 10\n", ""),  # the recipe's short pass
        ("if [ -n \"$C\" ]; then neuron_parallel_compile bash x.sh; fi\nbash x.sh\n", "if [ -n \"$C\" ]; then :; fi\nbash x.sh\n"),
        ("neuron_parallel_compile --command clear-locks\n", ""),
        # NEURON_EXTRACT_GRAPHS_ONLY: the test is always false (the real-run branch stays, dedented); a run under it goes
        ('if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then\n    S=10\nelse\n    S=-1\nfi\n', "S=-1\n"),
        ('if [[ -z "${NEURON_EXTRACT_GRAPHS_ONLY}" ]]; then\n  S=-1\nfi\n', "S=-1\n"),
        ('if [ ! -z "$NEURON_EXTRACT_GRAPHS_ONLY" ]; then\n  S=5\nfi\necho $S\n', "echo $S\n"),
        ('if [ -z "$NEURON_EXTRACT_GRAPHS_ONLY" ]; then\n  if [ -e x ]; then\n    a\n  else\n    b\n  fi\nfi\n',
         "if [ -e x ]; then\n  a\nelse\n  b\nfi\n"),  # a nested block moves out whole
        ("NEURON_EXTRACT_GRAPHS_ONLY=1 bash y.sh\nbash y.sh\n", "bash y.sh\n"),
        # a folded branch, then a line that still reads the variable (it stays, with a todo)
        ('if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then\n    S=10\nelse\n    S=-1\nfi\necho "$NEURON_EXTRACT_GRAPHS_ONLY"\n',
         'S=-1\necho "$NEURON_EXTRACT_GRAPHS_ONLY"\n'),
        ("set -e\n\nneuron_parallel_compile torchrun x.py\n\ntorchrun x.py --torch_compile true\n",
         "set -e\n\ntorchrun x.py --torch_compile true\n"),  # one blank line stays where the pass was
        # the only run of its command: the tool cannot tell whether it was a compile-only job, the line stays
        ("neuron_parallel_compile torchrun y.py\n", "neuron_parallel_compile torchrun y.py\n"),
        ('PREFIX=neuron_parallel_compile; $PREFIX torchrun y.py\n', 'PREFIX=; $PREFIX torchrun y.py\n'),
        ('CMD="neuron_parallel_compile torchrun x.py"\n', 'CMD="torchrun x.py"\n'),
        ("echo neuron_parallel_compile torchrun x.py\n", "echo neuron_parallel_compile torchrun x.py\n"),
        ("neuron_parallel_compile is a tool\n", "neuron_parallel_compile is a tool\n"),
        ("neuron_parallel_compile --command analyze torchrun x.py\n", "neuron_parallel_compile --command analyze torchrun x.py\n"),
        # removing the last line of a continued command closes the continuation
        ("export A=1 \\\n    XLA_IR_DEBUG=1\necho done\n", "export A=1\necho done\n"),
        # a block that would become empty gets ':'
        ("if true; then\n  export XLA_IR_DEBUG=1\nfi\n", "if true; then\n  :\nfi\n"),
        ("export XLA_IR_DEBUG=1; python x.py\n", "python x.py\n"),
        ("setup() { export XLA_IR_DEBUG=1; }\n", "setup() { :; }\n"),
        ("if [ -n \"$A\" ]; then export PJRT_DEVICE=NEURON; fi\n", "if [ -n \"$A\" ]; then :; fi\n"),
        ("env XLA_IR_DEBUG=1 PJRT_DEVICE=NEURON python x.py\n", "env python x.py\n"),
        ("export XLA_IR_DEBUG=1 A=2  # comment\n", "export A=2  # comment\n"),
        ("python x.py --max_seq_length=128 --no_cuda\n", "python x.py --max_length=128 --use_cpu --torch_compile true\n"),
        ("python x.py --adafactor false --output_dir o\n", "python x.py --output_dir o --torch_compile true\n"),
        ("python x.py --tensor-parallel-size 1 --output_dir o\n", "python x.py --output_dir o --torch_compile true\n"),
        # a degree above 1 that nothing carries to the model stays (rt5G D2b): the stock parser stops the run
        ("python x.py --tensor-parallel-size 8 --output_dir o\n",
         "python x.py --tensor-parallel-size 8 --output_dir o --torch_compile true\n"),
        # the flag goes with its value; the compile flag goes at the end of the trainer's command, not after a pipe
        ("torchrun x.py --zero_1 true 2>&1 | tee log\n", "torchrun x.py --torch_compile true 2>&1 | tee log\n"),
        ("torchrun x.py --zero_1 true > log &\n", "torchrun x.py --torch_compile true > log &\n"),
        ("python x.py --output_dir o --torch_compile false\n", "python x.py --output_dir o --torch_compile false\n"),
    ],
)
def test_shell_edit(before: str, after: str) -> None:
    assert shell(before) == after


def test_optimum_cli_flags_are_not_trainer_flags() -> None:
    text = "optimum-cli export neuron -m gpt2 --batch_size 1 --num_cores 2 --tensor_parallel_size 2 out/\n"
    assert shell(text) == text


def test_dockerfile_env_forms() -> None:
    before = "ENV XLA_IR_DEBUG 1\nENV A=1 XLA_HLO_DEBUG=1\nENV XLA_IR_DEBUG=1 \\\n    B=2\n"
    assert shell(before, kind=FileKind.DOCKERFILE, path="Dockerfile") == "ENV A=1\nENV B=2\n"


def test_yaml_env_list_and_mapping() -> None:
    before = "env:\n  - name: XLA_IR_DEBUG\n    value: \"1\"\n  - name: KEEP\n    value: x\nenvironment:\n  PJRT_DEVICE: NEURON\n  OTHER: 1\n"
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
    text = "export NEURON_RT_VISIBLE_CORES=0\ntorchrun x.py\nexport XLA_USE_SPMD=1\n"
    out = apply_rules(text, FileKind.SHELL, select=["NM4"], path="run.sh").text
    assert out.startswith("# neuron-migrate: review NEURON_RT_VISIBLE_CORES")
    assert out.endswith("torchrun x.py\n# neuron-migrate: XLA_USE_SPMD switched torch_xla to SPMD; removed: shard with "
                        "DTensor (DistributedConfig / parallelize_module)\n")


OWN_ARGPARSE = (
    "import argparse\n"
    "parser = argparse.ArgumentParser()\n"
    "parser.add_argument('--tensor_parallel_size', type=int)\n"
    "args = parser.parse_args()\n"
)


@pytest.mark.parametrize(
    "text, project",
    [
        ("vllm serve meta-llama/Llama-3.2-1B --tensor-parallel-size 2\n", PROJECT),
        ("python -m vllm.entrypoints.openai.api_server --tensor-parallel-size 2\n", PROJECT),
        ("torchrun my_script.py --tensor_parallel_size $TP --sequence_parallel_enabled\n", {"my_script.py": OWN_ARGPARSE}),
    ],
)
def test_flags_of_programs_that_are_not_neuron_trainers_stay_without_a_note(text: str, project: dict) -> None:
    result = apply_rules(text, FileKind.SHELL, select=["NM4"], path="run.sh", project=project)
    assert result.text == text
    assert not result.findings


def test_flags_passed_to_a_wrapper_script_stay_with_a_todo() -> None:
    text = "bash scripts/train.sh --zero_1 true\n"
    result = apply_rules(text, FileKind.SHELL, select=["NM4"], path="run.sh", project={**PROJECT, "scripts/train.sh": "#!/bin/bash\n"})
    assert result.text.endswith(text)
    assert [f.message.split(" is not")[0] for f in result.findings] == ["--zero_1 true was left as it is: scripts/train.sh"]


def test_arguments_kept_in_a_variable_stay_with_a_todo() -> None:
    """The command $ARGS is spliced into runs run.py, which the project does not hold: the flags in the assignment
    stay, each with the todo naming that script."""
    text = 'ARGS="--model_path m --tensor_parallel_size 8 \\\n    --sequence_parallel_enabled"\ntorchrun run.py $ARGS\n'
    result = apply_rules(text, FileKind.SHELL, select=["NM4"], path="run.sh", project=PROJECT)
    assert result.text.endswith(text)
    assert "--sequence_parallel_enabled was left as it is: run.py is not a script" in {
        f.message.split(" of this project")[0] for f in result.findings}


def test_a_dataclass_field_of_the_script_itself_is_its_own_flag() -> None:
    script = NEURON_SCRIPT.replace("(args,) = HfArgumentParser(NeuronTrainingArguments)",
                                   "from dataclasses import dataclass\n@dataclass\nclass A:\n    zero_1: bool = False\n"
                                   "(a, args) = HfArgumentParser((A, NeuronTrainingArguments))")
    text = "torchrun x.py --zero_1 true --torch_compile true\n"
    assert shell(text, project={"x.py": script}) == text


def test_a_script_the_project_does_not_hold_keeps_its_flags_with_a_todo() -> None:
    text = "torchrun /opt/ml/code/other.py --tensor_parallel_size 8 --output_dir o\n"
    result = apply_rules(text, FileKind.SHELL, select=["NM4"], path="run.sh", project=PROJECT)
    assert result.text.endswith(text)
    assert [(f.severity.value, f.message.split(" was left")[0]) for f in result.findings] == [("todo", "--tensor_parallel_size 8")]


@pytest.mark.parametrize(
    "path, command",
    [
        ("scripts/run.sh", "torchrun train.py --zero_1 true"),  # beside the launcher
        ("scripts/run.sh", "torchrun scripts/train.py --zero_1 true"),  # from the project root
        ("run.sh", 'torchrun "${SCRIPT_DIR}/scripts/train.py" --zero_1 true'),  # after an expansion
        ("docker/run.sh", "torchrun /opt/ml/code/train.py --zero_1 true"),  # the machine's path: the project's one train.py
        ("run.sh", "python -m scripts.train --zero_1 true"),
        ("/srv/project/scripts/run.sh", "torchrun train.py --zero_1 true"),  # an absolute path given on the command line
    ],
)
def test_the_script_is_found_in_the_project(path: str, command: str) -> None:
    out = shell(command + "\n", path=path, project={"scripts/train.py": NEURON_SCRIPT})
    assert "--zero_1" not in out and out.rstrip().endswith("--torch_compile true")


def test_a_second_run_changes_nothing_once_the_script_is_migrated() -> None:
    migrated_script = NEURON_SCRIPT.replace("from optimum.neuron import NeuronTrainingArguments", "from transformers import TrainingArguments").replace("NeuronTrainingArguments)", "TrainingArguments)")
    once = shell("torchrun x.py --zero_1 true --max_seq_length 8\n")
    assert shell(once, project={"x.py": migrated_script}) == once
