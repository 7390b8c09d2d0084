"""NM120 traced-model-to-auto-class: ``NeuronModelFor<Task>`` / ``NeuronBert*`` / ``NeuronCLIP*`` / ``NeuronYolos*`` -> stock classes.

What it does:

* imports from ``optimum.neuron`` / ``optimum.neuron.modeling`` / ``optimum.neuron.models[.inference].<model>``
  become the matching ``transformers.AutoModelFor<Task>`` or model class (a table, see
  ``codemods/_tables/inference_symbols.py``; user aliases are kept);
* ``X.from_pretrained(id, export=True, batch_size=, sequence_length=, auto_cast=, auto_cast_type=,
  dynamic_batch_size=, **input_shapes, **compiler_args)`` becomes
  ``AutoModelFor<Task>.from_pretrained(id, dtype=..., device_map=<device>)``. ``auto_cast="matmul"`` (only the
  matmuls inside the compiled graph cast; its outputs - hidden states, embeddings, logits - stayed float32) has
  no stock equivalent: the load stays ``dtype=torch.float32``, so the outputs keep their dtype (``.numpy()``
  raises on bf16), with a ``todo`` offering ``torch.autocast`` or a whole-model ``dtype=`` (the same decision
  and text as NM406's note at an ``--auto_cast matmul`` export and the load of the folder it writes:
  ``codemods/inference/_casting.py``); any other casting ``auto_cast_type`` gives the dtype, with a ``todo``
  that the outputs are in it now; with ``export=True`` and no casting the old model ran in fp32, so
  ``dtype=torch.float32`` is written. A model the file only saves (every other use is
  ``save_pretrained`` / ``push_to_hub``) is not cast by its ``auto_cast_type``: optimum kept the checkpoint's
  weights and cast when it compiled, a stock cast would write lower-precision weights to disk for good, so it
  gets ``dtype=torch.float32`` and a ``todo`` says how the code that runs the saved folder casts
  (``auto_cast="matmul"``: float32 and ``torch.autocast``; else ``dtype=`` at that load). Compiler/export-only
  kwargs are dropped (reported); one that changed how the compiled model ran (``dynamic_batch_size``,
  ``data_parallel_mode``, ``tensor_parallel_size`` other than 1: ``BEHAVIOUR_ARGS``) is dropped with its own
  ``todo``, never listed as dropped-and-fixed.
* after ``model = ...``: ``model.requires_grad_(False)`` (optimum's compiled model ran inference only and its
  outputs never required grad; a stock model's forward outputs do, and ``.numpy()`` / ``np.*`` raise on them;
  not for a model the file only saves, ``_inference_only.py``), and the old ahead-of-time compilation becomes
  ``model.compile(backend="neuron", fullgraph=True, dynamic=False)``, guarded by ``if model.device.type ==
  "neuron":`` in the portable style;
* the static shapes become a ``todo`` with the padding to do by hand (optimum padded inputs to the
  compiled shapes and trimmed outputs; stock does not); where every input of every call of the model comes from
  a tokenizer call that already pads to the compiled length (``padding="max_length", max_length=<sequence_length>,
  truncation=True``), the todo says so and keeps only the batch-size advice (rt8Q-14);
* without ``export=True`` the id names Neuron-compiled artifacts (optimum-neuron 0.4.5 then reads only the
  ``*.neuron`` files of the folder / Hub repo; a plain checkpoint raises FileNotFoundError there), which stock
  classes cannot load (OSError: no model.safetensors): unless the path is certainly a source checkpoint (the
  ``--model`` of an export command of the project, or loaded with ``export=True`` in the file: rewritten with a
  ``todo``) or its source is recovered (below), the file stays on optimum-neuron with a ``todo`` at the load
  naming the missing link and the candidate source (the id a tokenizer in the file loads) - shared with NM121
  (``CompiledFolderLoads.kept_compiled_load``);
* a load without ``export=True`` of a folder that an ``optimum-cli export neuron`` command of the project writes
  (a shell script, a Dockerfile, a Makefile recipe with its ``$(VAR)`` variables; the path a string,
  ``os.environ.get(NAME, "<folder>")``, or such a name bound once here or in a project module it is imported
  from): with one source checkpoint for it, the load reads that checkpoint (complete, float32; the export's static
  shapes become the padding ``todo``; exports of that folder that differ only in ``--auto_cast`` /
  ``--auto_cast_type`` give a ``todo`` naming each one's casting, rt7L L13, and exports that disagree on the
  checkpoint or the shapes keep the load, the reason saying which), and so does a tokenizer / processor / feature-extractor load of the same
  folder in the file (``AutoTokenizer.from_pretrained("out/rerank")``: the export copied its files there, and the
  migrated project no longer writes the folder; shared with NM110, ``CompiledFolderLoads.follow_source``); a path
  an environment variable overrides (``os.environ.get("MODEL_DIR", "<folder>")`` / ``os.getenv``, at the load or
  a name bound to it) keeps the override: ``os.environ.get("MODEL_DIR", "<source id>")`` at the load, with a
  ``todo`` that a deployment setting ``MODEL_DIR`` must now name a stock checkpoint (``source_path``); where the path is only a parameter's default (``def load(path=COMPILED)``,
  a caller may pass another folder) or the commands name different checkpoints, the file stays on optimum-neuron
  with a ``todo`` naming the candidate source id (rewritten, the load raised OSError: no model.safetensors);
* the inputs follow the model to the device (optimum's compiled model took CPU tensors): at each call of the
  model in the file (SageMaker ``predict_fn`` fed by ``model_fn`` included, and where the model leaves the scope
  that loads it: the other methods of a class that stores it on ``self``, the caller a function returns it to,
  a function of the file it is passed to), an input assigned in that scope from ``tokenizer(...,
  return_tensors="pt")`` (or one of its fields) gets ``.to(model.device)``; other inputs get a ``todo``, except a
  ``torch.ones_like(x)``-style tensor of a moved ``x``; a returned model with no call the rule can follow gets a
  ``todo`` at its load. An image / audio model loaded below float32 (``auto_cast_type="bf16"``; optimum took
  float32 features and cast them in its graph) gets its float features cast too: a processor's / feature
  extractor's output or its ``pixel_values`` / ``input_features`` / ``input_values`` gets ``.to(model.device,
  model.dtype)`` (a ``BatchFeature`` casts only its float tensors), a producer the rule cannot tell a ``todo``. Its
  outputs are then on the device too (optimum returned CPU tensors, and ``.numpy()`` / ``np.*`` raise on any other
  device): in that scope a ``.numpy()`` receiver or ``np.*`` argument that is certainly the call's output (the
  call or names bound once to it, through attributes, subscripts and device-keeping tensor methods such as
  ``.float()``) gets ``.cpu()``; one computed from it otherwise (through a function of the file) gets a ``todo``
  there; ``.tolist()`` copies from any device itself;
* reads of what the compiled model carried (``model.config.neuron["static_input_shapes"]["batch_size"]``,
  ``model.input_shapes["sequence_length"]``, ``model.neuron_config.batch_size``) on a variable assigned once
  from the rewritten load become the literal shape of an ``export=True`` load; any other read of them (another
  field, a compiled folder's load, the whole dict) gets a todo at the read: a stock model has none of them
  (AttributeError). Shared with NM130 (``InferenceRule.compiled_reads``);
* a keyword from a dict of Neuron export arguments that no table knows is dropped with a ``todo`` (the stock
  ``from_pretrained`` raises TypeError on it);
* ``num_cores=`` (the NeuronCores optimum compiled and ran the model over) is dropped, with a ``todo`` giving the
  ``torchrun --nproc_per_node <N>`` / ``DistributedConfig(tp_size=<N>)`` route unless it is 1; a keyword the stock
  ``from_pretrained`` or the model config takes (``num_labels=``, ``quantization_config=``, ...) is passed on; a
  keyword that is neither (``fuse_layernorm=True``; kept, the model's ``__init__`` raised TypeError; dropped, what it
  did would be lost unseen) leaves the file on optimum-neuron with a ``todo`` naming it (shared with NM121,
  ``InferenceRule._unsorted_key_loads``, rtB B3);
* ``**NAME`` splats: a dict literal bound once in the file, or a dict of constants bound once in a project
  module it is imported from (``from app.config import SHAPES``), is sorted like inline keywords (the dict
  stays in that module); a splat nothing resolves (``**kwargs``, a dict changed in place) leaves the load,
  its import and the whole file on optimum-neuron with a ``todo`` naming the splat (a stock call would get
  its Neuron keys and raise TypeError), and no default ``dtype`` is guessed beside it;
* a load that compiles the model (``export=True``, or ``<class>.export(...)``) whose result the file saves or
  pushes (``save_pretrained`` / ``push_to_hub``: a compiled folder or Hub repo) keeps the whole file on
  optimum-neuron while another project file still loads Neuron-compiled folders with optimum-neuron after this
  run (a ``Neuron*.from_pretrained`` without a literal ``export=True`` in a file that still imports
  optimum.neuron once migrated; which folder it reads is not linked, so any such load of the same kind counts - a
  decoder, seq2seq, diffusion, sentence-transformers or encoder class, or a class of unknown kind): migrated, this
  file would write ordinary weights that that load rejects ("The specified directory does not contain a neuron
  model"). A ``todo`` at the load names the file to port first, one at each save / push says it is kept
  (shared by the NM1xx load rules, ``InferenceRule._kept_producer_loads``; rt5H D1);
* left alone: ``tensor_parallel_size`` on an encoder is reported (BERT-like models have no TP plan in
  transformers); calls that are not assigned to a name get the compile step and ``requires_grad_(False)`` as
  ``todo`` notes.

Why:

optimum-neuron's traced classes (encoders, vision and audio models) were ``torch_neuronx.trace`` exports:
compiled ahead of time for fixed input shapes, run from CPU tensors, with inputs padded to the compiled shapes
and outputs trimmed by the class. On TorchNeuron the stock transformers class is loaded onto the neuron device
and compiled with ``model.compile(backend="neuron")``; ``dynamic=False`` keeps one graph per input shape, so
keeping the old shapes (by padding, now the caller's job) keeps compilation to one graph.

Before::

    from optimum.neuron import NeuronModelForSequenceClassification

    input_shapes = {"batch_size": 1, "sequence_length": 128}
    model = NeuronModelForSequenceClassification.from_pretrained(MODEL, export=True, **input_shapes)

After (portable device style)::

    import torch
    from transformers import AutoModelForSequenceClassification

    input_shapes = {"batch_size": 1, "sequence_length": 128}
    # neuron-migrate: compiled static shapes batch_size=1, sequence_length=128: inputs are no longer padded ...
    model = AutoModelForSequenceClassification.from_pretrained(MODEL, dtype=torch.float32, device_map=torch.accelerator.current_accelerator() or torch.device("cpu"))
    model.requires_grad_(False)
    if model.device.type == "neuron":
        model.compile(backend="neuron", fullgraph=True, dynamic=False)

Safety: needs-review. Padding to the compiled shapes is now the caller's job: a reviewer applies the padding
``todo`` and checks inputs the rule could not move to the device.

References:

* https://huggingface.co/docs/transformers/model_doc/auto
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/device-expression.md
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib.cst import keyword_arg, parse_expression, source_of, with_commas
from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE
from codemods._tables.inference_arguments import SHAPE_KEYS
from codemods._tables.inference_symbols import traced_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import (
    Arguments,
    InferenceRule,
    SplitArgs,
    dtype_for,
    model_call_sites,
    padding_note,
    traced_load,
)
from codemods.inference._base import _producer_call as producer_call
from codemods.inference._base import _tensor_producer as tensor_producer
from codemods.inference._casting import matmul_note, matmul_only_cast
from codemods.inference._compiled_exports import (
    COMPILED_EXPORTS,
    MODULE_ENV_FOLDERS,
    MODULE_FOLDERS,
    CompiledFolderLoads,
)
from codemods.inference._inference_only import INFERENCE_ONLY_NOTE, inference_only
from codemods.inference._module_dicts import MODULE_DICTS
from migrate.rule import Safety

TRACED = traced_moves()
COMPILE = 'compile(backend="neuron", fullgraph=True, dynamic=False)'


class TracedModelToAutoClass(CompiledFolderLoads, InferenceRule):
    """NeuronModelFor<Task> / NeuronBert* / NeuronCLIP* / NeuronYolos* -> transformers classes on the device, compiled."""

    id = "NM120"
    name = "traced-model-to-auto-class"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = TRACED
    legacy_modules = ("optimum.neuron",)
    places_model = True
    float_inputs = True  # audio / image features: cast with a lower-precision load
    compiled_reads = True  # m.config.neuron[...] / m.input_shapes[...] / m.neuron_config.<f>: literal or todo
    outputs_tensors = True  # numpy reads of its outputs get .cpu() (or a todo) once its inputs are moved
    matmul_in_float32 = True  # auto_cast="matmul": float32, the dtype of the outputs optimum returned

    loads = TRACED
    # **NAME dicts; export commands; folder names; the optimum.neuron files (a kept compiled-folder load elsewhere
    # keeps this file's export, rt5H D1)
    facts = (MODULE_DICTS, COMPILED_EXPORTS, MODULE_FOLDERS, MODULE_ENV_FOLDERS, OPTIMUM_NEURON_CODE)
    opaque_splat_keeps_file = True
    unsorted_keys_keep_file = True  # a keyword no table sorts: the file stays on optimum-neuron

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.is_target_call(original):
            return self.follow_source(original, updated) or updated  # a tokenizer of a folder loaded from its source
        arguments = self.arguments(updated)
        split, notes = traced_load(self, arguments, "tensor_parallel_size: encoder models have no transformers TP "
                                   "plan; run one process per core (torchrun) instead")
        if self.only_saved(original):
            notes = self._saved_uncast(arguments, split, notes)
        note = padding_note(split.shapes, padded=self._inputs_padded(original, split.shapes.get("sequence_length")))
        if note:
            notes.append(self.shapes_at_calls(original, note))
        target = self.assignment_target(original)
        if target is not None:  # inference-only, as the compiled model was: its outputs carry no grad
            self.add_after([*inference_only(self, original, target), *self.on_neuron(target, [f"{target}.{COMPILE}"])])
        else:
            notes.append(f"compile the loaded model on Trainium: model.{COMPILE}")
            notes.append(INFERENCE_ONLY_NOTE)
        model_arg = arguments.positional[0] if arguments.positional else None
        compiled = self.compiled_load_note(model_arg, split.has_export, split.export)
        recovered = self._recovered(original) if compiled is not None else None
        if recovered is not None and model_arg is not None:  # the folder an export of the project writes
            source, script, shapes = recovered
            source_path, override = self.source_path(self._load_path(original), model_arg.value, source)
            split.args = [model_arg.with_changes(value=source_path), *split.args[1:]]
            if override is not None:
                notes.append(override)
            if not any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in split.args):
                self.ctx.add_import("torch")  # float32: the processor's float features need no cast
                split.args.insert(1, keyword_arg("dtype", "torch.float32"))
            compiled = None
            self.fixed(original, f"{source_of(model_arg.value)} is the folder {script} compiles from \"{source}\" "
                                 "(optimum-cli export neuron): the stock load reads that checkpoint, in float32")
            export_shapes = {key: parse_expression(value) for key, value in shapes if key in SHAPE_KEYS}
            export_note = padding_note(export_shapes, padded=self._inputs_padded(
                original, export_shapes.get("sequence_length")))
            if export_note:
                notes.append(self.shapes_at_calls(original, export_note))
            options = dict(shapes)
            cast_to = dtype_for(options.get("auto_cast_type", "bf16"))  # optimum-cli's default --auto_cast_type
            if matmul_only_cast(options.get("auto_cast"), cast_to) and cast_to is not None:
                notes.append(matmul_note(cast_to, f"{script}'s --auto_cast matmul --auto_cast_type "
                                                  f"{options.get('auto_cast_type', 'bf16')}"))
            if (casting := self.casting_note(original, "is float32")):
                notes.append(casting)
        self.report_load(original, split.dropped, notes, "traced Neuron model -> stock transformers class on the "
                                                         "device, compiled with backend=\"neuron\"", compiled)
        return updated.with_changes(args=with_commas(split.args, updated.args))

    def _inputs_padded(self, load: cst.Call, length: cst.BaseExpression | None) -> bool:
        """rt8Q-14: the model ``load`` binds is called in this file, and every input of every such call comes from a
        tokenizer call that already pads to the compiled ``length`` (``padding="max_length", max_length=<length>,
        truncation=True``): the padding advice would tell the user to do what the code does."""
        module = self.ctx.shared.get("module")
        if length is None or not isinstance(module, cst.Module):
            return False
        sites = [site for site in self.ctx.memo("inference.nm120.call-sites",
                                                lambda: model_call_sites(module, self.is_target_call))
                 if any(other is load for other in (site.loads or [site.load]))]
        if not sites:
            return False
        for site in sites:
            if not site.inputs:
                return False
            for value in site.inputs:
                producer = tensor_producer(value, site.scope)
                call = producer_call(cast(cst.Assign, producer.body[0]).value) if producer is not None else None
                if call is None or not _pads_to(call, length, self.literal):
                    return False
        return True

    def kept_stock_call(self, call: cst.Call, gatherer) -> str | None:
        """A load without export=True whose source checkpoint is not certain (``kept_compiled_load``)."""
        return self.kept_compiled_load(call, gatherer)

    def kept_use_advice(self, attribute: str) -> str:
        if attribute == "from_pretrained":
            return ("load the source checkpoint instead (the --model of the optimum-cli export neuron command "
                    "that wrote the folder, or config.json `_name_or_path` in the compiled folder), e.g. "
                    "<Class>.from_pretrained(<checkpoint id>, export=True, <its static shapes>) (NM120 then rewrites "
                    "it to the stock class on the device)")
        return super().kept_use_advice(attribute)

    def _saved_uncast(self, arguments: Arguments, split: SplitArgs, notes: list[str]) -> list[str]:
        """A model the file only saves is not cast by its ``auto_cast_type``: optimum cast at compile time and kept
        the checkpoint's weights, a stock cast here would write lower-precision weights for good (rt3A #7)."""
        keywords = dict(arguments.keywords)
        auto_cast = self.literal(keywords["auto_cast"].value) if "auto_cast" in keywords else None
        cast_type = dtype_for(self.literal(keywords["auto_cast_type"].value)) if "auto_cast_type" in keywords else None
        matmul = matmul_only_cast(auto_cast, cast_type)  # split_traced loaded it float32 already
        if "auto_cast_type" not in keywords or "torch_dtype" in keywords or "dtype" in keywords \
                or split.dtype is None or (split.dtype == "torch.float32" and not matmul):
            return notes
        cast_to = cast_type if matmul and cast_type is not None else \
            split.dtype if isinstance(split.dtype, str) else source_of(split.dtype)
        split.args = [keyword_arg("dtype", "torch.float32") if arg.keyword is not None and arg.keyword.value == "dtype"
                      else arg for arg in split.args]
        kept = [note for note in notes if not note.startswith(('auto_cast="matmul"', "auto_cast_type="))]
        how = (f'auto_cast="matmul" cast only the matmuls, so keep float32 there and wrap its model calls in '
               f"torch.autocast(<model>.device.type, dtype={cast_to})" if auto_cast == "matmul" else
               f"pass dtype={cast_to} to its from_pretrained (a whole-model cast)")
        kept.append(f"auto_cast_type={source_of(keywords['auto_cast_type'].value)} ({cast_to}) is not applied here: "
                    "this file only saves the model, and a cast before save_pretrained would write "
                    f"{cast_to} weights to disk for good (optimum kept the checkpoint's weights and cast when it "
                    "compiled), so the model is saved in float32; the code that loads the saved folder and runs "
                    f"it casts: {how}")
        return kept


def _pads_to(call: cst.Call, length: cst.BaseExpression, literal) -> bool:
    """``tok(..., padding="max_length", max_length=<length>, truncation=True)``: the same length as a literal or as
    the same expression."""
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if any(arg.star for arg in call.args) or not {"padding", "max_length", "truncation"} <= keywords.keys():
        return False
    if literal(keywords["padding"]) != "max_length" or literal(keywords["truncation"]) is not True:
        return False
    given, wanted = literal(keywords["max_length"]), literal(length)
    if isinstance(wanted, int) and not isinstance(wanted, bool):
        return given == wanted and not isinstance(given, bool)
    return "".join(source_of(keywords["max_length"]).split()) == "".join(source_of(length).split())
