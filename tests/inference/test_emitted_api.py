"""Every class, function and keyword the inference rules (NM1xx) emit exists in the installed stock libraries."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from codemods._tables import inference_symbols as table
from migrate.testing import apply_rules

FIXTURES = Path(__file__).parent.parent / "fixtures" / "inference"


def _resolve(qualified: str):
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _targets() -> set[str]:
    moves = {
        **table.traced_moves(), **table.seq2seq_moves(), **table.decoder_moves(), **table.embedding_moves(),
        **table.diffusion_moves(), **table.pipeline_moves(), **table.availability_moves(),
    }
    return {target for target in moves.values() if target} | set(table.INTERNAL_BASES.values())


@pytest.mark.parametrize("qualified", sorted(_targets()))
def test_every_move_target_exists(qualified: str) -> None:
    assert _resolve(qualified) is not None


def _migrated_fixture_outputs() -> list[tuple[str, str]]:
    outputs = []
    for source in sorted(FIXTURES.glob("*/before/*.py")):
        for style in ("portable", "neuron"):
            outputs.append((f"{source.parent.parent.name}:{style}",
                            apply_rules(source.read_text(), select=["NM1"], path=source.name, device_style=style).text))
    return outputs


def test_every_emitted_import_resolves() -> None:
    """Imports in the migrated fixtures that are not optimum-neuron leftovers (reported by todos) must import."""
    checked = set()
    for name, text in _migrated_fixture_outputs():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module and not node.module.startswith(("optimum", "torch_xla")):
                for alias in node.names:
                    if alias.name != "*" and node.module in ("transformers", "transformers.utils", "diffusers", "sentence_transformers"):
                        checked.add(f"{node.module}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "torch" or alias.name.startswith(("torch.", "importlib")) and not alias.name.startswith("torch_xla"):
                        importlib.import_module(alias.name)
    assert "transformers.CompileConfig" in checked and "transformers.DistributedConfig" in checked
    for qualified in sorted(checked):
        assert _resolve(qualified) is not None, qualified


def test_generation_and_compile_configs() -> None:
    from transformers import CompileConfig, DistributedConfig, GenerationConfig

    config = CompileConfig(backend="neuron", dynamic=False, mode="default")
    assert (config.backend, config.dynamic, config.mode) == ("neuron", False, "default")
    assert DistributedConfig(tp_size=2).tp_size == 2
    generation = GenerationConfig()
    unused = generation.update(cache_implementation="static", max_cache_len=64, num_beams=2, compile_config=config)
    assert unused == {}, unused  # update() returns the kwargs it did not know
    generation.update(compile_config=None)
    generation.validate()
    assert generation.cache_implementation == "static" and generation.max_cache_len == 64


def test_transformers_default_compile_config_on_neuron_matches_what_we_emit() -> None:
    """The portable style relies on this: on a neuron device transformers picks the same config."""
    from transformers import modeling_utils

    source = inspect.getsource(modeling_utils.PreTrainedModel._default_compile_config)
    assert '"neuron"' in source and "dynamic=False" in source and 'mode="default"' in source


def test_from_pretrained_keywords() -> None:
    from transformers import modeling_utils

    source = inspect.getsource(modeling_utils.PreTrainedModel.from_pretrained)
    for keyword in ("distributed_config", "device_map", "dtype", "token", "device_mesh"):
        assert keyword in source, keyword
    assert "mutually exclusive" in inspect.getsource(importlib.import_module("transformers.distributed.mixin"))


def test_pipeline_and_sentence_transformers_keywords() -> None:
    import transformers
    from sentence_transformers import SentenceTransformer

    assert {"device", "dtype", "token", "model"} <= set(inspect.signature(transformers.pipeline).parameters)
    st = set(inspect.signature(SentenceTransformer.__init__).parameters)
    assert {"device", "model_kwargs", "cache_folder", "revision", "token", "trust_remote_code", "local_files_only"} <= st
    assert isinstance(getattr(SentenceTransformer, "max_seq_length"), property)


def test_push_to_hub_signature() -> None:
    from transformers import PreTrainedModel

    parameters = inspect.signature(PreTrainedModel.push_to_hub).parameters
    assert "repo_id" in parameters and "token" in parameters and "private" in parameters


def test_diffusers_dtype_and_regional_compile() -> None:
    import diffusers
    import torch
    from diffusers import DiffusionPipeline, FluxTransformer2DModel, PixArtTransformer2DModel, UNet2DConditionModel

    assert 'kwargs.pop("dtype"' in inspect.getsource(DiffusionPipeline.from_pretrained)
    assert UNet2DConditionModel._repeated_blocks and FluxTransformer2DModel._repeated_blocks
    assert not getattr(PixArtTransformer2DModel, "_repeated_blocks", None)  # hence .compile() for PixArt
    assert hasattr(UNet2DConditionModel, "compile_repeated_blocks") and hasattr(torch.nn.Module, "compile")
    for name, (target, component, _) in table.DIFFUSION_PIPELINES.items():
        cls = _resolve(target)
        assert component in inspect.signature(cls.__init__).parameters, (name, component)
    assert hasattr(diffusers, "DiffusionPipeline")


def test_device_expression_and_find_spec() -> None:
    import importlib.util

    import torch

    device = torch.accelerator.current_accelerator() or torch.device("cpu")
    assert isinstance(device, torch.device)
    assert importlib.util.find_spec("transformers") is not None
