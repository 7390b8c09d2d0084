"""NM401 on a neuron_parallel_compile pass inside a quoted command (final4-DF N4): ``bash -c "npc ... && torchrun
..."``, ``ssh host "..."`` over two lines, a compose ``command: >`` holding ``bash -c "..."``. Deleting the line
lost the real run or broke the quoting; now only the pass and its ``&&`` are cut out of a quoted word whose text
is certain, and anything else is kept with a todo. And (N7) in a file launching two scripts, a pass is judged and
worded by its own command's script, not by the other one that stays on optimum-neuron."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from migrate.engine import RunOptions, run
from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

RUN = "torchrun --nproc_per_node 2 train.py"


def _bash_n(text: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    path = tmp_path / "run.sh"
    path.write_text(text)
    done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "line, expected",
    [
        (f'bash -c "neuron_parallel_compile {RUN} && {RUN}"', f'bash -c "{RUN}"'),
        (f"sh -lc 'cd /work && neuron_parallel_compile {RUN}; {RUN}'", f"sh -lc 'cd /work && {RUN}'"),
        (f'ssh node1 "neuron_parallel_compile --num_parallel 4 {RUN} && {RUN} --bf16"', f'ssh node1 "{RUN} --bf16"'),
        (f'sbatch --wrap="neuron_parallel_compile {RUN} && {RUN}" -N 1', f'sbatch --wrap="{RUN}" -N 1'),
    ],
)
def test_the_pass_is_cut_out_of_a_quoted_command_that_runs_it_and_the_real_run(
    line: str, expected: str, tmp_path: Path
) -> None:
    result = migrate(f"#!/bin/bash\n{line}\n", "NM401", kind=FileKind.SHELL, path="run.sh")
    assert result.text.splitlines()[1] == expected
    assert findings(result, "NM401") == {(2, "fixed")}
    _bash_n(result.text, tmp_path)
    assert migrate(result.text, "NM401", kind=FileKind.SHELL, path="run.sh").text == result.text


@pytest.mark.parametrize(
    "script",
    [
        'bash -c "neuron_parallel_compile torchrun $ARGS train.py && torchrun $ARGS train.py"\n',  # $ expands first
        f'bash -c "neuron_parallel_compile {RUN} || true; {RUN}"\n',  # not followed by && or ;
        f'bash -c "{RUN} && neuron_parallel_compile {RUN}"\n',  # the last command: no && after it
        f'ssh node1 "neuron_parallel_compile {RUN}\n{RUN}"\n',  # the quoted string goes on to the next line
        f'ssh node1 "cd /work\nneuron_parallel_compile {RUN}"\n{RUN}\n',  # the pass's line closes the string
        f'docker run img "neuron_parallel_compile {RUN} && {RUN}"\n',  # not a shell string: cannot tell
    ],
)
def test_a_quoted_pass_that_cannot_be_cut_with_certainty_is_kept_with_a_todo(script: str, tmp_path: Path) -> None:
    source = "#!/bin/bash\n" + script
    result = migrate(source, "NM401", kind=FileKind.SHELL, path="run.sh")
    code = [line for line in result.text.splitlines() if not line.lstrip().startswith("# neuron-migrate:")]
    assert code == source.splitlines()  # nothing deleted: the real run and the quotes stay
    assert {severity for _, severity in findings(result, "NM401")} == {"todo"}
    assert any("inside a quoted command" in f.message for f in result.findings if f.rule == "NM401")
    _bash_n(result.text, tmp_path)


def test_a_pass_alone_in_its_quotes_is_the_whole_statement_not_a_quoted_one() -> None:
    source = f'#!/bin/bash\nsbatch --wrap "neuron_parallel_compile {RUN}" -N 1\n{RUN}\n'
    result = migrate(source, "NM401", kind=FileKind.SHELL, path="run.sh")
    assert not any("inside a quoted command" in f.message for f in result.findings)


COMPOSE = f"""\
services:
  b:
    image: x
    command: >-
      bash -c "neuron_parallel_compile {RUN}
      && {RUN}"
  c:
    image: x
    command: >
      bash -c "neuron_parallel_compile {RUN} &&
      {RUN}"
"""


def test_a_folded_compose_command_holding_a_quoted_pass_is_kept_and_splits() -> None:
    result = migrate(COMPOSE, "NM401", kind=FileKind.YAML, path="docker-compose.yml")
    services = yaml.safe_load(result.text)["services"]
    for name in ("b", "c"):
        words = shlex.split(services[name]["command"])
        assert words[:2] == ["bash", "-c"] and words[2].endswith(RUN)  # the real run is there, the quotes close
    assert {severity for _, severity in findings(result, "NM401")} == {"todo"}


TWO_SCRIPTS = """\
#!/bin/bash
neuron_parallel_compile accelerate launch -m pkg.train
accelerate launch -m pkg.train --bf16
neuron_parallel_compile python -m torch.distributed.run --nproc_per_node 2 xtrain.py
python -m torch.distributed.run --nproc_per_node 2 xtrain.py
"""
KEPT = "from optimum.neuron import NeuronTrainer\n\nNeuronTrainer\n"
PLAIN = "import torch\n\nprint(torch.ones(2).sum())\n"


def test_in_a_file_launching_two_scripts_each_pass_is_judged_by_its_own_script(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(KEPT)
    (tmp_path / "xtrain.py").write_text(PLAIN)
    (tmp_path / "run.sh").write_text(TWO_SCRIPTS)
    result = run([tmp_path], RunOptions(select=("NM4",), write=True, jobs=1))
    launcher = next(item for item in result.files if item.path.endswith("run.sh"))
    notes = [(f.line, f.severity.value, f.message) for f in launcher.findings if f.rule == "NM401"]
    assert [severity for _, severity, _ in notes] == ["todo", "fixed"]
    assert "pkg.train" in notes[0][2] and "xtrain.py" in notes[1][2] and "pkg.train" not in notes[1][2]
    text = (tmp_path / "run.sh").read_text()
    assert "neuron_parallel_compile accelerate launch -m pkg.train" in text
    assert "neuron_parallel_compile python" not in text and "python -m torch.distributed.run" in text
