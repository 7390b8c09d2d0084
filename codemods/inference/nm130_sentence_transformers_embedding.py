"""NM130 sentence-transformers-embedding: ``NeuronSentenceTransformers`` / ``NeuronModelForSentenceTransformers`` -> ``SentenceTransformer``; ``NeuronModelForEmbedding`` -> ``AutoModel``.

What it does:

* ``NeuronSentenceTransformers.from_pretrained(id, export=True, subfolder=, batch_size=, sequence_length=,
  auto_cast=, auto_cast_type=, **input_shapes)`` (0.4.2+) and the older ``NeuronModelForSentenceTransformers``
  (0.0.17-0.4.1) -> ``SentenceTransformer(id, device=<device>, model_kwargs={"dtype": ...})``. ``subfolder``
  is dropped (sentence-transformers loads its own modules), ``cache_dir`` -> ``cache_folder``.
  ``auto_cast="matmul"`` loads float32 with a ``todo`` (optimum's embeddings stayed float32; as NM120).
  After ``model = ...``: ``model.requires_grad_(False)`` (optimum's compiled model ran inference only; ``encode``
  runs under no_grad, a direct forward call of the stock model does not and ``.numpy()`` raises on its outputs;
  ``_inference_only.py``), and the compiled ``sequence_length`` becomes ``model.max_seq_length = <n>`` (same
  truncation as before); the batch size becomes a ``todo`` (``encode(..., batch_size=n)``).
  ``NeuronModelForSentenceTransformers`` was called like a model (``model(**inputs)["sentence_embedding"]``),
  which ``SentenceTransformer`` cannot run (its forward takes one features dict: TypeError). A call of the
  complete shape ``inputs = tokenizer(text, return_tensors="pt"[, padding=, truncation=])`` on the line before
  (or before the ``with`` block it opens), ``out = model(**inputs)``, ``out`` read only as
  ``out.sentence_embedding`` / ``out["sentence_embedding"]``, ``text`` certainly one string (a literal, the
  loop variable over a literal list of strings) or a literal list of strings, becomes ``out =
  model.encode([text] / text, convert_to_tensor=True)`` (the same ``[n, dim]`` tensor), its reads ``out`` and
  the tokenizer line is removed; any other call of the model keeps a ``todo`` and the load's summary is a
  ``todo`` too (not ``fixed``). A load with no call gets the ``todo`` to use ``encode``.
* ``NeuronModelForEmbedding`` (Qwen3-Embedding, 0.4.5) and ``Qwen3NeuronModelForEmbedding`` ->
  ``AutoModel.from_pretrained(id, dtype=..., device_map=<device>)`` (then ``model.requires_grad_(False)``, as
  above: its ``last_hidden_state`` is read directly) with a ``todo`` for last-token pooling
  (or loading the checkpoint with ``SentenceTransformer``); the compiled-folder note as for decoders.
* a load without ``export=True`` (a Neuron-compiled folder, which neither class can load) is rewritten only while
  an export job of the project of its kind may write that folder (``X.from_pretrained(<id>, export=True)`` saved
  with ``save_pretrained``: migrated, it saves a stock folder the migrated load reads), with a ``todo`` to re-run
  it; otherwise the load, its import and the file stay on optimum-neuron with a ``todo`` naming the missing
  link (no export writes the folder, an ``optimum-cli`` export does - its ``--model`` is named -, or the exports
  are held by another kept load) and what to do (load the source checkpoint with ``export=True``, or port the job
  that compiled it) - as NM140 (``ProducedFolderLoads``);
* reads of what the compiled model carried (``model.config.neuron[...]``, ``model.input_shapes[...]``) become
  the exported literal shape, else a todo at the read, as for NM120;
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
    model.requires_grad_(False)
    model.max_seq_length = 128

Safety: needs-review. A reviewer passes the batch size to ``encode``, replaces model-style calls by ``encode``
and, for ``NeuronModelForEmbedding``, writes the pooling.

References:

* https://sbert.net/docs/package_reference/sentence_transformer/SentenceTransformer.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/device-expression.md
"""

from __future__ import annotations

from typing import Sequence, cast

import libcst as cst

from codemods._lib.cst import keyword_arg, parse_expression, source_of, with_commas
from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE
from codemods._tables.inference_symbols import EMBEDDING_CLASSES, SENTENCE_TRANSFORMER_CLASSES, embedding_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import InferenceRule, model_call_sites, padding_note, split_traced
from codemods.inference._compiled_exports import (
    COMPILED_EXPORTS,
    COMPILED_FOLDER_USES,
    MODULE_FOLDERS,
    CompiledFolderLoads,
    ProducedFolderLoads,
    compiled_family,
)
from codemods.inference._inference_only import INFERENCE_ONLY_NOTE, inference_only
from migrate import cstwalk
from migrate.rule import Safety, dotted_name

