"""rt8Q-04 / rt8Q-05: a launch setting the file itself reads, and one kept for a torch_xla script beside a migrated
one. A note that says to remove a variable looks at the file's reads of it first; a note kept for the script that
stays names what the setting means now for the one this run moved to TorchNeuron."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

DP = ("import torch\nimport torch.distributed as dist\nimport torch_xla.core.xla_model as xm\n"
      "import torch_xla.distributed.xla_backend  # noqa: F401\n\n"
      "dist.init_process_group('xla', init_method='xla://')\ndevice = xm.xla_device()\n"
      "model = torch.nn.Linear(8, 8).to(device)\n")
SPMD = ("import torch\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.spmd as xs\n"
        "import torch_xla.runtime as xr\n\nxr.use_spmd()\nmodel = torch.nn.Linear(8, 8).to(xm.xla_device())\n"
        "xs.mark_sharding(model.weight, xs.Mesh([0, 1], (2, 1)), (0, 1))\n")
CORES = ("#!/bin/bash\nset -e\nexport NEURON_RT_NUM_CORES=${NEURON_RT_NUM_CORES:-2}\n"
         "torchrun --nproc_per_node=$NEURON_RT_NUM_CORES train_dp.py\n")


def _run(text: str, project: dict[str, str], path: str = "launch.sh"):
    return apply_rules(text, FileKind.SHELL, select=["NM4"], path=path, project={path: text, **project})


def _messages(result, rule: str) -> list[str]:
    return [finding.message for finding in result.findings if finding.rule == rule]


def test_a_core_count_read_by_nproc_per_node_is_not_told_to_go() -> None:
    result = _run(CORES, {"train_dp.py": DP})
    (message,) = _messages(result, "NM405")
    assert "launch with torchrun --nproc_per_node <cores> instead" not in message
    assert "`--nproc_per_node=$NEURON_RT_NUM_CORES`" in message and "NUM_CORES=${NEURON_RT_NUM_CORES:-2}" in message
    assert result.text.count("export NEURON_RT_NUM_CORES=") == 1


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_migrated_launcher_still_gives_torchrun_its_count() -> None:
    """Run the migrated launcher with torchrun standing in as a shell function: it still starts 2 processes
    (removing the export, as the old note said, left `--nproc_per_node=` empty: torchrun's ValueError)."""
    text = _run(CORES, {"train_dp.py": DP}).text
    script = text.replace("set -e\n", "set -e\ntorchrun() { echo \"$1\"; }\n", 1)
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "--nproc_per_node=2"


def test_a_removed_variable_that_the_file_reads_stays_with_a_todo() -> None:
    text = ("#!/bin/bash\nexport PJRT_DEVICE=NEURON\necho \"on $PJRT_DEVICE\"\n"
            "torchrun --nproc_per_node=2 train_dp.py\n")
    result = _run(text, {"train_dp.py": DP})
    assert "export PJRT_DEVICE=NEURON" in result.text
    (message,) = _messages(result, "NM404")
    assert "this file reads it itself (`$PJRT_DEVICE`)" in message


def test_a_variable_read_only_by_its_own_settings_goes() -> None:
    text = ("#!/bin/bash\nexport XLA_FLAGS=--xla_dump_to=/tmp/d\n"
            "export XLA_FLAGS=\"$XLA_FLAGS --xla_dump_hlo_as_text\"\n"
            "torchrun --nproc_per_node=2 train_dp.py\n")
    result = _run(text, {"train_dp.py": DP})
    assert "XLA_FLAGS" not in "".join(line for line in result.text.splitlines(keepends=True)
                                      if "neuron-migrate:" not in line)


def test_a_read_in_a_file_sourcing_this_one_keeps_it() -> None:
    env = "export NEURON_FUSE_SOFTMAX=1\n"
    launcher = "#!/bin/bash\nsource ./env.sh\necho ${NEURON_FUSE_SOFTMAX:-0}\ntorchrun --nproc_per_node=2 train_dp.py\n"
    result = apply_rules(env, FileKind.SHELL, select=["NM4"], path="env.sh",
                         project={"env.sh": env, "run.sh": launcher, "train_dp.py": DP})
    (message,) = _messages(result, "NM404")
    assert "run.sh, which sources this file, reads it (`${NEURON_FUSE_SOFTMAX:-0}`)" in message


MIXED = ("#!/bin/bash\nexport XLA_USE_BF16=1\nexport PJRT_DEVICE=NEURON\n"
         "export NEURON_CC_FLAGS=--retry_failed_compilation\nif [ \"$1\" = spmd ]; then\n  python train_spmd.py\n"
         "else\n  torchrun --nproc_per_node=2 train_dp.py\nfi\n")


def test_a_bf16_setting_kept_for_a_torch_xla_script_names_the_migrated_one() -> None:
    result = _run(MIXED, {"train_dp.py": DP, "train_spmd.py": SPMD})
    (bf16,) = _messages(result, "NM403")
    assert "train_spmd.py" in bf16 and "train_dp.py" in bf16 and "fp32 now" in bf16
    assert "only for the commands running train_spmd.py" in bf16
    (device,) = _messages(result, "NM404")
    assert "train_dp.py, which this file runs too, was moved to TorchNeuron by this run and does not read it" in device
    (flags,) = _messages(result, "NM405")
    assert "that review holds for it now" in flags


CARRIES = ('import os\n\nos.environ["XLA_USE_BF16"] = "1"\n\nimport torch\nimport torch_xla.core.xla_model as xm\n'
           "from transformers import AutoModelForCausalLM\n\n\ndef main():\n    device = xm.xla_device()\n"
           "    model = AutoModelForCausalLM.from_pretrained('m')\n    model.to(device)\n    return model\n")


def test_a_migrated_script_that_carries_bf16_itself_is_said_to_keep_it() -> None:
    """NM316 moves this script's model in bf16 (``xla.bf16-model-scripts``): the note says it keeps bf16."""
    result = _run(MIXED.replace("train_dp.py", "train_loop.py"), {"train_loop.py": CARRIES, "train_spmd.py": SPMD})
    (bf16,) = _messages(result, "NM403")
    assert "train_loop.py, which this file runs too, now moves its model to the device in bf16" in bf16
    assert "fp32 now" not in bf16


def test_only_migrated_or_only_kept_scripts_get_no_extra_words() -> None:
    kept_only = MIXED.replace("train_dp.py", "train_spmd.py")
    result = _run(kept_only, {"train_spmd.py": SPMD})
    assert all("moved to TorchNeuron by this run" not in message for message in _messages(result, "NM403"))
    inside = ("#!/bin/bash\nif [ \"$1\" = spmd ]; then\n  export PJRT_DEVICE=NEURON\n  python train_spmd.py\nelse\n"
              "  torchrun --nproc_per_node=2 train_dp.py\nfi\n")
    result = _run(inside, {"train_dp.py": DP, "train_spmd.py": SPMD})
    assert all("moved to TorchNeuron by this run" not in message for message in _messages(result, "NM404"))
