"""NM501 / NM505: every ``pip install`` of one install context (a Dockerfile stage, a workflow job, a script)
installs into one environment, so a package one of them keeps holds the pins of the others (rt5H D2)."""

from codemods.deps._plan import pip_install_sets
from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

#: app code that stays on optimum-neuron after the run: a compiled folder whose checkpoint cannot be read
_KEPT = {"app/main.py": "import os\nfrom optimum.neuron import NeuronModelForCausalLM\n"
                        "model = NeuronModelForCausalLM.from_pretrained(os.environ['MODEL_DIR'])\n"}
#: the same app, ported by this run (an export=True load NM110 rewrites)
_PORTED = {"app/main.py": "from optimum.neuron import NeuronModelForCausalLM\nmodel = NeuronModelForCausalLM."
                          "from_pretrained('gpt2', export=True, batch_size=1, sequence_length=128)\n"}
_REQUIREMENTS = "fastapi==0.110.0\ntransformers==4.43.2\n"


def _requirements(installer: str, text: str, code: dict[str, str]):
    project = {"requirements.txt": _REQUIREMENTS, installer: text, **code}
    return migrate(_REQUIREMENTS, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt", project=project,
                   neuron_project=True)


def test_the_fact_groups_the_commands_of_one_stage_job_or_script() -> None:
    dockerfile = ("FROM python:3.10 AS build\nRUN pip install optimum-neuron==0.0.24 && \\\n"
                  "    pip install -r requirements.txt\nRUN pip install --upgrade 'accelerate==0.29.3' -e .\n"
                  "FROM python:3.11\nRUN pip install -r other.txt\n")
    assert pip_install_sets(dockerfile)["contexts"] == (
        ("stage", (((), ("optimum-neuron==0.0.24",)), (("requirements.txt",), ()), ((), ("accelerate==0.29.3",)))),)
    assert "text" in pip_install_sets(dockerfile)  # a Neuron package beside a requirements file: decided from it
    workflow = ("on: push\njobs:\n  neuron:\n    steps:\n      - run: pip install optimum-neuron\n"
                "      - run: pip install -r requirements.txt\n  cpu:\n    steps:\n"
                "      - run: pip install -r requirements-cpu.txt torch==2.1.2\n")
    assert [unit for unit, _ in pip_install_sets(workflow)["contexts"]] == ["job", "job"]
    # a shell script with Python in a heredoc (`from x import y`) is one script, not Dockerfile stages
    script = "python - <<EOF\nfrom transformers import AutoModel\nEOF\npip install -r requirements.txt\n"
    assert pip_install_sets(script) is None  # one file, nothing installed beside it
    assert pip_install_sets(script + "pip install torch-neuronx\n")["contexts"][0][0] == "script"


def test_a_requirements_file_installed_beside_a_kept_optimum_neuron_keeps_its_pins() -> None:
    # rt5H D2: `RUN pip install optimum-neuron==0.0.24 && pip install -r requirements.txt` for an app/main.py that
    # still imports optimum.neuron; transformers was moved to >=5.24, which optimum-neuron 0.0.24
    # (transformers==4.41.1) does not admit
    for installer, text, unit in (
            ("Dockerfile", "FROM python:3.10\nCOPY requirements.txt .\nRUN pip install optimum-neuron==0.0.24 && "
                           "\\\n    pip install -r requirements.txt\n", "stage"),
            ("Dockerfile", "FROM python:3.10\nRUN pip install optimum-neuron==0.0.24\nCOPY requirements.txt .\n"
                           "RUN pip install -r requirements.txt\n", "stage"),
            ("setup.sh", "set -e\npip3 install optimum-neuron==0.0.24\npip3 install -r requirements.txt\n", "script"),
            (".github/workflows/ci.yml", "jobs:\n  t:\n    steps:\n      - run: pip install optimum-neuron==0.0.24\n"
                                         "      - run: pip install -r requirements.txt\n", "job")):
        result = _requirements(installer, text, _KEPT)
        assert "transformers==4.43.2 was left as it is: it goes with " f"{installer}'s optimum-neuron, kept because " \
            f"app/main.py still imports optimum.neuron ({installer} installs this file in the same {unit} as " \
            "`pip install optimum-neuron==0.0.24`: pip installs both into one environment" in result.text, installer
        assert result.text.endswith("\ntransformers==4.43.2\n"), installer
        assert findings(result, "NM501") == {(2, "todo")}, installer
        # a second run (the app keeps its import, the installer its optimum-neuron with a todo) decides the same
        again = migrate(result.text, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt",
                        project={"requirements.txt": result.text, installer: text, **_KEPT}, neuron_project=True)
        assert again.text == result.text, installer


