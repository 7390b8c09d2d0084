"""NM410: a compile-only pass (``neuron_parallel_compile``) held in a variable and run from Python is deleted with
the statements that print and run it, when those are all its uses; any other shape keeps the todo to delete the
call (the pass trains nothing, but only a pass whose every use can go is removed)."""

from __future__ import annotations

import json
import textwrap

import nbformat
import pytest

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

TODO = "delete the call that runs this command (its string would become empty)"
# a short --max_steps run: NM401 reads it as the compile-only pass itself, so the edits would empty the string
PASS = 'f"neuron_parallel_compile torchrun --nproc_per_node={n} train.py --max_steps 10"'

SCRIPT = f"""\
import os
import sys

n = 2
# pre-compile the graphs
cmd = {PASS}
print("running", cmd)
if os.system(cmd) != 0:
    print("compilation failed")
    sys.exit(1)
os.system(f"torchrun --nproc_per_node={{n}} train.py")
"""


def _nm410(result) -> list[tuple[str, str]]:
    return [(finding.severity.value, finding.message) for finding in result.findings if finding.rule == "NM410"]


def test_a_script_loses_the_pass_its_print_and_the_if_on_its_exit_status() -> None:
    result = migrate(SCRIPT, "NM410")
    assert result.text == textwrap.dedent("""\
        import os
        import sys

        n = 2
        os.system(f"torchrun --nproc_per_node={n} train.py")
        """)
    assert findings(result, "NM410") == {(6, "fixed")}  # reported on the assignment, in the original's lines
    ((_, message),) = _nm410(result)
    assert message.startswith("deleted this neuron_parallel_compile pass with `cmd = ...`, a print and the if on "
                              "os.system(cmd): it ran train.py only to extract and compile its graphs")
    assert "TorchNeuron compiles during the real run and caches the NEFFs (TORCH_NEURONX_NEFF_CACHE_DIR)" in message


@pytest.mark.parametrize("imports, call", [
    ("import subprocess as sp", "sp.run(cmd, shell=True, check=True)"),
    ("from subprocess import check_call", "check_call(cmd, shell=True)"),
    ("import subprocess", "subprocess.Popen(args=cmd, shell=True)"),
    ("import os", "os.popen(cmd)"),
])
def test_a_run_call_is_recognised_through_the_files_imports(imports: str, call: str) -> None:
    source = f"{imports}\n\nn = 2\ncmd = {PASS}\n{call}\nprint('done')\n"
    result = migrate(source, "NM410")
    assert result.text == f"{imports}\n\nn = 2\nprint('done')\n"
    assert findings(result, "NM410") == {(4, "fixed")}


def test_the_if_may_test_the_returncode_and_raise() -> None:
    source = f"""\
        import subprocess

        n = 2
        cmd = {PASS}
        if subprocess.run(cmd, shell=True).returncode != 0:
            raise RuntimeError("compile failed")
        elif n > 4:
            pass
        print("done")
        """
    result = migrate(source, "NM410")
    assert result.text == 'import subprocess\n\nn = 2\nprint("done")\n'


def _notebook(*sources: str) -> str:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"c{index}"
    return nbformat.writes(notebook)


def _cells(text: str) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(text)["cells"]]


COMPILE_CELL = '''\
import subprocess
print("Compile model")
COMPILE_CMD = f"""{env_var_options} neuron_parallel_compile \\
torchrun --nproc_per_node={num_workers} \\
train.py --model {model_name} --max_steps 10"""
print(f'Running command: \\n{COMPILE_CMD}')
if subprocess.check_call(COMPILE_CMD, shell=True):
   print("There was an error with the compilation command")
else:
   print("Compilation Success!!!")'''
SETTINGS_CELL = 'env_var_options = "MALLOC_ARENA_MAX=64"\nnum_workers = 2\nmodel_name = "bert-base-cased"'


def test_a_notebook_cell_loses_the_pass_and_keeps_the_rest() -> None:
    result = migrate(_notebook(SETTINGS_CELL, COMPILE_CELL), "NM410", kind=FileKind.NOTEBOOK, path="nb.ipynb")
    assert _cells(result.text) == [SETTINGS_CELL, 'import subprocess\nprint("Compile model")']
    ((severity, message),) = _nm410(result)
    assert severity == "fixed" and message.startswith("cell 2, line 3: deleted this neuron_parallel_compile pass "
                                                      "with `COMPILE_CMD = ...`, a print and the if on "
                                                      "subprocess.check_call(COMPILE_CMD, ...): ")


def test_a_name_used_in_another_cell_keeps_the_todo() -> None:
    text = _notebook(SETTINGS_CELL, COMPILE_CELL, "print(COMPILE_CMD)")
    result = migrate(text, "NM410", kind=FileKind.NOTEBOOK, path="nb.ipynb")
    cells = _cells(result.text)
    assert "COMPILE_CMD = f" in cells[1] and "subprocess.check_call(COMPILE_CMD" in cells[1]
    assert f"# neuron-migrate: {TODO}" in cells[1]
    assert [severity for severity, _ in _nm410(result)] == ["todo"]


def test_a_cell_holding_only_the_pass_keeps_the_todo() -> None:
    """Deleting it would leave the cell empty: the user removes the cell."""
    result = migrate(_notebook("import os\nn = 2", f"cmd = {PASS}\nos.system(cmd)"), "NM410", kind=FileKind.NOTEBOOK,
                     path="nb.ipynb")
    assert _cells(result.text)[1] == f"# neuron-migrate: {TODO}: {_nm410(result)[0][1].split(TODO + ': ', 1)[1]}\n" \
        f"cmd = {PASS}\nos.system(cmd)"
    assert [severity for severity, _ in _nm410(result)] == ["todo"]


