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

#: optimum-neuron load keywords that changed how the compiled model ran - its parallelism, its shapes or its
#: batching - and that a stock call cannot take: dropped, each with a ``todo`` saying what it did and what to do
#: (never in the ``fixed`` "dropped export/compiler-only arguments" list, ``InferenceRule.sort_dropped``), except
#: for the literal values that change nothing (key -> (those values, what it did and what to do))
BEHAVIOUR_ARGS: dict[str, tuple[tuple[object, ...], str]] = {
    "tensor_parallel_size": ((1,), "optimum sharded the compiled model over that many NeuronCores (tensor "
                                   "parallelism); the migrated model loads whole on one device: to shard it again, "
                                   "launch with torchrun --nproc_per_node <N> and pass "
                                   "distributed_config=DistributedConfig(tp_size=<N>) (a model with a transformers "
                                   "TP plan; no device_map), or spread its layers with device_map"),
    "data_parallel_mode": (("none",), "optimum loaded the compiled model twice, on two NeuronCores, and split each "
                                      "batch between them; the migrated model is one replica on one device: for the "
                                      "same throughput run one process per core (torchrun --nproc_per_node 2, each "
                                      "process on its own core) and split the inputs by rank"),
    "dynamic_batch_size": ((False,), "optimum ran any batch size on the compiled graph (it split or padded the batch "
                                     "to the compiled batch size); there is no stock equivalent (each new batch size "
                                     "compiles again): keep one batch size"),
    "continuous_batching": ((False,), "optimum served concurrent requests through the compiled model with "
                                      "continuous batching (up to its batch_size sequences at once, a new prompt "
                                      "joining the running batch as soon as a sequence finished); stock generate() "
                                      "runs one static batch at a time: to serve concurrent requests use transformers' "
                                      "continuous batching (model.generate_batch(<token-id lists>) for a batch of "
                                      "prompts, model.init_continuous_batching() for a serving loop; its Neuron "
                                      "behaviour is not verified) or vLLM with the Neuron plugin (vllm serve "
                                      "--max-num-seqs <batch_size>)"),
    "start_rank_id": ((0,), "optimum placed the model on the NeuronCores from this one on; the migrated model loads "
                            "on the device device_map names: pick the cores with NEURON_RT_VISIBLE_CORES (one "
                            "process per core group)"),
    "local_ranks_size": ((), "optimum ran the model's tensor-parallel ranks on that many local NeuronCores; the "
                             "migrated model loads on one device: for tensor parallelism launch with torchrun "
                             "--nproc_per_node <N> and pass distributed_config=DistributedConfig(tp_size=<N>)"),
    "n_positions": ((), "optimum compiled for at most that many positions (prompt + generated tokens): set "
                        "max_cache_len to it in generation_config.update (static cache) and keep prompts + "
                        "max_new_tokens within it"),
    "max_context_length": ((), "optimum compiled the prompt (context) graph for prompts of at most that many "
                               "tokens: truncate prompts to it (tokenizer(..., truncation=True, max_length=<N>)) and "
                               "keep max_cache_len above it"),
    "capacity_factor": ((), "optimum's MoE expert capacity (tokens routed to a full expert were dropped); a stock "
                            "model routes every token: outputs may differ"),
    "speculation_length": ((0,), "optimum decoded speculatively with that many draft tokens; stock generate() "
                                 "decodes one token at a time unless you pass assistant_model=<draft model> "
                                 "(the outputs do not change, the speed does)"),
    "neuron_config": ((None,), "a compiled Neuron configuration (its batch size, sequence length, dtype and "
                               "tensor-parallel degree) has no stock equivalent: take them into the input padding / "
                               "max_cache_len, dtype= and DistributedConfig(tp_size=...) by hand"),
}
