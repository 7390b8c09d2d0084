"""Deleting a command from a shell construct (rt8P-01): the migrated script parses (``bash -n``) and, run with
bash, does what the old one did with that command succeeding silently, and never runs it. Each script runs with a
stub ``optimum-cli`` on PATH: before the run it prints nothing and exits 0; after it, it fails loudly, so a
kept call shows. A command whose status or output the script uses stays, with a todo, and the file still parses."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.testing import apply_rules

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")

#: (script, the argument lists it is run with)
REMOVED = [
    # case arms: `;;` on the command's line, on its own line, a pattern and command on one line, the last arm
    ('case "$1" in\n'
     '  lookup)\n    optimum-cli neuron cache lookup m ;;\n'
     '  sync) optimum-cli neuron cache synchronize;;\n'
     '  warm)\n    echo warming\n    optimum-cli neuron cache synchronize\n    ;;\n'
     '  push) echo p; optimum-cli neuron cache synchronize ;;\n'
     '  set)\n    optimum-cli neuron cache set r\n'
     'esac\necho "end $1"\n',
     [["lookup"], ["sync"], ["warm"], ["push"], ["set"], ["other"]]),
    # if / else / elif bodies, one-line if, a trailing comment
    ('set -e\nif [ "$1" = a ]; then\n  optimum-cli neuron cache synchronize\nfi\n'
     'if [ "$1" = b ]; then optimum-cli neuron cache synchronize; fi\n'
     'if [ "$1" = c ]; then\n  echo c\nelse\n  optimum-cli neuron cache set r  # the repo\nfi\n'
     'if [ "$1" = d ]; then\n  optimum-cli neuron cache synchronize\n  echo d\nelif [ "$1" = e ]; then\n'
     '  optimum-cli neuron cache create\nfi\necho "end $1"\n',
     [["a"], ["b"], ["c"], ["d"], ["e"]]),
    # && / || / ; lists, a list going on over a line, a background command, settings before the command
    ('set -e\noptimum-cli neuron cache set r && echo set\n[ "$1" = x ] && optimum-cli neuron cache synchronize\n'
     '[ "$1" = y ] || optimum-cli neuron cache synchronize\necho one &&\n  optimum-cli neuron cache synchronize\n'
     'optimum-cli neuron cache synchronize; echo done\necho x; optimum-cli neuron cache synchronize\n'
     'HF_TOKEN=t optimum-cli neuron cache synchronize &\nwait\necho "end $1"\n',
     [["x"], ["y"], ["z"]]),
    # loops, function bodies (as the last command too), subshells, continued lines
    ('push() {\n  optimum-cli neuron cache synchronize --repo_id r\n}\n'
     'sub() ( optimum-cli neuron cache synchronize )\n'
     'warm() {\n  echo warm\n  optimum-cli neuron cache synchronize\n}\n'
     'for m in a b; do\n  optimum-cli neuron cache lookup "$m"\ndone\n'
     'for m in a b; do optimum-cli neuron cache lookup "$m"; echo "$m"; done\n'
     '(\n  optimum-cli neuron cache synchronize\n)\n'
     'optimum-cli neuron cache synchronize \\\n  --repo_id r \\\n  --cache_dir /tmp/c\n'
     'push; echo "push $?"\nsub; echo "sub $?"\nwarm\n',
     [[]]),
]

KEPT = [
    'if optimum-cli neuron cache lookup m; then\n  echo cached\nfi\n',
    'optimum-cli neuron cache list | grep bert\n',
    '! optimum-cli neuron cache lookup m || echo miss\n',
    'while optimum-cli neuron cache lookup m; do sleep 1; done\n',
    'if [ -f x ] &&\n   optimum-cli neuron cache lookup m; then\n  echo both\nfi\n',
    'if [ -f x ]; optimum-cli neuron cache lookup m\nthen\n  echo both\nfi\n',
    'echo "$(optimum-cli neuron cache list)"\n',
    'optimum-cli neuron cache synchronize &\nwait $!\n',
    'optimum-cli neuron cache synchronize <<EOF\nx\nEOF\n',
]


def _stub(folder: Path, body: str) -> dict[str, str]:
    folder.mkdir()
    stub = folder / "optimum-cli"
    stub.write_text("#!/bin/sh\n" + body)
    stub.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def _run(script: Path, args: list[str], env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True, timeout=60,
                          cwd=script.parent)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("source, runs", REMOVED, ids=["case", "if", "lists", "blocks"])
def test_removed_command_leaves_a_script_doing_the_rest(source: str, runs: list[list[str]], tmp_path: Path) -> None:
    result = apply_rules(source, FileKind.SHELL, select=["NM406"], path="run.sh")
    assert "optimum-cli" not in result.text.replace("# neuron-migrate removed", "")
    assert result.findings and all(f.severity is Severity.FIXED for f in result.findings)
    assert apply_rules(result.text, FileKind.SHELL, select=["NM406"], path="run.sh").text == result.text
    old, new = tmp_path / "old.sh", tmp_path / "new.sh"
    old.write_text(source)
    new.write_text(result.text)
    subprocess.run(["bash", "-n", str(new)], check=True)
    silent = _stub(tmp_path / "ok", "exit 0\n")
    loud = _stub(tmp_path / "loud", 'echo "optimum-cli RAN $*"; exit 99\n')
    for args in runs:
        assert _run(new, args, loud) == _run(old, args, silent), (args, result.text)


@pytest.mark.parametrize("source", KEPT)
def test_command_whose_status_or_output_is_used_stays_with_a_todo(source: str, tmp_path: Path) -> None:
    result = apply_rules(source, FileKind.SHELL, select=["NM406"], path="run.sh", inline_notes=False)
    assert result.text == source
    assert [f.severity for f in result.findings] == [Severity.TODO]
    assert "by hand" in result.findings[0].message
    noted = apply_rules(source, FileKind.SHELL, select=["NM406"], path="run.sh").text
    script = tmp_path / "run.sh"
    script.write_text(noted)
    subprocess.run(["bash", "-n", str(script)], check=True)
