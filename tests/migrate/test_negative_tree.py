"""The installed transformers package is TPU torch_xla code with no Neuron usage: a run over it must
change nothing, report nothing, and parse almost nothing (the prefilter and the Neuron-project markers
at work). This is the issue's acceptance check, in-process; the timed version is in benchmarks/."""

from __future__ import annotations

import shutil
from pathlib import Path

import libcst as cst
import transformers

import migrate.pyrun
from migrate.engine import RunOptions, run
from migrate.findings import FileStatus


def test_transformers_source_is_left_alone(monkeypatch, tmp_path: Path) -> None:
    parsed: list[str] = []
    real_parse = cst.parse_module

    def counting_parse(source, *args, **kwargs):
        parsed.append(source[:80])
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(migrate.pyrun.cst, "parse_module", counting_parse)
    # a copy: inside this repository's .venv the package is gitignored, hence never looked at
    tree = tmp_path / "transformers"
    shutil.copytree(Path(transformers.__file__).parent, tree, ignore=shutil.ignore_patterns("__pycache__"))
    result = run([tree], RunOptions(jobs=1, write=False))
    assert len(result.files) > 2500
    assert result.neuron_project is False
    assert [f.path for f in result.files if f.status is not FileStatus.UNCHANGED] == []
    assert [(f.path, finding.rule) for f in result.files for finding in f.findings] == []
    # triggers match real usage (imports), not mentions in strings: nothing is even parsed
    assert parsed == [], f"{len(parsed)} files parsed"
