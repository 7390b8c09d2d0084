"""The installed transformers package is TPU torch_xla code with no Neuron usage: a run over it must
change nothing, report nothing, and parse almost nothing (the prefilter and the Neuron-project markers
at work). This is the issue's acceptance check, in-process; the timed version is in benchmarks/."""

from __future__ import annotations

import shutil
from pathlib import Path

import transformers

import migrate.engine
from migrate.engine import RunOptions, run
from migrate.findings import FileStatus


def test_transformers_source_is_left_alone(monkeypatch, tmp_path: Path) -> None:
    # The migrate pass runs in worker processes, where a patched parser would count nothing: what the parent sends
    # them, and whether it reads the project facts (whose readers parse every file holding an anchor), is counted.
    sent: list[str] = []
    facts_passes: list[int] = []
    real_migrate_all, real_facts_all = migrate.engine._migrate_all, migrate.engine._facts_all

    def counting_migrate_all(work, *args):
        sent.extend(candidate.display for candidate, _ in work)
        return real_migrate_all(work, *args)

    def counting_facts_all(items, *args):
        facts_passes.append(len(items))
        return real_facts_all(items, *args)

    monkeypatch.setattr(migrate.engine, "_migrate_all", counting_migrate_all)
    monkeypatch.setattr(migrate.engine, "_facts_all", counting_facts_all)
    # a copy: inside this repository's .venv the package is gitignored, hence never looked at
    tree = tmp_path / "transformers"
    shutil.copytree(Path(transformers.__file__).parent, tree, ignore=shutil.ignore_patterns("__pycache__"))
    result = run([tree], RunOptions(jobs=1, write=False))
    assert len(result.files) > 2500
    assert result.neuron_project is False
    assert [f.path for f in result.files if f.status is not FileStatus.UNCHANGED] == []
    assert [(f.path, finding.rule) for f in result.files for finding in f.findings] == []
    # Triggers match real usage (imports), not mentions in strings. Only the reporting sweep (NM901, "always
    # active", no facts) may wake on a mention such as "optimum-neuron" in a help text: a handful of files, and
    # the facts pass, which would parse some 2,900 files, never runs.
    assert facts_passes == []
    assert len(sent) <= 5, sent
