"""What kind of evidence decided a row, and what a lowering-proxy failure may claim. Pure Python (reports import it).

Evidence levels, strongest first:

``observed``  ran on the target: the neuron device (and, compiled, the neuron backend);
``stand-in``  ran for real elsewhere: eager generate, Dynamo capture, recompiles and parity on cpu/cuda;
``proxy``     decided by a tool that is not TorchNeuron's: upstream torch-mlir's StableHLO lowering (and the op list
              derived from TorchNeuron's sources).

The lowering check is a proxy for TorchNeuron's own torch-mlir pipeline. When upstream torch-mlir cannot legalise an
op that TorchNeuron lists as implemented (``data/torchneuron_aten_ops.txt``; ``aten::histc`` is the common one:
MoE routing), the proxy says nothing about TorchNeuron: the outcome is ``inconclusive`` and the row's verdict is not
lowered. When the op is not in the list, the failure is ``predicted``: the row is ``fail_lowering``, naming the op.
A failure that names no op at all is ``inconclusive`` too (nothing to predict from).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

LEVELS = ("observed", "stand-in", "proxy")

#: ``details.lowering.outcome``: what the lowering proxy says.
LOWERS, INCONCLUSIVE, PREDICTED_FAILURE = "lowers", "inconclusive", "predicted_failure"
LOWERING_OUTCOMES = (LOWERS, INCONCLUSIVE, PREDICTED_FAILURE)


def ran_on(device: str | None) -> str:
    """The level of a job that really ran on ``device``."""
    return "observed" if device == "neuron" else "stand-in"


def row_evidence(device: str | None, status: str) -> str:
    """The level of the evidence behind a row's ``status``: ``fail_lowering`` is the proxy's, the rest ran."""
    return "proxy" if status == "fail_lowering" else ran_on(device)


def listed_ops() -> frozenset[str]:
    """Base names of the ops TorchNeuron implements (``histc``, ``index_select`` ...), from the shipped list."""
    from compat_matrix.checks.op_coverage import supported_ops

    return supported_ops()


def base_name(op: str) -> str | None:
    """``aten::histc.out`` -> ``histc``; ``None`` for an op outside the aten namespace (``torch.runtime.assert``)."""
    if not op.startswith("aten::"):
        return None
    return op[len("aten::") :].split(".", 1)[0]


def classify_lowering(lowering: Mapping[str, Any], listed: Iterable[str] | None = None) -> dict[str, Any] | None:
    """``{"outcome", "unlisted_ops", "listed_ops"}`` for a lowering result; ``None`` when the check did not run."""
    status = lowering.get("status")
    if status == "lowered":
        return {"outcome": LOWERS, "unlisted_ops": [], "listed_ops": []}
    if status != "failed":
        return None
    names = frozenset(listed) if listed is not None else listed_ops()
    failed = [str(op) for op in lowering.get("failed_ops") or []]
    unlisted = [op for op in failed if base_name(op) not in names]
    return {
        "outcome": PREDICTED_FAILURE if unlisted else INCONCLUSIVE,
        "unlisted_ops": unlisted,
        "listed_ops": [op for op in failed if op not in unlisted],
    }


def lowering_outcome(row: Mapping[str, Any]) -> str | None:
    lowering = (row.get("details") or {}).get("lowering")
    return lowering.get("outcome") if isinstance(lowering, Mapping) else None


def architecture_evidence(rows: Iterable[Mapping[str, Any]], verdict: str) -> str:
    """The level behind an architecture's verdict: for ``supported``, the weakest level among its rows (every one
    had to hold); otherwise the strongest level among the rows that pulled the verdict down."""
    ran = [row for row in rows if row.get("evidence") in LEVELS]
    if not ran:
        return "stand-in"
    deciding = ran if verdict == "supported" else [row for row in ran if row["verdict"] != "supported"] or ran
    ranks = sorted(LEVELS.index(row["evidence"]) for row in deciding)
    return LEVELS[ranks[-1] if verdict == "supported" else ranks[0]]
