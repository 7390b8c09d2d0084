"""optimum-neuron inference call arguments, sorted by what they become on a stock Hugging Face call (data only).

The inference rules (``codemods/inference/``) and their base read these: which keywords of a Neuron
``from_pretrained`` are static compile shapes, which a stock load keeps, which are export/compiler-only and
dropped, which mark a call as Neuron's, and which keywords of a model call carry tensors. The keyword lists
follow optimum-neuron's ``NeuronTracedModel.from_pretrained`` / ``_export`` signatures and its export
``input_shapes`` (https://huggingface.co/docs/optimum-neuron/guides/export_model).
"""

from __future__ import annotations

#: the dtype a Neuron ``auto_cast_type`` / ``torch_dtype`` string names
DTYPES = {
    "bf16": "torch.bfloat16", "bfloat16": "torch.bfloat16",
    "fp16": "torch.float16", "float16": "torch.float16", "f16": "torch.float16",
    "fp32": "torch.float32", "float32": "torch.float32", "f32": "torch.float32",
}
#: ``torch.<name>`` attributes that already are a dtype expression
TORCH_DTYPE_NAMES = frozenset({"bfloat16", "float16", "float32", "half", "float", "float64"})

#: static shapes fixed at compile time: on a stock model they become input padding
SHAPE_KEYS = (
    "batch_size", "sequence_length", "num_choices", "text_batch_size", "image_batch_size", "height", "width",
    "image_size", "num_channels", "patch_size", "audio_sequence_length", "feature_size", "nb_max_frames",
    "num_beams", "num_images_per_prompt", "max_length",
)
#: keywords of a traced-model load the stock ``from_pretrained`` accepts as they are
TRACED_KEEP = frozenset({
    "token", "revision", "cache_dir", "force_download", "local_files_only", "trust_remote_code", "subfolder",
    "config", "attn_implementation", "output_attentions", "output_hidden_states", "device_map", "variant",
})
#: export / compiler-only keywords of a traced-model load: dropped
TRACED_DROP = frozenset({
    "export", "task", "instance_type", "compiler_workdir", "disable_neuron_cache", "inline_weights_to_neff",
    "optlevel", "disable_fast_relayout", "disable_fallback", "library_name", "file_name", "model_save_dir",
    "neuron_config", "encoder_file_name", "decoder_file_name", "dynamic_batch_size", "auto_cast",
    "compiler_args", "input_shapes", "disable_validation", "atol",
})
#: keywords only a Neuron class takes: a call carrying one is Neuron's even when the name is also bound to the
#: stock class (``try: from optimum.neuron import X as Auto... except ImportError: from transformers import ...``)
NEURON_ONLY = frozenset(SHAPE_KEYS) | {
    "export", "auto_cast", "auto_cast_type", "num_cores", "tensor_parallel_size", "compiler_args", "input_shapes",
    "dynamic_batch_size", "inline_weights_to_neff", "optlevel", "disable_neuron_cache", "compiler_workdir",
}

#: keywords that name the checkpoint: read as the first positional argument
MODEL_KEYWORDS = ("model_id", "model_name_or_path", "pretrained_model_name_or_path")
#: methods that change a dict in place: a dict they are called on is not expanded as a constant ``**splat``
MUTATING_METHODS = frozenset({"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__"})

#: keywords of a model call that carry tensors (``max_new_tokens=8`` and the like do not)
TENSOR_KEYWORDS = frozenset({
    "input_ids", "attention_mask", "token_type_ids", "pixel_values", "input_features", "input_values",
    "inputs_embeds", "decoder_input_ids", "position_ids",
})

#: SageMaker inference handlers: ``model_fn`` returns the model, these receive it as their second parameter
#: (https://sagemaker.readthedocs.io/en/stable/frameworks/pytorch/using_pytorch.html#serve-a-pytorch-model)
HANDLERS = ("predict_fn", "transform_fn")
