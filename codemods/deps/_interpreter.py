"""The Python an install context declares, against the Python the packages it installs require (redteam-round2 D3).

An install context: one CI job of a GitHub workflow (its ``actions/setup-python`` ``python-version``), one Dockerfile
stage (its ``FROM python:3.10-slim`` base image, or a container whose tag names ``py310``), a ``pyproject.toml``
(``requires-python``, Poetry's ``python`` key). A job or stage installs the requirements of its ``pip install``
lines and of the project files it installs from (``-r F``, ``poetry install``, ``pip install -e .``), as this run
leaves them. When the requirements the context installs after the run (``transformers>=5.24``) need a Python
(``REQUIRES_PYTHON`` in ``codemods/_tables/stock_floors_data.py``, from the wheels' metadata) that the declared one
is below, pip finds no release there: the declaration gets a ``todo`` naming the floor and the package. The check
reads the final requirements, so a second run reports the same and changes nothing.
"""

from __future__ import annotations

import re
from typing import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from codemods._tables.stock_floors_data import REQUIRES_PYTHON, TARGET_VERSIONS
from codemods.deps import _plan as plan


def stack_floor(specs: Iterable[str]) -> tuple[Version, str] | None:
    """(the highest Python floor, ``"transformers 5.24.0"``) of the requirement specifiers that admit only releases
    from the target version on (``transformers>=5.24``: the migrated stack); None when none does."""
    found: list[tuple[Version, str]] = []
    for text in specs:
        parsed = plan.parse(text)
        if parsed is None or parsed.url or parsed.name not in REQUIRES_PYTHON or parsed.name not in TARGET_VERSIONS:
            continue
        try:
            target = Version(TARGET_VERSIONS[parsed.name])
            lower = [Version(spec.version.replace(".*", "")) for spec in SpecifierSet(parsed.spec)
                     if spec.operator in {">=", ">", "==", "~=", "==="}]
            floor = Version(re.sub(r"^>=\s*", "", REQUIRES_PYTHON[parsed.name]).split(",")[0])
        except (InvalidSpecifier, InvalidVersion):
            continue
        if lower and max(lower) >= target:
            found.append((floor, f"{parsed.name} {TARGET_VERSIONS[parsed.name]}"))
    return max(found) if found else None


def _shown(floor: Version) -> str:
    return f"{floor.major}.{floor.minor}"


def exact_below(declared: str, floor: Version) -> bool:
    """A literal interpreter version (``3.10``, ``3.9.18``) below ``floor``; False for anything else (``3.x``,
    an expression, ``pypy3.9``)."""
    if not re.fullmatch(r"3\.\d+(?:\.\d+)?", declared):
        return False
    return Version(declared) < floor


def poetry_to_pep440(constraint: str) -> str | None:
    """Poetry's ``python`` constraint as a PEP 440 specifier set (``^3.8`` -> ``>=3.8,<4.0``); None if unknown."""
    if constraint.strip() == "*":
        return ""
    parts = []
    for part in (piece.strip() for piece in constraint.split(",")):
        if re.fullmatch(r"\^\s*\d+(?:\.\d+)*", part):  # the first non-zero component may not change
            numbers = [int(number) for number in part[1:].strip().split(".")]
            first = next((index for index, number in enumerate(numbers) if number), len(numbers) - 1)
            upper = [*numbers[:first], numbers[first] + 1]
            parts += [f">={part[1:].strip()}", "<" + ".".join(map(str, upper + [0] * (len(upper) < 2)))]
        elif re.fullmatch(r"~\s*\d+(?:\.\d+)*", part):  # ~3.10 and ~3.10.2: below 3.11; ~3: below 4
            numbers = [int(number) for number in part[1:].strip().split(".")]
            upper = [numbers[0] + 1] if len(numbers) == 1 else [numbers[0], numbers[1] + 1]
            parts += [f">={part[1:].strip()}", "<" + ".".join(map(str, upper + [0] * (len(upper) < 2)))]
        elif re.fullmatch(r"\d+(?:\.\d+)*(?:\.\*)?", part):
            parts.append(f"=={part}")
        elif part:
            parts.append(part)
    try:
        return str(SpecifierSet(",".join(parts)))
    except InvalidSpecifier:
        return None


def range_below(spec: str, floor: Version) -> tuple[bool, bool] | None:
    """(the range admits a Python below ``floor``, it admits one from ``floor`` on); None when it is not a
    specifier set."""
    try:
        specifiers = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    below = any(specifiers.contains(Version(f"3.{minor}.{micro}")) for minor in range(floor.minor)
                for micro in (0, 99)) if floor.major == 3 else False
    above = any(specifiers.contains(Version(f"3.{minor}.{micro}")) for minor in range(floor.minor, floor.minor + 10)
                for micro in (0, 99))
    return below, above


def exact_todo(declared: str, where: str, found: tuple[Version, str]) -> str:
    floor, package = found
    return (f"Python {declared} is below the Python>={_shown(floor)} that {package} requires, which {where} installs "
            f"after the migration: pip finds no {package.split()[0]} release for Python {declared}; use Python "
            f"{_shown(floor)} or later here")


def range_todo(key: str, spec: str, found: tuple[Version, str], above: bool) -> str:
    floor, package = found
    what = (f"excludes every Python it supports: allow >={_shown(floor)}" if not above else
            f"admits Pythons below {_shown(floor)}, where it cannot be installed: raise its lower bound to "
            f">={_shown(floor)}")
    return (f"{key} {spec!r}: {package}, which these dependencies install after the migration, requires "
            f"Python>={_shown(floor)}; the range {what}")
