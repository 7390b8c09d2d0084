"""NM130 sentence-transformers-embedding: ``NeuronSentenceTransformers`` / ``NeuronModelForSentenceTransformers`` -> ``SentenceTransformer``; ``NeuronModelForEmbedding`` -> ``AutoModel``.

What it does:

* ``NeuronSentenceTransformers.from_pretrained(id, export=True, subfolder=, batch_size=, sequence_length=,
  auto_cast=, auto_cast_type=, **input_shapes)`` (0.4.2+) and the older ``NeuronModelForSentenceTransformers``
  (0.0.17-0.4.1) -> ``SentenceTransformer(id, device=<device>, model_kwargs={"dtype": ...})``. ``subfolder``
  is dropped (sentence-transformers loads its own modules), ``cache_dir`` -> ``cache_folder``.
  After ``model = ...`` the compiled ``sequence_length`` becomes ``model.max_seq_length = <n>`` (same
  truncation as before); the batch size becomes a ``todo`` (``encode(..., batch_size=n)``).
  ``NeuronModelForSentenceTransformers`` was called like a model (``model(**inputs)["sentence_embedding"]``):
  a ``todo`` says to use ``model.encode(...)``.
* ``NeuronModelForEmbedding`` (Qwen3-Embedding, 0.4.5) and ``Qwen3NeuronModelForEmbedding`` ->
  ``AutoModel.from_pretrained(id, dtype=..., device_map=<device>)`` with a ``todo`` for last-token pooling
  (or loading the checkpoint with ``SentenceTransformer``); the compiled-folder note as for decoders.
* limits: sentence-transformers pads each batch to its longest item, so sequence lengths vary (each new length
  compiles once on TorchNeuron); which settings give fixed padding is not verified.

Why:

optimum-neuron compiled the transformer of a sentence-transformers model ahead of time for one batch size and
one sequence length, and wrapped it in its own class. On TorchNeuron the stock ``SentenceTransformer`` runs on
the neuron device and its model compiles just in time; ``max_seq_length`` keeps the old truncation, and the old
batch size goes to ``encode``. optimum's embedding class for decoder-based embedders (Qwen3-Embedding) has no
stock class of its own: the stock ``AutoModel`` gives the hidden states and the pooling is the caller's.

Before::

    from optimum.neuron import NeuronSentenceTransformers

    model = NeuronSentenceTransformers.from_pretrained(MODEL, export=True, batch_size=1, sequence_length=128)

After (portable device style)::

    import torch
    from sentence_transformers import SentenceTransformer

    # neuron-migrate: compiled for batch_size=1: call model.encode(..., batch_size=1) ...
    model = SentenceTransformer(MODEL, device=torch.accelerator.current_accelerator() or torch.device("cpu"), model_kwargs={"dtype": torch.float32})
    model.max_seq_length = 128

Safety: needs-review. A reviewer passes the batch size to ``encode``, replaces model-style calls by ``encode``
and, for ``NeuronModelForEmbedding``, writes the pooling.

References:

* https://sbert.net/docs/package_reference/sentence_transformer/SentenceTransformer.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/device-expression.md
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib.cst import keyword_arg, source_of, with_commas
from codemods._tables.inference_symbols import EMBEDDING_CLASSES, SENTENCE_TRANSFORMER_CLASSES, embedding_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import InferenceRule, padding_note, split_traced
from migrate.rule import Safety

MOVES = embedding_moves()
ST = {f"{m}.{name}" for name, modules in SENTENCE_TRANSFORMER_CLASSES.items() for m in modules}
OLD_ST = {f"{m}.NeuronModelForSentenceTransformers"
          for m in SENTENCE_TRANSFORMER_CLASSES["NeuronModelForSentenceTransformers"]}
EMBEDDING = {f"{m}.{name}" for name, modules in EMBEDDING_CLASSES.items() for m in modules}
ST_KEEP = frozenset({"revision", "token", "trust_remote_code", "local_files_only", "device"})


class SentenceTransformersEmbedding(InferenceRule):
    """Neuron sentence-transformers / embedding models -> SentenceTransformer / AutoModel on the device."""

    id = "NM130"
    name = "sentence-transformers-embedding"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = MOVES
    legacy_modules = ("optimum.neuron",)

    def is_target_call(self, call: cst.Call) -> bool:
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value in ("from_pretrained", "export") \
            and bool(self.match_class(func.value, MOVES, call))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("from_pretrained", "export")):
            return updated
        qualified = self.match_class(func.value, MOVES, original)
        if qualified is None:
            return updated
        if qualified in ST and func.attr.value == "from_pretrained":
            return self._sentence_transformer(original, updated, qualified in OLD_ST)
        if qualified in EMBEDDING:
            return self._embedding(original, updated)
        return updated

    def _sentence_transformer(self, original: cst.Call, updated: cst.Call, old_api: bool) -> cst.BaseExpression:
        arguments = self.arguments(updated)
        split = split_traced(self, arguments, keep=ST_KEEP, default_cast="torch.float32")
        notes = list(split.notes)
        if "subfolder" in split.other:
            split.other.pop("subfolder")
            split.dropped.append("subfolder")
        if "cache_dir" in split.other:
            split.args.append(keyword_arg("cache_folder", split.other.pop("cache_dir").value))
        for key, arg in split.other.items():
            split.args.append(arg)
            notes.append(f"`{key}=` is not an argument this rule knows: check it is valid for SentenceTransformer(...)")
        if "device" not in dict(arguments.keywords):
            split.args.append(keyword_arg("device", self.device()))
        if split.dtype is not None:
            dtype = split.dtype if isinstance(split.dtype, str) else source_of(split.dtype)
            split.args.append(keyword_arg("model_kwargs", f'{{"dtype": {dtype}}}'))
        target = self.assignment_target(original)
        seq = split.shapes.pop("sequence_length", None)
        if seq is not None and target is not None:
            self.add_after([f"{target}.max_seq_length = {source_of(seq)}\n"])
        elif seq is not None:
            notes.append(f"set model.max_seq_length = {source_of(seq)} (the compiled sequence length)")
        batch = split.shapes.pop("batch_size", None)
        if batch is not None:
            notes.append(f"compiled for batch_size={source_of(batch)}: call model.encode(..., "
                         f"batch_size={source_of(batch)}); sentence-transformers pads each batch to its longest item, "
                         "so each new length compiles once")
        note = padding_note(split.shapes)
        if note:
            notes.append(note)
        if old_api:
            notes.append("NeuronModelForSentenceTransformers was called like a model "
                         "(model(**inputs)[\"sentence_embedding\"]): call model.encode(sentences, "
                         "convert_to_tensor=True) instead")
        model_arg = arguments.positional[0] if arguments.positional else None
        compiled = self.compiled_load_note(model_arg, split.has_export, split.export)
        self.report_load(original, split.dropped, notes, "Neuron sentence-transformers model -> "
                                                         "SentenceTransformer(id, device=...)", compiled)
        owner = updated.func.value if isinstance(updated.func, cst.Attribute) else updated.func
        return updated.with_changes(func=owner, args=with_commas(split.args, updated.args))

    def _embedding(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        arguments = self.arguments(updated)
        split = split_traced(self, arguments)
        notes = list(split.notes)
        for key, arg in split.other.items():
            if key in ("tensor_parallel_size", "num_cores"):
                notes.append(f"{key}: use distributed_config=DistributedConfig(tp_size=N) (no device_map) under "
                             "torchrun")
                continue
            split.args.append(arg)
        if split.dtype is not None:
            split.args.append(keyword_arg("dtype", split.dtype))
        split.args.append(keyword_arg("device_map", self.device_map()))
        exporting = cast(cst.Attribute, original.func).attr.value == "export"  # leave_Call checked the Attribute
        # ``export(...)`` compiles a plain checkpoint like ``from_pretrained(..., export=True)``
        model_arg = arguments.positional[0] if arguments.positional else None
        compiled = self.compiled_load_note(model_arg, split.has_export or exporting,
                                           True if exporting else split.export)
        notes.append("NeuronModelForEmbedding returned pooled embeddings: take the last non-padding token of "
                     "outputs.last_hidden_state and L2-normalise it, or load the checkpoint with "
                     "SentenceTransformer(id)")
        self.report_load(original, [], notes, "NeuronModelForEmbedding -> AutoModel on the device", compiled)
        func = (updated.func.with_changes(attr=cst.Name("from_pretrained")) if isinstance(updated.func, cst.Attribute)
                else updated.func)
        return updated.with_changes(func=func, args=with_commas(split.args, updated.args))
