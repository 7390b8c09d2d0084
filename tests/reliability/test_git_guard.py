"""The uncommitted-work guard (migrate/gitstate.py) with real git: it refuses whenever it cannot decide,
asks nested repositories and submodules themselves, and runs none of the repository's programs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.reliability.conftest import IS_ROOT, LEGACY, cli, committed_repo, git

EDITED = LEGACY + b"# my uncommitted edit\n"


def test_a_clean_committed_file_is_rewritten_and_an_edited_one_is_refused(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"clean.py": LEGACY, "edited.py": LEGACY})
    (repo / "edited.py").write_bytes(EDITED)
    completed = cli(repo)
    assert completed.returncode == 1
    assert (repo / "clean.py").read_bytes() != LEGACY
    assert (repo / "edited.py").read_bytes() == EDITED
    assert "edited.py:0:0: NM000 [error] has uncommitted changes" in completed.stdout


@pytest.mark.skipif(not IS_ROOT, reason="needs root to give the repository to another uid")
def test_a_repository_git_refuses_to_read_is_refused_not_rewritten(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"a.py": LEGACY})
    (repo / "a.py").write_bytes(EDITED)
    for path in [repo, *repo.rglob("*")]:
        os.lchown(path, 12345, 12345)  # another user's checkout: git reports "dubious ownership"
    completed = cli(repo)
    assert completed.returncode == 1
    assert (repo / "a.py").read_bytes() == EDITED
    assert "dubious ownership" in completed.stdout and "--force" in completed.stdout


def test_an_untracked_file_with_a_non_utf8_name_does_not_switch_the_guard_off(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"a.py": LEGACY})
    (repo / "a.py").write_bytes(EDITED)
    odd_name = repo / os.fsdecode(b"caf\xe9.py")
    odd_name.write_bytes(LEGACY)
    completed = cli(repo, "--report", tmp_path / "report.json")
    assert completed.returncode == 1, completed.stderr
    assert (repo / "a.py").read_bytes() == EDITED
    assert os.listdir(bytes(repo)).count(b"caf\xe9.py") == 1
    assert odd_name.read_bytes() == LEGACY  # untracked: refused too
    reported = json.loads((tmp_path / "report.json").read_text())
    assert "caf\\xe9.py" in [file["path"] for file in reported["files"]]


def test_edits_inside_a_nested_repository_are_asked_of_that_repository(tmp_path: Path) -> None:
    outer = committed_repo(tmp_path / "outer", {"a.py": LEGACY})
    nested = committed_repo(outer / "vendor", {"v.py": LEGACY, "clean.py": LEGACY})
    (nested / "v.py").write_bytes(EDITED)  # the outer repository shows only "?? vendor/"
    completed = cli(outer)
    assert (nested / "v.py").read_bytes() == EDITED
    assert (nested / "clean.py").read_bytes() != LEGACY
    assert (outer / "a.py").read_bytes() != LEGACY
    assert completed.returncode == 1


def test_edits_inside_a_submodule_are_asked_of_the_submodule(tmp_path: Path) -> None:
    library = committed_repo(tmp_path / "library", {"lib.py": LEGACY, "other.py": LEGACY})
    outer = committed_repo(tmp_path / "outer", {"a.py": LEGACY})
    git(outer, "submodule", "add", "-q", str(library), "sub")
    git(outer, "commit", "-qm", "submodule")
    (outer / "sub" / "lib.py").write_bytes(EDITED)  # the outer repository shows only " M sub"
    cli(outer)
    assert (outer / "sub" / "lib.py").read_bytes() == EDITED
    assert (outer / "sub" / "other.py").read_bytes() != LEGACY


def test_files_git_is_told_not_to_look_at_are_refused(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"hidden.py": LEGACY, "sparse.py": LEGACY})
    git(repo, "update-index", "--assume-unchanged", "hidden.py")
    git(repo, "update-index", "--skip-worktree", "sparse.py")
    git(repo, "config", "core.ignoreStat", "true")
    (repo / "stamped.py").write_bytes(LEGACY)
    git(repo, "add", "stamped.py")
    git(repo, "commit", "-qm", "added while git trusts stamps")
    for name in ("hidden.py", "sparse.py", "stamped.py"):
        (repo / name).write_bytes(EDITED)  # git status says nothing about these edits
    cli(repo)
    for name in ("hidden.py", "sparse.py", "stamped.py"):
        assert (repo / name).read_bytes() == EDITED, name


def test_ignored_files_are_refused_since_git_cannot_give_them_back(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"a.py": LEGACY})
    (repo / ".git" / "info" / "exclude").write_text("local.py\n")  # not a .gitignore: discovery takes the file
    (repo / "local.py").write_bytes(LEGACY)
    cli(repo)
    assert (repo / "local.py").read_bytes() == LEGACY


def test_the_repository_configuration_runs_no_program(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"a.py": LEGACY, ".gitattributes": b"*.py filter=evil\n"})
    ran = tmp_path / "ran"
    command = f"sh -c 'echo $0 >> {ran}; cat'"
    git(repo, "config", "core.fsmonitor", f"sh -c 'echo fsmonitor >> {ran}; exit 1'")
    git(repo, "config", "filter.evil.clean", command.replace("$0", "clean"))
    git(repo, "config", "filter.evil.process", f"sh -c 'echo process >> {ran}; exit 1'")
    git(repo, "config", "core.hooksPath", str(tmp_path / "hooks"))
    os.utime(repo / "a.py", (1, 1))  # stat differs from the index: git would run the clean filter to compare
    ran.unlink(missing_ok=True)
    completed = cli(repo)
    assert not ran.exists(), ran.read_text()
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert (repo / "a.py").read_bytes() != LEGACY


def test_without_git_a_work_tree_is_refused_and_a_plain_folder_is_rewritten(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", {"a.py": LEGACY})
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "b.py").write_bytes(LEGACY)
    bin_without_git = tmp_path / "bin"
    bin_without_git.mkdir()
    env = {**os.environ, "PATH": str(bin_without_git)}
    completed = cli(repo, env=env)
    assert completed.returncode == 1 and "cannot run git" in completed.stdout
    assert (repo / "a.py").read_bytes() == LEGACY
    assert cli(plain, env=env).returncode == 0
    assert (plain / "b.py").read_bytes() != LEGACY
    assert shutil.which("git")  # the repository above was built with it


def test_a_refused_file_counts_as_left_as_it_is_for_the_files_that_depend_on_it(tmp_path: Path) -> None:
    """rtG p4: the run refused serve/app.py (an uncommitted edit) yet moved requirements.txt off optimum-neuron as
    if app.py had been migrated: the image then raised ModuleNotFoundError. The dependency plan reads a refused
    file as it is."""
    app = (b"from optimum.neuron import NeuronModelForSequenceClassification\n\n"
           b"model = NeuronModelForSequenceClassification.from_pretrained('distilbert-base-uncased', export=True,\n"
           b"                                                             batch_size=1, sequence_length=64)\n")
    repo = committed_repo(tmp_path / "repo", {"requirements.txt": b"optimum-neuron==0.0.24\n", "serve/app.py": app})
    (repo / "serve" / "app.py").write_bytes(app + b"# my uncommitted edit\n")
    completed = cli(repo)
    assert "serve/app.py:0:0: NM000 [error] has uncommitted changes" in completed.stdout
    assert "optimum-neuron==0.0.24" in (repo / "requirements.txt").read_text()
    forced = cli(repo, "--force")  # once the file is rewritten with it, the package goes
    assert "optimum-neuron" not in "".join(line for line in (repo / "requirements.txt").read_text().splitlines()
                                           if not line.startswith("#")), forced.stdout
