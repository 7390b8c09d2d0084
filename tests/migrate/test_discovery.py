"""Which files a run looks at: .gitignore (nested, negation, enclosing), pruned folders, --exclude, kinds."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.discovery import DiscoveryError, discover
from migrate.filekinds import FileKind


def names(paths, exclude=()) -> list[str]:
    return [candidate.display for candidate in discover([Path(p) for p in paths], exclude) if not candidate.skip_reason]


def touch(root: Path, *relative: str) -> None:
    for item in relative:
        path = root / item
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


def test_nested_gitignore_with_negation(tmp_path: Path) -> None:
    touch(tmp_path, "keep.py", "gen/out.py", "sub/a.py", "sub/b.py", "sub/deep/c.py", "logs/run.sh")
    (tmp_path / ".gitignore").write_text("gen/\n*.sh\n")
    (tmp_path / "sub" / ".gitignore").write_text("b.py\ndeep/\n")
    (tmp_path / "logs" / ".gitignore").write_text("!run.sh\n")
    assert names([tmp_path]) == ["keep.py", "logs/run.sh", "sub/a.py"]


def test_gitignore_of_enclosing_work_tree_applies(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated_*.py\n")
    touch(tmp_path, "src/generated_x.py", "src/real.py")
    assert names([tmp_path / "src"]) == ["real.py"]


def test_pruned_folders_and_environments(tmp_path: Path) -> None:
    touch(tmp_path, "a.py", ".git/hooks/x.py", "node_modules/m/x.py", "lib/site-packages/p.py", "build/x.py",
          "pkg.egg-info/x.py", "myenv/lib/x.py", "__pycache__/x.py")
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    assert names([tmp_path]) == ["a.py"]


def test_exclude_globs(tmp_path: Path) -> None:
    touch(tmp_path, "a.py", "tests/t.py", "docs/conf.py", "scripts/run.sh")
    assert names([tmp_path], exclude=["tests/", "*.sh"]) == ["a.py", "docs/conf.py"]


def test_kinds_by_name_and_unknown_files_ignored(tmp_path: Path) -> None:
    touch(tmp_path, "a.py", "nb.ipynb", "run.sbatch", "Dockerfile.neuron", "requirements-dev.txt", "pyproject.toml",
          "setup.cfg", "k8s.yaml", "args.json", "README.md", "notes.txt", "data.csv", "launch")
    kinds = {c.display: c.kind for c in discover([tmp_path])}
    assert kinds == {
        "a.py": FileKind.PYTHON, "nb.ipynb": FileKind.NOTEBOOK, "run.sbatch": FileKind.SHELL,
        "Dockerfile.neuron": FileKind.DOCKERFILE, "requirements-dev.txt": FileKind.REQUIREMENTS,
        "pyproject.toml": FileKind.PYPROJECT, "setup.cfg": FileKind.SETUP_CFG, "k8s.yaml": FileKind.YAML,
        "args.json": FileKind.JSON, "README.md": FileKind.DOCS,  # prose: its legacy mentions are reported
        "launch": None,  # no suffix: the shebang decides later
    }


def test_explicit_files_and_several_targets(tmp_path: Path) -> None:
    touch(tmp_path, "one/train.py", "two/train.py", "notes.csv")
    displays = names([tmp_path / "one", tmp_path / "two"])
    assert displays == [f"{tmp_path}/one/train.py", f"{tmp_path}/two/train.py"]
    skipped = [c for c in discover([tmp_path / "notes.csv"]) if c.skip_reason]
    assert len(skipped) == 1 and "not a kind" in skipped[0].skip_reason


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DiscoveryError, match="no such file"):
        list(discover([tmp_path / "missing"]))


def test_requirements_folder_and_lowercase_dockerfile() -> None:
    from pathlib import PurePath

    from migrate.filekinds import kind_from_name

    assert kind_from_name(PurePath("requirements/base.txt")) is FileKind.REQUIREMENTS
    assert kind_from_name(PurePath("docs/notes.txt")) is None
    assert kind_from_name(PurePath("docker/train.dockerfile")) is FileKind.DOCKERFILE
    assert kind_from_name(PurePath("dockerfile")) is FileKind.DOCKERFILE
