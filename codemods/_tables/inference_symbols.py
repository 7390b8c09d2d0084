"""optimum-neuron INFERENCE symbols -> stock Hugging Face names (pure symbol moves, as data).

Hand-written from the optimum-neuron sources of every release 0.0.1-0.4.5 (every module path a public
class, pipeline, availability helper, cache helper or exporter lived at;
https://github.com/huggingface/optimum-neuron/releases). The rules in
``codemods/inference/`` take their ``moves`` from here and do the structural call rewrites themselves.

A value of ``None`` means "no stock equivalent": the import is removed once nothing uses the name, and
the owning rule reports every remaining use as a ``todo``.
"""

from __future__ import annotations

from typing import Mapping

ON = "optimum.neuron"

# --------------------------------------------------------------------------------------- module paths

TRACED_MODULES = (ON, f"{ON}.modeling")
SEQ2SEQ_MODULES = (ON, f"{ON}.modeling_seq2seq")
DECODER_MODULES = (
    ON,
    f"{ON}.modeling",  # gen. 1 (0.0.8-0.1.0)
    f"{ON}.modeling_decoder",  # gen. 2 (0.2.0-0.4.0)
    f"{ON}.models.inference",
    f"{ON}.models.inference.modeling_utils",  # gen. 3 (0.4.1-0.4.5)
)
ARCH_DECODER_MODULES = (f"{ON}.models.inference.auto_models",)
DIFFUSION_MODULES = (ON, f"{ON}.modeling_diffusion")
PIPELINE_MODULES = (ON, f"{ON}.pipelines", f"{ON}.pipelines.transformers", f"{ON}.pipelines.transformers.base")


def _model_specific_modules(model: str) -> tuple[str, ...]:
    return (ON, f"{ON}.models.{model}", f"{ON}.models.inference.{model}", f"{ON}.models.inference.{model}.modeling_{model}")


# ------------------------------------------------------------------------------------- class families

#: traced encoder / vision / audio models (NM120)
TRACED_TASK_CLASSES: dict[str, str] = {
    "NeuronModelForFeatureExtraction": "transformers.AutoModel",
    "NeuronModelForMaskedLM": "transformers.AutoModelForMaskedLM",
    "NeuronModelForQuestionAnswering": "transformers.AutoModelForQuestionAnswering",
    "NeuronModelForSequenceClassification": "transformers.AutoModelForSequenceClassification",
    "NeuronModelForTokenClassification": "transformers.AutoModelForTokenClassification",
    "NeuronModelForMultipleChoice": "transformers.AutoModelForMultipleChoice",
    "NeuronModelForImageClassification": "transformers.AutoModelForImageClassification",
    "NeuronModelForSemanticSegmentation": "transformers.AutoModelForSemanticSegmentation",
    "NeuronModelForObjectDetection": "transformers.AutoModelForObjectDetection",
    "NeuronModelForAudioClassification": "transformers.AutoModelForAudioClassification",
    "NeuronModelForAudioFrameClassification": "transformers.AutoModelForAudioFrameClassification",
    "NeuronModelForCTC": "transformers.AutoModelForCTC",
    "NeuronModelForXVector": "transformers.AutoModelForAudioXVector",
}

#: model-specific traced classes (0.2.0-0.4.5): model folder -> {class: stock class}
MODEL_SPECIFIC_CLASSES: dict[str, dict[str, str]] = {
    "bert": {
        "NeuronBertModel": "transformers.BertModel",
        "NeuronBertForMaskedLM": "transformers.BertForMaskedLM",
        "NeuronBertForQuestionAnswering": "transformers.BertForQuestionAnswering",
        "NeuronBertForSequenceClassification": "transformers.BertForSequenceClassification",
        "NeuronBertForTokenClassification": "transformers.BertForTokenClassification",
        "NeuronBertForMultipleChoice": "transformers.BertForMultipleChoice",
    },
    "clip": {
        "NeuronCLIPModel": "transformers.CLIPModel",
        "NeuronCLIPForImageClassification": "transformers.CLIPForImageClassification",
    },
    "yolos": {"NeuronYolosForObjectDetection": "transformers.YolosForObjectDetection"},
}

#: encoder-decoder models (NM121)
SEQ2SEQ_CLASSES: dict[str, str] = {"NeuronModelForSeq2SeqLM": "transformers.AutoModelForSeq2SeqLM"}
WHISPER_CLASSES: dict[str, str] = {"NeuronWhisperForConditionalGeneration": "transformers.WhisperForConditionalGeneration"}