MOVES = embedding_moves()
ST = {f"{m}.{name}" for name, modules in SENTENCE_TRANSFORMER_CLASSES.items() for m in modules}
OLD_ST = {f"{m}.NeuronModelForSentenceTransformers"
          for m in SENTENCE_TRANSFORMER_CLASSES["NeuronModelForSentenceTransformers"]}
EMBEDDING = {f"{m}.{name}" for name, modules in EMBEDDING_CLASSES.items() for m in modules}
ST_KEEP = frozenset({"revision", "token", "trust_remote_code", "local_files_only", "device"})
#: tokenizer keywords whose effect ``encode`` reproduces (it tokenizes, pads and truncates itself)
TOKENIZE_KEYWORDS = frozenset({"return_tensors", "padding", "truncation"})
OUTPUT_FIELD = "sentence_embedding"


class _Blocks(cst.CSTVisitor):
    """Every statement sequence (module, indented blocks) with the ``for`` loops around it."""

    def __init__(self) -> None:
        self.loops: list[cst.For] = []
        self.blocks: list[tuple[Sequence[cst.BaseStatement], list[cst.For]]] = []
        self.field_reads: dict[str, list[cst.BaseExpression]] = {}  # `x.sentence_embedding` / `x["sentence_embedding"]`

    def visit_Module(self, node: cst.Module) -> None:
        self.blocks.append((node.body, list(self.loops)))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append((node.body, list(self.loops)))

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(node)

    def leave_For(self, node: cst.For) -> None:
        self.loops.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value == OUTPUT_FIELD:
            self.field_reads.setdefault(node.value.value, []).append(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name) and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, cst.SimpleString) \
                and node.slice[0].slice.value.evaluated_value == OUTPUT_FIELD:
            self.field_reads.setdefault(node.value.value, []).append(node)


