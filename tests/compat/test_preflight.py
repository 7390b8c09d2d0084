"""The scan's preflight: a missing runtime dependency stops the scan with one line and exit 2 naming the extra to
install, before any job is planned or any row written. Missing modules are simulated with a meta-path finder that
refuses the import (in the scan process, or only in its workers through a sitecustomize)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit

from compat_matrix import preflight

ROOT = Path(__file__).resolve().parents[2]


def _blocker(module: str, only_in_workers: bool = False) -> str:
    condition = "'NEURON_COMPAT_RESULT_FD' in os.environ and " if only_in_workers else ""
    return f"""import os, sys
class _Refuse:
    def find_spec(self, name, path=None, target=None):
        if {condition}(name == {module!r} or name.startswith({module!r} + '.')):
            raise ImportError('{module} blocked by the test')
        return None
sys.meta_path.insert(0, _Refuse())
"""


def _scan_with(module: str, *argv: str, out: Path) -> subprocess.CompletedProcess:
    code = _blocker(module) + (
        "from compat_matrix.cli import main\n"
        f"main(args=['scan', *{list(argv)!r}, '--out', {str(out)!r}, '--no-progress'], prog_name='neuron-compat')\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def _one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.mark.parametrize("module", ["accelerate", "transformers", "safetensors"])
def test_a_missing_runtime_module_stops_the_scan_before_any_job(tmp_path, module):
    out = tmp_path / "out"
    line = _one_line(_scan_with(module, "--arch", "gpt2", "--device", "cpu", out=out))
    assert f"{module} is not importable" in line and preflight.COMPAT_EXTRA in line
    assert not (out / "results.jsonl").exists()


def test_torch_mlir_is_needed_only_when_lowering_runs(tmp_path):
    line = _one_line(_scan_with("torch_mlir", "--arch", "gpt2", "--device", "cpu", out=tmp_path / "out"))
    assert "torch_mlir is not importable" in line and preflight.LOWERING_EXTRA in line and "--no-lowering" in line
    for kwargs in ("lowering=False, device='cpu'",):
        code = _blocker("torch_mlir") + f"from compat_matrix import preflight\npreflight.check({kwargs})\nprint('ok')"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "ok", done.stderr


def test_a_runtime_the_workers_cannot_import_is_a_harness_error_not_rows(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_blocker("accelerate", only_in_workers=True))
    out = tmp_path / "out"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(site)}
    done = subprocess.run([str(Path(sys.executable).with_name("neuron-compat")), "scan", "--arch", "gpt2", "--mode",
                           "eager", "--device", "cpu", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "scan workers: cannot import" in last and "accelerate" in last and preflight.COMPAT_EXTRA in last and "Traceback" not in done.stderr
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text().strip()


def test_versions_outside_the_supported_range_are_named():
    assert preflight.problem(preflight.Requirement("torch", "torch", "999")).startswith("torch ")
    assert "too old" in preflight.problem(preflight.Requirement("torch", "torch", "999"))
    assert "not supported" in preflight.problem(preflight.Requirement("torch", "torch", None, "1"))
    assert preflight.problem(preflight.Requirement("torch", "torch", "2.0", "99")) is None
    assert preflight.release("2.13.0+cpu") == (2, 13, 0) and preflight.release("5.24.0.dev0") == (5, 24, 0)


def test_the_requirements_are_the_compat_extra_of_pyproject():
    extras = tomlkit.parse((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert sorted(extras["compat"]) == sorted(r.spec() for r in preflight.RUNTIME)
    assert list(extras["lowering"]) == [preflight.LOWERING.spec()]
