"""NM407: trn1 worker counts on torchrun lines, read through same-file variables and their defaults."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def test_a_default_in_the_variable_counts_as_the_value() -> None:
    result = migrate(
        """
        NPROC=${NPROC:-32}
        torchrun --nproc_per_node=$NPROC train.py --epochs 1
        """,
        "NM407", kind=FileKind.SHELL, path="scripts/launch.sh",
    )
    (finding,) = result.findings
    assert finding.message.startswith("--nproc_per_node $NPROC (NPROC=${NPROC:-32}) looks like a trn1 NeuronCore count")
    assert findings(result, "NM407") == {(2, "todo")}


def test_a_default_on_the_flag_counts_as_the_value() -> None:
    result = migrate("torchrun --nproc_per_node ${WORKERS:-32} train.py\n", "NM407", kind=FileKind.SHELL,
                     path="launch.sh")
    assert findings(result, "NM407") == {(1, "todo")}


def test_other_defaults_are_left_alone() -> None:
    unchanged(
        """
        NPROC=${NPROC:-2}
        torchrun --nproc_per_node=$NPROC train.py
        torchrun --nproc_per_node ${WORKERS:-8} train.py
        """,
        "NM407", kind=FileKind.SHELL, path="launch.sh",
    )


# ----------------------------------------------- plain `python X.py` runs of a script whose xmp.spawn NM310 replaces

_SPAWN_SCRIPT = '''import argparse

import torch_xla.distributed.xla_multiprocessing as xmp


def _mp_fn(index, flags):
    print(index, flags)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-workers", type=int, default=8)
    flags = parser.parse_args()
    xmp.spawn(_mp_fn, args=(flags,), nprocs={nprocs})
'''


def _spawn_run(launcher: str, nprocs: str = "None", path: str = "scripts/run.sh"):
    script = _SPAWN_SCRIPT.replace("{nprocs}", nprocs)
    return migrate(launcher, "NM407", kind=FileKind.SHELL, path=path,
                   project={"src/train_xla.py": script, path: launcher})


def test_a_plain_python_run_of_a_spawned_script_gets_the_torchrun_todo_on_its_line() -> None:
    result = _spawn_run(
        """
        CORES=16
        export NEURON_RT_NUM_CORES=$CORES

        python -u ../src/train_xla.py --epochs 1
        """,
    )
    (finding,) = [f for f in result.findings if f.rule == "NM407"]
    assert finding.line == 4
    assert "this plain `python` run of train_xla.py now trains in ONE process" in finding.message
    assert "NEURON_RT_NUM_CORES=$CORES, CORES=16 here" in finding.message
    assert "`torchrun --nproc_per_node 16 ../src/train_xla.py ...`" in finding.message
    assert "# neuron-migrate:" in result.text.splitlines()[3]  # the note sits right above the launch line


def test_the_count_comes_from_the_option_nprocs_reads_on_that_line() -> None:
    result = _spawn_run(
        """
        WORKERS=32
        python ../src/train_xla.py \\
            --num_workers $WORKERS
        """,
        nprocs="flags.num_workers",
    )
    (finding,) = [f for f in result.findings if f.rule == "NM407"]
    assert finding.line == 2
    assert "started --num-workers $WORKERS, WORKERS=32 processes" in finding.message
    assert "--nproc_per_node 32 " in finding.message and "32 looks like a trn1 NeuronCore count" in finding.message


def test_a_literal_count_is_named_and_one_process_says_nothing() -> None:
    result = _spawn_run("python ../src/train_xla.py\n", nprocs="4")
    (finding,) = [f for f in result.findings if f.rule == "NM407"]
    assert "started 4 processes (xmp.spawn nprocs=4)" in finding.message and "--nproc_per_node 4 " in finding.message
    assert [f for f in _spawn_run("python ../src/train_xla.py\n", nprocs="1").findings if f.rule == "NM407"] == []


def test_launchers_other_scripts_and_unknown_scripts_get_nothing() -> None:
    result = _spawn_run(
        """
        torchrun --nproc_per_node 4 ../src/train_xla.py
        python ../src/preprocess.py --out data
        python other_train.py
        echo python ../src/train_xla.py
        """,
    )
    assert [f for f in result.findings if f.rule == "NM407"] == []