#: decoder LLMs (NM110); the TRAINING NeuronModelForCausalLM (optimum.neuron.models.training)
#: is a different class and is deliberately absent.
DECODER_CLASSES: dict[str, str] = {"NeuronModelForCausalLM": "transformers.AutoModelForCausalLM"}
ARCH_DECODER_CLASSES: dict[str, str] = {
    name: "transformers.AutoModelForCausalLM"
    for name in (
        "GraniteNeuronModelForCausalLM", "LlamaNeuronModelForCausalLM", "Llama4NeuronModelForCausalLM",
        "MixtralNeuronModelForCausalLM", "Phi3NeuronModelForCausalLM", "Qwen2NeuronModelForCausalLM",
        "Qwen3NeuronModelForCausalLM", "Qwen3MoeNeuronModelForCausalLM", "SmolLM3NeuronModelForCausalLM",
        "GraniteModelForCausalLM", "Phi3ModelForCausalLM", "Qwen2ModelForCausalLM", "LLamaModelForCausalLM",
        "LLama4ModelForCausalLM",
    )
}

#: embedding models (NM130)
SENTENCE_TRANSFORMER_CLASSES: dict[str, tuple[str, ...]] = {
    "NeuronModelForSentenceTransformers": TRACED_MODULES,
    "NeuronSentenceTransformers": (ON, f"{ON}.modeling_sentence_transformers"),
}
EMBEDDING_CLASSES: dict[str, tuple[str, ...]] = {
    "NeuronModelForEmbedding": (ON, f"{ON}.models.inference", f"{ON}.models.inference.modeling_utils"),
    "Qwen3NeuronModelForEmbedding": ARCH_DECODER_MODULES,
}

#: diffusion pipelines (NM140): class -> (diffusers class, component to compile, how)
DIFFUSION_PIPELINES: dict[str, tuple[str, str, str]] = {
    "NeuronStableDiffusionPipeline": ("diffusers.StableDiffusionPipeline", "unet", "repeated"),
    "NeuronStableDiffusionImg2ImgPipeline": ("diffusers.StableDiffusionImg2ImgPipeline", "unet", "repeated"),
    "NeuronStableDiffusionInpaintPipeline": ("diffusers.StableDiffusionInpaintPipeline", "unet", "repeated"),
    "NeuronStableDiffusionInstructPix2PixPipeline": ("diffusers.StableDiffusionInstructPix2PixPipeline", "unet", "repeated"),
    "NeuronLatentConsistencyModelPipeline": ("diffusers.LatentConsistencyModelPipeline", "unet", "repeated"),
    "NeuronStableDiffusionControlNetPipeline": ("diffusers.StableDiffusionControlNetPipeline", "unet", "repeated"),
    "NeuronStableDiffusionXLPipeline": ("diffusers.StableDiffusionXLPipeline", "unet", "repeated"),
    "NeuronStableDiffusionXLImg2ImgPipeline": ("diffusers.StableDiffusionXLImg2ImgPipeline", "unet", "repeated"),
    "NeuronStableDiffusionXLInpaintPipeline": ("diffusers.StableDiffusionXLInpaintPipeline", "unet", "repeated"),
    "NeuronStableDiffusionXLControlNetPipeline": ("diffusers.StableDiffusionXLControlNetPipeline", "unet", "repeated"),
    "NeuronPixArtAlphaPipeline": ("diffusers.PixArtAlphaPipeline", "transformer", "whole"),  # no _repeated_blocks
    "NeuronPixArtSigmaPipeline": ("diffusers.PixArtSigmaPipeline", "transformer", "whole"),
    "NeuronFluxPipeline": ("diffusers.FluxPipeline", "transformer", "repeated"),
    "NeuronFluxKontextPipeline": ("diffusers.FluxKontextPipeline", "transformer", "repeated"),
    "NeuronFluxInpaintPipeline": ("diffusers.FluxInpaintPipeline", "transformer", "repeated"),
}
DIFFUSION_BASES: dict[str, str] = {
    "NeuronStableDiffusionPipelineBase": "diffusers.DiffusionPipeline",
    "NeuronDiffusionPipelineBase": "diffusers.DiffusionPipeline",
}

# ------------------------------------------------------------------------------- availability (NM101)

