"""NM150 neuron-pipeline-function: ``optimum.neuron.pipeline(...)`` -> ``transformers.pipeline(...)`` on the device.

What it does:

* ``from optimum.neuron import pipeline`` (also ``optimum.neuron.pipelines``,
  ``optimum.neuron.pipelines.transformers[.base]``) -> ``from transformers import pipeline``;
* ``pipeline(task, model=..., export=True, input_shapes={...}, compiler_args={...}, use_auth_token=...)`` ->
  ``pipeline(task, model=..., device=<device>, dtype=...)``: ``export`` dropped, ``compiler_args``'
  ``auto_cast_type`` -> ``dtype``, ``use_auth_token`` -> ``token``, ``input_shapes`` -> a ``todo`` with the
  batch size and padding to pass at call time;
* after ``pipe = ...``: for ``"text-generation"`` a static-cache generation config on ``pipe.model``
  (``max_cache_len`` from the compiled ``sequence_length``), for other tasks
  ``pipe.model.compile(backend="neuron", fullgraph=True, dynamic=False)``; both only on the neuron device
  in the portable style; where the file uses ``pipe.model`` itself, ``pipe.model.requires_grad_(False)`` first
  (pipeline calls run under no_grad, a direct forward call does not, and ``.numpy()`` raises on its outputs:
  optimum's compiled model ran inference only; ``_inference_only.py``) and a ``todo`` to move that call's
  inputs to ``pipe.model.device`` and its outputs to the CPU before numpy;
* without ``export=True`` optimum loaded ``model=`` as Neuron-compiled artifacts (a plain checkpoint raised
  "The model must be exported to Neuron format first"), which transformers.pipeline cannot load (OSError): the
  compiled-folder guard of NM110/NM120 (``kept_compiled_load``) keeps the call, its import and the file on
  optimum-neuron with a ``todo`` unless the path is certainly a source checkpoint (the ``--model`` of an
  ``optimum-cli export neuron`` command of the project, or a path the file loads with ``export=True``); a
  folder an export command writes is named with its checkpoint, not rewritten to it (rt7L L6);
* ``**NAME`` splats: a dict literal bound once in the file, or a dict of constants bound once in a project
  module it is imported from, is expanded and sorted like inline keywords; a ``*args`` / ``**NAME`` splat nothing
  resolves (``pipeline(task, model=m, **kw)`` with ``**kw`` a parameter, ``**vars(args)``, a dict changed in
  place) leaves the call, its import and the whole file on optimum-neuron with a ``todo`` naming the splat: it
  may carry ``export`` / ``input_shapes`` / ``compiler_args``, which transformers.pipeline does not take;
* every other keyword (``task=``, ``batch_size=``, ``chunk_length_s=`` ...) went on to transformers.pipeline
  under optimum too and stays; optimum's positional ``tokenizer`` / ``feature_extractor`` (3rd and 4th) are
  passed by keyword, because transformers.pipeline puts ``config`` third;
* a task transformers 5 removed from ``pipeline`` (``"question-answering"``, ``"summarization"``,
  ``"translation"`` / ``"translation_xx_to_yy"``, ``"text2text-generation"``, ``"visual-question-answering"`` /
  ``"vqa"``, ``"image-to-image"``: transformers' ``REMOVED_TASKS``) has no stock pipeline to move to
  (``transformers.pipeline`` raises KeyError for it): the call, its import and the file stay on optimum-neuron with
  a ``todo`` saying what replaces that task; a task that is no literal gets a note naming those tasks;
* limits: which padding keywords a task's call accepts varies by task and is not verified for each.

Why:

optimum-neuron's ``pipeline`` was transformers' ``pipeline`` around a Neuron model exported for fixed input
shapes. On TorchNeuron the stock ``transformers.pipeline`` loads the stock model onto the neuron device; its
model is compiled just in time (``torch.compile(backend="neuron")``, a static cache for text generation), and
the old static shapes become the padding the caller passes.

Before::

    from optimum.neuron import pipeline

    pipe = pipeline("text-classification", model=MODEL, export=True,
                    input_shapes={"batch_size": 1, "sequence_length": 64}, compiler_args={"auto_cast_type": "bf16"})

After (portable device style)::

    import torch
    from transformers import pipeline

    # neuron-migrate: compiled static shapes batch_size=1, sequence_length=64: ...
    pipe = pipeline("text-classification", model=MODEL, dtype=torch.bfloat16, device=torch.accelerator.current_accelerator() or torch.device("cpu"))
    if pipe.device.type == "neuron":
        pipe.model.compile(backend="neuron", fullgraph=True, dynamic=False)

Safety: needs-review. A reviewer passes the batch size and padding of the ``input_shapes`` ``todo`` at call
time and checks the compiled-folder note.

References:

* https://huggingface.co/docs/transformers/main_classes/pipelines
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/device-expression.md
"""

