"""NM904 deployment-target: one project-level todo, on the line of the strongest evidence, when the project names
Inf1 / Inf2 / Trn1 (where TorchNeuron does not run); none for a Trn2/Trn3 project or one naming no target."""

from __future__ import annotations

import textwrap

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

RULE = "NM904"
SERVE = "from optimum.neuron import NeuronModelForCausalLM\n\nmodel = NeuronModelForCausalLM.from_pretrained('out')\n"
README = "# evalgen\n\nBatch generation for decoder LLMs on Inferentia2.\n"


def _run(project: dict[str, str], select=("NM9",)) -> dict[str, list[tuple[int, str, str]]]:
    """Every file of ``project`` through the rules, twice (the second over the first's output, as a second run
    of the tool sees it): the NM904 findings per file, (line, severity, message)."""
    project = {name: textwrap.dedent(text).lstrip("\n") for name, text in project.items()}
    found: dict[str, list[tuple[int, str, str]]] = {}
    outputs = {}
    for name, text in project.items():
        kind = FileKind.DOCS if name.endswith(".md") else None
        result = apply_rules(text, kind or _kind(name), select=select, path=name, project=project)
        outputs[name] = result.text
        found[name] = [(f.line, f.severity.value, f.message) for f in result.findings if f.rule == RULE]
    for name, text in outputs.items():  # a second run: the notes of the first do not change what it says
        again = apply_rules(text, _kind(name), select=select, path=name, project=outputs)
        assert again.text == text, f"{name}: a second run changed the output"
        assert [f.message for f in again.findings if f.rule == RULE] == [m for _, _, m in found[name]]
    return {name: hits for name, hits in found.items() if hits}


def _kind(name: str) -> FileKind:
    from pathlib import PurePath

    from migrate.filekinds import kind_from_name

    kind = kind_from_name(PurePath(name))
    assert kind is not None
    return kind


def test_an_inf2_project_named_in_prose_only_gets_one_todo_in_its_readme():
    found = _run({"README.md": README, "serve.py": SERVE, "scripts/export.sh": "#!/bin/bash\n# for inf2.8xlarge\n"})
    assert list(found) == ["README.md"]
    [(line, severity, message)] = found["README.md"]
    assert (line, severity) == (3, "todo")
    assert "README.md: 'Inferentia2' (prose); scripts/export.sh: 'inf2.8xlarge' (prose)" in message
    assert "TorchNeuron runs on Trn2/Trn3 only" in message and "Inf2 inference can stay on optimum-neuron" in message
    assert "Trn1 run" not in message


def test_an_instance_type_line_keeps_only_nm409s_todo_and_the_project_todo_goes_to_the_next_evidence():
    job = """
        #!/bin/bash
        # launch the endpoint
        aws sagemaker create-endpoint-config --instance-type ml.inf2.xlarge --name gen
    """
    found = _run({"README.md": README, "serve.py": SERVE, "deploy.sh": job}, select=("NM9", "NM409"))
    assert list(found) == ["README.md"]  # a README line: reported, no note written in it
    [(line, severity, message)] = found["README.md"]
    assert (line, severity) == (3, "todo")
    assert message.index("deploy.sh: 'ml.inf2.xlarge'") < message.index("README.md: 'Inferentia2' (prose)")
    result = apply_rules(textwrap.dedent(job).lstrip("\n"), FileKind.SHELL, select=("NM9", "NM409"), path="deploy.sh",
                         project={"README.md": README, "deploy.sh": textwrap.dedent(job).lstrip("\n")})
    assert {f.rule for f in result.findings if f.line == 3} == {"NM409"}  # NM409's per-line todo stays, alone
    assert "# neuron-migrate: deployment target:" not in result.text


