"""NM170 transformers-neuronx: imports of ``transformers_neuronx``, the earlier Neuron inference library.

What it does:

* nothing is rewritten; the file's first import of ``transformers_neuronx`` gets one ``todo`` that says what
  replaces the library (the other imports and the uses go with it, so they get no notes of their own):

  - load the SOURCE checkpoint (not the ``-split`` folder) with ``AutoModelForCausalLM.from_pretrained(id,
    dtype=..., distributed_config=DistributedConfig(tp_size=<tp_degree>))`` under ``torchrun`` and generate
    with a static cache (what NM110 writes for optimum-neuron's decoder), or
  - serve it with vLLM on Neuron (NxD Inference), which replaced transformers-neuronx for serving.

Why:

transformers-neuronx (``LlamaForSampling.from_pretrained(...).to_neuron()`` then ``.sample(...)``, its own
``NeuronConfig`` / ``GenerationConfig``, split checkpoints written by ``save_pretrained_split``) is not part of
TorchNeuron and has no one-to-one stock counterpart: its sampling loop, continuous batching and split
checkpoints are its own.

Before::

    from transformers_neuronx import LlamaForSampling

After::

    # neuron-migrate: transformers-neuronx does not run on TorchNeuron and is not rewritten: load the source ...
    from transformers_neuronx import LlamaForSampling

Safety: manual-only. A person rewrites the loading and generation code along the lines of the ``todo``.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/libraries/nxd-inference/index.html
* https://huggingface.co/docs/transformers/perf_infer_gpu_multi
"""

from __future__ import annotations

import libcst as cst

from migrate.rule import PythonRule, Safety, dotted_name

MODULE = "transformers_neuronx"
MESSAGE = ("transformers-neuronx does not run on TorchNeuron and is not rewritten: load the source checkpoint (not a "
           "save_pretrained_split folder) with transformers AutoModelForCausalLM.from_pretrained(id, dtype=..., "
           "distributed_config=DistributedConfig(tp_size=<tp_degree>)) under torchrun and call generate() with a "
           "static cache (cache_implementation=\"static\", max_cache_len=<n_positions>), or serve it with vLLM on "
           "Neuron (NxD Inference); then delete this import and its to_neuron()/sample() calls")


class TransformersNeuronx(PythonRule):
    """One todo at the file's first import of transformers_neuronx: what replaces the library."""

    id = "NM170"
    name = "transformers-neuronx"
    safety = Safety.MANUAL_ONLY
    triggers = (MODULE,)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.reported = False

    def _report(self, node: cst.CSTNode) -> None:
        if not self.reported:
            self.reported = True
            self.todo(node, MESSAGE)

    def visit_Import(self, node: cst.Import) -> None:
        if any(dotted_name(alias.name).split(".")[0] == MODULE for alias in node.names):
            self._report(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not node.relative and node.module is not None and dotted_name(node.module).split(".")[0] == MODULE:
            self._report(node)
