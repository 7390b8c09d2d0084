"""Generate ``stock_floors_data.py``: what the target stock stack requires of the packages beside it.

A requirements file that moves to ``transformers>=5.24`` cannot keep ``huggingface_hub==0.24`` or
``tokenizers<0.20``: pip finds no solution. The floors come from the real metadata (``Requires-Dist``) of the
versions the TorchNeuron port is tested with (``STOCK_MIN`` in ``codemods/_tables/requirements_data.py``, plus the
``datasets`` that trl needs), read from wheels downloaded AS DATA, or from the installed distributions when no
wheel folder is given. Per target: what it requires of each package and of Python (``Requires-Python``); per
required package: a version known to satisfy every target (the installed one, checked). The rules combine the
specifiers of the targets a file uses; the Python floor tells which old pins have no wheels for the Pythons the
stack runs on (``PYTHON_WHEELS`` in ``codemods/_tables/requirements_data.py``).

Run::

    pip download --no-deps transformers==5.24.0 trl==1.16.0 peft==0.21.2 accelerate==1.15.0 diffusers==0.42.1 \\
        datasets==5.2.0 sentence-transformers==6.2.0 -d /tmp/wheels/stock
    .venv/bin/python -m codemods._tables.gen_stock_floors /tmp/wheels/stock

(no argument: the installed distributions, which is what this project's environment pins).
"""

from __future__ import annotations

import email.message
import email.parser
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import cast

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from codemods._tables.requirements_data import STOCK_MIN
from codemods.deps._plan import combine

#: the target stack: STOCK_MIN's packages, and datasets (trl 1.x requires a 4.x+ datasets, which needs hub 1.x)
TARGETS = (*STOCK_MIN, "datasets")
#: handled by their own decisions (the torch line must match torch-neuronx)
SKIPPED = {"torch", "torchvision", "torchaudio"}
OUT = Path(__file__).with_name("stock_floors_data.py")


def requires_from_wheels(folder: Path) -> dict[str, tuple[str, list[str], str]]:
    """distribution -> (version, Requires-Dist, Requires-Python) read from the METADATA inside each wheel of
    ``folder``."""
    found: dict[str, tuple[str, list[str], str]] = {}
    for wheel in sorted(folder.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            message = email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))
        found[canonicalize_name(message["Name"])] = (message["Version"], message.get_all("Requires-Dist") or [],
                                                     message.get("Requires-Python") or "")
    return found


def requires_installed() -> dict[str, tuple[str, list[str], str]]:
    return {canonicalize_name(name): (metadata.version(name), metadata.requires(name) or [],
                                      _message(name).get("Requires-Python") or "") for name in TARGETS}


def _message(name: str) -> email.message.Message:
    # the PackageMetadata protocol omits the email.message.Message methods the runtime object has
    return cast(email.message.Message, metadata.metadata(name))


def build(requires: dict[str, tuple[str, list[str], str]]) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """(target -> {package: specifier}, package -> a version known to satisfy every target)."""
    missing = [name for name in map(canonicalize_name, TARGETS) if name not in requires]
    if missing:
        raise SystemExit(f"no metadata for {', '.join(missing)}")
    table: dict[str, dict[str, str]] = {}
    for target in map(canonicalize_name, TARGETS):
        version, lines, _ = requires[target]
        needs = table.setdefault(target, {})
        for line in lines:
            requirement = Requirement(line)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue  # an extra's dependency, or one for another platform
            name = canonicalize_name(requirement.name)
            if name in SKIPPED or not requirement.specifier:
                continue
            needs[name] = str(SpecifierSet(",".join(filter(None, [needs.get(name), str(requirement.specifier)]))))
    known: dict[str, str] = {}
    for package in sorted({name for needs in table.values() for name in needs}):
        satisfying = requires[package][0] if package in requires else _installed(package)
        wanted = combine([SpecifierSet(needs[package]) for needs in table.values() if package in needs])
        if satisfying is None or not wanted.contains(satisfying, prereleases=True):
            raise SystemExit(f"{package}: no known version satisfies {wanted} (installed: {satisfying})")
        known[package] = satisfying
    return table, known


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def render(table: dict[str, dict[str, str]], known: dict[str, str], versions: dict[str, str],
           pythons: dict[str, str]) -> str:
    lines = [
        '"""Generated by ``python -m codemods._tables.gen_stock_floors``: do not edit by hand.',
        "",
        "What each package of the target stock stack requires of the packages it depends on (Requires-Dist of the",
        "versions below, extras and other platforms left out), and a version of each that satisfies all of them.",
        '"""',
        "",
        f"TARGET_VERSIONS: dict[str, str] = {versions!r}",
        "",
        "#: target -> its Requires-Python",
        f"REQUIRES_PYTHON: dict[str, str] = {pythons!r}",
        "",
        "#: target -> {required package (canonical name): specifier}",
        "REQUIRES: dict[str, dict[str, str]] = {",
    ]
    for target, needs in table.items():
        lines.append(f"    {target!r}: {{")
        lines.extend(f"        {name!r}: {spec!r}," for name, spec in sorted(needs.items()))
        lines.append("    },")
    lines += ["}", "",
              "#: required package -> a version known to satisfy every target's specifier (the resolved environment)",
              "KNOWN_GOOD: dict[str, str] = {"]
    lines.extend(f"    {name!r}: {version!r}," for name, version in known.items())
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    requires = requires_from_wheels(Path(argv[0])) if argv else requires_installed()
    table, known = build(requires)
    versions = {target: requires[target][0] for target in table}
    pythons = {target: requires[target][2] for target in table if requires[target][2]}
    OUT.write_text(render(table, known, versions, pythons), encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
