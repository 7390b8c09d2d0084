"""Which kind of file a path is. The engine knows file kinds; rules say which kinds they handle."""

from __future__ import annotations

import enum
import re
from pathlib import PurePath


class FileKind(str, enum.Enum):
    PYTHON = "python"
    NOTEBOOK = "notebook"
    SHELL = "shell"  # .sh/.bash/.sbatch/.slurm, shebang scripts, Makefiles
    DOCKERFILE = "dockerfile"
    REQUIREMENTS = "requirements"
    PYPROJECT = "pyproject"
    SETUP_CFG = "setup_cfg"
    TOX = "tox"  # tox.ini: its test environments' deps are requirement lines
    YAML = "yaml"
    JSON = "json"  # argument-parser configs (HfArgumentParser.parse_json_file)
    DOCS = "docs"  # Markdown / reStructuredText: never rewritten, legacy mentions are reported as docs to update


#: Kinds whose lines take `#` comments, so a `todo` can be written next to the line it concerns.
HASH_COMMENT_KINDS = frozenset(
    {
        FileKind.PYTHON,
        FileKind.SHELL,
        FileKind.DOCKERFILE,
        FileKind.REQUIREMENTS,
        FileKind.PYPROJECT,
        FileKind.SETUP_CFG,
        FileKind.TOX,
        FileKind.YAML,
    }
)

_SHELL_SUFFIXES = {".sh", ".bash", ".zsh", ".ksh", ".sbatch", ".slurm", ".pbs"}
_SHEBANG = re.compile(rb"^#!\s*\S*(?:/|\s)(?:env\s+)?(?:ba|z|k|da)?sh\b")
#: pip requirement and constraint files by the names projects give them: requirements.txt, requirements-inf.txt,
#: training_requirements.txt, dev-requirements.in, requirements.gpu.txt, constraints.txt, pip-constraints.txt
_REQUIREMENTS = re.compile(r"^(?:[\w.-]*[-_.])?(?:requirements?|reqs|constraints?)(?:[-_.][\w.-]*)?\.(?:txt|in)$", re.I)
#: folders whose .txt/.in files are requirement files (requirements/base.txt, requirements/dev.in)
_REQUIREMENTS_DIRS = {"requirements", "reqs", "constraints"}
_DOCS_SUFFIXES = {".md", ".markdown", ".rst"}


def is_makefile(path: PurePath | None) -> bool:
    """A Makefile by name (a SHELL file whose recipes make echoes and expands, so notes go above its targets)."""
    return path is not None and (path.name in {"Makefile", "makefile", "GNUmakefile"} or path.suffix == ".mk")


def kind_from_name(path: PurePath) -> FileKind | None:
    """The kind a file has by its name alone, or None when only its content can tell (or it is not ours)."""
    name = path.name
    suffix = path.suffix.lower()
    if suffix == ".py":
        return FileKind.PYTHON
    if suffix == ".ipynb":
        return FileKind.NOTEBOOK
    if suffix in _SHELL_SUFFIXES or is_makefile(path):
        return FileKind.SHELL
    lowered = name.lower()
    if lowered.startswith(("dockerfile", "containerfile")) or lowered.endswith(".dockerfile"):
        return FileKind.DOCKERFILE
    if _REQUIREMENTS.match(name) or (suffix in {".txt", ".in"} and path.parent.name.lower() in _REQUIREMENTS_DIRS):
        return FileKind.REQUIREMENTS
    if name == "pyproject.toml":
        return FileKind.PYPROJECT
    if name == "setup.cfg":
        return FileKind.SETUP_CFG
    if name == "tox.ini":
        return FileKind.TOX
    if suffix in {".yaml", ".yml"}:
        return FileKind.YAML
    if suffix == ".json":
        return FileKind.JSON
    if suffix in _DOCS_SUFFIXES:
        return FileKind.DOCS
    return None


def kind_from_content(head: bytes) -> FileKind | None:
    """Kind of a file without a telling name: a shell shebang makes it a shell script."""
    if _SHEBANG.match(head):
        return FileKind.SHELL
    if head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]:
        return FileKind.PYTHON
    return None


def may_need_content(path: PurePath) -> bool:
    """Files with no suffix may be shebang scripts (`train`, `launch`): worth reading their first line.
    Dotfiles (`.gitignore`, `.env`) are configuration, not scripts."""
    return not path.suffix and not path.name.startswith(".")