from __future__ import annotations

from typing import cast

import libcst as cst
import libcst.matchers as m

from codemods._lib.cst import keyword_arg, source_of, with_commas
from codemods._tables.inference_symbols import pipeline_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import Arguments, InferenceRule, padding_note, split_traced
from codemods.inference._compiled_exports import (
    COMPILED_EXPORTS,
    COMPILED_FOLDER_USES,
    MODULE_FOLDERS,
    CompiledFolderLoads,
)
from codemods.inference._inference_only import inference_only
from codemods.inference._module_dicts import MODULE_DICTS
from migrate.rule import Safety

MOVES = pipeline_moves()
#: what optimum.neuron.pipeline(...) itself consumed; every other keyword went on to transformers.pipeline
#: (optimum's signature: task, model, tokenizer, feature_extractor, [image_processor,] use_fast, export,
#: input_shapes, compiler_args, token/use_auth_token, revision, trust_remote_code, **kwargs -> transformers)
NEURON_ARGS = frozenset({"export", "input_shapes", "compiler_args"})
#: optimum's positional order after (task, model); transformers.pipeline puts config= third
OPTIMUM_POSITIONAL = ("tokenizer", "feature_extractor")
#: the pipeline tasks transformers 5 removed (``transformers.pipelines.REMOVED_TASKS`` of 5.24.0; a parametrized
#: ``translation_xx_to_yy`` is ``translation``): ``pipeline(task)`` raises KeyError, with what replaces each
#: (tests/rules/test_nm150_neuron_pipeline_function.py checks this against the installed transformers)
REMOVED_TASKS = {
    "text2text-generation": "the text-generation pipeline with a chat model",
    "summarization": "the text-generation pipeline with a chat model",
    "translation": "the text-generation pipeline with a chat model",
    "question-answering": ("the text-generation pipeline with a chat model, or AutoModelForQuestionAnswering with "
                           "your own span decoding (start/end logits)"),
    "visual-question-answering": "the image-text-to-text pipeline with a vision-language chat model",
    "vqa": "the image-text-to-text pipeline with a vision-language chat model",
    "image-to-image": "a diffusers pipeline",
}


def removed_task(task: object) -> str | None:
    """The REMOVED_TASKS key of a literal pipeline task transformers 5 no longer has, else None."""
    if not isinstance(task, str):
        return None
    name = "translation" if task.startswith("translation_") else task
    return name if name in REMOVED_TASKS else None


