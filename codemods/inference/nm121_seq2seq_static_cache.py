"""NM121 seq2seq-static-cache: ``NeuronModelForSeq2SeqLM`` / ``NeuronWhisperForConditionalGeneration`` -> stock classes + static-cache generate.

What it does:

* imports of ``NeuronModelForSeq2SeqLM`` (``optimum.neuron``, ``optimum.neuron.modeling_seq2seq``) and
  ``NeuronWhisperForConditionalGeneration`` (``optimum.neuron``, ``optimum.neuron.models[.inference].whisper``)
  -> ``transformers.AutoModelForSeq2SeqLM`` / ``transformers.WhisperForConditionalGeneration``;
* ``X.from_pretrained(id, export=True, batch_size=, sequence_length=, num_beams=, auto_cast=, auto_cast_type=,
  **input_shapes, **compiler_args)`` -> ``from_pretrained(id, dtype=..., device_map=<device>)``; the encoder and
  decoder NEFFs become one eager model; ``auto_cast="matmul"`` loads in its ``auto_cast_type`` (a whole-model
  cast, with a ``todo``): the outputs the code reads are generated tokens, unlike NM120's encoders (float32);
* after ``model = ...``: ``model.requires_grad_(False)`` (inference-only, as the compiled model was: a direct
  forward call's outputs carry no grad, ``_inference_only.py``; not for a model the file only saves) and
  ``model.generation_config.update(cache_implementation="static", num_beams=<num_beams>,
  compile_config=...)`` - the decoder's static KV cache and the compiled beam count; the compile config is
  what transformers 5.24 uses on a neuron device (``None`` off-neuron in the portable style);
* ``sequence_length`` / ``batch_size`` (encoder input shapes) -> a ``todo`` with the padding to do;
* the inputs follow the model to the device as for NM120 (calls in the loading scope and where the model leaves
  it: ``self``, returned, passed on); a Whisper loaded below float32 (``auto_cast_type="bf16"``) gets its
  ``input_features`` in its dtype too, ``.to(model.device, model.dtype)``: optimum took float32 features and cast
  them in its graph, the stock model raised "Input type (float) and bias type (c10::BFloat16) should be the
  same" in ``generate``;
* a name bound to the Neuron class on one branch and to its stock target on the other (``if SMOKE: from
  transformers import AutoModelForSeq2SeqLM as M else: from optimum.neuron import NeuronModelForSeq2SeqLM as
  M``) is a Neuron load too: its load sites get the same rewrite (what it adds is valid for the stock class), and
  without ``export=True`` a ``todo`` that on the Neuron branch the path named a compiled folder;
* a load without ``export=True`` of anything but a certain source checkpoint (as NM120: the ``--model`` of a
  project export command, or loaded with ``export=True`` in the file) reads Neuron-compiled artifacts stock classes
  cannot load: the file stays on optimum-neuron with a ``todo`` naming the candidate source (the export command's
  ``--model`` where one writes the folder; this rule does not rewrite the load to it);
* ``**NAME`` splats: a dict literal bound once in the file, or a dict of constants bound once in a project
  module it is imported from (``from app.config import SHAPES``), is sorted like inline keywords (the dict
  stays in that module); a splat nothing resolves (``**kwargs``, a dict changed in place) leaves the load,
  its import and the whole file on optimum-neuron with a ``todo`` naming the splat (a stock call would get
  its Neuron keys and raise TypeError), and no default ``dtype`` is guessed beside it;
* ``num_cores=`` is dropped with the ``torchrun`` / ``DistributedConfig`` ``todo`` (as NM120); a keyword that is
  neither the stock load's nor one of optimum-neuron's that a table sorts (Whisper's ``encoder_kwargs=``,
  ``max_sequence_length=``) leaves the file on optimum-neuron with a ``todo`` naming it: kept in the stock call, the
  model's ``__init__`` raised TypeError (rtB B3);
* limits: whether each encoder-decoder architecture supports a static cache on Neuron is not verified; the
  decoder cache length follows generate's ``max_length``/``max_new_tokens``, so keep those constant.

Why:

optimum-neuron exported an encoder-decoder model as two NEFFs (the encoder, and the decoder with its KV cache)
compiled for one batch size, one encoder sequence length and one beam count. On TorchNeuron the stock model
runs on the neuron device and ``generate`` compiles the decoder step with ``torch.compile(backend="neuron")``;
a static cache and the old beam count keep its shapes fixed, and padding the encoder inputs to the old length
keeps the encoder to one graph.

Before::

    from optimum.neuron import NeuronModelForSeq2SeqLM

    model = NeuronModelForSeq2SeqLM.from_pretrained("t5-small", export=True, batch_size=1, sequence_length=64, num_beams=4)

After (portable device style)::

    import torch
    from transformers import AutoModelForSeq2SeqLM, CompileConfig

    # neuron-migrate: compiled static shapes batch_size=1, sequence_length=64: ...
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-small", dtype=torch.float32, device_map=torch.accelerator.current_accelerator() or torch.device("cpu"))
    model.generation_config.update(cache_implementation="static", num_beams=4, compile_config=CompileConfig(backend="neuron", dynamic=False, mode="default") if model.device.type == "neuron" else None)

Safety: needs-review. A reviewer applies the padding ``todo`` and checks that the architecture generates with
a static cache.

References:

* https://huggingface.co/docs/transformers/kv_cache
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/device-expression.md
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib.cst import source_of, with_commas
from codemods._tables.inference_symbols import seq2seq_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import InferenceRule, compiled_note, padding_note, traced_load
from codemods.inference._compiled_exports import COMPILED_EXPORTS, MODULE_FOLDERS, CompiledFolderLoads
from codemods.inference._inference_only import INFERENCE_ONLY_NOTE, inference_only
from codemods.inference._module_dicts import MODULE_DICTS
from migrate.rule import Safety

SEQ2SEQ = seq2seq_moves()


class Seq2SeqStaticCache(CompiledFolderLoads, InferenceRule):
    """NeuronModelForSeq2SeqLM / NeuronWhisperForConditionalGeneration -> stock classes with a static-cache generation config."""

    id = "NM121"
    name = "seq2seq-static-cache"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = SEQ2SEQ
    legacy_modules = ("optimum.neuron",)
    places_model = True
    float_inputs = True  # audio / image features: cast with a lower-precision load

    loads = SEQ2SEQ
    facts = (MODULE_DICTS, COMPILED_EXPORTS, MODULE_FOLDERS)  # **NAME dicts; export commands; folder names
    opaque_splat_keeps_file = True
    unsorted_keys_keep_file = True  # a keyword no table sorts: the file stays on optimum-neuron

    def _both_bound(self, owner: cst.BaseExpression) -> str | None:
        """The Neuron class ``owner`` names when the name is bound to it and to its stock target (``if SMOKE:
        from transformers import AutoModelForSeq2SeqLM as M else: from optimum.neuron import
        NeuronModelForSeq2SeqLM as M``), else None. After the class move both branches bind the stock class."""
        qualified = self.ctx.matches(owner, self.loads)
        if qualified is None or self.loads[qualified] not in self.ctx.qualnames(owner):
            return None
        return qualified

    def is_target_call(self, call: cst.Call) -> bool:
        """Also a load of a name bound to both classes: the kwargs this rule adds (device_map, the static-cache
        generation config) are valid for the stock class, so the load site gets them on either branch."""
        if super().is_target_call(call):
            return True
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" \
            and self._both_bound(func.value) is not None

    def kept_stock_call(self, call: cst.Call, gatherer) -> str | None:
        """A load without export=True whose source checkpoint is not certain (``kept_compiled_load``): the file stays
        on optimum-neuron (this rule does not rewrite a compiled folder's load to its source)."""
        return self.kept_compiled_load(call, gatherer, recovers=False)

    def kept_use_advice(self, attribute: str) -> str:
        if attribute == "from_pretrained":
            return ("load the source checkpoint instead (the --model of the optimum-cli export neuron command "
                    "that wrote the folder, or config.json `_name_or_path` in the compiled folder), e.g. "
                    "<Class>.from_pretrained(<checkpoint id>, export=True, <its static shapes>) (NM121 then rewrites "
                    "it to the stock class with a static-cache generation config)")
        return super().kept_use_advice(attribute)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.is_target_call(original):
            return updated
        arguments = self.arguments(updated)
        split, notes = traced_load(self, arguments, "tensor_parallel_size: check the architecture has a transformers "
                                   "TP plan; otherwise run one process per core (torchrun)")
        beams = split.shapes.pop("num_beams", None)
        func = cast(cst.Attribute, original.func)  # is_target_call checked the Attribute
        qualified = self.ctx.matches(func.value, self.loads)
        note = padding_note(split.shapes, speech="Whisper" in (qualified or ""))
        if note:
            notes.append(self.shapes_at_calls(original, note))
        setup = ['cache_implementation="static"']
        if beams is not None:
            setup.append(f"num_beams={source_of(beams)}")
        target = self.assignment_target(original)
        if target is not None:
            setup.append(f"compile_config={self.compile_config(target)}")
            # inference-only, as the compiled model was: a direct forward call's outputs carry no grad
            self.add_after([*inference_only(self, original, target),
                            f"{target}.generation_config.update({', '.join(setup)})\n"])
        else:
            notes.append(f"set up generation on the loaded model: model.generation_config.update({', '.join(setup)})")
            notes.append(INFERENCE_ONLY_NOTE)
        notes.append(self.shapes_at_calls(original, "the decoder's static cache is sized from generate's "
                                          "max_length/max_new_tokens: keep them constant across calls (each new "
                                          "size compiles again)"))
        model_arg = arguments.positional[0] if arguments.positional else None
        compiled = self.compiled_load_note(model_arg, split.has_export, split.export)
        if compiled is not None and self.match_class(func.value, self.loads, original) is None:
            # a name bound to both classes: on its optimum-neuron branch this load read a compiled folder
            compiled = (f"{self.ctx.matches(func.value, self.loads)} is one of the classes `{source_of(func.value)}` "
                        f"is bound to here (the stock one on the other branch); {compiled_note(model_arg, False)}")
        self.report_load(original, split.dropped, notes, "Neuron encoder-decoder -> stock class with a static-cache "
                                                         "generation config", compiled)
        return updated.with_changes(args=with_commas(split.args, updated.args))
