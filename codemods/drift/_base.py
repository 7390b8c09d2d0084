"""The drift family's base: stock-name rules that change only the files the Neuron migration reaches."""

from __future__ import annotations

from pathlib import PurePath

from codemods.drift._reach import FACTS, LEFT_ALONE, file_scope
from migrate.rule import PythonRule, RuleOptions


class DriftRule(PythonRule):
    """A transformers 5 / trl 1.x drift rule. Stock names trigger it: only a project that targets Neuron is ours to
    change (and to parse), and in it only the files its Neuron migration reaches (``codemods/drift/_reach.py``)."""

    scope = "neuron-project"
    facts = FACTS
    #: the info finding for a file the rule leaves alone (``migrate/pipeline.py`` fills it in)
    left_alone = LEFT_ALONE

    @classmethod
    def file_scope(cls, path: PurePath, options: RuleOptions) -> str | None:
        """None when the rule applies to the file at ``path``; else why it leaves the file alone."""
        return file_scope(path, options)
