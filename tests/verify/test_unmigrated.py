"""A file no rule rewrites but that runs on the requirements the run migrates (a CUDA baseline installed from the
project's requirements, redteam-final 4) is verified against the migrated stack and left as it is; the same file on
a stack of its own is not verified."""

from __future__ import annotations

from pathlib import Path

from migrate.engine import RunOptions, run
from migrate.findings import FileStatus, Severity

BASELINE = '''import torch
from transformers import AutoModelForCausalLM
from trl import ORPOConfig, ORPOTrainer

model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16).to("cuda")
trainer = ORPOTrainer(model=model, args=ORPOConfig(output_dir="out"), tokenizer=None)
'''


def _project(root: Path, own_stack: bool) -> Path:
    (root / "requirements.txt").write_text("optimum-neuron[training]==0.3.0\ntrl==0.11.4\n")
    (root / "train.py").write_text("from optimum.neuron import NeuronORPOConfig, NeuronORPOTrainer\n")
    (root / "baselines").mkdir()
    (root / "baselines" / "train_cuda.py").write_text(BASELINE)
    if own_stack:
        (root / "baselines" / "requirements.txt").write_text("transformers==4.46.3\ntrl==0.11.4\n")
    return root / "baselines" / "train_cuda.py"


def _baseline(root: Path):
    result = run([root], RunOptions(jobs=1, write=False))
    return next(f for f in result.files if f.path.endswith("train_cuda.py"))


def test_a_baseline_on_the_migrated_requirements_gets_the_import_errors(tmp_path: Path) -> None:
    path = _project(tmp_path, own_stack=False)
    baseline = _baseline(tmp_path)
    assert baseline.status is FileStatus.UNCHANGED and path.read_text() == BASELINE
    errors = [f for f in baseline.findings if f.severity is Severity.ERROR]
    assert [(f.rule, f.line) for f in errors] == [("NM701", 3), ("NM701", 3)]
    assert "runs on the requirements this run migrates" in errors[0].message
    assert "`from trl import ORPOConfig` will raise ImportError" in errors[0].message
    assert "use `trl.experimental.orpo.ORPOConfig`" in errors[0].message
    # the transformers-5 rules leave it as it is, with their one info (tokenizer=, torch_dtype= among the places)
    infos = [f for f in baseline.findings if f.severity is Severity.INFO]
    assert len(infos) == 1 and "4 places transformers 5 changes" in infos[0].message


def test_the_baseline_on_a_stack_of_its_own_is_not_verified(tmp_path: Path) -> None:
    _project(tmp_path, own_stack=True)
    baseline = _baseline(tmp_path)
    assert not [f for f in baseline.findings if f.severity is Severity.ERROR]
    assert [f.severity for f in baseline.findings] == [Severity.INFO]
