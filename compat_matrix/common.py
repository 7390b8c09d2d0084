"""Small helpers every part of neuron-compat shares (the scan worker, the tp harness and its ranks, the row builder,
the reports). Pure Python, no torch: the tp ranks import it before torch, and ``reports/`` imports it to render."""

from __future__ import annotations

from migrate import __version__

#: Longest error text a row carries (``error`` and the reasons built from it).
ERROR_LIMIT = 400


def one_line(value: BaseException | str, limit: int = ERROR_LIMIT, *, first_line: bool = False) -> str:
    """An exception as ``Type: message`` (or a text as it is), on one line, at most ``limit`` characters.

    ``first_line``: of an exception's message keep only the first non-blank line (MLIR and torch errors append
    pages of context)."""
    if isinstance(value, BaseException):
        message = str(value)
        if first_line:
            message = next((line for line in message.splitlines() if line.strip()), "")
        message = " ".join(message.split())
        name = type(value).__name__
        text = f"{name}: {message}" if message else name
    else:
        text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def tool_version() -> str:
    """The version of neuron-migrate (``compat_matrix`` ships in the same distribution as ``migrate``)."""
    return __version__
