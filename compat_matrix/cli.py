"""`neuron-compat`: the command group. Running (`scan`) and rendering (`report`, `merge`, `diff`,
`baseline`, `gate`) live in separate modules so that the rendering side never imports torch."""

from __future__ import annotations

import click

from migrate import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neuron-compat")
def main() -> None:
    """Check which Hugging Face text-generation architectures run on TorchNeuron (or the best local device)."""


def _register() -> None:
    from compat_matrix.report_cli import report_commands
    from compat_matrix.scan_cli import scan_commands

    for command in (*scan_commands(), *report_commands()):
        main.add_command(command)


_register()