class NeuronPipelineFunction(CompiledFolderLoads, InferenceRule):
    """optimum.neuron.pipeline(...) -> transformers.pipeline(..., device=<device>, dtype=...)."""

    id = "NM150"
    name = "neuron-pipeline-function"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = MOVES
    legacy_modules = ("optimum.neuron",)
    # **NAME of a dict a project module binds once; the export commands, saved exports and folder names that tell
    # whether a model= folder is a source checkpoint (the compiled-folder guard NM110/NM120 use)
    facts = (MODULE_DICTS, COMPILED_EXPORTS, COMPILED_FOLDER_USES, MODULE_FOLDERS)
    opaque_splat_keeps_file = True

    def is_target_call(self, call: cst.Call) -> bool:
        return bool(self.match_class(call.func, MOVES, call))

    def _reads_model(self, target: str) -> bool:
        """The file reads ``<target>.model`` (its forward outputs then carry grad unless it is inference-only)."""
        module = self.ctx.shared.get("module")
        reads = self.ctx.memo("inference.nm150.model-reads", lambda: {
            source_of(cast(cst.Attribute, node).value) for node in m.findall(module, m.Attribute(attr=m.Name("model")))
        } if isinstance(module, cst.Module) else set())
        return target in reads

    def _model_arg(self, call: cst.Call) -> cst.Arg | None:
        keyword = next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "model"), None)
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        return keyword or (positional[1] if len(positional) > 1 else None)

    def _loads_compiled(self, call: cst.Call) -> bool:
        """optimum's ``pipeline(task, model=<path>)`` without ``export=True`` (no splat that could carry it): it
        loaded the Neuron model class from ``<path>``, which must hold compiled artifacts; a model object loaded
        in this file (``model = X.from_pretrained(...)``) is that load's business."""
        if not self.is_target_call(call) or any(arg.star for arg in call.args):
            return False
        model = self._model_arg(call)
        if model is None or (isinstance(model.value, cst.Name) and isinstance(self.lookup(model.value.value), cst.Call)):
            return False
        export = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "export"),
                      None)
        return export is None or (isinstance(export, cst.Name) and export.value == "False")

    def _load_path(self, call: cst.Call) -> cst.BaseExpression:
        model = self._model_arg(call)
        assert model is not None  # _loads_compiled checked it
        return model.value

    def _task(self, call: cst.Call) -> object:
        """The literal task of a ``pipeline(...)`` call (first positional or ``task=``), else ``NOT_LITERAL``/None."""
        positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
        keyword = next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "task"), None)
        node = positional[0].value if positional else (keyword.value if keyword is not None else None)
        return self.literal(node) if node is not None else None

    def _held_loads(self) -> dict[int, str]:
        """rt7L L6: the compiled-folder guard of NM110/NM120 (``kept_compiled_load``) on ``pipeline(model=...)``: a
        model folder that is not certainly a source checkpoint keeps the call, its import and the file on
        optimum-neuron (rewritten, transformers.pipeline raises OSError: no model.safetensors in a compiled
        folder). A folder an export command compiles is named, not rewritten to its source (NM150 does not).
        rtB B1: so does a task transformers 5 removed (``REMOVED_TASKS``: transformers.pipeline raises KeyError)."""
        module = self.ctx.shared.get("module")
        if not isinstance(module, cst.Module):
            return {}
        from codemods.inference._base import _gather_scopes
        gatherer = self.ctx.memo("inference.scopes", lambda: _gather_scopes(module))
        self._scopes = gatherer.values
        kept: dict[int, str] = {}
        for call in gatherer.calls:
            if not self.is_target_call(call):
                continue
            setattr(self, "_scope_stack", gatherer.call_scopes.get(id(call), [module]))
            task = self._task(call)
            removed = removed_task(task)
            if removed is not None:
                kept[id(call)] = (
                    f'the "{task}" pipeline task was removed in transformers 5 (transformers.pipeline("{task}") '
                    f"raises KeyError), so {self.id} leaves this file on optimum-neuron: the "
                    f"{source_of(call.func)} import and calls are not rewritten. To migrate it: use "
                    f"{REMOVED_TASKS[removed]} (stock transformers on the device), then run neuron-migrate again")
        for call in gatherer.calls:
            if id(call) in kept:
                continue
            if not self._loads_compiled(call):
                continue
            setattr(self, "_scope_stack", gatherer.call_scopes.get(id(call), [module]))
            why = self.kept_compiled_load(call, gatherer, recovers=False)
            if why is not None:
                kept[id(call)] = (
                    f"`{source_of(call)}` {why}, so {self.id} leaves this file on optimum-neuron: the "
                    f"{source_of(call.func)} import and calls are not rewritten (rewritten, transformers.pipeline "
                    "would fail on the compiled folder: OSError, no model.safetensors). To migrate it: pass the "
                    "source checkpoint as model= with export=True and the export's input_shapes (NM150 then rewrites "
                    "it to transformers.pipeline), and point the callers that pass the compiled folder at that "
                    "checkpoint, then run neuron-migrate again")
        return kept

    def _unresolved_splat_loads(self) -> dict[int, str]:
        """The ``pipeline(...)`` calls of optimum's function with a ``*args`` / ``**NAME`` splat that neither a
        dict literal of this file nor one of a project module resolves: id(call) -> the todo. The load is a
        function call here, not ``X.from_pretrained``, hence NM150's own check; the decision is the base's: the
        call, its import and the file stay on optimum-neuron (the splat may carry export= / input_shapes= /
        compiler_args=, which transformers.pipeline does not take)."""
        kept: dict[int, str] = {}
        for call, names in self._opaque_splat_calls():
            kept[id(call)] = (
                f"{names} cannot be resolved statically (no dict literal bound once to it in this file or in a "
                f"project module it is imported from), so {self.id} leaves this file on optimum-neuron: the "
                f"{source_of(call.func)} import and calls are not rewritten (transformers.pipeline would get the "
                "Neuron export arguments it may carry - export, input_shapes, compiler_args - which it does not "
                "take). To migrate it: pass those keys as keywords of the call (or bind the dict to a literal), "
                "then run neuron-migrate again")
        return kept

    def _note_kept_uses(self, kept: dict[int, str]) -> None:
        """The base's notes at kept class uses, and the todos of :meth:`_unresolved_splat_loads` at their calls."""
        super()._note_kept_uses(kept)

        def visit_call(node: cst.Call) -> None:
            message = kept.pop(id(node), None)
            if message is not None:
                self.todo(node, message)
        setattr(self, "visit_Call", visit_call)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.match_class(original.func, MOVES, original):
            return updated
        arguments = self.arguments(updated)
        # only the Neuron export arguments are sorted into shapes / dtype / dropped: the pipeline's own
        # arguments (task, batch_size, chunk_length_s, ...) are transformers.pipeline's and stay as written
        split = split_traced(self, Arguments(keywords=[(k, a) for k, a in arguments.keywords if k in NEURON_ARGS],
                                              imported=arguments.imported))
        notes = list(split.notes)
        for key in split.other:
            split.dropped.append(key)
            notes.append(f"`{key}` (in input_shapes/compiler_args) has no transformers.pipeline equivalent: dropped")
        if len(arguments.positional) <= 2 + len(OPTIMUM_POSITIONAL):
            split.args = list(arguments.positional[:2]) + [
                keyword_arg(name, arg.value) for name, arg in zip(OPTIMUM_POSITIONAL, arguments.positional[2:])]
        else:
            split.args = list(arguments.positional)
            notes.append("more than four positional arguments: pass the ones after model by keyword (optimum read "
                         "them as tokenizer, feature_extractor, ...; transformers.pipeline as config, tokenizer, ...)")
        for key, arg in arguments.keywords:
            if key in NEURON_ARGS:
                continue
            if key == "use_auth_token":
                split.args.append(keyword_arg("token", arg.value))
            elif key in ("torch_dtype", "dtype"):
                split.dtype = arg.value
            else:
                split.args.append(arg)
        for arg in arguments.opaque:
            split.args.append(arg)
            notes.append(f"`{source_of(arg.value)}` cannot be resolved statically: remove the export/input_shapes/"
                         "compiler_args keys it carries (transformers.pipeline rejects them)")
        values = dict(arguments.keywords)
        if split.dtype is not None:
            split.args.append(keyword_arg("dtype", split.dtype))
        if "device" not in values and "device_map" not in values:
            split.args.append(keyword_arg("device", self.device()))
        model = values.get("model") or (arguments.positional[1] if len(arguments.positional) > 1 else None)
        # a model object loaded in this file (``model = X.from_pretrained(...)``) was placed and compiled there
        loaded = model is not None and isinstance(model.value, cst.Name) \
            and isinstance(self.lookup(model.value.value), cst.Call)
        compiled = None
        if model is not None and not loaded and isinstance(model.value, (cst.SimpleString, cst.Name, cst.Attribute)):
            compiled = self.compiled_load_note(model, split.has_export, split.export)
        task = self.literal(arguments.positional[0].value) if arguments.positional else (
            self.literal(values["task"].value) if "task" in values else None)
        if (arguments.positional or "task" in values) and not isinstance(task, str):
            notes.append("the task is no literal: transformers 5 removed the "
                         + ", ".join(f'"{name}"' for name in REMOVED_TASKS)
                         + " pipelines (transformers.pipeline raises KeyError for them): if it may be one of those, "
                         "use the text-generation pipeline with a chat model (or the replacement the transformers 5 "
                         "migration guide names) instead")
        target = self.assignment_target(original)
        seq = split.shapes.get("sequence_length")
        # pipeline calls run under no_grad; direct forward calls of its model do not (their outputs carry grad)
        if target is not None and not loaded and self._reads_model(target):
            self.add_after(inference_only(self, original, f"{target}.model"))
            notes.append(f"this file uses {target}.model directly: it is on the device now (optimum's compiled model "
                         "took and returned CPU tensors), so move the tensors passed to it with "
                         f".to({target}.model.device) and call .cpu() on its outputs before numpy")
        if loaded:
            pass
        elif task == "text-generation":
            setup = ['cache_implementation="static"'] + ([f"max_cache_len={source_of(seq)}"] if seq is not None else [])
            if target is not None:
                setup.append(f"compile_config={self.compile_config(target + '.model')}")
                self.add_after([f"{target}.model.generation_config.update({', '.join(setup)})\n"])
            else:
                notes.append(f"set pipe.model.generation_config.update({', '.join(setup)})")
            if "batch_size" in split.shapes:
                notes.append(f"compiled for batch_size={source_of(split.shapes['batch_size'])}: call the pipeline with "
                             "that batch_size and a left-padding tokenizer")
        else:
            note = padding_note(split.shapes, speech=task == "automatic-speech-recognition")
            if note:
                notes.append(self.shapes_at_calls(original, note + "; pass batch_size= to the pipeline call"))
            step = 'model.compile(backend="neuron", fullgraph=True, dynamic=False)'
            if target is not None:
                self.add_after(self.on_neuron(target, [f"{target}.{step}"]))
            else:
                notes.append(f"compile on Trainium: pipe.{step}")
        self.report_load(original, split.dropped, notes, "optimum.neuron.pipeline -> transformers.pipeline on the "
                                                         "device", compiled)
        return updated.with_changes(args=with_commas(split.args, updated.args))
