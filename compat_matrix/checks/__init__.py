"""One module per check of a scan job. Each check raises :class:`CheckFailed` with the row status it stands for, or
returns a plain dict for ``details``; :mod:`compat_matrix.worker` runs them in order and folds them into a row.

* :mod:`.load`        save the tiny model, load it back with ``from_pretrained(device_map=..., dtype=...)``
* :mod:`.generate`    fixed-input forward, static-cache ``generate`` with chunked prefill, cache actually used
* :mod:`.parity`      logits and greedy tokens against the CPU fp32 eager reference
* :mod:`.compile`     ``CompileConfig`` through ``generate``: graphs, graph breaks, recompiles per decode step
* :mod:`.op_coverage` ATen ops run vs TorchNeuron's op list (predicted fallbacks), float64/complex use
* ``lowering``        StableHLO lowering (``checks/lowering.py``, optional, owned by the lowering check)
"""

from __future__ import annotations


class CheckFailed(Exception):
    """A check failed; ``status`` is the row status (``fail_load``, ``fail_generate`` ...)."""

    def __init__(self, status: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.status = status
        self.details = details or {}
