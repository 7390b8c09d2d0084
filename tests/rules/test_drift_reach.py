"""Scope per file for the transformers-5 drift rules (codemods/drift/_reach.py): they change the files the Neuron
migration reaches (Neuron code, what it imports, what Neuron launchers run, what runs where the project installs the
Neuron stack) and leave any other file of a Neuron project alone with one info finding."""

from __future__ import annotations

import json

from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.testing import apply_rules

STOCK = ('import torch\nfrom transformers import AutoModel\n\n'
         'model = AutoModel.from_pretrained("m", torch_dtype=torch.bfloat16)\n')
MOVED = STOCK.replace("torch_dtype=", "dtype=")
NEURON = "from optimum.neuron import NeuronTrainer\n"


def run(path: str, project: dict[str, str], source: str = STOCK, kind: FileKind = FileKind.PYTHON):
    project = {**project, path: source}
    result = apply_rules(source, kind, select=["NM6"], path=path, project=project)
    again = apply_rules(result.text, kind, select=["NM6"], path=path, project=project)
    assert again.text == result.text
    return result


def left_alone(result) -> bool:
    return [(f.severity, f.rule) for f in result.findings] == [(Severity.INFO, "NM604")]


def test_a_file_nothing_neuron_imports_or_launches_is_left_alone():
    result = run("tools/plot.py", {"src/train.py": NEURON, "src/requirements.txt": "optimum-neuron\n"})
    assert result.text == STOCK and left_alone(result)
    assert "no Neuron code imports or launches it" in result.findings[0].message
    assert "upgrade it with the rest of the project if it moves to transformers 5" in result.findings[0].message


def test_the_neuron_file_itself_and_its_transitive_imports_are_reached():
    project = {"src/train.py": NEURON + "import helpers\n", "src/helpers.py": "from .data import load\n",
               "src/__init__.py": ""}
    assert run("src/train.py", project, NEURON + STOCK).text == NEURON + MOVED
    assert run("src/data.py", project).text == MOVED  # train -> helpers -> .data


def test_a_script_a_neuron_python_file_runs_is_reached():
    project = {"src/train.py": NEURON + 'import subprocess\nsubprocess.run(["python", "eval_model.py"])\n'}
    assert run("src/eval_model.py", project).text == MOVED


def test_a_launcher_with_no_neuron_sign_outside_the_neuron_environment_does_not_reach():
    project = {"src/train.py": NEURON, "src/requirements.txt": "optimum-neuron\n",
               "cpu/run.sh": "python bench.py --steps 10\n"}
    result = run("cpu/bench.py", project)
    assert result.text == STOCK and left_alone(result)
    assert "what runs it (cpu/run.sh) shows no Neuron sign" in result.findings[0].message
    # the same launcher where the project installs the Neuron stack runs it there
    assert run("cpu/bench.py", {**project, "cpu/requirements.txt": "torch-neuronx\n"}).text == MOVED


def test_an_estimator_on_trainium_reaches_its_entry_point_and_one_on_a_gpu_does_not():
    trn = 'PyTorch(entry_point="train.py", source_dir="../code", instance_type="ml.trn1.32xlarge").fit()\n'
    project = {"src/neuron.py": NEURON, "launch/job.py": trn, "code/train.py": STOCK, "other/train.py": STOCK}
    assert run("code/train.py", project).text == MOVED
    gpu = {**project, "launch/job.py": trn.replace("ml.trn1.32xlarge", "ml.g5.2xlarge")}
    result = run("code/train.py", gpu)
    assert result.text == STOCK and "launch/job.py" in result.findings[0].message


def test_a_gpu_notebook_beside_neuron_code_is_left_alone_and_a_neuron_notebook_is_not():
    def notebook(*cells: str) -> str:
        return json.dumps({"cells": [{"cell_type": "code", "source": cell, "metadata": {}, "outputs": [],
                                      "execution_count": None} for cell in cells],
                           "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    load = 'AutoModel.from_pretrained("m", torch_dtype=torch.float16)'
    gpu = notebook("import torch\nfrom transformers import AutoModel", load)
    project = {"src/train.py": NEURON, "src/requirements.txt": "optimum-neuron\n"}
    result = run("notebooks/gpu.ipynb", project, gpu, FileKind.NOTEBOOK)
    assert result.text == gpu and [(f.severity, f.rule) for f in result.findings] == [(Severity.INFO, "NM604")]
    neuron = notebook("!pip install optimum-neuron", "import torch\nfrom transformers import AutoModel", load)
    assert "dtype=torch.float16" in run("notebooks/neuron.ipynb", project, neuron, FileKind.NOTEBOOK).text


def test_a_run_with_no_neuron_sign_at_all_keeps_every_file_in_scope():
    # the project is Neuron by option only (--xla, a test): nothing to tell files apart by
    assert run("tools/plot.py", {"tools/other.py": "import os\n"}).text == MOVED
    # a snippet that is not one of the run's files (a %%writefile cell, a test) is in scope
    result = apply_rules(STOCK, select=["NM6"], path="elsewhere.py", project={"src/train.py": NEURON})
    assert result.text == MOVED


def test_the_verification_pass_does_not_check_a_file_left_alone_against_transformers_5():
    source = ('from transformers import Trainer, TrainingArguments\n\n'
              'args = TrainingArguments(output_dir="o", warmup_ratio=0.1, not_a_field=1)\n'
              'Trainer(args=args)\n')
    project = {"src/train.py": NEURON, "src/requirements.txt": "optimum-neuron\n", "gpu/bench.py": source}
    kept = apply_rules(source, select=["NM2", "NM6", "NM7"], path="gpu/bench.py", project=project)
    assert kept.text == source
    assert [(f.severity, f.rule) for f in kept.findings] == [(Severity.INFO, "NM601")]
    # the same file where the project installs the Neuron stack moves to transformers 5, and is verified there
    project = {**project, "gpu/requirements.txt": "optimum-neuron\n"}
    moved = apply_rules(source, select=["NM2", "NM6", "NM7"], path="gpu/bench.py", project=project)
    assert "warmup_steps=0.1" in moved.text
    assert any(f.rule.startswith("NM7") and f.severity is Severity.ERROR for f in moved.findings)


def test_a_closer_folder_pinning_transformers_4_without_neuron_runs_its_own_stack():
    project = {"requirements.txt": "optimum-neuron==0.0.24\n", "src/train.py": NEURON}
    assert run("baseline/train.py", project).text == MOVED  # the project's Neuron environment
    pinned = {**project, "baseline/requirements.txt": "transformers==4.36.2\ntorch\n"}
    result = run("baseline/train.py", pinned)
    assert result.text == STOCK and left_alone(result)
    # a Neuron requirements file pins transformers 4 too: that folder still installs the Neuron stack
    neuron_pins = {**project, "baseline/requirements.txt": "optimum-neuron==0.0.24\ntransformers==4.36.2\n"}
    assert run("baseline/train.py", neuron_pins).text == MOVED
    # what Neuron code imports runs on the Neuron stack wherever it sits
    imported = {**pinned, "src/train.py": NEURON + "from baseline.train import model\n"}
    assert run("baseline/train.py", imported).text == MOVED
