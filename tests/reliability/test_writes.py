"""What a rewrite keeps (migrate/textio.py): owner, group, mode, hard links, long names, the last CR."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.conftest import IS_ROOT, LEGACY, NOBODY, as_unprivileged, cli


@pytest.mark.skipif(not IS_ROOT, reason="needs root to give the file to another uid")
def test_another_users_file_keeps_its_owner_and_group(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_bytes(LEGACY)
    target.chmod(0o640)
    os.chown(target, 12345, 23456)
    assert cli("--force", target).returncode == 0
    info = target.stat()
    assert target.read_bytes() != LEGACY
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (12345, 23456, 0o640)


@pytest.mark.skipif(not IS_ROOT, reason="needs root to create a file of another uid")
def test_a_file_whose_owner_cannot_be_kept_is_refused(shared_tmp: Path) -> None:
    target = shared_tmp / "a.py"
    target.write_bytes(LEGACY)
    target.chmod(0o666)  # writable by nobody, in a folder nobody may write: a rename would make it nobody's
    os.chown(target, 12345, 12345)
    completed = cli("--force", target, user=NOBODY)
    assert completed.returncode == 1 and "cannot keep that owner" in completed.stdout
    assert target.read_bytes() == LEGACY and target.stat().st_uid == 12345
    assert sorted(path.name for path in shared_tmp.iterdir()) == ["a.py"]


def test_a_read_only_file_is_reported_not_rewritten(shared_tmp: Path) -> None:
    target = shared_tmp / "a.py"
    target.write_bytes(LEGACY)
    target.chmod(0o444)
    completed = cli("--force", target, user=as_unprivileged())
    assert completed.returncode == 1 and "read-only file (mode 444)" in completed.stdout
    assert target.read_bytes() == LEGACY
    assert cli("--force", target).returncode == 1  # as root too: the mode says "do not change"


def test_a_file_with_hard_links_is_reported_not_split(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_bytes(LEGACY)
    os.link(target, tmp_path / "twin.txt")
    completed = cli("--force", target)
    assert completed.returncode == 1 and "has 2 hard links" in completed.stdout
    assert target.read_bytes() == LEGACY


def test_a_name_at_the_folder_name_limit_is_rewritten(tmp_path: Path) -> None:
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    target = tmp_path / ("n" * (limit - 3) + ".py")
    target.write_bytes(LEGACY)
    assert cli("--force", target).returncode == 0
    assert target.read_bytes() != LEGACY
    assert [path.name for path in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"], ids=["cr", "crlf", "lf"])
def test_line_endings_survive_to_the_last_one(tmp_path: Path, newline: str) -> None:
    target = tmp_path / "a.py"
    target.write_bytes(LEGACY.replace(b"\n", newline.encode()))
    assert cli("--force", target).returncode == 0
    rewritten = target.read_bytes().decode()
    assert rewritten != LEGACY.decode() and rewritten.endswith(newline)
    others = {"\r": ("\n",), "\r\n": (), "\n": ("\r",)}[newline]
    assert not any(other in rewritten.replace("\r\n", "") for other in others)
    assert cli("--force", target).returncode == 0 and target.read_bytes().decode() == rewritten  # idempotent
