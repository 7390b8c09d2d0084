"""`neuron-compat scan` (placeholder until the scan lands)."""

from __future__ import annotations

import click


@click.command()
def scan() -> None:
    """Run the compatibility matrix (not yet implemented)."""
    raise click.ClickException("scan is not implemented yet")


def scan_commands() -> list[click.Command]:
    return [scan]
