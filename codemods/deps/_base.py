"""Shared bits of the dependency rules (not a rule module)."""

from __future__ import annotations

from codemods._lib import requirements as req
from migrate.findings import Severity
from migrate.rule import TextRule
from migrate.textdoc import Line

#: A file is looked at only if it names one of these: a package of the Neuron stack, or a stock package whose
#: old pin cannot stay beside the migrated transformers 5 (those are touched only in a Neuron project).
DEP_TRIGGERS = ("optimum-neuron", "optimum_neuron", "optimum[neuron", "torch-neuronx", "torch_neuronx", "torch-xla",
                "torch_xla", "libneuronxla", "neuronx-cc", "neuronx_cc", "neuronx-distributed", "neuronx_distributed",
                "transformers-neuronx", "transformers_neuronx", "torch-neuron", "torch_neuron", "neuron-cc",
                "transformers", "accelerate", "trl", "peft", "diffusers", "datasets", "huggingface", "tokenizers",
                "sentence-transformers", "sentence_transformers")


class DepsTextRule(TextRule):
    facts = req.FACTS  # what the project's code imports
    def report(self, line: Line, severity: Severity, message: str) -> None:
        (self.fixed if severity is Severity.FIXED else self.todo)(line, message)
