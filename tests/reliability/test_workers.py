"""Files that kill or stall their worker (migrate/workers.py), Ctrl-C and kill -9: every file ends as a
result, the run ends, and no file is ever half written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.reliability.conftest import LEGACY

#: the native parser overflows its stack on this (SIGSEGV): alone, `neuron-migrate` used to exit 139
DEEP_NESTING = LEGACY + b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n"
#: the parser takes minutes on this 20,000-term chain
LONG_CHAIN = LEGACY + b"x = " + b" + ".join([b"a"] * 20000) + b"\n"


def _tree(folder: Path, count: int, **odd: bytes) -> Path:
    folder.mkdir()
    for number in range(count):
        (folder / f"f{number:03}.py").write_bytes(LEGACY)
    for name, data in odd.items():
        (folder / f"{name}.py").write_bytes(data)
    return folder


def _migrate(*args, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "migrate", "--force", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_that_crashes_the_parser_is_an_error_and_the_run_goes_on(tmp_path: Path, jobs: int) -> None:
    tree = _tree(tmp_path / "tree", 4, deep=DEEP_NESTING)
    completed = subprocess.run([sys.executable, "-m", "migrate", "--force", "-j", str(jobs), str(tree)],
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1
    assert "deep.py:0:0: NM000 [error] the worker processing this file was killed by SIGSEGV" in completed.stdout
    assert (tree / "deep.py").read_bytes() == DEEP_NESTING
    assert all((tree / f"f{n:03}.py").read_bytes() != LEGACY for n in range(4))
    assert "5 files scanned" in completed.stderr


def test_a_file_past_the_time_limit_is_stopped_and_the_run_goes_on(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", 3, chain=LONG_CHAIN)
    started = time.monotonic()
    completed = subprocess.run([sys.executable, "-m", "migrate", "--force", "-j", "2", "--time-limit", "1", str(tree)],
                               capture_output=True, text=True, timeout=60)
    assert time.monotonic() - started < 20
    assert completed.returncode == 1
    assert "chain.py:0:0: NM000 [error] took longer than 1 s (the per-file time limit)" in completed.stdout
    assert (tree / "chain.py").read_bytes() == LONG_CHAIN
    assert all((tree / f"f{n:03}.py").read_bytes() != LEGACY for n in range(3))


def test_ctrl_c_ends_the_run_with_one_line_and_exit_130(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", 2, chain=LONG_CHAIN, chain2=LONG_CHAIN)
    process = _migrate("-j", "2", tree)
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(children.read_text().split()) < 2:  # the workers are at the chains
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(process.pid, signal.SIGINT)  # what the terminal sends to the whole foreground group
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "Traceback" not in stderr and stderr.strip().splitlines()[-1] == (
        "neuron-migrate: interrupted; files already rewritten stay rewritten, the others are untouched"
    )
    assert (tree / "chain.py").read_bytes() == LONG_CHAIN


def test_kill_9_mid_run_leaves_every_file_whole_and_a_later_run_finishes_clean(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", 300)
    expected = _tree(tmp_path / "expected", 1)
    subprocess.run([sys.executable, "-m", "migrate", "--force", str(expected)], check=True, capture_output=True)
    rewritten = (expected / "f000.py").read_bytes()
    process = _migrate("-j", "2", tree)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and all((tree / f"f{n:03}.py").read_bytes() == LEGACY for n in range(0, 300, 10)):
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)
    contents = {(tree / f"f{n:03}.py").read_bytes() for n in range(300)}
    assert contents <= {LEGACY, rewritten}  # never torn: the old bytes or the new ones
    subprocess.run([sys.executable, "-m", "migrate", "--force", str(tree)], check=True, capture_output=True, timeout=60)
    assert {(tree / f"f{n:03}.py").read_bytes() for n in range(300)} == {rewritten}
    assert sorted(path.name for path in tree.iterdir() if not path.name.startswith("f")) == []


def test_a_later_run_removes_only_stale_temp_files_of_its_own(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tree", 1)
    holder = (
        "import fcntl, os, sys, tempfile, time\n"
        "fd, name = tempfile.mkstemp(dir=sys.argv[1], prefix='.f000.py.', suffix='.neuron-migrate')\n"
        "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, b'half'); print(name, flush=True); time.sleep(60)\n"
    )
    killed = subprocess.Popen([sys.executable, "-c", holder, str(tree)], stdout=subprocess.PIPE, text=True)
    live = subprocess.Popen([sys.executable, "-c", holder, str(tree)], stdout=subprocess.PIPE, text=True)
    stale, writing = Path(killed.stdout.readline().strip()), Path(live.stdout.readline().strip())
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    foreign = tree / ".f000.py.notours.tmp"
    foreign.write_bytes(b"keep")
    try:
        subprocess.run([sys.executable, "-m", "migrate", "--force", str(tree)], check=True, capture_output=True, timeout=60)
        assert not stale.exists()
        assert writing.exists()  # its writer is alive (it holds the lock)
        assert foreign.exists()
    finally:
        live.kill()
        live.wait()