#: optimum.neuron(.utils) availability checks -> a stock check (qualified name) or a ``find_spec`` module
AVAILABILITY_MODULES = (ON, f"{ON}.utils", f"{ON}.utils.import_utils")
AVAILABILITY_MOVES: dict[str, str] = {
    "is_neuronx_available": "transformers.utils.is_torch_neuron_available",
    "is_torch_neuronx_available": "transformers.utils.is_torch_neuron_available",
    "is_torch_xla_available": "transformers.utils.is_torch_xla_available",
    "is_accelerate_available": "transformers.utils.is_accelerate_available",
}
#: checks whose call becomes ``importlib.util.find_spec(<module>) is not None`` (or False for Inf1)
AVAILABILITY_FIND_SPEC: dict[str, str | None] = {
    "is_neuronx_distributed_available": "neuronx_distributed",
    "is_transformers_neuronx_available": "transformers_neuronx",
    "is_trl_available": "trl",
    "is_neuron_available": None,  # Inf1 torch-neuron: no TorchNeuron path -> False
}

# ------------------------------------------------------------------- internals, generation, exporters

#: base classes and internals with no stock counterpart (NM102): name -> modules it lived in
INTERNALS: dict[str, tuple[str, ...]] = {
    "NeuronBaseModel": (ON, f"{ON}.modeling_base"),
    "NeuronTracedModel": (ON, f"{ON}.modeling_traced"),
    "NeuronModel": (f"{ON}.modeling_base",),
    "NeuronDecoderModel": (ON, f"{ON}.modeling_decoder"),
    "NeuronEncoder": (f"{ON}.modeling_seq2seq",),
    "NeuronDecoder": (f"{ON}.modeling_seq2seq",),
    "NeuronModelForConditionalGeneration": (f"{ON}.modeling_seq2seq",),
    "NeuronConfig": (f"{ON}.configuration_utils", "optimum.exporters.neuron"),
    "NeuronDefaultConfig": ("optimum.exporters.neuron",),
    "NxDNeuronConfig": (f"{ON}.models.inference.nxd.backend.config", f"{ON}.models.inference.backend.config"),
    "NeuronGenerationMixin": (f"{ON}.generation",),
    "GeneralNeuronGenerationMixin": (f"{ON}.generation",),
    "TokenSelector": (f"{ON}.generation",),
    "FusedLogitsWarper": (f"{ON}.generation",),
    "FastTopKLogitsWarper": (f"{ON}.generation",),
}
#: internals whose isinstance()/issubclass() checks map onto a stock base class
INTERNAL_BASES: dict[str, str] = {
    "NeuronBaseModel": "transformers.PreTrainedModel",
    "NeuronTracedModel": "transformers.PreTrainedModel",
    "NeuronModel": "transformers.PreTrainedModel",
    "NeuronDecoderModel": "transformers.PreTrainedModel",
    **DIFFUSION_BASES,
}
#: module prefixes whose every name is an internal (imports reported, uses flagged)
INTERNAL_PREFIXES = (
    f"{ON}.generation",
    f"{ON}.models.inference.backend",
    f"{ON}.models.inference.nxd",
    f"{ON}.pipelines.diffusers",
    f"{ON}.vllm",
)

#: optimum.exporters.neuron: no ahead-of-time export on TorchNeuron (NM104)
EXPORTERS_PREFIX = "optimum.exporters.neuron"
EXPORT_FUNCTIONS = (
    "main_export", "export", "export_models", "validate_model_outputs", "validate_models_outputs",
    "build_stable_diffusion_components_mandatory_shapes", "get_stable_diffusion_models_for_export",
    "get_diffusion_models_for_export", "normalize_input_shapes", "normalize_stable_diffusion_input_shapes",
    "normalize_diffusers_input_shapes", "infer_stable_diffusion_shapes_from_diffusers", "infer_shapes_of_diffusers",
    "get_submodels_for_export_stable_diffusion", "get_submodels_for_export_diffusion",
    "get_submodels_and_neuron_configs", "load_models_and_neuron_configs", "replace_stable_diffusion_submodels",
)

#: Hub compilation cache (NM103)
CACHE_MODULES = (f"{ON}.cache", f"{ON}.utils", f"{ON}.utils.cache_utils", f"{ON}.utils.hub_neuronx_cache",
                 f"{ON}.utils.hub_cache_utils", f"{ON}.cache.hub_cache", f"{ON}.cache.entries", f"{ON}.cache.training")
