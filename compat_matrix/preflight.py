"""What `neuron-compat scan` needs from the environment, checked once before any job is planned.

A missing or too-old dependency would otherwise fail every job the same way (200 rows of ``fail_load`` "requires
accelerate" from a plain ``pip install neuron-migrate``) and the summary would call every architecture unsupported.
That is a problem of the environment, not a verdict on a model: the scan stops with one line and exit status 2 that
names what to install. Nothing here imports torch: presence comes from ``importlib.util.find_spec`` and versions from
the installed distributions' metadata, so the check costs milliseconds.

A dependency that is present but cannot be imported (a broken wheel, a missing shared library) is caught by the
workers themselves: one that cannot import its runtime says so instead of ``ready``, and the runner stops the scan
with that line (``runner.RunnerError``), again before any row is written.
"""

from __future__ import annotations

import glob
import importlib.util
import re
from dataclasses import dataclass
from importlib import metadata

COMPAT_EXTRA = "pip install 'neuron-migrate[compat]'"
LOWERING_EXTRA = "pip install 'neuron-migrate[lowering]'"
#: TorchNeuron installs from AWS's Neuron pip repository, not PyPI (see docs/compat-scan.md).
NEURON_INSTALL = (
    "install TorchNeuron (torch-neuronx) from the Neuron pip repository: "
    "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/"
)


@dataclass(frozen=True)
class Requirement:
    module: str  # import name
    distribution: str  # name in package metadata
    minimum: str | None = None  # inclusive
    below: str | None = None  # exclusive upper bound

    def spec(self) -> str:
        bounds = [f">={self.minimum}" if self.minimum else "", f"<{self.below}" if self.below else ""]
        return self.distribution + ",".join(bound for bound in bounds if bound)


#: The ``compat`` extra of pyproject.toml (tests/compat/test_preflight.py keeps the two equal).
RUNTIME = (
    Requirement("torch", "torch", "2.13"),
    Requirement("transformers", "transformers", "5.24", "6"),
    Requirement("accelerate", "accelerate", "1.15"),
    Requirement("safetensors", "safetensors"),
)
#: The ``lowering`` extra: needed only when compiled mode runs the StableHLO lowering check.
LOWERING = Requirement("torch_mlir", "torch-mlir", "20261001")
NEURON_RUNTIME = Requirement("torch_neuronx", "torch-neuronx")

#: The modules every worker imports before it says ``ready`` (an import error there is the environment's).
WORKER_IMPORTS = tuple(requirement.module for requirement in RUNTIME)


class PreflightError(RuntimeError):
    """The environment cannot run the scan; the message is one line naming the fix."""


def release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string: ``"2.13.0+cpu"`` -> ``(2, 13, 0)``."""
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


def problem(requirement: Requirement) -> str | None:
    """Why ``requirement`` is not met here, or ``None``."""
    try:
        found = importlib.util.find_spec(requirement.module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return f"{requirement.module} is not importable"
    try:
        version = metadata.version(requirement.distribution)
    except metadata.PackageNotFoundError:
        return None  # importable from a source tree: no version to compare
    installed = release(version)
    if requirement.minimum and installed < release(requirement.minimum):
        return f"{requirement.distribution} {version} is too old (needs {requirement.spec()})"
    if requirement.below and installed >= release(requirement.below):
        return f"{requirement.distribution} {version} is not supported (needs {requirement.spec()})"
    return None


def neuron_devices() -> list[str]:
    """Neuron device nodes of this host (a Trainium instance has ``/dev/neuron0`` ...)."""
    return sorted(glob.glob("/dev/neuron[0-9]*"))


def check(*, lowering: bool, device: str) -> None:
    """Raise ``PreflightError`` (one line) when this environment cannot run the scan asked for.

    ``lowering`` is true when compiled mode will run the StableHLO lowering check; ``device`` is the ``--device``
    option (``auto`` included: a Trainium host without TorchNeuron would silently scan on the CPU).
    """
    missing = [text for text in map(problem, RUNTIME) if text]
    if missing:
        raise PreflightError(f"{'; '.join(missing)}: the scan needs them ({COMPAT_EXTRA})")
    if lowering:
        text = problem(LOWERING)
        if text:
            raise PreflightError(
                f"{text}: the StableHLO lowering check needs it ({LOWERING_EXTRA}), or pass --no-lowering"
            )
    if device in ("auto", "neuron"):
        nodes = neuron_devices()
        if (nodes or device == "neuron") and problem(NEURON_RUNTIME):
            where = f"this host has Neuron devices ({nodes[0]} ...)" if nodes else "--device neuron"
            raise PreflightError(f"{where} but torch_neuronx is not importable: {NEURON_INSTALL}, or pass --device cpu")
