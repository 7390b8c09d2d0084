"""The shipped example project, migrated by the CLI, then RUN on CPU: every entry point does its job
(issue 18 item 4).

One migrated copy (``migrated``) is shared by the module; each entry point has its tests:

* train_xla.py: docs/rules-xla.md promises that the migrated torch_xla loop runs unchanged as one process (no
  torchrun environment at all) and under ``torchrun``;
* run_train.sh keeps ONE training run, and train.py, launched with that line's flags, trains 2 steps with a real
  loss on a tiny llama;
* infer.py generates under torchrun with the tensor-parallel degree the migration kept.

The Hugging Face entry points use a tiny llama built from a config (``tiny_assets``: model and tokenizer in one
folder, a dolly-like JSON-lines dataset), offline, through the knobs the example itself has (``--model_id``,
``MODEL_ID``, the launcher's variables). To add an entry point: a test that takes ``migrated`` and runs it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from migrate.cli import main
from tests.tiny import save_llama, word_tokenizer
from tests.torchrun_exit import assert_ok_or_teardown_abort

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "legacy-project"
WORDS = "the a cat dog sat ran on mat log fast slow red blue big small and then what is trainium".split()
#: The migrated scripts keep torch_compile (what runs on Neuron); on this CPU the runner disables dynamo so that
#: torch.compile returns the eager module instead of spending minutes in inductor.
RUNNER = """
import runpy, sys
import torch._dynamo
torch._dynamo.config.disable = True
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
"""
LAUNCH_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("example-runs") / "legacy-project"
    shutil.copytree(EXAMPLE, target)
    result = CliRunner().invoke(main, [str(target), "--force"])
    assert result.exit_code == 0, result.output
    return target


def _plain_env() -> dict[str, str]:
    """The user's shell: no launcher variables."""
    env = {key: value for key, value in os.environ.items() if key not in LAUNCH_VARIABLES}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _check_checkpoint(folder: Path) -> None:
    state = torch.load(folder / "model.pt")
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    model.load_state_dict(state)


@pytest.mark.execution
def test_migrated_xla_loop_runs_as_one_process(migrated: Path, tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, str(migrated / "train_xla.py")], cwd=tmp_path, env=_plain_env(),
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "step 0 loss" in completed.stdout and "step 4 loss" in completed.stdout
    _check_checkpoint(tmp_path)


@pytest.mark.execution
def test_migrated_xla_loop_runs_under_torchrun(migrated: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), str(migrated / "train_xla.py")]
    completed = subprocess.run(command, cwd=tmp_path, env=_plain_env(), capture_output=True, text=True, timeout=300)
    assert_ok_or_teardown_abort(completed)
    # 256 samples, batch 32, two ranks: 4 steps each, printed by rank 0 only
    assert completed.stdout.count("step 0 loss") == 1 and "step 4 loss" not in completed.stdout
    _check_checkpoint(tmp_path)


@pytest.fixture(scope="module")
def tiny_assets(tmp_path_factory) -> dict[str, Path]:
    """A 2-layer llama and a WordLevel tokenizer saved in ONE folder (the example loads both from model_id)."""
    root = tmp_path_factory.mktemp("tiny-llama")
    save_llama(root / "model", vocab_size=64, pad_token_id=0, eos_token_id=2, bos_token_id=2)
    word_tokenizer(["[PAD]", "[UNK]", "[EOS]", *WORDS], "[UNK]", pad_token="[PAD]", eos_token="[EOS]") \
        .save_pretrained(root / "model")
    (root / "dolly").mkdir()
    rows = ["the cat sat on the mat", "a dog ran fast", "what is trainium", "the big red dog sat on a log"] * 2
    (root / "dolly" / "train.jsonl").write_text("".join(json.dumps({"instruction": r, "response": r}) + "\n" for r in rows))
    return {"model": root / "model", "dataset": root / "dolly"}


