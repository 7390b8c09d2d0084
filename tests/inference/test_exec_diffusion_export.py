"""Execution proof for NM140 across files (rt3B #2/#8): an export script that only saves a Neuron pipeline and a
loader in another file that reads the saved folder back and calls it. Both are migrated with the project's facts,
then run on CPU with a tiny Stable Diffusion pipeline: the export moves nothing to a device and compiles nothing,
the loader gets the export's dtype, so every component of the reloaded pipeline has the same dtype (without it,
diffusers loads a float32 unet beside the bf16 text encoder and the first call raises)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.testing import apply_rules
from tests.inference import tiny
from tests.inference.test_exec_inference import migrate, run, values

pytestmark = pytest.mark.execution

EXPORT = '''
from optimum.neuron import NeuronStableDiffusionPipeline as SDPipe

MODEL = {model!r}
pipe = SDPipe.from_pretrained(MODEL, export=True, batch_size=1, height=16, width=16, auto_cast="matmul",
                              auto_cast_type="bf16")
pipe.save_pretrained("compiled_sd")
'''

LOADER = '''
import torch
from optimum.neuron import NeuronStableDiffusionPipeline


def load(path):
    return NeuronStableDiffusionPipeline.from_pretrained(path)


pipe = load("compiled_sd")
image = pipe("a cat", num_inference_steps=2, height=16, width=16, output_type="np",
             generator=torch.Generator("cpu").manual_seed(0)).images
print("RESULT shape=%s" % list(image.shape))
print("RESULT dtypes=%s" % sorted({{str(pipe.unet.dtype), str(pipe.text_encoder.dtype), str(pipe.vae.dtype)}}))
'''


def test_export_only_script_and_the_loader_of_its_folder(tmp_path: Path) -> None:
    model = tiny.stable_diffusion(tmp_path / "sd")
    export, loader = EXPORT.format(model=str(model)), LOADER.format()
    project = {"compile_sd.py": export, "imagine.py": loader}
    migrated_export = migrate(export, project=project)
    assert "from_pretrained(MODEL, dtype=torch.bfloat16)\n" in migrated_export  # no .to(device)
    assert "compile_repeated_blocks" not in migrated_export
    migrated_loader = migrate(loader, project=project)
    assert "from_pretrained(path, dtype=torch.bfloat16).to(" in migrated_loader
    run(migrated_export, tmp_path)
    assert (tmp_path / "compiled_sd" / "unet").is_dir()
    result = values(run(migrated_loader, tmp_path))
    assert result["shape"] == "[1, 16, 16, 3]"
    assert result["dtypes"] == "['torch.bfloat16']"


NAMED_LOADER = '''
import torch
from optimum.neuron import NeuronStableDiffusionPipeline as SDPipe

COMPILED_DIR = "compiled_sd"
pipe = SDPipe.from_pretrained(COMPILED_DIR)
image = pipe("a cat", num_inference_steps=2, height=16, width=16, output_type="np",
             generator=torch.Generator("cpu").manual_seed(0)).images
print("RESULT shape=%s" % list(image.shape))
'''


def test_a_load_of_the_folder_an_export_saves_migrates_and_runs_and_one_without_stays(tmp_path: Path) -> None:
    """The load names the folder the export saves: both migrate and run. Without the export in the project the
    same load stays on optimum-neuron (diffusers cannot load a folder of NEFFs)."""
    model = tiny.stable_diffusion(tmp_path / "sd")
    export = EXPORT.format(model=str(model))
    project = {"compile_sd.py": export, "imagine.py": NAMED_LOADER}
    migrated_export, migrated_loader = migrate(export, project=project), migrate(NAMED_LOADER, project=project)
    assert "from diffusers import StableDiffusionPipeline as SDPipe" in migrated_loader
    run(migrated_export, tmp_path)
    assert values(run(migrated_loader, tmp_path))["shape"] == "[1, 16, 16, 3]"
    alone = apply_rules(NAMED_LOADER, select=["NM1"], path="imagine.py", project={"imagine.py": NAMED_LOADER}).text
    assert "from optimum.neuron import NeuronStableDiffusionPipeline as SDPipe" in alone
    assert "pipe = SDPipe.from_pretrained(COMPILED_DIR)\n" in alone


SWITCHED_EXPORT = '''
import argparse

import torch
from optimum.neuron import NeuronStableDiffusionPipeline

ap = argparse.ArgumentParser()
ap.add_argument("--model_id")
ap.add_argument("--auto_cast", default="matmul", choices=["none", "matmul", "all"])
ap.add_argument("--auto_cast_type", default="bf16")
args = ap.parse_args()
pipe = NeuronStableDiffusionPipeline.from_pretrained(args.model_id, export=True, batch_size=1, height=16, width=16,
                                                     auto_cast=args.auto_cast, auto_cast_type=args.auto_cast_type)
pipe.save_pretrained("compiled_sd")
print("RESULT dtypes=%s" % sorted({str(pipe.unet.dtype), str(pipe.text_encoder.dtype), str(pipe.vae.dtype)}))
'''


@pytest.mark.parametrize(("switch", "expected"), [("none", "['torch.float32']"), ("matmul", "['torch.bfloat16']")])
def test_an_auto_cast_given_at_run_time_still_switches_the_cast_off(tmp_path: Path, switch: str, expected: str) -> None:
    """``--auto_cast none`` compiled without casting (float32) whatever ``--auto_cast_type`` said (rt6K K2): the
    migrated load reads both flags when the script runs, so the saved pipeline is float32 there and bf16 with the
    default matmul cast."""
    model = tiny.stable_diffusion(tmp_path / "sd")
    migrated = migrate(SWITCHED_EXPORT, project={"compile_sd.py": SWITCHED_EXPORT})
    assert 'args.auto_cast in (None, "none")' in migrated
    script = tmp_path / "migrated.py"
    script.write_text(migrated)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, str(script), "--model_id", str(model), "--auto_cast", switch,
                           "--auto_cast_type", "bf16"], capture_output=True, text=True, timeout=240, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert values(proc.stdout)["dtypes"] == expected
