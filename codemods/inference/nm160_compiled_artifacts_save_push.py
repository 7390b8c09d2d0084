"""NM160 compiled-artifacts-save-push: ``save_pretrained`` / ``push_to_hub`` on migrated Neuron inference models.

What it does:

* ``model.save_pretrained(dir)`` where ``model`` was loaded by an optimum-neuron inference class in the
  same file: kept (it now writes an ordinary checkpoint), with a ``todo``: folders written by the old code
  hold Neuron-compiled artifacts that stock libraries cannot load;
* ``model.push_to_hub(save_directory, repository_id=repo, use_auth_token=t)`` (the optimum signature) ->
  ``model.push_to_hub(repo, token=t)`` (the stock signature uploads the in-memory model, not a folder);
* left alone: only receivers assigned (``x = Cls.from_pretrained(...)``) in the same file are recognised, and
  only when this run moves their class to the stock one (the class's rule, NM110-NM150, is selected): an object
  that stays an optimum-neuron model keeps optimum's ``push_to_hub(save_directory, repository_id=...)``; so does
  the save / push of an export that the load's rule keeps on optimum-neuron because another project file still
  loads compiled folders with optimum-neuron (that rule's ``todo`` at the call names the file: rt5H D1); the
  save of a round-trip exporter (NM110: its folder's loaders are migrated with it) gets NM110's note instead of this
  one, which says what the save writes now and which files load it.

Why:

An optimum-neuron model's ``save_pretrained`` wrote its compiled NEFFs and ``neuron_config.json``, and its
``push_to_hub`` uploaded such a folder (``save_directory`` first, the repository as ``repository_id=``). A
migrated model is a stock transformers model: ``save_pretrained`` writes ordinary weights, and the stock
``push_to_hub`` takes the repository id first and uploads the model in memory. Folders and repositories written
by the old code still hold NEFFs, which stock libraries cannot load.

Before::

    model = NeuronModelForCausalLM.from_pretrained(MODEL, export=True, batch_size=1, sequence_length=512)
    model.save_pretrained("llama_neuron/")
    model.push_to_hub("llama_neuron/", repository_id="me/llama-neuron")

After (with NM110)::

    model = AutoModelForCausalLM.from_pretrained(MODEL, device_map=...)
    ...
    # neuron-migrate: save_pretrained now writes ordinary weights (no NEFFs) ...
    model.save_pretrained("llama_neuron/")
    model.push_to_hub("me/llama-neuron")

Safety: needs-review. A reviewer checks who reads the saved folder or repository (they now get ordinary
weights) and replaces old compiled folders by the source checkpoint.

References:

* https://huggingface.co/docs/transformers/main_classes/model#transformers.PreTrainedModel.push_to_hub
* https://huggingface.co/docs/optimum-neuron/guides/export_model
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import keyword_arg, source_of, with_commas
from codemods._tables.inference_symbols import (
    decoder_moves,
    diffusion_moves,
    embedding_moves,
    seq2seq_moves,
    traced_moves,
)
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import InferenceRule
from codemods.inference._compiled_exports import round_trip
from codemods.inference._notebook import file_path
from migrate.pyrun import SYMBOL_MOVES
from migrate.rule import Safety, dotted_name

CLASSES = {**traced_moves(), **seq2seq_moves(), **decoder_moves(), **embedding_moves(), **diffusion_moves()}


class CompiledArtifactsSavePush(InferenceRule):
    """save_pretrained / push_to_hub of Neuron inference models: stock signatures, compiled-artifact todo."""

    id = "NM160"
    name = "compiled-artifacts-save-push"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS

    def prepare(self, module: cst.Module) -> None:
        # receiver name -> whether its class becomes the stock one in this run: a class whose rule is not selected
        # (--select NM160 alone) keeps the optimum signatures, so its calls stay as they are
        self._models: dict[str, bool] = {}
        moves = self.ctx.shared.get(SYMBOL_MOVES, {})
        for assign in self.gathered.assigns:
            value = assign.value
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value == "to":
                value = value.func.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in ("from_pretrained", "export") \
                    and self.ctx.matches(value.func.value, CLASSES):
                moved = any(moves.get(qualified) for qualified in self.ctx.qualnames(value.func.value))
                for target in assign.targets:
                    name = dotted_name(target.target)
                    if name:
                        self._models[name] = self._models.get(name, True) and moved

    def _round_trip_exporter(self) -> bool:
        trip = round_trip(self.ctx.options)
        return trip is not None and str(file_path(self.ctx)).replace("\\", "/") in trip.exporters

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if not (isinstance(func, cst.Attribute) and self._models.get(dotted_name(func.value) or "")):
            return updated
        if func.attr.value == "save_pretrained":
            if self._round_trip_exporter():
                return updated  # NM110's note at this save says what it writes now and who loads it
            self.todo(original, "save_pretrained now writes ordinary weights (no NEFFs); folders written by the old "
                      "code hold Neuron-compiled artifacts that stock libraries cannot load - re-create them from the "
                      "source checkpoint")
            return updated
        if func.attr.value != "push_to_hub":
            return updated
        arguments = self.arguments(updated)
        repo = arguments.get("repository_id")
        if repo is None or arguments.opaque:
            if arguments.positional and repo is None and len(arguments.positional) == 1 and not arguments.keywords:
                return updated  # already the stock form push_to_hub(repo_id)
            self.todo(original, "optimum push_to_hub(save_directory, repository_id=...) -> stock push_to_hub(repo_id): "
                      "pass the repository id only")
            return updated
        args = [repo.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)]
        for key, arg in arguments.keywords:
            if key in ("repository_id", "save_directory"):
                continue
            if key == "use_auth_token":
                args.append(keyword_arg("token", arg.value))
            elif key in ("private", "token", "revision", "commit_message", "create_pr"):
                args.append(arg)
            else:
                self.todo(original, f"push_to_hub `{key}=` is not in the stock signature: check it")
                args.append(arg)
        dropped = source_of(arguments.positional[0].value) if arguments.positional else "save_directory"
        self.fixed(original, "push_to_hub: optimum signature -> stock push_to_hub(repo_id) (uploads the loaded model, "
                             f"not {dropped})")
        return updated.with_changes(args=with_commas(args))
