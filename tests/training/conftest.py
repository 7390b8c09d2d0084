"""Shared fixtures for the training-family tests: a tiny tokenizer and a tiny llama, built offline."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.tiny import save_llama, word_tokenizer
from tests.torchrun_exit import assert_ok_or_teardown_abort

WORDS = "the a cat dog sat ran on mat log fast slow red blue big small and then".split()


@pytest.fixture(scope="session")
def tiny_assets(tmp_path_factory) -> dict[str, str]:
    """A WordLevel tokenizer wrapped in PreTrainedTokenizerFast and a 2-layer llama, saved to disk."""
    root = tmp_path_factory.mktemp("tiny")
    tokenizer = word_tokenizer(["[PAD]", "[UNK]", "[EOS]", *WORDS], "[UNK]", pad_token="[PAD]", eos_token="[EOS]")
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    tokenizer.save_pretrained(root / "tok")
    save_llama(root / "model", vocab_size=64, pad_token_id=0, eos_token_id=2, bos_token_id=2)
    return {"TOK_DIR": str(root / "tok"), "MODEL_DIR": str(root / "model")}


RUNNER = textwrap.dedent(
    """
    import os, runpy, sys
    if os.environ.get("NM_TEST_DISABLE_DYNAMO") == "1":
        # The migrated script keeps torch_compile=True (what runs on Neuron). On this shared 2-core CPU the
        # test skips the inductor compile: dynamo is disabled, so torch.compile returns the eager module.
        import torch._dynamo
        torch._dynamo.config.disable = True
    script = sys.argv[1]
    sys.argv = sys.argv[1:]  # the script sees its own command line
    runpy.run_path(script, run_name="__main__")
    sys.stdout.flush()  # abort() at a gloo teardown race would not flush the RESULT line
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        # Ranks leave together: one that exits first tears gloo down under its peer (tests/torchrun_exit.py).
        dist.barrier()
        dist.destroy_process_group()
    """
)


def run_script(path: Path, env_extra: dict[str, str], timeout: int = 240, args: tuple[str, ...] = (),
               launcher: tuple[str, ...] = ()) -> dict:
    """Run a migrated script (with command-line ``args``) in a fresh interpreter; it prints one JSON line prefixed
    RESULT=. ``launcher``: ``-m torch.distributed.run --nproc_per_node N`` (torchrun) runs it on N CPU processes."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1", "WANDB_DISABLED": "true",
           "TRL_EXPERIMENTAL_SILENCE": "1", **env_extra}
    runner = path.parent / "_runner.py"
    runner.write_text(RUNNER)
    done = subprocess.run([sys.executable, *launcher, str(runner), str(path), *args], env=env, capture_output=True,
                          text=True, timeout=timeout,
                          cwd=path.parent)
    if launcher:
        assert_ok_or_teardown_abort(done)  # the documented gloo exit race only; each rank's RESULT is still checked
    else:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT=")]
    assert lines, done.stdout[-3000:] + done.stderr[-3000:]
    nproc = launcher[launcher.index("--nproc_per_node") + 1] if "--nproc_per_node" in launcher else "1"
    assert len(lines) >= int(nproc), done.stdout[-3000:]  # every rank reported, not only the one that survived
    return json.loads(lines[-1][len("RESULT="):])


def imported_from(source: str, module: str) -> set[str]:
    """The names ``source`` imports from ``module`` at any depth (``from module import a, b``), however the lines are
    laid out: the import engine joins and sorts what the rules add, so a test asks what is imported, not how."""
    return {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)
            and node.module == module for alias in node.names}
