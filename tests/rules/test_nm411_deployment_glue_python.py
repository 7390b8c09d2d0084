"""NM411: Neuron DLC images, TGI-neuronx settings and Inf/Trn1 instance types in SageMaker Python: todos only."""

import json

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def test_image_env_and_instance_type_get_todos() -> None:
    source = """
        from sagemaker.huggingface import HuggingFaceModel

        model = HuggingFaceModel(
            image_uri="763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference-neuronx:2.1.2",
            env={"HF_NUM_CORES": "2", "HF_MODEL_ID": "gpt2"},
            role=role,
        )
        predictor = model.deploy(instance_type="ml.inf2.xlarge", initial_instance_count=1)
        """
    result = migrate(source, "NM411")
    assert 'instance_type="ml.inf2.xlarge"' in result.text  # a deployment decision: nothing is rewritten
    assert findings(result, "NM411") == {(4, "todo"), (5, "todo"), (8, "todo")}


def test_a_gpu_deployment_is_left_alone() -> None:
    unchanged(
        """
        from sagemaker.huggingface import HuggingFaceModel

        model = HuggingFaceModel(env={"HF_MODEL_ID": "gpt2"}, role=role, transformers_version="4.49")
        predictor = model.deploy(instance_type="ml.g5.xlarge", initial_instance_count=1)
        """,
        "NM411",
    )


def _notes(result) -> list[str]:
    return [line.strip() for line in result.text.splitlines() if line.strip().startswith("# neuron-migrate:")]


def test_job_environment_notes_name_the_key_line_and_claim_no_removal() -> None:
    source = """
        estimator = PyTorch(
            entry_point="train.py",
            role=role,
            environment={
                "XLA_DOWNCAST_BF16": "1",
                "NEURON_FUSE_SOFTMAX": "1",
                "CUSTOM_CACHE_REPO": "org/cache",
            },
            instance_type="ml.trn1.32xlarge",
        )
        """
    result = migrate(source, "NM411")
    for key in ("XLA_DOWNCAST_BF16", "NEURON_FUSE_SOFTMAX", "CUSTOM_CACHE_REPO"):
        assert f'"{key}": "' in result.text  # nothing is removed from the dict ...
    notes = _notes(result)
    assert not any("(removed)" in note or "; removed:" in note for note in notes)  # ... and no note says it was
    assert sum("remove this key" in note for note in notes) == 3
    assert any(note.startswith("# neuron-migrate: line 5 of the statement below:") and "XLA_DOWNCAST_BF16" in note
               for note in notes)
    assert any(note.startswith("# neuron-migrate: line 7 of the statement below:") and "CUSTOM_CACHE_REPO" in note
               for note in notes)
    assert findings(result, "NM411") == {(5, "todo"), (6, "todo"), (7, "todo"), (9, "todo")}


def test_a_list_of_instance_types_gets_one_note() -> None:
    result = migrate('types = ["ml.inf2.xlarge", "ml.inf2.8xlarge", "ml.inf2.24xlarge"]\n', "NM411")
    notes = _notes(result)
    assert len(notes) == 1
    assert "ml.inf2.xlarge, ml.inf2.8xlarge, ml.inf2.24xlarge" in notes[0]
    assert findings(result, "NM411") == {(1, "todo")}


def test_serving_advice_only_for_serving_calls() -> None:
    source = """
        trainer = HuggingFace(entry_point="train.py", instance_type="ml.trn1.2xlarge", role=role)
        model = HuggingFaceModel(model_data=data, role=role)
        predictor = model.deploy(initial_instance_count=1, instance_type="ml.inf2.xlarge")
        """
    training_note, serving_note = _notes(migrate(source, "NM411"))
    assert "ml.trn1.2xlarge" in training_note and "vLLM" not in training_note
    assert "trains on Trn2/Trn3" in training_note
    assert "ml.inf2.xlarge" in serving_note and "vLLM-Neuron plugin" in serving_note


def test_image_and_versions_given_as_call_kwargs_are_flagged() -> None:
    source = """
        estimator = HuggingFace(
            entry_point="train.py",
            image_uri=f"{account}.dkr.ecr.{region}.amazonaws.com/pytorch-training-neuronx:1.13.1-sdk{sdk}",
            transformers_version="4.31.0",
            pytorch_version="1.13.1",
            py_version="py310",
        )
        """
    result = migrate(source, "NM411")
    notes = _notes(result)
    assert any("pytorch-training-neuronx:1.13.1-sdk" in note for note in notes)
    assert any("transformers_version='4.31.0'" in note for note in notes)
    assert any("pytorch_version='1.13.1'" in note for note in notes)
    assert findings(result, "NM411") == {(3, "todo"), (4, "todo"), (5, "todo")}


