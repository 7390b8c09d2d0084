"""`neuron-compat report|merge|diff|baseline|gate` (placeholder until the reports land)."""

from __future__ import annotations

import click


def report_commands() -> list[click.Command]:
    return []
