"""NM411 neuron-deployment-glue-python: report XLA-era Neuron deployment settings in Python (SageMaker).

What it does:

* A ``todo`` on SageMaker ``HuggingFaceModel`` / ``HuggingFace`` estimator definitions that point at Neuron DLC
  images (``image_uri="...pytorch-inference-neuronx..."``, ``get_huggingface_llm_image_uri("huggingface-neuronx")``),
  TGI-neuronx settings (``HF_NUM_CORES``, ``HF_AUTO_CAST_TYPE``), Inf1/Inf2/Trn1 instance types
  (``instance_type="ml.inf2.xlarge"``), and ``environment=``/``env=`` dictionaries whose keys the shared env-var
  table removes or reviews (they carry ``XLA_*``/``NEURON_*`` settings into a SageMaker job).
* Nothing is rewritten; ``os.environ[...]`` assignments belong to the torch_xla rules (NM3xx). The launch-file
  side is NM409.

Why:

The image, instance and serving stack are deployment decisions: TorchNeuron runs on Trn2/Trn3 and serves through
the vLLM-Neuron plugin or a TorchNeuron container, which no XLA-era image or setting maps to mechanically.

Before::

    model = HuggingFaceModel(image_uri=image, env={"HF_NUM_CORES": "2"}, role=role)

After::

    # neuron-migrate: deployment glue: TGI-neuronx compile settings (HF_NUM_CORES); ...
    model = HuggingFaceModel(image_uri=image, env={"HF_NUM_CORES": "2"}, role=role)

Safety: manual-only. Each site gets a todo; the user picks the image, instance and settings.

References:

* https://sagemaker.readthedocs.io/en/stable/frameworks/huggingface/sagemaker.huggingface.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
"""

from __future__ import annotations

import libcst as cst

from codemods._tables import env_vars
from codemods.launch._base import DEPLOY_TODO, deployment_hits
from migrate.rule import PythonRule, Safety


class NeuronDeploymentGluePython(PythonRule):
    """Report Neuron DLC / TGI-neuronx images, instance types and env dicts in SageMaker-style Python code."""

    id = "NM411"
    name = "neuron-deployment-glue-python"
    safety = Safety.MANUAL_ONLY
    triggers = ("-neuronx", "neuronx-tgi", "HF_NUM_CORES", "HF_AUTO_CAST_TYPE", "ml.inf", "ml.trn1", "--entrypoint")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if not isinstance(value, str):
            return
        for what, hit in deployment_hits(value):
            self.todo(node, DEPLOY_TODO.format(what=what, hit=hit))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is None or node.keyword.value not in {"environment", "env"} or not isinstance(node.value, cst.Dict):
            return
        for element in node.value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                continue
            name = element.key.evaluated_value
            action = env_vars.lookup(name) if isinstance(name, str) else None
            if action is not None and action.action != "keep":
                self.todo(element.key, f"job environment: {env_vars.message_for(name, action)}")