def test_versions_of_a_call_bound_to_a_neuron_image_in_an_earlier_cell_are_flagged() -> None:
    notebook = json.dumps({
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
             "source": ['image = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:1.13.1"']},
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
             "source": ['job = PyTorch(entry_point="t.py", image_uri=image, pytorch_version="1.13.1")']},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }, indent=1)
    result = migrate(notebook, "NM411", kind=FileKind.NOTEBOOK, path="jobs.ipynb")
    cells = [("".join(cell["source"])) for cell in json.loads(result.text)["cells"]]
    assert "pytorch_version='1.13.1'" in cells[1]


def test_versions_of_a_gpu_job_beside_a_neuron_one_are_left_alone() -> None:
    source = """
        neuron_job = PyTorch(entry_point="t.py", instance_type="ml.trn1.2xlarge", pytorch_version="1.13.1")
        gpu_job = PyTorch(entry_point="t.py", instance_type="ml.p4d.24xlarge", pytorch_version="1.13.1")
        current = PyTorch(entry_point="t.py", instance_type="ml.trn1.2xlarge", pytorch_version="2.14.0")
        """
    result = migrate(source, "NM411")
    version_notes = [note for note in _notes(result) if "pytorch_version" in note]
    assert len(version_notes) == 1
    assert result.text.index(version_notes[0]) < result.text.index("neuron_job =")
    assert findings(result, "NM411") == {(1, "todo"), (3, "todo")}


def test_a_compile_only_job_is_told_to_go() -> None:
    source = """
        job = PyTorch(entry_point="train.py", environment={"RUN_NEURON_PARALLEL_COMPILE": "1", "FI_EFA_FORK_SAFE": "1"})
        job.fit()
        real = PyTorch(entry_point="train.py", environment={"RUN_NEURON_PARALLEL_COMPILE": "0"})
        """
    result = migrate(source, "NM411")
    compile_note, off_note = _notes(result)
    assert "would now train in full" in compile_note and "delete this estimator and its .fit()" in compile_note
    assert "remove this key" in off_note and "delete this estimator" not in off_note
    assert findings(result, "NM411") == {(1, "todo"), (3, "todo")}


# ---------------------------------------------------------------- job environment keys the env table removes (D14)

_TRAINER = ("from optimum.neuron import NeuronHfArgumentParser, NeuronTrainingArguments\n\n"
            "(args,) = NeuronHfArgumentParser((NeuronTrainingArguments,)).parse_args_into_dataclasses()\n")
_JOB = """
    job = PyTorch(
        entry_point="train.py",
        source_dir="code",
        image_uri="pytorch-training-neuronx:2.1.2",
        environment={
            "NEURON_FUSE_SOFTMAX": "1",
            "XLA_DOWNCAST_BF16": "1",
            "FI_EFA_FORK_SAFE": "1",
        },
    )
    """


def _job(source: str = _JOB, **project: str):
    return migrate(source, "NM411", path="launch.py", project={"code/train.py": _TRAINER, **project})


def test_plain_remove_key_of_a_ported_training_job_goes_and_the_notes_count_the_lines_left() -> None:
    result = _job()
    assert '"NEURON_FUSE_SOFTMAX"' not in result.text
    assert '        "XLA_DOWNCAST_BF16": "1",\n        "FI_EFA_FORK_SAFE": "1",\n    },\n' in result.text
    assert ("fixed", "NEURON_FUSE_SOFTMAX") in {(f.severity.value, f.message.split()[2]) for f in result.findings}
    note = next(n for n in _notes(result) if "XLA_DOWNCAST_BF16" in n)  # a precision variable keeps its todo ...
    lines = result.text.splitlines()
    statement = next(i for i, line in enumerate(lines) if line.startswith("job = "))
    # ... and its "line N" is the line it is on now
    assert lines[statement + int(note.split()[3]) - 1].strip().startswith('"XLA_DOWNCAST_BF16"')


def test_key_the_jobs_code_reads_stays_with_a_todo_that_says_so() -> None:
    reader = _TRAINER + "import os\nfuse = os.environ.get('NEURON_FUSE_SOFTMAX')\n"
    result = _job(**{"code/train.py": reader})
    assert '"NEURON_FUSE_SOFTMAX": "1"' in result.text
    assert any("NEURON_FUSE_SOFTMAX was left as it is: code/train.py still reads it" in n for n in _notes(result))


def test_a_read_outside_the_uploaded_folder_does_not_keep_it_but_dependencies_do() -> None:
    elsewhere = {"tools/probe.py": "import os\nprint(os.environ.get('NEURON_FUSE_SOFTMAX'))\n"}
    assert '"NEURON_FUSE_SOFTMAX"' not in _job(**elsewhere).text
    shipped = _JOB.replace('source_dir="code",', 'source_dir="code",\n        dependencies=["tools"],')
    assert '"NEURON_FUSE_SOFTMAX": "1"' in _job(shipped, **elsewhere).text


