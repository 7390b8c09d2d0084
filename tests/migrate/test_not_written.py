"""A file the run could not write reports none of its rewrites as fixed: they were not made."""

from __future__ import annotations

import subprocess
from pathlib import Path

from migrate.engine import RunOptions, run
from migrate.findings import FileStatus, Severity

LEGACY = "import torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\nxm.mark_step()\n"


def test_a_refused_file_has_no_fixed_findings(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(LEGACY)
    (tmp_path / "requirements.txt").write_text("torch-neuronx\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # train.py is untracked: the guard refuses it
    result = run([tmp_path], RunOptions(write=True))
    (file,) = [f for f in result.files if f.path.endswith("train.py")]
    assert file.status is FileStatus.ERROR and (tmp_path / "train.py").read_text() == LEGACY
    assert not [f for f in file.findings if f.severity is Severity.FIXED]
    assert [f for f in file.findings if f.severity is Severity.TODO and f.message.startswith("not written: ")]
    # the same tree with --force is written, and then the rewrites are fixed
    forced = run([tmp_path], RunOptions(write=True, force=True))
    (file,) = [f for f in forced.files if f.path.endswith("train.py")]
    assert file.status is FileStatus.CHANGED and any(f.severity is Severity.FIXED for f in file.findings)