def run(folder: Path, command: list[str], env: dict[str, str] | None = None, timeout: int = 300) -> str:
    """Run ``python SCRIPT ARGS`` or ``torchrun --nproc_per_node N SCRIPT ARGS`` in the migrated folder, offline,
    through ``RUNNER``."""
    runner = folder.parent / "_runner.py"
    runner.write_text(RUNNER)
    if command[0] == "torchrun":
        script = next(i for i, part in enumerate(command) if part.endswith(".py"))  # torchrun's options come before it
        launch = [sys.executable, "-m", "torch.distributed.run", "--master_addr", "127.0.0.1",
                  "--master_port", str(_free_port()), *command[1:script], str(runner), *command[script:]]
    else:
        launch = [sys.executable, str(runner), *command[1:]]
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1", "WANDB_DISABLED": "true", **(env or {})}
    done = subprocess.run(launch, cwd=folder, env=full_env, capture_output=True, text=True, timeout=timeout)
    if command[0] == "torchrun":
        assert_ok_or_teardown_abort(done)
    else:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    return done.stdout + done.stderr


def training_commands(script: str) -> list[list[str]]:
    """The ``torchrun ... train.py ...`` commands of a launcher, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#")))
    return [shlex.split(line) for line in joined.splitlines() if re.search(r"\btorchrun\b.*\btrain\.py\b", line)]


@pytest.mark.execution
def test_launch_script_keeps_one_training_run(migrated) -> None:
    """The neuron_parallel_compile pre-compile pass must disappear, not become a second training run."""
    assert len(training_commands((migrated / "run_train.sh").read_text())) == 1


@pytest.mark.execution
def test_train_runs_two_steps_with_the_launch_line_flags(migrated, tiny_assets) -> None:
    """train.py, launched with the flags of the migrated run_train.sh (its variables set for one CPU process),
    trains 2 steps with a real loss and saves a checkpoint that loads back."""
    source = (migrated / "train.py").read_text()
    assert not re.search(r"^\s*(from|import) optimum\b", source, re.MULTILINE), source
    command = training_commands((migrated / "run_train.sh").read_text())[-1]
    launcher = {"$PROCESSES_PER_NODE": "1", "$TP_DEGREE": "1", "$MAX_STEPS": "2"}
    flags = [launcher.get(word, word) for word in command[command.index("train.py") + 1:]]
    out_dir = migrated / "out"
    cpu_test = ["--model_id", str(tiny_assets["model"]), "--dataset", str(tiny_assets["dataset"]), "--max_length", "16",
                "--output_dir", str(out_dir), "--report_to", "none",
                "--use_cpu", "true"]  # --bf16 on a machine without a bf16 accelerator needs use_cpu (transformers)
    output = run(migrated, ["python", "train.py", *flags, *cpu_test])
    metrics = re.search(r"'train_loss': '?([0-9.eE+-]+|nan)", output)
    assert metrics and float(metrics.group(1)) > 0, output[-3000:]
    assert re.search(r"'epoch': '?2", output) or "2/2" in output, output[-3000:]
    from transformers import AutoModelForCausalLM

    assert AutoModelForCausalLM.from_pretrained(out_dir).config.num_hidden_layers == 2


@pytest.mark.execution
def test_infer_generates_under_torchrun(migrated, tiny_assets) -> None:
    """infer.py kept the example's 2-core tensor parallelism as DistributedConfig(tp_size=2): under torchrun with
    that many processes (gloo on CPU) it loads, saves and generates."""
    source = (migrated / "infer.py").read_text()
    degree = re.search(r"DistributedConfig\(tp_size=(\d+)\)", source)
    assert degree, source
    logs = migrated / "torchrun-logs"
    # each rank's stdout to its own file: on one shared pipe two ranks' prints can land on one line
    output = run(migrated, ["torchrun", "--nproc_per_node", degree.group(1), "--log-dir", str(logs), "--redirects", "1",
                            "infer.py"], env={"MODEL_ID": str(tiny_assets["model"])})
    per_rank = sorted(logs.rglob("stdout.log"))
    assert len(per_rank) == int(degree.group(1)), output[-3000:]
    for stdout in per_rank:  # every rank prints the decoded text
        text = stdout.read_text()
        assert [line for line in text.splitlines() if line.strip() and set(line.split()) <= set(WORDS)], (stdout, text)
    assert (migrated / "llama_neuron" / "config.json").exists()
