"""NM409 neuron-deployment-glue: report XLA-era Neuron deployment references in scripts, Dockerfiles and manifests.

What it does:

* A ``todo`` on each line naming a Neuron deep-learning container of the PyTorch/XLA line
  (``pytorch-training-neuronx``, ``huggingface-pytorch-inference-neuronx``), a TGI-neuronx image,
  ``docker run --entrypoint optimum-cli``, TGI-neuronx compile settings (``HF_NUM_CORES``, ``HF_AUTO_CAST_TYPE``)
  or an Inf1/Inf2/Trn1 instance type.
* Nothing is rewritten. The Python side (SageMaker ``HuggingFaceModel``/estimators) is NM411.

Why:

The replacement image, its tag and the serving stack are a deployment decision: TorchNeuron runs on Trn2/Trn3
and serves through the vLLM-Neuron plugin or a TorchNeuron container, and none of these references maps
mechanically to one of those.

Before::

    FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-sdk2.20.0

After::

    # neuron-migrate: deployment glue: a Neuron (PyTorch/XLA-era) deep-learning container (...); ...
    FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-sdk2.20.0

Safety: manual-only. Each line gets a todo; the user picks the image, instance and serving stack.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

from codemods._lib.shell import Report
from codemods.launch._base import DEPLOY_TODO, LaunchRule, deployment_hits
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import TextDocument

def edit_deployment(doc: TextDocument, report: Report) -> None:
    for line in list(doc):
        stripped = line.text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        for what, hit in deployment_hits(line.text):
            report(line, Severity.TODO, DEPLOY_TODO.format(what=what, hit=hit))


class NeuronDeploymentGlue(LaunchRule):
    """Report Neuron DLC / TGI-neuronx images, optimum-cli entrypoints and non-Trn2/3 instance types."""

    id = "NM409"
    name = "neuron-deployment-glue"
    safety = Safety.MANUAL_ONLY
    triggers = ("neuronx", "--entrypoint", "HF_NUM_CORES", "HF_AUTO_CAST_TYPE", "ml.inf", "ml.trn1")

    def apply(self, doc: TextDocument) -> None:
        edit_deployment(doc, self.report)