# each keeps the pass and today's todo: a use that cannot go with it, or a block it would leave empty
HEAD = f"import os\n\nn = 2\ncmd = {PASS}\n"
KEPT = {
    "result assigned": HEAD + "rc = os.system(cmd)\nprint(rc)\n",
    "used in another statement": HEAD + "os.system(cmd)\nlog = [cmd]\n",
    "passed to the project's own helper": f"n = 2\ncmd = {PASS}\nrun(cmd)\nprint('done')\n",
    "split before running": f"import shlex, subprocess\n\nn = 2\ncmd = {PASS}\nsubprocess.run(shlex.split(cmd))\n"
                            "n = 3\n",
    "assigned twice": HEAD + "os.system(cmd)\ncmd = 'echo done'\nos.system(cmd)\n",
    "extended": HEAD + "cmd += ' --seed 1'\nos.system(cmd)\nn = 3\n",
    "inside a try": HEAD + "try:\n    os.system(cmd)\n    n = 3\nexcept OSError:\n    pass\n",
    "inside a loop": HEAD + "for _ in range(2):\n    os.system(cmd)\n    n += 1\n",
    "an if that does more than report": HEAD + "if os.system(cmd):\n    cleanup()\nn = 3\n",
    "used in a function": HEAD + "os.system(cmd)\n\n\ndef again():\n    os.system(cmd)\n",
    "global": f"import os\n\n\ndef compile_graphs(n):\n    global cmd\n    cmd = {PASS}\n    os.system(cmd)\n"
              "    return n\n",
    "exported": f"import os\n\n__all__ = ['cmd']\nn = 2\ncmd = {PASS}\nos.system(cmd)\n",
    "never run": f"n = 2\ncmd = {PASS}\nprint(cmd)\nn = 3\n",
    "used outside its block": f"import os\n\nn = 2\nif n:\n    print('skip')\nelse:\n    cmd = {PASS}\n"
                              "    os.system(cmd)\n    n = 3\nos.system(cmd)\n",
    "a function body left empty": f"import os\n\n\ndef compile_graphs(n):\n    cmd = {PASS}\n    os.system(cmd)\n",
    "an if body left empty": f"import os\n\nn = 2\nif n > 1:\n    cmd = {PASS}\n    os.system(cmd)\nn = 3\n",
}


@pytest.mark.parametrize("source", list(KEPT.values()), ids=list(KEPT))
def test_a_pass_whose_uses_cannot_all_go_keeps_the_todo(source: str) -> None:
    result = migrate(source, "NM410")
    assert [line for line in result.text.splitlines() if "neuron-migrate" not in line] == source.splitlines()
    assert [severity for severity, message in _nm410(result) if message.startswith(TODO)] == ["todo"]
    assert not any(severity == "fixed" for severity, _ in _nm410(result))


def test_a_real_run_in_a_variable_is_not_deleted() -> None:
    """No neuron_parallel_compile: the string is edited (or left), never emptied, so every statement stays."""
    source = 'import subprocess\n\nRUN_CMD = "torchrun --nproc_per_node=2 train.py"\nprint(RUN_CMD)\n' \
             "if subprocess.check_call(RUN_CMD, shell=True):\n    print('failed')\n"
    result = migrate(source, "NM410")
    for statement in ("RUN_CMD = ", "print(RUN_CMD)", "if subprocess.check_call(RUN_CMD, shell=True):"):
        assert statement in result.text
    assert not any(message.startswith("deleted") for _, message in _nm410(result))


def test_a_pass_run_inline_goes_with_its_call() -> None:
    source = f"import os\n\nn = 2\nos.system({PASS})\nn = 3\n"
    result = migrate(source, "NM410")
    assert result.text == "import os\n\nn = 2\nn = 3\n"
    assert [severity for severity, message in _nm410(result)] == ["fixed"]
    assert _nm410(result)[0][1].startswith(
        "deleted the `os.system(...)` statement running `neuron_parallel_compile torchrun")


def test_a_pass_run_inline_whose_status_is_kept_keeps_its_todo() -> None:
    source = f"import os\n\nn = 2\nstatus = os.system({PASS})\nn = 3\n"
    result = migrate(source, "NM410")
    assert f"status = os.system({PASS})" in result.text
    assert [severity for severity, message in _nm410(result) if message.startswith(TODO)] == ["todo"]


def test_a_plain_string_goes_too_and_the_blank_line_before_it_stays() -> None:
    source = ('import os\n\nclear = "neuron_parallel_compile --command clear-locks"\nos.system(clear)\n'
              'os.system("torchrun train.py")\n')
    result = migrate(source, "NM410")
    assert result.text == 'import os\n\nos.system("torchrun train.py")\n'
    assert _nm410(result) == [("fixed", "deleted `neuron_parallel_compile --command clear-locks` with `clear = ...` "
                                        "and os.system(clear): it cleared stale locks of the torch_xla compile cache, "
                                        "which TorchNeuron does not have")]


def test_comments_go_with_the_deleted_statements_and_the_next_ones_keep_theirs() -> None:
    source = f"""\
        import os


        def train(n):
            setup = n + 1

            # warm the compile cache
            cmd = {PASS}
            os.system(cmd)  # slow
            # the real run
            os.system(f"torchrun --nproc_per_node={{n}} train.py")
        """
    result = migrate(source, "NM410")
    assert result.text == textwrap.dedent("""\
        import os


        def train(n):
            setup = n + 1

            # the real run
            os.system(f"torchrun --nproc_per_node={n} train.py")
        """)
