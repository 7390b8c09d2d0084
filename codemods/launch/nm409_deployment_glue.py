"""NM409 neuron-deployment-glue: report XLA-era Neuron deployment references in scripts, Dockerfiles and manifests.

What it does:

* A ``todo`` on each line naming a Neuron deep-learning container of the PyTorch/XLA line
  (``pytorch-training-neuronx``, ``huggingface-pytorch-inference-neuronx``), a TGI-neuronx image,
  ``docker run --entrypoint optimum-cli``, TGI-neuronx compile settings (``HF_NUM_CORES``, ``HF_AUTO_CAST_TYPE``;
  one note per settings block, naming ``HF_BATCH_SIZE``/``HF_SEQUENCE_LENGTH`` too and the vLLM flag for each)
  or an Inf1/Inf2/Trn1 instance type, SageMaker (``ml.inf2.xlarge``) or EC2 (``inf2.8xlarge`` in a Kubernetes
  node selector, Karpenter requirement or CLI flag).
* A ``todo`` on ``vllm serve ... --device neuron`` (vLLM's earlier built-in Neuron platform): the vLLM-Neuron plugin
  replaces it, and the command's Neuron-only flags need checking against the plugin's quickstart. The same
  platform chosen from Python (``LLM(..., device="neuron")``) gets the same todo from NM411.
* The advice follows the reference's use: a serving image (``*-inference-neuronx``, TGI-neuronx) is told about
  the vLLM-Neuron plugin, a training image (``pytorch-training-neuronx``) about Trn2/Trn3 training in a TorchNeuron
  container; a line that says neither (an instance type alone) gets both.
* Nothing is rewritten. The Python side (SageMaker ``HuggingFaceModel``/estimators) is NM411.

Why:

The replacement image, its tag and the serving stack are a deployment decision: TorchNeuron runs on Trn2/Trn3
only, trains in a TorchNeuron container and serves through the vLLM-Neuron plugin or a TorchNeuron container,
and none of these references maps mechanically to one of those.

Before::

    FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-sdk2.20.0

After::

    # neuron-migrate: deployment glue: a Neuron (PyTorch/XLA-era) deep-learning container (...); TorchNeuron trains
    # on Trn2/Trn3 instances in a TorchNeuron container: replace the image/instance and its settings by hand
    FROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-sdk2.20.0

Safety: manual-only. Each line gets a todo; the user picks the image, instance and serving stack.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

import re

from codemods._lib.shell import Report, command_statements
from codemods.launch._base import DEPLOY_TODO, LaunchRule, deployment_hits
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import Line, TextDocument

#: The advice for a reference whose use is known: a serving image/endpoint, a training job, or either.
TRAINING_TODO = ("deployment glue: {what} ({hit}); TorchNeuron trains on Trn2/Trn3 instances in a TorchNeuron "
                 "container: replace the image/instance and its settings by hand")
EITHER_TODO = ("deployment glue: {what} ({hit}); TorchNeuron runs on Trn2/Trn3 only (training in a TorchNeuron "
               "container, serving through the vLLM-Neuron plugin): replace the image/instance and its settings "
               "by hand")


def hit_kind(hit: str) -> str | None:
    """"training" or "serving" when a matched reference says which (the image name), else None."""
    if "training" in hit:
        return "training"
    if "inference" in hit or "tgi" in hit.lower() or "huggingface-neuronx" in hit:
        return "serving"
    return None


def deploy_todo(what: str, hit: str, kind: str | None) -> str:
    """The todo for a deployment reference: serving advice (vLLM-Neuron) only where the reference serves a model."""
    template = {"serving": DEPLOY_TODO, "training": TRAINING_TODO}.get(kind, EITHER_TODO) if kind else EITHER_TODO
    return template.format(what=what, hit=hit)


#: vLLM launched on its earlier built-in Neuron platform (transformers-neuronx underneath): ``vllm serve ... --device
#: neuron`` or ``python -m vllm.entrypoints...`` with the same flag. The same flag on other commands (``transformers
#: serve --device neuron``, a script's own ``--device``) is TorchNeuron's own spelling and stays quiet.
_VLLM = re.compile(r"(?<![\w.-])vllm(?:\s+serve\b|\.entrypoints\b)")
_DEVICE_NEURON = re.compile(r"--device(?:=|\s+)[\"']?neuron\b")
_VLLM_OLD = "deployment glue: vLLM on its earlier built-in Neuron platform ({hit}); "
_VLLM_PLUGIN = "on TorchNeuron vLLM serves through the vLLM-Neuron plugin (github.com/vllm-project/vllm-neuron, Trn2/Trn3)"
VLLM_TODO = (_VLLM_OLD + _VLLM_PLUGIN + " with stock `vllm serve` flags (--tensor-parallel-size, --max-model-len, "
             "--max-num-seqs): install the plugin, then check --device and the Neuron-only flags of this command "
             "(--block-size, --max-num-batched-tokens) against its quickstart")
#: the same platform chosen from Python (``LLM(model=..., device="neuron", ...)``, NM411): the same advice, in the
#: call's own argument names; the parallelism and sizes it gives stay as they are
VLLM_PYTHON_TODO = (_VLLM_OLD + _VLLM_PLUGIN + " with the stock {call} arguments (tensor_parallel_size, "
                    "max_model_len, max_num_seqs: keep them as they are): install the plugin, then check device= and "
                    "the Neuron-only arguments of this call (block_size, max_num_batched_tokens, "
                    "override_neuron_config) against its quickstart")


def _vllm_on_neuron(doc: TextDocument, report: Report) -> None:
    for statement in command_statements(doc):
        code = " ".join(cl.line.text[cl.start:cl.end].rstrip().rstrip("\\") for cl in statement)
        if not _VLLM.search(code):
            continue
        for cl in statement:
            hit = _DEVICE_NEURON.search(cl.line.text[cl.start:cl.end])
            if hit:
                report(cl.line, Severity.TODO, VLLM_TODO.format(hit=hit.group(0)))
                break


#: TGI-neuronx's compile settings, in the order the note lists them, and what vLLM-Neuron calls each.
_TGI_SETTINGS = {"HF_NUM_CORES": "--tensor-parallel-size", "HF_BATCH_SIZE": "--max-num-seqs",
                 "HF_SEQUENCE_LENGTH": "--max-model-len", "HF_AUTO_CAST_TYPE": "--dtype"}
_TGI_NAME = re.compile(r"\b(" + "|".join(_TGI_SETTINGS) + r")\b")
_TGI_WHAT = "TGI-neuronx compile settings"


def _settings_block(lines: list[Line], index: int) -> list[Line]:
    """The code lines around ``lines[index]`` at its indentation, up to a blank line or a change of indentation (one
    service's ``environment:`` list, one ``env:`` mapping, one ``docker run`` line); comment lines are passed over."""
    def belongs(line: Line) -> bool:
        text = line.text
        return bool(text.strip()) and (text.strip().startswith("#") or _indent(text) == _indent(lines[index].text))

    start, end = index, index
    while start > 0 and belongs(lines[start - 1]):
        start -= 1
    while end + 1 < len(lines) and belongs(lines[end + 1]):
        end += 1
    return [line for line in lines[start:end + 1] if not line.text.strip().startswith("#")]


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _tgi_settings_todo(names: list[str]) -> str:
    vllm = ", ".join(f"{name} -> {_TGI_SETTINGS[name]}" for name in names)
    return (f"deployment glue: {_TGI_WHAT} ({', '.join(names)}); TorchNeuron serves through the vLLM-Neuron plugin "
            f"(Trn2/Trn3), whose `vllm serve` flags carry them ({vllm}): replace the image and these settings by hand")


def edit_deployment(doc: TextDocument, report: Report) -> None:
    _vllm_on_neuron(doc, report)
    lines = list(doc)
    noted: set[int] = set()  # lines whose TGI settings an earlier line's note already lists
    for index, line in enumerate(lines):
        stripped = line.text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        hits = deployment_hits(line.text)
        kind = next((hit_kind(hit) for _, hit in hits if hit_kind(hit)), None)  # an image names the line's use
        for what, hit in hits:
            if what != _TGI_WHAT:
                report(line, Severity.TODO, deploy_todo(what, hit, kind))
            elif id(line) not in noted:  # one note per settings block, naming every setting in it
                block = _settings_block(lines, index)
                noted.update(id(other) for other in block)
                names = {match for other in block for match in _TGI_NAME.findall(other.text)}
                report(line, Severity.TODO, _tgi_settings_todo([name for name in _TGI_SETTINGS if name in names]))


class NeuronDeploymentGlue(LaunchRule):
    """Report Neuron DLC / TGI-neuronx images, optimum-cli entrypoints and non-Trn2/3 instance types."""

    id = "NM409"
    name = "neuron-deployment-glue"
    safety = Safety.MANUAL_ONLY
    triggers = ("neuronx", "--entrypoint", "HF_NUM_CORES", "HF_AUTO_CAST_TYPE", "inf1.", "inf2.", "trn1.", "trn1n.",
                "neuron")

    def apply(self, doc: TextDocument) -> None:
        edit_deployment(doc, self.report)