def _single_assign(statement: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """``name = value`` (one target, one statement on the line)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
        return assign.targets[0].target.value, assign.value
    return None


def _strings(node: cst.BaseExpression | None) -> bool:
    """A list / tuple literal of string literals (at least one)."""
    return isinstance(node, (cst.List, cst.Tuple)) and bool(node.elements) \
        and all(isinstance(e, cst.Element) and isinstance(e.value, cst.SimpleString) for e in node.elements)


class SentenceTransformersEmbedding(ProducedFolderLoads, CompiledFolderLoads, InferenceRule):
    """Neuron sentence-transformers / embedding models -> SentenceTransformer / AutoModel on the device."""

    id = "NM130"
    name = "sentence-transformers-embedding"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = MOVES
    legacy_modules = ("optimum.neuron",)
    compiled_reads = True
    matmul_in_float32 = True  # auto_cast="matmul": float32, the dtype of the embeddings optimum returned
    # which exports save which folders and which compiled folders are loaded (a load no export writes is kept);
    # export commands; folder names; the optimum.neuron files (a kept compiled-folder load keeps the exports, rt5H D1)
    facts = (COMPILED_FOLDER_USES, COMPILED_EXPORTS, MODULE_FOLDERS, OPTIMUM_NEURON_CODE)
    produced_classes = frozenset({*SENTENCE_TRANSFORMER_CLASSES, *EMBEDDING_CLASSES})
    export_words = "Neuron sentence-transformers / embedding export"

    def _family_of(self, name: str) -> str | None:
        return "encoder" if name in EMBEDDING_CLASSES else compiled_family(name)

    def kept_stock_call(self, call: cst.Call, gatherer) -> str | None:
        """A load without export=True of a folder no migrated export of the project may write
        (``kept_unproduced_load``): rewritten, SentenceTransformer / AutoModel would read a folder of NEFFs."""
        return self.kept_unproduced_load(call, gatherer)

    def kept_use_advice(self, attribute: str) -> str:
        if attribute == "from_pretrained":
            return ("load the source checkpoint instead: its id is in the compiled folder (`_name_or_path` in its "
                    "config.json), with export=True and its static shapes (batch_size, sequence_length: the `neuron` "
                    "section of config.json), e.g. <Class>.from_pretrained(<checkpoint id>, export=True, "
                    "batch_size=<B>, sequence_length=<N>) (NM130 then rewrites it); or port the job that compiled "
                    "the folder into this project (<Class>.from_pretrained(<checkpoint id>, export=True, ...) saved "
                    "with save_pretrained(<folder>): NM130 migrates both, and the migrated save writes a stock "
                    "folder this load reads)")
        return super().kept_use_advice(attribute)

    def _st_load(self, call: cst.Call) -> bool:
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" \
            and self.match_class(func.value, MOVES, call) in ST

    def prepare(self, module: cst.Module) -> None:
        """The calls of a rewritten SentenceTransformer (``out = model(**inputs)``): SentenceTransformer.forward
        takes one features dict, so they cannot run as written. The complete shape -- ``inputs = tok(text,
        return_tensors="pt"[, padding=, truncation=])`` on the line before (or before the ``with`` block the
        call opens; ``tok`` a tokenizer loaded once),
        ``inputs`` read nowhere else, ``out`` bound once and read only as ``out.sentence_embedding`` /
        ``out["sentence_embedding"]``, ``text`` a string (literal, or the loop variable over a literal list of
        strings) or a literal list of strings -- becomes ``out = model.encode([text] or text,
        convert_to_tensor=True)`` and its reads ``out``; any other call gets a todo and keeps its load's
        summary a todo."""
        self._encode_calls: dict[int, cst.BaseExpression] = {}  # id(model call) -> the encode call
        self._field_reads: dict[int, str] = {}  # id(out.sentence_embedding) -> out
        self._kept_calls: dict[int, list[cst.Call]] = {}  # id(load) -> its calls that cannot run
        self._called: set[int] = set()  # id(load) of loads with calls
        self._carried_lines: dict[int, Sequence[cst.EmptyLine]] = {}  # statement id -> lines of the removed one above
        sites = model_call_sites(module, self._st_load)
        if not sites:
            return
        blocks = _Blocks()
        cstwalk.visit(module, blocks)
        for site in sites:
            self._called.add(id(site.load))
            if site.call not in self._encode_calls_found(site.call, site.model, blocks):
                self._kept_calls.setdefault(id(site.load), []).append(site.call)
                self.todo_at_call(site.call, "SentenceTransformer.forward takes one features dict, so this call "
                                             "raises TypeError: call model.encode(sentences, convert_to_tensor=True) "
                                             f"instead and read the tensor it returns where `.{OUTPUT_FIELD}` was read")

    def _encode_calls_found(self, call: cst.Call, model: str, blocks: _Blocks) -> list[cst.Call]:
        """``[call]`` when ``call`` has the complete shape (see :meth:`prepare`) and its rewrite is planned."""
        if not (isinstance(call.func, cst.Name) and len(call.args) == 1 and call.args[0].star == "**"
                and isinstance(call.args[0].value, cst.Name)):
            return []
        inputs = call.args[0].value.value
        for body, loops in blocks.blocks:
            for before, following in zip(body, body[1:]):
                statement = following
                if isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock):
                    statement = statement.body.body[0]  # `with torch.no_grad():` around the call
                assigned = _single_assign(statement)
                if assigned is None or assigned[1] is not call:
                    continue
                out = assigned[0]
                tokenized = _single_assign(before)
                if tokenized is None or tokenized[0] != inputs or not isinstance(tokenized[1], cst.Call):
                    return []
                text = self._encode_input(tokenized[1], loops)
                reads = blocks.field_reads.get(out, [])
                if text is None or self.name_count(inputs) != 2 or not reads \
                        or len(self.gathered.assignments.get(out, [])) != 1 or self.name_count(out) != 1 + len(reads):
                    return []
                self._encode_calls[id(call)] = parse_expression(f"{model}.encode({text}, convert_to_tensor=True)")
                self._field_reads.update((id(read), out) for read in reads)
                self.remove_statement(before)
                if isinstance(before, cst.SimpleStatementLine) and before.leading_lines:
                    self._carried_lines[id(following)] = before.leading_lines  # the blank line / comment above stays
                self.fixed(before, f"`{inputs}` only fed {model}(**{inputs}): SentenceTransformer.encode tokenizes "
                                   "itself, the line is removed")
                return [call]
        return []

    def _encode_input(self, tokenize: cst.Call, loops: list[cst.For]) -> str | None:
        """What ``encode`` gets for ``tok(text, ...)``: ``[text]`` for one string, ``text`` for a list of
        strings; None when the tokenizer, its keywords or the type of ``text`` are not certain."""
        owner = tokenize.func
        if not isinstance(owner, cst.Name) or len(self.gathered.assignments.get(owner.value, [])) != 1:
            return None
        loaded = _single_assign(self.gathered.assignments[owner.value][0])
        if loaded is None or not isinstance(loaded[1], cst.Call) \
                or not dotted_name(loaded[1].func).endswith(("Tokenizer.from_pretrained", "TokenizerFast.from_pretrained")):
            return None
        positional = [arg for arg in tokenize.args if arg.keyword is None]
        keywords = {arg.keyword.value: arg.value for arg in tokenize.args if arg.keyword is not None}
        pt = keywords.get("return_tensors")
        if len(positional) != 1 or positional[0].star or not set(keywords) <= TOKENIZE_KEYWORDS \
                or not (isinstance(pt, cst.SimpleString) and pt.evaluated_value == "pt"):
            return None
        text = positional[0].value
        if isinstance(text, cst.SimpleString):
            return f"[{source_of(text)}]"
        if _strings(text):
            return source_of(text)
        if not isinstance(text, cst.Name):
            return None
        if _strings(self._bound_list(text.value)):
            return text.value
        loop = next((f for f in reversed(loops) if isinstance(f.target, cst.Name) and f.target.value == text.value), None)
        if loop is None or len(self.gathered.assignments.get(text.value, [])) != 0:
            return None
        over: cst.BaseExpression | None = loop.iter
        if isinstance(over, cst.Name):
            over = self._bound_list(over.value)
        return f"[{text.value}]" if _strings(over) else None

    def _bound_list(self, name: str) -> cst.BaseExpression | None:
        """The value of ``name`` when it is bound once in the file (``name = <value>``) and never changed."""
        statements = self.gathered.assignments.get(name, [])
        if len(statements) != 1 or any(name in values and values[name] is None for values in self._scopes.values()):
            return None
        assigned = _single_assign(statements[0])
        return assigned[1] if assigned is not None else None

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        carried = self._carried_lines.get(id(original))
        if carried:
            updated = updated.with_changes(leading_lines=[*carried, *updated.leading_lines])
        return super().leave_SimpleStatementLine(original, updated)

    def leave_With(self, original: cst.With, updated: cst.With) -> cst.With:
        carried = self._carried_lines.get(id(original))
        return updated.with_changes(leading_lines=[*carried, *updated.leading_lines]) if carried else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        out = self._field_reads.get(id(original))
        return cst.Name(out) if out is not None else super().leave_Attribute(original, updated)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.BaseExpression) -> cst.BaseExpression:
        out = self._field_reads.get(id(original))
        return cst.Name(out) if out is not None else super().leave_Subscript(original, updated)

    def is_target_call(self, call: cst.Call) -> bool:
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value in ("from_pretrained", "export") \
            and bool(self.match_class(func.value, MOVES, call))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        encode = self._encode_calls.get(id(original))
        if encode is not None:
            self.fixed(original, "SentenceTransformer.forward takes one features dict: the call becomes "
                                 f"`{source_of(encode)}` and its `.{OUTPUT_FIELD}` reads the tensor it returns")
            return encode
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
            if key == "tensor_parallel_size":  # SentenceTransformer(...) has no such argument (TypeError)
                split.dropped.append(key)  # a todo unless it is 1 (sort_dropped)
                continue
            split.args.append(arg)
            notes.append(f"`{key}=` is not an argument this rule knows: check it is valid for SentenceTransformer(...)")
        if "device" not in dict(arguments.keywords):
            split.args.append(keyword_arg("device", self.device()))
        if split.dtype is not None:
            dtype = split.dtype if isinstance(split.dtype, str) else source_of(split.dtype)
            split.args.append(keyword_arg("model_kwargs", f'{{"dtype": {dtype}}}'))
        target = self.assignment_target(original)
        seq = split.shapes.pop("sequence_length", None)
        if target is not None:  # inference-only, as the compiled model was: forward outputs carry no grad
            self.add_after(inference_only(self, original, target))
        else:
            notes.append(INFERENCE_ONLY_NOTE)
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
        kept = self._kept_calls.get(id(original), [])
        if old_api and id(original) not in self._called:
            notes.append("NeuronModelForSentenceTransformers was called like a model "
                         "(model(**inputs)[\"sentence_embedding\"]): call model.encode(sentences, "
                         "convert_to_tensor=True) instead")
        model_arg = arguments.positional[0] if arguments.positional else None
        compiled = self.compiled_load_note(model_arg, split.has_export, split.export)
        if kept:
            lines = ", ".join(source_of(call) for call in kept)
            calls = f"its calls ({lines}) cannot run on SentenceTransformer (todo there)"
            compiled = f"{compiled}; {calls}" if compiled else calls
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
        target = self.assignment_target(original)
        if target is not None:  # inference-only, as the compiled model was: forward outputs carry no grad
            self.add_after(inference_only(self, original, target))
        else:
            notes.append(INFERENCE_ONLY_NOTE)
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