def test_a_requirements_file_moves_when_the_optimum_neuron_beside_it_moves_or_is_elsewhere() -> None:
    # no change in the decision: the app is ported (the Dockerfile's optimum-neuron moves too), optimum-neuron is
    # installed in another stage, or the command naming it is commented out
    for code, text in ((_PORTED, "FROM python:3.11\nRUN pip install optimum-neuron==0.0.24 && pip install -r "
                                 "requirements.txt\n"),
                       (_KEPT, "FROM python:3.10 AS old\nRUN pip install optimum-neuron==0.0.24\nFROM python:3.11\n"
                               "COPY requirements.txt .\nRUN pip install -r requirements.txt\n"),
                       (_KEPT, "FROM python:3.11\n# RUN pip install optimum-neuron==0.0.24\n"
                               "RUN pip install -r requirements.txt\n")):
        result = _requirements("Dockerfile", text, code)
        assert result.text == "fastapi==0.110.0\ntransformers>=5.24\n", text
        assert findings(result, "NM501") == {(2, "fixed")}, text


def test_the_pip_installs_of_a_stage_follow_the_one_that_keeps_optimum_neuron() -> None:
    # NM505: a stock pin in another command of the stage that keeps optimum-neuron stays with it; a stage that
    # installs a requirements file keeping optimum-neuron holds its pins too; another stage moves
    dockerfile = ("FROM python:3.10\nRUN pip install optimum-neuron==0.0.24 && pip install accelerate==0.29.3\n"
                  "FROM python:3.10 AS other\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n"
                  "RUN pip install transformers==4.43.2\nFROM python:3.11 AS third\n"
                  "RUN pip install accelerate==0.29.3\n")
    project = {"Dockerfile": dockerfile, "requirements.txt": "optimum-neuron==0.0.24\n", **_KEPT}
    result = migrate(dockerfile, "NM505", kind=FileKind.DOCKERFILE, path="Dockerfile", project=project,
                     neuron_project=True)
    lines = result.text.splitlines()
    assert "RUN pip install optimum-neuron==0.0.24 && pip install accelerate==0.29.3" in lines
    assert "# neuron-migrate: accelerate==0.29.3 was left as it is: it goes with optimum-neuron, kept because " \
        "app/main.py still imports optimum.neuron (`pip install optimum-neuron==0.0.24` installs it in this stage: " \
        "pip installs both into one environment" in result.text
    assert "RUN pip install transformers==4.43.2" in lines
    assert "# neuron-migrate: transformers==4.43.2 was left as it is: it goes with requirements.txt's " \
        "optimum-neuron, kept because app/main.py still imports optimum.neuron (this stage installs " \
        "requirements.txt: pip installs both into one environment" in result.text
    assert lines[-1] == 'RUN pip install "accelerate>=1.15"'
    # ported app: every stage moves
    ported = migrate(dockerfile, "NM505", kind=FileKind.DOCKERFILE, path="Dockerfile", neuron_project=True,
                     project={**project, **_PORTED})
    assert "was left as it is" not in ported.text
    assert "pip install accelerate==0.29.3" not in ported.text


def test_a_workflow_serves_its_repository() -> None:
    # a workflow under .github/workflows/ runs in a checkout of the repository: its `pip install optimum-neuron`
    # stays while the repository's app/main.py still imports optimum.neuron (before, it served .github/workflows/
    # only and was replaced); ported, it moves
    workflow = "jobs:\n  t:\n    steps:\n      - run: pip install optimum-neuron==0.0.24\n"
    for code, kept in ((_KEPT, True), (_PORTED, False)):
        result = migrate(workflow, "NM505", kind=FileKind.YAML, path=".github/workflows/ci.yml", neuron_project=True,
                         project={".github/workflows/ci.yml": workflow, **code})
        assert ("pip install optimum-neuron==0.0.24" in result.text) is kept
        assert ("optimum-neuron was left as it is: after this run app/main.py still imports optimum.neuron"
                in result.text) is kept
