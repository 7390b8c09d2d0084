"""Read APIs out of downloaded wheels AS DATA (zip + ``ast``; nothing is imported or installed).

Used by the table generators beside this file (``gen_training_args.py``, ``gen_drift.py``). Get the
wheels with, e.g.::

    pip download --no-deps --only-binary=:all: optimum-neuron==0.4.5 -d /tmp/wheels/on
    pip download --no-deps transformers==4.57.1 trl==0.24.0 -d /tmp/wheels/tf
"""

from __future__ import annotations

import ast
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ClassInfo:
    name: str
    path: str  # file inside the wheel
    bases: list[str]
    fields: list[str]  # dataclass fields declared in the class body (annotated assignments, no ClassVar)


def wheel_version(path: Path) -> str:
    return path.name.split("-")[1]


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _fields(node: ast.ClassDef) -> list[str]:
    names = []
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if "ClassVar" in ast.unparse(statement.annotation):
                continue
            names.append(statement.target.id)
    return names


def classes(wheel: Path, prefix: str, names: set[str] | None = None) -> dict[str, ClassInfo]:
    """Every class (or only ``names``) defined in the wheel's ``.py`` files under ``prefix``."""
    found: dict[str, ClassInfo] = {}
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if not member.endswith(".py") or not member.startswith(prefix):
                continue
            try:
                tree = ast.parse(archive.read(member))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and (names is None or node.name in names):
                    found.setdefault(node.name, ClassInfo(node.name, member, [ast.unparse(b) for b in node.bases], _fields(node)))
    return found


def class_fields(wheel: Path, member: str, name: str) -> list[str]:
    """Dataclass fields of class ``name`` in file ``member``, including bases defined in the same file."""
    with zipfile.ZipFile(wheel) as archive:
        tree = ast.parse(archive.read(member))
    defined = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    result: list[str] = []

    def walk(class_name: str) -> None:
        node = defined[class_name]
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in defined:
                walk(base.id)
        for field_name in _fields(node):
            if field_name not in result:
                result.append(field_name)

    walk(name)
    return result


def exported_names(wheel: Path, init_member: str) -> dict[str, str]:
    """Public names of a package ``__init__`` -> the submodule they come from.

    Reads both the lazy ``_import_structure = {"mod": ["Name", ...]}`` dict (and its later
    ``_import_structure["mod"].extend([...])`` / ``["mod"] = [...]`` updates) and the
    ``from .mod import Name`` statements (TYPE_CHECKING branches included)."""
    with zipfile.ZipFile(wheel) as archive:
        tree = ast.parse(archive.read(init_member))
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == "_import_structure" and isinstance(node.value, ast.Dict):
                for key, value in zip(node.value.keys, node.value.values):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str) \
                            and isinstance(value, (ast.List, ast.Tuple)):
                        for element in value.elts:
                            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                                names.setdefault(element.value, key.value)
            elif isinstance(target, ast.Subscript) and ast.unparse(target.value) == "_import_structure":
                key = target.slice
                if isinstance(key, ast.Constant) and isinstance(key.value, str) \
                        and isinstance(node.value, (ast.List, ast.Tuple)):
                    for element in node.value.elts:
                        if isinstance(element, ast.Constant) and isinstance(element.value, str):
                            names.setdefault(element.value, key.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("extend", "append"):
            owner = node.func.value
            if isinstance(owner, ast.Subscript) and ast.unparse(owner.value) == "_import_structure" \
                    and isinstance(owner.slice, ast.Constant) and isinstance(owner.slice.value, str):
                for argument in node.args:
                    elements = argument.elts if isinstance(argument, (ast.List, ast.Tuple)) else [argument]
                    for element in elements:
                        if isinstance(element, ast.Constant) and isinstance(element.value, str):
                            names.setdefault(element.value, owner.slice.value)
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                if alias.name != "*":
                    names.setdefault(alias.asname or alias.name, node.module or "")
    return {name: module for name, module in names.items() if not name.startswith("_")}


def module_names(wheel: Path, member: str) -> list[str]:
    """Public module-level names (assignments, functions, classes) defined in one file of the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        tree = ast.parse(archive.read(member))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
    return [name for name in dict.fromkeys(names) if not name.startswith("_")]


def find_wheel(directory: Path, project: str, version: str) -> Path:
    matches = sorted(directory.glob(f"{project}-{version}-*.whl"))
    if not matches:
        raise SystemExit(f"missing wheel {project}=={version} in {directory}: pip download --no-deps {project}=={version} -d {directory}")
    return matches[0]
