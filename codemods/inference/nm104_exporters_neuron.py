"""NM104 exporters-neuron: ``optimum.exporters.neuron`` (ahead-of-time export) -> a ``todo`` at each use.

What it does:

* every call of ``main_export``, ``export``, ``export_models``, ``validate_model_outputs`` ... and every use of
  an ``optimum.exporters.neuron`` name (``NeuronDefaultConfig``, model configs, ``python -m
  optimum.exporters.neuron`` in ``subprocess`` argument lists) gets a ``todo`` saying what replaces it: load
  the source checkpoint with the stock class where the exported folder was loaded, and (optionally) run one
  warm-up call with the old static shapes to fill the NEFF cache;
* the calls are not deleted: what they wrote (an output folder) may be read later, and only a human can see
  whether that reader has been migrated (NM110/NM120/NM140 report such loads);
* left alone: the shell form ``optimum-cli export neuron`` is the launch family's (NM4xx).

Why:

optimum-neuron exported a model ahead of time: it traced the model at fixed input shapes and wrote compiled
NEFFs into a folder that its ``NeuronModelFor<Task>`` classes loaded later. TorchNeuron compiles just in time,
on the first call per input shape, and caches NEFFs locally; there is no ahead-of-time export step and no
exported artifact a stock library could load.

Before::

    from optimum.exporters.neuron import main_export

    main_export("bert-base-uncased", output="bert_neuron/", task="text-classification", batch_size=1, sequence_length=128)

After::

    from optimum.exporters.neuron import main_export

    # neuron-migrate: no ahead-of-time export on TorchNeuron: delete this main_export(...) call ...
    main_export("bert-base-uncased", output="bert_neuron/", task="text-classification", batch_size=1, sequence_length=128)

Safety: manual-only. A person deletes each export and points its readers at the source checkpoint; nothing is
rewritten.

References:

* https://huggingface.co/docs/optimum-neuron/guides/export_model
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import source_of
from codemods._tables.inference_symbols import EXPORTERS_PREFIX
from codemods.inference._base import InferenceRule
from migrate.rule import Safety


class ExportersNeuron(InferenceRule):
    """optimum.exporters.neuron calls and names -> todo (no ahead-of-time export on TorchNeuron)."""

    id = "NM104"
    name = "exporters-neuron"
    safety = Safety.MANUAL_ONLY
    triggers = ("optimum.exporters.neuron",)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = next((q for q in sorted(self.ctx.qualnames(node.func)) if q.startswith(EXPORTERS_PREFIX + ".")),
                         None)
        if qualified is not None:
            name = qualified.rsplit(".", 1)[1]
            model = next((a for a in node.args if a.keyword is None and not a.star), None)
            model = model or next((a for a in node.args if a.keyword is not None
                                   and a.keyword.value in ("model_name_or_path", "model", "model_id")), None)
            if name in ("main_export", "export", "export_models"):
                source = (source_of(model.value) if model is not None and name == "main_export"
                          else "the source checkpoint")
                self.todo(node, f"no ahead-of-time export on TorchNeuron: delete this {name}(...) call and load "
                          f"{source} with the stock class where its output folder was loaded (it compiles on first "
                          "call; one warm-up call with the old shapes fills the NEFF cache)")
            else:
                self.todo(node, f"{name}(...) is an optimum.exporters.neuron helper of the ahead-of-time export, which "
                          "TorchNeuron does not have: remove it together with the export code around it")
            return
        for element in node.args:
            value = element.value
            if isinstance(value, (cst.List, cst.Tuple)):
                for item in value.elements:
                    if isinstance(item.value, cst.SimpleString) and EXPORTERS_PREFIX in item.value.value:
                        self.todo(node, "`python -m optimum.exporters.neuron` has no TorchNeuron equivalent: drop this "
                                  "command and load the source checkpoint with the stock class")
                        return