CACHE_CONTEXT_MANAGERS = ("hub_neuronx_cache",)
CACHE_STATEMENTS = ("synchronize_hub_cache",)
CACHE_QUERIES = ("get_hub_cached_entries", "get_hub_cached_models", "ModelCacheEntry", "SingleModelCacheEntry",
                 "MultiModelCacheEntry", "patch_neuron_cc_wrapper")


# ----------------------------------------------------------------------- optimum runtime arguments

#: load-time arguments of optimum's compiled models and pipelines that place or run the compiled graphs
#: (``device_ids`` in https://github.com/huggingface/optimum-neuron/blob/v0.0.20/optimum/neuron/modeling_diffusion.py):
#: no stock counterpart, so they are dropped with what to do instead
OPTIMUM_RUNTIME_ARGS: dict[str, str] = {
    "device_ids": "optimum loaded the compiled graphs on these NeuronCores (several ids: data parallel, each "
                  "batch - for diffusion the classifier-free-guidance pair - split between them); a stock model/pipeline lives on one device and diffusers ignores "
                  "the argument - for the same throughput run one process per core (torchrun --nproc_per_node "
                  "<len(device_ids)>, each on its own core) and split the requests/prompts by rank",
}


# ------------------------------------------------------------------------------------ moves builders


def qualify(names: Mapping[str, str], modules: tuple[str, ...]) -> dict[str, str]:
    """{old qualified name: new qualified name} for every module a name lived in."""
    return {f"{module}.{name}": target for name, target in names.items() for module in modules}


def traced_moves() -> dict[str, str]:
    moves = qualify(TRACED_TASK_CLASSES, TRACED_MODULES)
    for model, classes in MODEL_SPECIFIC_CLASSES.items():
        moves.update(qualify(classes, _model_specific_modules(model)))
    return moves


def seq2seq_moves() -> dict[str, str]:
    return {**qualify(SEQ2SEQ_CLASSES, SEQ2SEQ_MODULES), **qualify(WHISPER_CLASSES, _model_specific_modules("whisper"))}


def decoder_moves() -> dict[str, str]:
    return {**qualify(DECODER_CLASSES, DECODER_MODULES), **qualify(ARCH_DECODER_CLASSES, ARCH_DECODER_MODULES)}


def embedding_moves() -> dict[str, str]:
    moves: dict[str, str] = {}
    for name, modules in SENTENCE_TRANSFORMER_CLASSES.items():
        moves.update({f"{m}.{name}": "sentence_transformers.SentenceTransformer" for m in modules})
    for name, modules in EMBEDDING_CLASSES.items():
        moves.update({f"{m}.{name}": "transformers.AutoModel" for m in modules})
    return moves


def diffusion_moves() -> dict[str, str]:
    return qualify({name: target for name, (target, _, _) in DIFFUSION_PIPELINES.items()}, DIFFUSION_MODULES)


def pipeline_moves() -> dict[str, str]:
    return {f"{module}.pipeline": "transformers.pipeline" for module in PIPELINE_MODULES}


def availability_moves() -> dict[str, str]:
    return qualify(AVAILABILITY_MOVES, AVAILABILITY_MODULES)


def internals_moves() -> dict[str, None]:
    moves: dict[str, None] = {}
    for name, modules in INTERNALS.items():
        moves.update({f"{m}.{name}": None for m in modules})
    moves.update({f"{m}.{name}": None for name in DIFFUSION_BASES for m in DIFFUSION_MODULES})
    return moves

# ------------------------------------------------------------------------------------------- Inf1

#: what shows a file (or a notebook's code) is an Inf1 flow: torch-neuron tracing, the neuron-cc compiler,
#: optimum's Inf1 extra ``optimum[neuron]`` (``[neuronx]`` is Inf2/Trn1), an ``ml.inf1.*`` instance, or a
#: file named for Inf1 (``compile_inf1.py``, ``ModelInferenceInf1``). Inf1 has no TorchNeuron path.
INF1_MARKERS = {
    "torch-neuron tracing": r"\btorch(?:\.|_)neuron\.trace\s*\(",
    "the neuron-cc compiler": r"(?<![\w-])neuron[-_]cc(?![\w-])",
    "optimum's Inf1 extra optimum[neuron]": r"\boptimum\[neuron\]",
    "an ml.inf1 instance": r"\bml\.inf1\.",
}
INF1_PATH = r"(?<![A-Za-z])[Ii]nf1(?!\d)|(?<=[a-z])Inf1(?!\d)"
