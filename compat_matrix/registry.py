"""The shipped ranked list of text-generation architectures (``data/top100_text_generation.csv``).

The list, its method note (``data/top100_text_generation.method.md``) and its provenance columns ship inside the package
and are read at run time; the scan runs offline.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("data")
TOP_LIST = DATA / "top100_text_generation.csv"
METHOD_NOTE = DATA / "top100_text_generation.method.md"


@dataclass(frozen=True)
class Architecture:
    model_type: str
    rank: int | None
    causal_lm_class: str | None = None
    example_checkpoint: str | None = None
    evidence: str | None = None
    optimum_neuron_045: str | None = None
    notes: str | None = None


class RegistryError(ValueError):
    """Bad architecture selection (unknown name, empty selection)."""


@lru_cache(maxsize=1)
def shipped() -> tuple[Architecture, ...]:
    with TOP_LIST.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return tuple(
        Architecture(
            model_type=row["model_type"],
            rank=int(row["rank"]),
            causal_lm_class=row.get("causal_lm_class") or None,
            example_checkpoint=row.get("example_checkpoint") or None,
            evidence=row.get("evidence") or None,
            optimum_neuron_045=row.get("optimum_neuron_045") or None,
            notes=row.get("notes") or None,
        )
        for row in sorted(rows, key=lambda r: int(r["rank"]))
    )


def rank_of(model_type: str) -> int | None:
    return next((a.rank for a in shipped() if a.model_type == model_type), None)


def causal_lm_types() -> list[str]:
    """Every model type with a causal-LM class in the installed transformers."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)


def select(top: int | None = None, arch: list[str] | None = None, every: bool = False) -> list[Architecture]:
    """Architectures to scan: ``--arch`` names, else ``--all``, else the top ``N`` of the shipped list."""
    by_type = {a.model_type: a for a in shipped()}
    if arch:
        known = set(causal_lm_types())
        unknown = [name for name in arch if name not in known]
        if unknown:
            raise RegistryError(
                f"unknown architecture {', '.join(unknown)} (not a causal-LM model_type of this transformers; "
                "see `neuron-compat scan --list`)"
            )
        seen: dict[str, Architecture] = {}
        for name in arch:
            seen.setdefault(name, by_type.get(name) or Architecture(model_type=name, rank=None))
        return list(seen.values())
    if every:
        ranked = list(shipped())
        listed = {a.model_type for a in ranked}
        known = set(causal_lm_types())
        ranked = [a for a in ranked if a.model_type in known]
        return ranked + [Architecture(model_type=name, rank=None) for name in causal_lm_types() if name not in listed]
    n = 100 if top is None else top
    if n < 1:
        raise RegistryError(f"--top must be at least 1, got {n}")
    return list(shipped()[:n])
