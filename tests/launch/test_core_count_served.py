"""NM405's core-count note for a model server follows the code it serves (rt5H D7): an app that stays on
optimum-neuron keeps the setting, a migrated one drops it, an unknown one waits; a manifest that runs its image's
command borrows the note of the project's one Dockerfile."""

from __future__ import annotations

from codemods.launch.nm405_review_neuron_env import image_command, launcher_of
from migrate.filekinds import FileKind
from migrate.testing import apply_rules

_KEPT = "import os\nfrom optimum.neuron import NeuronModelForCausalLM\n" \
        "model = NeuronModelForCausalLM.from_pretrained(os.environ['MODEL_DIR'])\n"
_PORTED = "from optimum.neuron import NeuronModelForCausalLM\n" \
          "model = NeuronModelForCausalLM.from_pretrained('gpt2', export=True, batch_size=1, sequence_length=128)\n"
_DOCKERFILE = 'FROM python:3.11\nENV NEURON_RT_NUM_CORES=2\nCMD ["uvicorn", "app.main:app", "--port", "8080"]\n'
_MANIFEST = ("spec:\n  containers:\n    - name: s\n      image: example/serve:1\n      env:\n"
             "        - name: NEURON_RT_NUM_CORES\n          value: \"2\"\n")


def _notes(text: str, kind: FileKind, path: str, project: dict[str, str]) -> list[str]:
    result = apply_rules(text, kind, path=path, select=["NM1", "NM405"], project={path: text, **project})
    return [f.message for f in result.findings if f.rule == "NM405"]


def test_the_server_names_what_it_serves() -> None:
    for command, serves, module in (("uvicorn app.main:app --host 0.0.0.0", "app.main", True),
                                    ("python -m gunicorn -k uvicorn.workers.UvicornWorker -b 0.0.0.0:80 srv:create()",
                                     "srv", True),
                                    ("fastapi run app/main.py", "app/main.py", False),
                                    ("uvicorn --factory", None, True)):
        found = launcher_of(command.split())
        assert found is not None and found.kind == "serving", command
        assert (found.serves, found.module) == (serves, module), command


def test_a_served_app_that_stays_on_optimum_neuron_keeps_the_setting() -> None:
    [note] = _notes(_DOCKERFILE, FileKind.DOCKERFILE, "Dockerfile", {"app/main.py": _KEPT})
    assert note.startswith("review NEURON_RT_NUM_CORES: uvicorn serves app/main.py, which stays on optimum-neuron "
                           "after this run (see its findings)")
    assert "keep it while app/main.py stays on optimum-neuron; once it is ported" in note
    assert "migrated" not in note and "torchrun" not in note
    [note] = _notes(_DOCKERFILE, FileKind.DOCKERFILE, "Dockerfile", {"app/main.py": _PORTED})
    assert note.startswith("review NEURON_RT_NUM_CORES: uvicorn serves app/main.py, which this run migrated, from "
                           "one process per replica")
    assert "remove it (to spread one model over several NeuronCores, serve it with the vLLM-Neuron plugin" in note
    [note] = _notes(_DOCKERFILE, FileKind.DOCKERFILE, "Dockerfile", {})  # app/main.py is no file of the project
    assert "remove it once the code it serves runs on TorchNeuron" in note and "migrated" not in note


def test_a_manifest_without_a_command_runs_its_images() -> None:
    [note] = _notes(_MANIFEST, FileKind.YAML, "k8s/deployment.yaml", {"Dockerfile": _DOCKERFILE, "app/main.py": _KEPT})
    assert note.startswith("review NEURON_RT_NUM_CORES: no command is given here, so the container runs its image's; "
                           "if the image is built from Dockerfile (`uvicorn app.main:app --port 8080`): uvicorn serves "
                           "app/main.py, which stays on optimum-neuron")
    assert "torchrun" not in note
    # no change in the reasoning: a container with its own command, or two Dockerfiles running different things
    table = ("review NEURON_RT_NUM_CORES: TorchNeuron drives one NeuronCore per process; launch with torchrun "
             "--nproc_per_node <cores> instead and remove this")
    own = _MANIFEST.replace("      env:\n", "      command: [\"python\", \"batch.py\"]\n      env:\n")
    assert _notes(own, FileKind.YAML, "k8s/job.yaml", {"Dockerfile": _DOCKERFILE, "app/main.py": _KEPT}) == [table]
    two = {"Dockerfile": _DOCKERFILE, "train/Dockerfile": 'FROM python:3.11\nCMD ["torchrun", "train.py"]\n'}
    assert _notes(_MANIFEST, FileKind.YAML, "k8s/deployment.yaml", two) == [table]


def test_the_image_command_fact() -> None:
    assert image_command('FROM a AS build\nCMD ["make"]\nFROM b\nENTRYPOINT ["gunicorn"]\nCMD --bind :80 app:app\n') \
        == ("gunicorn", "--bind", ":80", "app:app")
    assert image_command("FROM a\nRUN make\n") is None


def test_a_kept_model_module_beside_the_served_app_keeps_the_setting() -> None:
    # the served app/server.py imports its model from app/model.py, which stays on optimum-neuron: not "migrated"
    server = "from fastapi import FastAPI\nfrom app.model import model\napp = FastAPI()\n"
    dockerfile = _DOCKERFILE.replace("app.main:app", "app.server:app")
    [note] = _notes(dockerfile, FileKind.DOCKERFILE, "Dockerfile", {"app/server.py": server, "app/model.py": _KEPT})
    assert note.startswith("review NEURON_RT_NUM_CORES: uvicorn serves app/server.py, and app/model.py beside it "
                           "stays on optimum-neuron after this run (see its findings): if the served model comes from "
                           "there")
    assert "keep it while app/model.py stays on optimum-neuron" in note and "migrated" not in note
    [note] = _notes(dockerfile, FileKind.DOCKERFILE, "Dockerfile", {"app/server.py": server, "app/model.py": _PORTED})
    assert "app/server.py, which this run migrated" in note
