"""NM409 neuron-deployment-glue: report XLA-era Neuron deployment references in scripts, Dockerfiles and manifests.

Corpus A9 item 12 (SageMaker / TGI-neuronx glue), map traps T1 and 1.14: Neuron deep-learning containers of
the PyTorch/XLA line (``pytorch-training-neuronx``, ``huggingface-pytorch-inference-neuronx``), TGI-neuronx
images, ``docker run --entrypoint optimum-cli``, TGI-neuronx compile settings (``HF_NUM_CORES``,
``HF_AUTO_CAST_TYPE``) and Inf1/Inf2/Trn1 instance types. None of these can be rewritten mechanically (the
replacement image, its tag and the serving stack are a deployment decision), so each line gets a ``todo``.
The Python side (SageMaker ``HuggingFaceModel``/estimators) is NM411.

Before / after::

    FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-sdk2.20.0
    # neuron-migrate: deployment glue: a Neuron (PyTorch/XLA-era) deep-learning container (...); ...
    FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-sdk2.20.0

Fix safety: manual only.
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
