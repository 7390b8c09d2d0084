"""NM701: imports the target stock versions do not have; each reported case is run for real to prove
it raises, and the guarded or unknown cases are not reported."""

from __future__ import annotations

import pytest

from tests.verify.helpers import check, outcomes

MISSING = [
    "from transformers.models.llama.modeling_llama import LlamaLinearScalingRotaryEmbedding",
    "from transformers.utils import LLAMA_START_DOCSTRING",
    "import transformers.deepspeed",
    "from transformers.onnx import OnnxConfig",
    "from transformers.models.llama import tokenization_llama_fast",
    "from trl import SFTTrainer, PPOTrainer",
    "import torch.nn.functional as F, torch.xla_backend",
]


@pytest.mark.parametrize("source", MISSING)
def test_missing_import_is_reported(source: str) -> None:
    found = check(source)
    assert [(rule, line) for rule, line, _ in found] == [("NM701", 1)], found
    assert "will raise" in found[0][2] and any(f"{p} " in found[0][2] for p in ("transformers", "trl", "torch"))


PRESENT = [
    "from transformers import AutoModelForCausalLM, TrainingArguments, Trainer",
    "from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding",
    "from transformers.distributed import DistributedConfig",
    "import torch.distributed as dist\nimport torch._dynamo",
    "from torch import nn, optim, compile, set_vital",  # torch's module __getattr__ serves set_vital
    "from transformers import models, generation",  # submodules
    "from trl import SFTConfig, SFTTrainer, TrlParser",
    "from peft import LoraConfig, get_peft_model",
    "from accelerate import Accelerator",
    "from diffusers import DiffusionPipeline",
    # not listed by dir(transformers): its lazy module serves them through the non-Fast class
    "from transformers import MBart50TokenizerFast, LlamaTokenizerFast",
]


@pytest.mark.parametrize("source", PRESENT)
def test_existing_import_is_not_reported(source: str) -> None:
    assert check(source) == []


def test_what_is_reported_raises_and_what_is_not_runs() -> None:
    """The index is right about the real libraries: every reported import fails, every other one works."""
    found = outcomes(MISSING + PRESENT)
    assert all(outcome in ("ImportError", "ModuleNotFoundError") for outcome in found[:len(MISSING)]), found
    assert found[len(MISSING):] == [""] * len(PRESENT)


NOT_REPORTED = [
    # the user's own fallback
    "try:\n    from transformers import LlamaFlashAttention2\nexcept ImportError:\n    LlamaFlashAttention2 = None",
    "try:\n    import transformers.deepspeed\nexcept Exception:\n    pass",
    # a version or availability test decides whether it runs
    "import transformers\nif transformers.__version__ < '5':\n    from transformers import AdamW",
    # not a stock package, relative, star
    "from torch_xla.core import xla_model\nfrom .local import thing\nfrom transformers import *",
    # a private or deep folder the index does not list
    "from torch._inductor.codegen.not_listed import X",
]


@pytest.mark.parametrize("source", NOT_REPORTED)
def test_guarded_and_unknown_imports_are_not_reported(source: str) -> None:
    assert check(source) == []