def test_a_config_line_that_is_no_instance_type_outranks_prose_and_instance_types_alone_share_the_line():
    pool = """
        nodeSelector:
          node.kubernetes.io/instance-type: inf2.8xlarge
          karpenter.k8s.aws/instance-family: inf2
    """
    found = _run({"README.md": README, "serve.py": SERVE, "k8s/pool.yaml": pool}, select=("NM9", "NM409"))
    assert list(found) == ["k8s/pool.yaml"] and found["k8s/pool.yaml"][0][0] == 3
    job = "#!/bin/bash\naws sagemaker create-endpoint-config --instance-type ml.inf2.xlarge --name gen\n"
    found = _run({"serve.py": SERVE, "deploy.sh": job}, select=("NM9", "NM409"))
    assert list(found) == ["deploy.sh"] and found["deploy.sh"][0][0] == 2  # no other evidence: the todo stays here
    result = apply_rules(job, FileKind.SHELL, select=("NM9", "NM409"), path="deploy.sh", project={"deploy.sh": job})
    assert {f.rule for f in result.findings if f.line == 2} == {"NM409", RULE}
    assert result.text.count("# neuron-migrate: deployment target:") == 1


def test_a_python_setting_and_a_trn1_training_project():
    train = """
        import os

        os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = "trn1"
        from optimum.neuron import NeuronTrainer
    """
    found = _run({"train.py": train})
    [(line, severity, message)] = found["train.py"]
    assert (line, severity) == (3, "todo")
    assert "names Trn1 (train.py: 'NEURON_PLATFORM_TARGET_OVERRIDE=trn1')" in message
    assert "A Trn1 run needs a Trn2/Trn3 instance now" in message and "Inf2 inference" not in message


def test_the_inf1_extra_is_evidence_and_a_notebook_markdown_cell_holds_the_todo_when_it_is_the_strongest():
    found = _run({"requirements.txt": "optimum[neuron]==1.20.0\n"})
    [(line, _, message)] = found["requirements.txt"]
    assert line == 1 and "names Inf1 (requirements.txt: 'optimum[neuron]')" in message
    notebook = ('{"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Generation on Inferentia2\\n"]},'
                ' {"cell_type": "code", "metadata": {}, "execution_count": null, "outputs": [], "source":'
                ' ["from optimum.neuron import NeuronModelForCausalLM\\n"]}], "metadata": {}, "nbformat": 4,'
                ' "nbformat_minor": 5}\n')
    found = _run({"nb.ipynb": notebook, "serve.py": SERVE})
    assert list(found) == ["nb.ipynb"]
    [(line, _, message)] = found["nb.ipynb"]
    assert message.startswith("cell 1, line 1: deployment target: this project names Inf2 (nb.ipynb cell 1:")


def test_no_target_trn2_only_or_old_chips_in_prose_beside_a_trn2_config_say_nothing():
    assert _run({"README.md": "# gen\n\nBatch generation on Trainium.\n", "serve.py": SERVE}) == {}
    assert _run({"deploy.sh": "#!/bin/bash\naws ec2 run-instances --instance-type trn2.48xlarge\n",
                 "serve.py": SERVE}) == {}
    assert _run({"README.md": "# gen\n\nFaster than on Trn1 or Inf2.\n", "serve.py": SERVE,
                 "deploy.sh": "#!/bin/bash\naws ec2 run-instances --instance-type trn2.48xlarge\n"}) == {}
    # a word that only contains the letters is not a chip; the tool's own notes are not evidence either
    assert _run({"train.py": "# neuron-migrate: TorchNeuron has no Inf2 path\nconfig_inf2x = 1\n" + SERVE}) == {}


def test_among_prose_a_doc_holds_the_todo_before_a_script_comment():
    found = _run({"a_run.sh": "#!/bin/bash\n# tested on trn1.32xlarge\ntorchrun train.py\n",
                  "docs/setup.md": "# Setup\n\nStart a trn1.32xlarge instance.\n", "train.py": SERVE})
    assert list(found) == ["docs/setup.md"] and found["docs/setup.md"][0][0] == 3
