"""The optimum-neuron line a file was written for, from the project's own pins (codemods/_lib/optimum_version.py)."""

from __future__ import annotations

from pathlib import PurePath

from codemods._lib.optimum_version import PINS, Line, data_parallel_key, optimum_line
from migrate.facts import merge


def _project(files: dict[str, str]):
    return merge(files, [(path, {PINS.name: pins} if (pins := PINS.collect(text)) else {}) for path, text in files.items()])


def test_notebook_pip_pin_in_the_same_folder_decides() -> None:
    project = _project({
        "hf_summarization/T5Large.ipynb": '"%pip install -U optimum-neuron==0.0.15 accelerate==0.23.0\\n"',
        "hf_summarization/run_summarization.py": "import os\n",
        "llama/requirements.txt": "optimum-neuron>=0.4.1\n",
        "llama/train.py": "",
    })
    assert optimum_line(project, PurePath("hf_summarization/run_summarization.py")) is Line.UP_TO_03
    assert optimum_line(project, PurePath("llama/train.py")) is Line.FROM_04
    # a file with no pin in its folders, in a project whose pins disagree: unknown
    assert optimum_line(project, PurePath("other/train.py")) is Line.UNKNOWN


def test_pins_of_a_folder_above_and_of_the_whole_project() -> None:
    project = _project({"requirements.txt": "optimum-neuron[training]==0.3.0\n", "src/deep/train.py": ""})
    assert optimum_line(project, PurePath("src/deep/train.py")) is Line.UP_TO_03
    assert optimum_line(_project({"a/setup.py": 'install_requires=["optimum-neuron~=0.4.3"]'}),
                        PurePath("b/train.py")) is Line.FROM_04


def test_open_or_missing_pins_are_unknown() -> None:
    assert optimum_line(_project({"requirements.txt": "optimum-neuron>=0.0.20\n"}), PurePath("t.py")) is Line.UNKNOWN
    assert optimum_line(_project({"requirements.txt": "optimum-neuron\n"}), PurePath("t.py")) is Line.UNKNOWN
    assert optimum_line(_project({"t.py": ""}), PurePath("t.py")) is Line.UNKNOWN


def test_mesh_key_keeps_plain_data_parallelism_unless_zero_1_was_on_by_default() -> None:
    assert data_parallel_key(Line.UP_TO_03) == "dp_replicate_size"
    assert data_parallel_key(Line.UNKNOWN) == "dp_replicate_size"
    assert data_parallel_key(Line.FROM_04) == "fsdp_size"


def test_prose_is_not_a_pin() -> None:
    # a docstring or a comment nearer to the file must not override the requirements file of the folder above
    project = _project({
        "requirements.txt": "optimum-neuron==0.0.25\n",
        "src/sft_train.py": '"""Fine-tuning with NeuronSFTTrainer (optimum-neuron >= 0.0.25)."""\n'
                            "# ported to optimum-neuron>=0.4 later\nimport os\n",
        "deploy/setup.py": 'setup(name="x", install_requires=["optimum-neuron>=0.4.1"])\n',
        "deploy/app.py": "",
    })
    assert PINS.collect('"""Uses optimum-neuron >= 0.0.25."""\n') is None
    assert optimum_line(project, PurePath("src/sft_train.py")) is Line.UP_TO_03
    assert optimum_line(project, PurePath("deploy/app.py")) is Line.FROM_04  # a declared requirement still counts


def test_a_second_run_reads_the_line_its_first_run_noted() -> None:
    # run 1 replaced the requirements pin; the note it left in the code names the line it found, so run 2 decides
    # the same (it would say "not pinned" and add a contradicting note)
    project = _project({
        "requirements.txt": "torch-neuronx==2.14.*\ntransformers>=5.24\n",
        "scripts/train.py": "# neuron-migrate: ... the project pins optimum-neuron <= 0.3.0, where zero_1 defaulted to "
                            "False: the data-parallel rest of the mesh stays plain replication (dp_replicate_size)\n",
        "scripts/other.py": "",
    })
    assert optimum_line(project, PurePath("scripts/train.py")) is Line.UP_TO_03
    assert optimum_line(project, PurePath("scripts/other.py")) is Line.UP_TO_03
    assert PINS.collect("# neuron-migrate: the project's optimum-neuron version is not pinned: up to 0.3.0 ...") is None
