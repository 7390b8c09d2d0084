"""Shared bits of the dependency rules (not a rule module)."""

from __future__ import annotations

from migrate.findings import Severity
from migrate.rule import TextRule
from migrate.textdoc import Line

#: A file is looked at only if it names one of these (the stock pins are bumped only next to them).
DEP_TRIGGERS = ("optimum-neuron", "optimum_neuron", "optimum[neuron", "torch-neuronx", "torch_neuronx", "torch-xla",
                "torch_xla", "libneuronxla", "neuronx-cc", "neuronx_cc", "neuronx-distributed", "neuronx_distributed",
                "transformers-neuronx", "transformers_neuronx", "torch-neuron", "torch_neuron", "neuron-cc")


class DepsTextRule(TextRule):
    def report(self, line: Line, severity: Severity, message: str) -> None:
        (self.fixed if severity is Severity.FIXED else self.todo)(line, message)