def test_keys_stay_when_the_job_script_is_not_known_or_stays_on_xla_or_the_call_serves() -> None:
    outside = _JOB.replace('entry_point="train.py"', 'entry_point="other.py"')
    assert '"NEURON_FUSE_SOFTMAX": "1"' in _job(outside).text
    fsdp = _TRAINER + "from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP\nFSDP(model)\n"
    assert '"NEURON_FUSE_SOFTMAX": "1"' in _job(**{"code/train.py": fsdp}).text
    serving = _JOB.replace("job = PyTorch(", "model = HuggingFaceModel(").replace("environment=", "env=")
    assert '"NEURON_FUSE_SOFTMAX": "1"' in _job(serving).text


def test_bound_environment_dict_of_an_earlier_notebook_cell_is_edited_in_its_cell() -> None:
    cells = ['env = {"NEURON_FUSE_SOFTMAX": "1", "FI_EFA_FORK_SAFE": "1"}\n',
             'job = PyTorch(entry_point="train.py", source_dir="code", image_uri="pytorch-training-neuronx:2.1.2",'
             ' environment=env)\n']
    notebook = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                      "source": cell} for cell in cells], "metadata": {}, "nbformat": 4,
                           "nbformat_minor": 5})
    result = migrate(notebook, "NM411", kind=FileKind.NOTEBOOK, path="job.ipynb",
                     project={"code/train.py": _TRAINER})
    assert "".join(json.loads(result.text)["cells"][0]["source"]) == 'env = {"FI_EFA_FORK_SAFE": "1"}\n'


# -------------------------------------- job keywords kept in a dict(...) passed as **name (rt3C #13)

_SPLAT = """
    env = {
        "NEURON_CC_FLAGS": "--model-type=transformer --cache_dir=/var/tmp/cache",
        "NEURON_RT_STOCHASTIC_ROUNDING_EN": "1",
        "NEURON_FUSE_SOFTMAX": "1",
        "HF_TOKEN": "<token>",
    }
    common = dict(
        entry_point="train.py",
        source_dir="code",
        instance_type="ml.trn1.32xlarge",
        environment=env,
    )
    if USE_HF_DLC:
        estimator = HuggingFace(transformers_version="4.36.2", **common)
    else:
        estimator = PyTorch(framework_version="2.1.2", **common)
    """


def test_environment_reached_through_a_splatted_dict_call_gets_the_shell_decisions() -> None:
    result = _job(_SPLAT)
    notes = _notes(result)
    # the review keys get the notes the shell gives them (NM405's words for the NEURON_CC_FLAGS value) ...
    assert any("review NEURON_CC_FLAGS" in note and "drop --cache_dir=/var/tmp/cache" in note for note in notes)
    assert any("review NEURON_RT_STOCHASTIC_ROUNDING_EN" in note for note in notes)
    # ... and the key the table removes goes, as it does from a dict written in the estimator
    assert '"NEURON_FUSE_SOFTMAX"' not in result.text and '"HF_TOKEN": "<token>"' in result.text
    assert ("fixed", "NEURON_FUSE_SOFTMAX") in {(f.severity.value, f.message.split()[2]) for f in result.findings}


def test_a_splatted_dict_call_that_also_feeds_a_serving_call_or_none_keeps_its_keys_with_notes() -> None:
    serving = _SPLAT.replace("estimator = PyTorch(", "estimator = HuggingFaceModel(")
    for source in (serving, _SPLAT.replace("**common", "**other")):
        result = _job(source)
        assert '"NEURON_FUSE_SOFTMAX": "1"' in result.text
        assert any("NEURON_FUSE_SOFTMAX" in note and "remove this key" in note for note in _notes(result))
        assert any("review NEURON_RT_STOCHASTIC_ROUNDING_EN" in note for note in _notes(result))


def test_vllm_neuron_platform_from_python_gets_the_serve_todo() -> None:
    """rt8Q-08: ``LLM(device="neuron")`` is the platform ``vllm serve --device neuron`` picks (NM409's todo); the
    call, its tensor_parallel_size included, stays as it is."""
    source = """
        from vllm import LLM

        llm = LLM(model="m", device="neuron", tensor_parallel_size=2, max_model_len=1024, block_size=1024)
        """
    result = migrate(source, "NM411")
    assert 'LLM(model="m", device="neuron", tensor_parallel_size=2, max_model_len=1024, block_size=1024)' in result.text
    assert findings(result, "NM411") == {(3, "todo")}
    assert "vLLM-Neuron plugin" in result.text and "keep them as they are" in result.text


def test_an_llm_class_not_from_vllm_is_left_alone() -> None:
    unchanged(
        """
        from vllm import SamplingParams
        from mylib import LLM

        llm = LLM(path="w", device="neuron")
        gpu = SamplingParams(max_tokens=4)
        """,
        "NM411",
    )
