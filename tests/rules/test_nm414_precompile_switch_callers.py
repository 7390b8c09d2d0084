"""NM414 precompile-switch-callers: calls that still pass a wrapper's removed pre-compile switch get a todo.

A wrapper's flag, sub-command or variable that selected its neuron_parallel_compile pass (NM401 deletes or ends it)
is read from the wrapper before and after the run; a call of the wrapper in another file that passes it gets a todo
saying what the switch does now. A pass NM401 keeps, another flag, an off value and prose get none.
"""

from __future__ import annotations

from codemods.launch.nm414_precompile_switch_callers import read_switches
from migrate.filekinds import FileKind
from migrate.testing import apply_rules

SCRIPT = ("from optimum.neuron import NeuronTrainer, NeuronTrainingArguments\n"
          "from transformers import HfArgumentParser\n"
          "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()\n")

ENV_WRAPPER = """#!/bin/bash
if [ "${PRECOMPILE:-0}" = "1" ]; then
  neuron_parallel_compile torchrun --nproc_per_node 2 train.py --max_steps 10
fi
torchrun --nproc_per_node 2 train.py
"""
SUBCOMMAND_WRAPPER = """#!/bin/bash
MODE=${1:-train}
case "$MODE" in
  compile)
    neuron_parallel_compile torchrun --nproc_per_node 2 train.py
    ;;
  train)
    torchrun --nproc_per_node 2 train.py
    ;;
esac
"""
ALTERNATIVE_WRAPPER = """#!/bin/bash
if [ "$1" = "compile" ]; then
  neuron_parallel_compile torchrun --nproc_per_node 2 train.py
else
  torchrun --nproc_per_node 2 train.py
fi
"""


def _run(caller: str, wrapper: str, kind: FileKind = FileKind.SHELL, path: str = "Makefile", script: str = SCRIPT):
    project = {"train.sh": wrapper, "train.py": script, path: caller}
    return apply_rules(caller, kind, select=["NM4"], path=path, project=project)


def _todos(result) -> list[tuple[int, str]]:
    return [(f.line, f.message) for f in result.findings if f.rule == "NM414"]


def test_switches_read() -> None:
    assert read_switches(ENV_WRAPPER) == {("env", "PRECOMPILE=1")}
    assert read_switches(SUBCOMMAND_WRAPPER) == {("arg", "compile")}
    assert read_switches(ALTERNATIVE_WRAPPER) == {("arg", "compile")}
    flag = 'for a in "$@"; do\n  case $a in\n    --precompile|-p) PRE=1 ;;\n  esac\ndone\n' \
           '[ "$PRE" = 1 ] && neuron_parallel_compile torchrun train.py\n'
    assert read_switches(flag) == {("arg", "--precompile"), ("arg", "-p"), ("env", "PRE=1")}
    internal = 'PRE=0\ncase "$1" in --pre) PRE=1 ;; esac\nif [ "$PRE" = 1 ]; then neuron_parallel_compile torchrun t.py; fi\n'
    assert read_switches(internal) == {("arg", "--pre")}
    assert read_switches('if [ "$SKIP" != 1 ]; then\n  neuron_parallel_compile torchrun t.py\nfi\n') == set()
    assert read_switches('echo "use neuron_parallel_compile"\n') == set()


def test_env_caller_noted() -> None:
    result = _run("warm:\n\tPRECOMPILE=1 ./train.sh\n\ntrain:\n\tPRECOMPILE=0 ./train.sh\n", ENV_WRAPPER)
    todos = _todos(result)
    assert [line for line, _ in todos] == [2]
    assert "`PRECOMPILE=1` selected train.sh's neuron_parallel_compile" in todos[0][1]
    assert "runs no pre-compile pass any more" in todos[0][1]
    assert result.text.count("# neuron-migrate:") == 1


def test_subcommand_caller_in_dockerfile_and_script() -> None:
    docker = _run('FROM python:3.11\nCMD ["bash", "train.sh", "compile"]\n', SUBCOMMAND_WRAPPER,
                  FileKind.DOCKERFILE, "Dockerfile")
    assert [line for line, _ in _todos(docker)] == [2]
    script = _run("#!/bin/bash\nbash train.sh compile && bash train.sh train\n", SUBCOMMAND_WRAPPER,
                  path="run_all.sh")
    assert [line for line, _ in _todos(script)] == [2]
    assert "`compile`" in _todos(script)[0][1]


def test_alternative_branch_now_exits() -> None:
    result = _run("jobs:\n  warm:\n    steps:\n      - run: ./train.sh compile\n      - run: ./train.sh\n",
                  ALTERNATIVE_WRAPPER, FileKind.YAML, ".github/workflows/ci.yml")
    todos = _todos(result)
    assert [line for line, _ in todos] == [4]
    assert "now exits without running anything" in todos[0][1]


def test_launcher_word_dropped_trains_for_real() -> None:
    wrapper = ('#!/bin/bash\nLAUNCHER=""\nif [ "$1" = compile ]; then\n  LAUNCHER=neuron_parallel_compile\n  shift\nfi\n'
               'echo starting\n$LAUNCHER torchrun --nproc_per_node 2 train.py "$@"\necho done\n')
    assert read_switches(wrapper) == {("arg", "compile")}
    result = _run("all:\n\t./train.sh compile\n\t./train.sh\n", wrapper)
    todos = _todos(result)  # NM401 dropped only the word (the echo after the run): that mode now trains for real
    assert [line for line, _ in todos] == [2]
    assert "may now run the real training" in todos[0][1] and "second training run" in todos[0][1]


def test_no_todo_for_other_flags_prose_or_a_kept_pass() -> None:
    assert _todos(_run("train:\n\t./train.sh train --max_steps 5\n\t@echo run ./train.sh compile first\n",
                       SUBCOMMAND_WRAPPER)) == []
    # the script stays on torch_xla (outside the project): NM401 keeps the pass, and the switch still works
    wrapper = ENV_WRAPPER.replace("train.py", "/opt/xla/train_xla.py").replace("\n", "\npip install neuronx_distributed\n", 1)
    kept = _run("warm:\n\tPRECOMPILE=1 ./train.sh\n", wrapper)
    assert _todos(kept) == []


def test_readme_code_block_is_docs_to_update() -> None:
    readme = "# Train\n\n```bash\nPRECOMPILE=1 ./train.sh --max_steps 10\n./train.sh\n```\n"
    result = _run(readme, ENV_WRAPPER, FileKind.DOCS, "README.md")
    assert result.text == readme
    assert [(f.line, f.severity.value) for f in result.findings if f.rule == "NM414"] == [(4, "info")]
