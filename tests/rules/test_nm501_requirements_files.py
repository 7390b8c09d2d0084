"""NM501: requirements files move from optimum-neuron / PyTorch-XLA to the TorchNeuron stack."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def _requirements(source: str, **options):
    return migrate(source, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt", **options)


def test_optimum_neuron_with_extras_becomes_the_stack_and_torch_xla_goes() -> None:
    result = _requirements(
        """
        optimum-neuron[training]==0.0.25  # recipe pin
        torch-xla==2.1.2
        --extra-index-url https://pip.repos.neuron.amazonaws.com
        """
    )
    assert result.text.splitlines() == [
        "torch-neuronx==2.14.*  # recipe pin",
        "torch==2.14.*",
        "transformers>=5.24",
        "accelerate>=1.15",
        "trl>=1.16",
        "peft>=0.21",
        "datasets",
        "--extra-index-url https://pip.repos.neuron.amazonaws.com",
    ]
    # the index option names the Neuron repository: no todo about where torch-neuronx comes from
    assert findings(result, "NM501") == {(1, "fixed"), (2, "fixed")}


def test_xla_era_builds_compiler_and_stock_floors() -> None:
    result = _requirements(
        """
        torch-neuronx==2.1.2.2.0.0
        neuronx-cc==2.14.*
        torchvision==0.16.0
        huggingface_hub==0.24.0
        """
    )
    lines = [line for line in result.text.splitlines() if not line.startswith("# neuron-migrate:")]
    # no index option names AWS's Neuron repository: the line is written, so every `pip install -r` of it resolves
    assert lines[0] == "--extra-index-url https://pip.repos.neuron.amazonaws.com"
    assert lines[1] == "torch-neuronx==2.14.*"
    assert lines[2] == "neuronx-cc==2.28.*"
    assert lines[3] == "torchvision==0.29.*"  # the release built for torch 2.14 (0.16 requires torch 2.1)
    assert lines[4].startswith("huggingface_hub>=") and "<3.0" in lines[4]  # the floor transformers 5 requires
    assert findings(result, "NM501") == {(1, "fixed"), (2, "todo"), (3, "fixed"), (4, "fixed")}


def test_an_inf1_requirement_set_is_left_as_it_is_with_one_todo() -> None:
    # optimum[neuron] / neuron-cc / torch-neuron make it an Inf1 set: adding torch 2.14 and transformers 5 beside
    # them gives a set pip cannot resolve, so no line changes, not even the optimum-neuron or stock pins
    source = """
        neuron-cc[tensorflow]==1.22.0
        optimum[neuron]==1.20.0
        optimum-neuron==0.0.23
        transformers==4.36.2
        torch-xla==2.1.2
        """
    result = _requirements(source)
    lines = [line for line in result.text.splitlines() if not line.startswith("# neuron-migrate:")]
    assert lines == [line.strip() for line in source.strip().splitlines()]
    assert findings(result, "NM501") == {(1, "todo")}
    assert "an Inf1 requirement set (neuron-cc[tensorflow], optimum[neuron])" in result.text
    # each Inf1 package alone is enough, optimum-neuron's own [neuron] extra included
    for inf1 in ("torch-neuron==1.13.1.2.9.6.0", "optimum-neuron[neuron]==0.0.20", "tensorflow-neuron==2.10.1"):
        result = _requirements(f"{inf1}\noptimum-neuron==0.0.23\n")
        assert result.text.endswith(f"{inf1}\noptimum-neuron==0.0.23\n"), inf1
        assert findings(result, "NM501") == {(1, "todo")}, inf1


def test_optimum_neuronx_is_not_inf1() -> None:
    result = _requirements("optimum[neuronx]==1.20.0\n")
    assert "torch-neuronx==2.14.*" in result.text and "Inf1" not in result.text


def test_a_package_the_code_still_imports_stays_with_a_todo_naming_the_importer() -> None:
    result = _requirements(
        """
        neuronx-distributed==0.9.0
        """,
        project={"train.py": "import neuronx_distributed\n", "requirements.txt": "neuronx-distributed==0.9.0\n"},
    )
    assert "neuronx-distributed==0.9.0\n" in result.text
    todo = next(f for f in result.findings if f.rule == "NM501")
    assert todo.severity.value == "todo" and "still imported by train.py" in todo.message


def test_hashed_lines_and_a_tpu_project_are_left_alone() -> None:
    unchanged(
        """
        torch-xla==2.1.2 --hash=sha256:0123
        """,
        "NM501",
        kind=FileKind.REQUIREMENTS,
        path="requirements.txt",
    )
    # no Neuron package in the file and not a Neuron project: torch-xla and the stock pins are a TPU project's own
    unchanged(
        """
        torch-xla==2.5.0
        transformers==4.45.0
        """,
        "NM501",
        kind=FileKind.REQUIREMENTS,
        path="requirements.txt",
        neuron_project=False,
    )


def _notebook(*cells: str) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": cell}
                                 for cell in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_writefile_cell_sees_the_python_its_notebook_writes_beside_it() -> None:
    # the notebook in tut/ writes src/requirements.txt and src/compile.py (tut/src/ when it runs): compile.py keeps
    # its optimum.neuron import for an eval, so the requirement cell keeps optimum-neuron
    body = "optimum-neuron==0.0.20\n"
    notebook = _notebook(f"%%writefile src/requirements.txt\n{body}",
                         "%%writefile src/compile.py\nimport optimum.neuron as on\n"
                         "cls = eval(f'on.NeuronStableDiffusion{xl}Pipeline')\n")
    result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt",
                     project={"tut/nb.ipynb": notebook})
    assert result.text.endswith(body) and "tut/src/compile.py" in result.text
    assert findings(result, "NM501") == {(1, "todo")}
    # a src/requirements.txt with another text is not that cell: the notebook's files are not its files
    other = migrate("optimum-neuron==0.0.25\n", "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt",
                    project={"tut/nb.ipynb": notebook})
    assert "torch-neuronx==2.14.*" in other.text


def test_notebook_files_fact_reads_written_files_and_inf1_markers() -> None:
    from codemods.deps._plan import notebook_files

    notebook = _notebook("%%writefile src/train.py\nfrom trl import SFTTrainer\n",
                         "%%writefile -a src/train.py\nimport optimum.neuron as on\nx = eval('on.NeuronTrainer')\n",
                         "%%writefile 'src/requirements.txt'\n# neuron-migrate: a note\noptimum-neuron\n",
                         "# a kernel cell\nprint(1)\n")
    value = notebook_files(notebook)
    assert value == {"python": {"src/train.py": (("trl",), True, True)},
                     "written": {"src/requirements.txt": ("optimum-neuron",)}, "inf1": None,
                     "bodies": {"src/train.py": value["python"] and value["bodies"]["src/train.py"]}}
    assert "import optimum.neuron as on" in value["bodies"]["src/train.py"]  # the written Python, for the holds
    assert notebook_files(_notebook("!pip install neuron-cc\n"))["inf1"] == "the neuron-cc compiler"
    assert notebook_files("not a notebook") is None


def test_optimum_neuron_stays_while_its_notebook_runs_optimum_cli_export() -> None:
    # a requirement cell of a notebook whose other cells still run `optimum-cli export neuron` (NM406 keeps it with
    # a todo): the notebook is one file, so the package of the command stays; replaced, the cell would fail with
    # optimum-cli: command not found
    body = "optimum-neuron==0.0.25\ntorch-xla==2.1.2\n"
    notebook = _notebook(f"%%writefile requirements.txt\n{body}",
                         "!optimum-cli export neuron --model m --batch_size 1 --sequence_length 128 out/\n")
    result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt",
                     project={"nb.ipynb": notebook})
    assert result.text.endswith("optimum-neuron==0.0.25\n# neuron-migrate: torch-xla==2.1.2 was left as it is: it goes "
                                "with optimum-neuron, kept because nb.ipynb runs `optimum-cli export`; move it "
                                "together with optimum-neuron (torch-xla is the PyTorch/XLA runtime; TorchNeuron does "
                                "not use it, and while it is installed transformers still takes its XLA branches)\n"
                                "torch-xla==2.1.2\n")
    assert "nb.ipynb runs `optimum-cli export`, which optimum / optimum-neuron install" in result.text
    assert findings(result, "NM501") == {(1, "todo"), (2, "todo")}
    # a commented-out export, or an export in a file the requirements do not install for (another folder), holds
    # nothing
    compile_py = 'import subprocess\nsubprocess.run("optimum-cli export neuron --model m out/", shell=True)\n'
    for project in ({"other/compile.py": compile_py},
                    {"nb.ipynb": _notebook(f"%%writefile requirements.txt\n{body}", "# !optimum-cli export neuron\n")}):
        result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt", project=project)
        assert "torch-neuronx==2.14.*" in result.text, project


def test_a_command_of_another_file_holds_nothing_but_the_line_that_stops_installing_it_says_so() -> None:
    # redteam-final 3 / redteam-round2 D5: run_compile.sh beside requirements.txt still runs `optimum-cli export
    # neuron` (NM406's todo there: delete this export). Holding the old stack for it would keep the migrated Python
    # beside it off the new one, so the requirements follow the Python; the line that no longer installs
    # optimum-cli is a todo naming the command (never `fixed` while the command is still there). The same for a
    # Makefile, a Dockerfile, a workflow and a Python command string (NM410) of the code the file installs for
    body = "optimum-neuron==0.3.0\n"
    commands = {"run_compile.sh": "optimum-cli export neuron -m gpt2 --batch_size 1 --sequence_length 128 out/\n",
                "Makefile": "compile:\n\toptimum-cli export neuron -m gpt2 out/\n",
                "docker/Dockerfile": "RUN optimum-cli export neuron -m gpt2 out/\n",
                ".github/workflows/ci.yml": "jobs:\n  c:\n    steps:\n      - run: optimum-cli neuron serve -m gpt2\n",
                "compile.py": 'import subprocess\nsubprocess.run(["optimum-cli", "export", "neuron", "out/"])\n'}
    for path, text in commands.items():
        result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt", project={path: text})
        command = "optimum-cli neuron serve" if "serve" in text else "optimum-cli export"
        assert result.text.startswith("--extra-index-url https://pip.repos.neuron.amazonaws.com\n"
                                      "# neuron-migrate: optimum-neuron -> the TorchNeuron stack "
                                      "(torch-neuronx==2.14.*, torch==2.14.*, transformers>=5.24, accelerate>=1.15); "
                                      f"{path} still runs `{command}`, which optimum-neuron installed and this line "
                                      "no longer does: delete or replace that command as its NM406 todo says (left, it "
                                      "fails with `optimum-cli: command not found`)\n"), path
        assert "torch-neuronx==2.14.*\n" in result.text, path
        assert (1, "todo") in findings(result, "NM501"), path
    # a script that only mentions the command (a comment, an echo) or runs one NM406 removes: a plain fixed
    for text in ("# optimum-cli export neuron -m gpt2 out/\n", 'echo "optimum-cli export neuron"\n',
                 "optimum-cli neuron cache set my-org/cache\n"):
        result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt",
                         project={"run_compile.sh": text})
        assert "torch-neuronx==2.14.*" in result.text and "still runs" not in result.text, text
        assert (1, "fixed") in findings(result, "NM501"), text


def test_a_kept_pin_names_the_migrated_files_it_also_installs_for() -> None:
    # D6: compile.py keeps optimum-neuron for its eval; train.py of the same source_dir is moved to TorchNeuron
    # (torch.accelerator); rt4D 10: a file the run leaves on calls the old pins have (plain torch, a stock Trainer)
    # is not named
    project = {"src/compile.py": "import optimum.neuron as on\nm = eval('on.NeuronModelForCausalLM')\n",
               "src/train.py": "import torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\n",
               "src/collate.py": "import torch\n\npad = torch.nn.functional.pad\n",
               "src/trainer.py": "from optimum.neuron import NeuronTrainer\n",
               "src/notes.py": "import os\n", "other/train.py": "import torch_xla\n"}
    # what the run makes of train.py (torch.accelerator) is named the same: a second run changes nothing
    migrated = dict(project, **{"src/train.py": "import torch\n\ndevice = torch.accelerator.current_accelerator() "
                                                "or torch.device('cpu')\n",
                                "src/trainer.py": "from transformers import Trainer\n"})
    assert migrate("optimum-neuron==0.0.25\n", "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt",
                   project=migrated).text == migrate("optimum-neuron==0.0.25\n", "NM501", kind=FileKind.REQUIREMENTS,
                                                     path="src/requirements.txt", project=project).text
    result = migrate("optimum-neuron==0.0.25\n", "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt",
                     project=project)
    assert "it also installs for src/train.py, which this run rewrote to calls only the new stack has" in result.text
    assert "notes.py" not in result.text and "other/train.py" not in result.text
    assert "collate.py" not in result.text and "trainer.py" not in result.text
    # nothing else near it uses the old stack: no such clause
    del project["src/train.py"]
    result = migrate("optimum-neuron==0.0.25\n", "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt",
                     project=project)
    assert "also installs for" not in result.text


def test_a_file_two_notebooks_write_is_each_ones_own() -> None:
    # both notebooks of tut/ write src/compile.py; only a.ipynb's keeps optimum.neuron for an eval: b.ipynb's
    # requirement cell goes with b's compile.py and moves to the TorchNeuron stack
    a = _notebook("%%writefile src/requirements.txt\noptimum-neuron==0.0.20\n",
                  "%%writefile src/compile.py\nimport optimum.neuron as on\nc = eval('on.NeuronModelForCausalLM')\n")
    b = _notebook("%%writefile src/requirements.txt\noptimum-neuron==0.0.12\n",
                  "%%writefile src/compile.py\nfrom optimum.neuron import NeuronStableDiffusionPipeline\n")
    project = {"tut/a.ipynb": a, "tut/b.ipynb": b}
    kept = migrate("optimum-neuron==0.0.20\n", "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt",
                   project=project)
    assert kept.text.endswith("optimum-neuron==0.0.20\n") and "tut/src/compile.py" in kept.text
    moved = migrate("optimum-neuron==0.0.12\n", "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt",
                    project=project)
    assert "torch-neuronx==2.14.*" in moved.text and "optimum-neuron" not in moved.text


def test_a_package_the_migrated_code_will_import_is_added() -> None:
    # NeuronSFTTrainer becomes trl.SFTTrainer and NeuronStableDiffusionPipeline diffusers' own: optimum-neuron
    # brought those packages in, so the line that replaces it must install them (the import failed before)
    project = {
        "src/sft.py": "from optimum.neuron import NeuronSFTConfig, NeuronSFTTrainer\n",
        "src/sd.py": "from optimum.neuron import NeuronStableDiffusionPipeline as Pipe\n",
        "requirements.txt": "optimum-neuron==0.0.25\n",
    }
    result = _requirements("optimum-neuron==0.0.25\n", project=project)
    assert "trl>=1.16" in result.text.splitlines()
    assert "diffusers>=0.42" in result.text.splitlines()
    note = next(f.message for f in result.findings if f.rule == "NM501")
    assert "trl (src/sft.py)" in note


def test_a_class_named_only_in_a_comment_adds_nothing() -> None:
    project = {"src/train.py": "# was NeuronSFTTrainer\nfrom optimum.neuron import NeuronTrainer\n",
               "requirements.txt": "optimum-neuron==0.0.25\n"}
    result = _requirements("optimum-neuron==0.0.25\n", project=project)
    assert not any(line.startswith("trl") for line in result.text.splitlines())


_KEPT_IMPORT = ("from optimum.neuron.utils.cache_utils import get_hf_hub_cache_repos\n\n"
                "print(get_hf_hub_cache_repos())\n")


def test_optimum_neuron_stays_while_a_file_it_installs_for_still_imports_it_after_the_run() -> None:
    # redteam-final 3: scripts/cache.py keeps its optimum.neuron import (no rule ports it: NM901's todo); dropping
    # the package gives ModuleNotFoundError there. The file is migrated the way the run migrates it to see that
    body = "optimum-neuron==0.3.0\ntrl==0.11.4\n"
    project = {"scripts/cache.py": _KEPT_IMPORT, "scripts/train.py": "from optimum.neuron import NeuronTrainer\n"}
    result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt", project=project)
    assert result.text.startswith("# neuron-migrate: optimum-neuron was left as it is: after this run scripts/cache.py "
                                  "still imports optimum.neuron (no rule could port that use: see the todo there; "
                                  "without the package: `ModuleNotFoundError: No module named 'optimum'`): port it "
                                  "first, then replace this line with the TorchNeuron stack")
    assert "also installs for" not in result.text  # train.py becomes a stock Trainer, which transformers 4 has
    assert result.text.endswith("optimum-neuron==0.3.0\n# neuron-migrate: trl==0.11.4 was left as it is: it goes with "
                                "optimum-neuron, kept because scripts/cache.py still imports optimum.neuron; move it "
                                "together with optimum-neuron (trl==0.11.4 (pinned beside optimum-neuron) excludes "
                                "trl 1.16, the version the TorchNeuron port is tested with -> >=1.16)\ntrl==0.11.4\n")
    assert findings(result, "NM501") == {(1, "todo"), (2, "todo")}
    # a second run over the migrated project decides the same (cache.py still imports it, train.py no longer does)
    migrated = dict(project, **{"scripts/train.py": "from transformers import Trainer\n"})
    assert migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt",
                   project=migrated).text == result.text
    # imports the run ports (NeuronTrainer -> transformers.Trainer), a commented-out import, or one in a folder the
    # file does not install for hold nothing
    for project in ({"scripts/train.py": "from optimum.neuron import NeuronTrainer\n"},
                    {"scripts/cache.py": "# from optimum.neuron.utils.cache_utils import x\n"},
                    {"other/cache.py": _KEPT_IMPORT}):
        result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="src/requirements.txt"
                         if "other/cache.py" in project else "requirements.txt", project=project)
        assert "torch-neuronx==2.14.*" in result.text, project


_CONSTRAINTS = "torch-neuronx==2.1.2.2.3.0\ntorch==2.1.2\n"
_INDEX = "--extra-index-url https://pip.repos.neuron.amazonaws.com\n"


def _constraints(project: dict[str, str], path: str = "constraints.txt"):
    return migrate(_CONSTRAINTS, "NM501", kind=FileKind.REQUIREMENTS, path=path,
                   project={path: _CONSTRAINTS, **project})


def test_a_file_included_by_one_that_names_the_neuron_repository_gets_no_repository_note() -> None:
    # rt3A 12: pip reads the index options of every file of one install together
    for project in (
        {"requirements.txt": _INDEX + "-c constraints.txt\noptimum-neuron==0.0.25\n"},
        {"requirements.txt": "--constraint=constraints.txt\n" + _INDEX},
        # the includer gets the repository from a file it includes itself
        {"requirements.txt": "-r requirements-base.txt\n-c constraints.txt\n",
         "requirements-base.txt": _INDEX + "datasets\n"},
        # through the file that includes the includer
        {"requirements-dev.txt": _INDEX + "-r requirements.txt\n", "requirements.txt": "-c constraints.txt\n"},
    ):
        result = _constraints(project)
        assert result.text.startswith("torch-neuronx==2.14.*\ntorch==2.14.*"), project
        assert "AWS's Neuron package repository" not in result.text, project
        assert findings(result, "NM501") == {(1, "fixed"), (2, "fixed")}, project
    # a file in a sub-folder is resolved from the includer's folder; this file's own -r include counts too
    result = _constraints({"requirements.txt": _INDEX + "-c deps/constraints.txt\n"}, path="deps/constraints.txt")
    assert "AWS's Neuron package repository" not in result.text
    own_text = "-r requirements/base.txt\n" + _CONSTRAINTS
    own = migrate(own_text, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt",
                  project={"requirements.txt": own_text, "requirements/base.txt": _INDEX})
    assert "AWS's Neuron package repository" not in own.text


def test_the_index_line_is_written_unless_every_install_of_the_file_names_the_repository() -> None:
    # rt8P-05: a todo alone left `pip install -r` of the file (a Dockerfile's, tox's deps) failing on torch-neuronx
    for project in (
        {},  # nobody includes it
        {"requirements.txt": "-c constraints.txt\ndatasets\n"},  # its includer has no index option
        # one includer names the repository, the other does not: `pip install -r requirements-cpu.txt` misses it
        {"requirements.txt": _INDEX + "-c constraints.txt\n", "requirements-cpu.txt": "-c constraints.txt\n"},
        # a comment or an include of another file is no option; an index that is not Neuron's is none either
        {"requirements.txt": "# " + _INDEX + "-c constraints.txt\n"},
        {"requirements.txt": _INDEX + "-c other.txt\n"},
        {"requirements.txt": "--index-url https://pypi.example.com/simple\n-c constraints.txt\n"},
        # an include cycle decides nothing
        {"a.txt": "-r b.txt\n-c constraints.txt\n", "b.txt": "-r a.txt\n"},
    ):
        result = _constraints(project)
        assert result.text.startswith("--extra-index-url https://pip.repos.neuron.amazonaws.com\n"), project
        assert "AWS's Neuron package repository" not in result.text, project  # written, not a todo
        assert (1, "fixed") in findings(result, "NM501") and (1, "todo") not in findings(result, "NM501"), project


def test_requirement_set_fact_reads_includes_and_index_options() -> None:
    from codemods.deps._plan import requirement_set

    assert requirement_set("-r base.txt\n-c constraints.txt\n--requirement=dev.txt\n-rother.txt\n") == {
        "includes": ("base.txt", "constraints.txt", "dev.txt", "other.txt"), "repository": False, "neuron": False,
        "names": (), "requires": ("base.txt", "dev.txt", "other.txt")}  # -c installs nothing
    # a file naming a Neuron package carries its text as neuron_text: the note of another accelerator's file
    # beside it says whether the run migrates it or holds it
    assert requirement_set(_INDEX + "torch-neuronx==2.14.*\n") == {"includes": (), "repository": True,
                                                                   "neuron": True, "names": ("torch-neuronx",),
                                                                   "requires": (),
                                                                   "neuron_text": _INDEX + "torch-neuronx==2.14.*\n"}
    # a file that names optimum-neuron carries its text: whether it keeps the package decides its install set
    assert requirement_set("optimum[neuronx]==1.20  # pin\n") == {"includes": (), "repository": False,
                                                                   "neuron": True, "names": ("optimum",),
                                                                   "requires": (),
                                                                   "text": "optimum[neuronx]==1.20  # pin\n",
                                                                   "neuron_text": "optimum[neuronx]==1.20  # pin\n"}
    assert "neuron_text" not in requirement_set("torch-xla==2.1.2\ntorch==2.1.2\n")
    assert "text" not in requirement_set("# optimum-neuron==0.0.25\ntorch-neuronx==2.14.*\n")
    # torch-xla alone (a TPU set) and a package named in a comment are no Neuron package
    assert requirement_set("# -r base.txt\n# " + _INDEX + "-r https://example.com/r.txt\ntorch\n") == {
        "includes": (), "repository": False, "neuron": False, "names": ("torch",), "requires": ()}
    assert requirement_set("torch-xla==2.1.2\n# torch-neuronx==2.14.*\n")["neuron"] is False
    assert requirement_set("# a comment\n") is None


_GPU = "torch==2.1.2\ntransformers==4.43.2\naccelerate==0.29.2\ndatasets\n"
_NEURON = "torch-neuronx==2.1.2.2.3.0\ntorch-xla==2.1.2\n"
_CODE = {"utils/device.py": "import torch\nimport torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\n",
         "train.py": "import torch\n"}


def _other(path: str, text: str = _GPU, sibling: str | None = "requirements-neuron.txt", **project: str):
    files = {path: text, **_CODE, **project}
    if sibling is not None:
        files[sibling] = _NEURON
    return migrate(text, "NM501", kind=FileKind.REQUIREMENTS, path=path, project=files)


def test_another_accelerators_requirement_set_is_left_as_it_is_with_one_todo() -> None:
    # rt3C 9: requirements-gpu.txt (no Neuron package, requirements-neuron.txt beside it) was moved to torch 2.14 /
    # transformers 5 "because torch-neuronx 2.14.* needs the same torch"
    result = _other("requirements-gpu.txt")
    assert result.text.endswith(_GPU)
    assert findings(result, "NM501") == {(1, "todo")}
    todo = next(f for f in result.findings if f.rule == "NM501").message
    assert "another accelerator (its name says `gpu`" in todo and "requirements-neuron.txt beside it" in todo
    assert "It also installs for utils/device.py, which this run rewrote" in todo  # not train.py: plain torch
    assert "torch==2.1.2, transformers==4.43.2, accelerate==0.29.2" in todo
    assert "needs the same torch" not in todo and "tested with" not in todo
    for path, sibling in (("requirements_cuda.txt", "requirements.txt"), ("gpu-requirements.txt", "requirements.txt"),
                          ("requirements-cu121.txt", "requirements-neuron.txt"),
                          ("requirements-cpu-only.txt", "requirements-trn.txt"), ("requirements-rocm.txt", None)):
        result = _other(path, sibling=sibling, **({"requirements-neuron.txt": _NEURON} if sibling is None else {}))
        assert result.text.endswith(_GPU) and findings(result, "NM501") == {(1, "todo")}, path
    # a TPU set keeps its torch-xla
    tpu = "torch-xla==2.1.2\ntransformers==4.43.2\n"
    result = _other("requirements-tpu.txt", tpu)
    assert result.text.endswith(tpu) and findings(result, "NM501") == {(1, "todo")}


def test_another_accelerators_set_with_nothing_to_check_is_left_alone_silently() -> None:
    # no pin the plan would change, or no code on the torch / Hugging Face stack that it installs for
    result = _other("requirements-gpu.txt", "torch>=2.14\ndatasets\n")
    assert result.text == "torch>=2.14\ndatasets\n" and findings(result, "NM501") == set()
    result = migrate(_GPU, "NM501", kind=FileKind.REQUIREMENTS, path="gpu/requirements-gpu.txt",
                     project={"gpu/requirements-gpu.txt": _GPU, "gpu/requirements-neuron.txt": _NEURON,
                              "neuron/train.py": "import torch\n"})
    assert result.text == _GPU and findings(result, "NM501") == set()
    # a file of a requirements/ folder installs for the project's code (rt4E 2), not for its own folder's (none)
    result = _other("requirements/cu121.txt", sibling="requirements/neuron.txt")
    assert result.text.endswith(_GPU) and findings(result, "NM501") == {(1, "todo")}
    assert "installs for utils/device.py" in next(f for f in result.findings if f.rule == "NM501").message
    result = _other("gpu/requirements/cu121.txt", sibling="gpu/requirements/neuron.txt")
    assert result.text == _GPU and findings(result, "NM501") == set()  # gpu/ holds no code


def test_a_requirement_set_that_is_not_another_accelerators_is_migrated() -> None:
    for path, text, sibling in (
        ("requirements-gpu.txt", _GPU, None),  # no Neuron set beside it
        ("gpu/requirements-gpu.txt", _GPU, "requirements-neuron.txt"),  # the Neuron set is in another folder
        ("requirements-gpustat.txt", _GPU, "requirements-neuron.txt"),  # the name says no accelerator
        ("requirements-dev.txt", _GPU, "requirements-neuron.txt"),
        ("requirements-gpu.txt", "torch-neuronx==2.1.2.2.3.0\n" + _GPU, "requirements-neuron.txt"),  # Neuron itself
    ):
        result = _other(path, text, sibling=sibling)
        assert "torch==2.14.*" in result.text and "another accelerator" not in result.text, path


_HELD = ("-c constraints.txt\noptimum-neuron[neuronx]==0.0.25\ndatasets>=2.14\n",
         {"run_glue.py": _KEPT_IMPORT})


def _in_set(path: str, text: str, project: dict[str, str]):
    return migrate(text, "NM501", kind=FileKind.REQUIREMENTS, path=path, project={path: text, **project})


def test_a_file_of_an_install_set_whose_optimum_neuron_stays_holds_the_old_stack_too() -> None:
    # rt3A glue-trn: requirements.txt keeps optimum-neuron for run_glue.py; the constraints.txt it includes with -c
    # was moved to torch 2.14 / transformers 5, and `pip install -r requirements.txt` could not resolve both
    includer, code = _HELD
    result = _in_set("constraints.txt", _CONSTRAINTS, {"requirements.txt": includer, **code})
    assert result.text == (
        "# neuron-migrate: torch-neuronx==2.1.2.2.3.0 was left as it is: it goes with requirements.txt's "
        "optimum-neuron, kept because run_glue.py still imports optimum.neuron (requirements.txt includes this file: "
        "pip reads both in one install, and the TorchNeuron pins do not resolve beside the stack kept there); move "
        "it together with the optimum-neuron line of requirements.txt (torch-neuronx==2.1.2.2.3.0 is an XLA-era "
        "build -> torch-neuronx==2.14.* (TorchNeuron; same package name, native backend))\n"
        "torch-neuronx==2.1.2.2.3.0\n"
        "# neuron-migrate: torch==2.1.2 was left as it is: it goes with requirements.txt's optimum-neuron, kept "
        "because run_glue.py still imports optimum.neuron (requirements.txt includes this file: pip reads both in "
        "one install, and the TorchNeuron pins do not resolve beside the stack kept there); move it together with "
        "the optimum-neuron line of requirements.txt (torch==2.1.2 -> torch==2.14.*: torch-neuronx 2.14.* needs the "
        "same torch 2.14)\ntorch==2.1.2\n")
    assert findings(result, "NM501") == {(1, "todo"), (2, "todo")}
    # a second run over the migrated project (the includer carries its todo now) decides the same
    migrated_includer = _in_set("requirements.txt", includer, {"constraints.txt": _CONSTRAINTS, **code}).text
    assert migrated_includer != includer and "optimum-neuron[neuronx]==0.0.25" in migrated_includer
    again = _in_set("constraints.txt", result.text, {"requirements.txt": migrated_includer, **code})
    assert again.text == result.text
    # the other way round and at any depth: a file that includes the held one (directly, or through a file it
    # includes), and a file that another includer of the held one includes, hold as well
    for path, project in (
        ("requirements-dev.txt", {"requirements-dev.txt": "-r requirements.txt\n", "requirements.txt": includer}),
        ("requirements-dev.txt", {"requirements-dev.txt": "-r requirements-base.txt\n",
                                  "requirements-base.txt": "-r requirements.txt\n",
                                  "requirements.txt": includer}),
        ("constraints.txt", {"requirements-dev.txt": "-r requirements.txt\n-c constraints.txt\n",
                             "requirements.txt": includer.replace("-c constraints.txt\n", "")}),
    ):
        own = project.pop(path, "")
        result = _in_set(path, own + _CONSTRAINTS, {**project, **code})
        assert result.text.startswith(own + "# neuron-migrate: torch-neuronx==2.1.2.2.3.0 was left as it is: it goes "
                                      "with requirements.txt's optimum-neuron, kept because run_glue.py"), path
        assert result.text.endswith("\ntorch==2.1.2\n") and "\ntorch==2.14.*" not in result.text, path


def test_a_file_of_an_install_set_whose_optimum_neuron_moves_moves_too() -> None:
    includer, code = _HELD
    for project in (
        {"requirements.txt": includer, "run_glue.py": "from optimum.neuron import NeuronTrainer\n"},  # ported
        # not code the includer installs for (train/requirements.txt serves train/)
        {"train/requirements.txt": includer.replace("constraints.txt", "../constraints.txt"),
         "serve/run_glue.py": _KEPT_IMPORT},
        {"requirements.txt": includer.replace("-c constraints.txt\n", ""), **code},  # not in its install set
        {"requirements.txt": "-c constraints.txt\n# optimum-neuron==0.0.25\n", **code},  # a comment names it
    ):
        result = _in_set("constraints.txt", _CONSTRAINTS, project)
        assert result.text.endswith("\ntorch-neuronx==2.14.*\ntorch==2.14.*\n"), project
        assert "was left as it is" not in result.text, project


def test_pip_reads_the_install_sets_of_the_goldens_as_one_decision() -> None:
    # pip's own parser follows the -c include of each golden's requirements.txt; the set is either held as a whole
    # (optimum-neuron beside its old pins) or moved as a whole (no optimum-neuron, no old pin)
    from pathlib import Path

    from packaging.requirements import Requirement
    from pip._internal.network.session import PipSession
    from pip._internal.req.req_file import parse_requirements

    fixtures = Path(__file__).parent.parent / "fixtures" / "deps"
    for case, held in (("constraints_held_with_includer", True), ("constraints_migrated_with_includer", False)):
        parsed = [Requirement(item.requirement) for item in
                  parse_requirements(str(fixtures / case / "after" / "requirements.txt"), PipSession())]
        names = {req.name: str(req.specifier) for req in parsed}
        assert ("optimum-neuron" in names) is held, case
        assert (names["torch"] == "==2.1.2") is held and (names["transformers"] == "==4.43.2") is held, case
        assert ("torch-xla" in names) is held, case


def test_an_include_this_run_does_not_read_as_a_requirements_file_gets_a_todo() -> None:
    # pip installs base.txt / pins.txt with this file, but their names are no requirements names: discovery does not
    # pick them up, so they keep optimum-neuron 0.0.25 (transformers 4) beside this file's transformers 5
    text = "-r base.txt\n--constraint=pins.txt\n-r requirements-common.txt\ntorch-neuronx==2.1.2.2.2.0\n"
    result = migrate(text, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt", neuron_project=True)
    lines = result.text.splitlines()
    assert lines[0] == "--extra-index-url https://pip.repos.neuron.amazonaws.com"
    lines = lines[1:]
    assert lines[0].startswith("# neuron-migrate: base.txt, which this file includes with -r, is installed with it, "
                               "but neuron-migrate does not read it as a requirements file")
    assert lines[1] == "-r base.txt"
    assert lines[2].startswith("# neuron-migrate: pins.txt, which this file includes with --constraint")
    assert lines[4] == "-r requirements-common.txt"  # a requirements name: migrated with the run, no todo
    assert "torch-neuronx==2.14.*" in result.text
    assert {line for line, severity in findings(result, "NM501") if severity == "todo"} >= {1, 2}
    # no change: base.txt under requirements/ is a requirements file (requirements/dev.txt includes it), and a
    # file of a project that is not a Neuron one naming no Neuron package is left alone
    result = migrate("-r base.txt\ntorch-neuronx==2.1.2.2.2.0\n", "NM501", kind=FileKind.REQUIREMENTS,
                     path="requirements/dev.txt", neuron_project=True)
    assert "base.txt, which" not in result.text
    unchanged("-r base.txt\ntransformers==4.43.2\n", "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt",
              neuron_project=False)


def test_files_one_pip_install_command_reads_together_take_one_decision() -> None:
    # pip install -r requirements.txt -c constraints.txt in a script, a Dockerfile RUN, a workflow or a notebook's
    # %pip line: pip resolves both in one install, as with a -c include; requirements.txt keeps optimum-neuron
    # for run_glue.py, so constraints.txt keeps its pins too (before, it moved to torch 2.14 alone)
    kept = _HELD[0].replace("-c constraints.txt\n", "")
    cell = '{"cells": [{"cell_type": "code", "source": ["%pip install -r requirements.txt -c constraints.txt\\n"]}]}'
    for name, command in (("setup.sh", "pip install -U -r requirements.txt -c constraints.txt\n"),
                          ("Dockerfile", "RUN python -m pip install --requirement=requirements.txt \\\n"
                                         "    --constraint constraints.txt\n"),
                          (".github/workflows/ci.yml", "jobs:\n  t:\n    steps:\n      - run: pip3 install -r "
                                                       "requirements.txt -c constraints.txt\n"),
                          ("glue.ipynb", cell)):
        result = _in_set("constraints.txt", _CONSTRAINTS, {"requirements.txt": kept, name: command, **_HELD[1]})
        assert result.text.startswith("# neuron-migrate: torch-neuronx==2.1.2.2.3.0 was left as it is: it goes "
                                      "with requirements.txt's optimum-neuron, kept because run_glue.py still "
                                      f"imports optimum.neuron (a pip install command in {name} installs "
                                      "requirements.txt with this file: pip reads both in one install"), name
        assert result.text.endswith("\ntorch==2.1.2\n"), name
    # two separate commands of one script install into one environment (rt5H D2): held too, said as such
    script = "pip install -r requirements.txt\npip install -r constraints.txt\n"
    result = _in_set("constraints.txt", _CONSTRAINTS, {"requirements.txt": kept, "setup.sh": script, **_HELD[1]})
    assert "(the pip install commands of one script of setup.sh install requirements.txt and this file: pip " \
        "installs both into one environment, and" in result.text
    assert result.text.endswith("\ntorch==2.1.2\n")
    # no change in the decision: a commented-out command, commands of two Dockerfile stages, or a requirements.txt
    # whose optimum-neuron moves (its code is ported): constraints.txt moves as before
    for name, command, code in (("setup.sh", "# pip install -r requirements.txt -c constraints.txt\n", _HELD[1]),
                                ("Dockerfile", "FROM python:3.11 AS a\nRUN pip install -r requirements.txt\n"
                                 "FROM python:3.11\nRUN pip install -r constraints.txt\n", _HELD[1]),
                                ("setup.sh", "pip install -r requirements.txt -c constraints.txt\n",
                                 {"run_glue.py": "from optimum.neuron import NeuronTrainer\n"})):
        result = _in_set("constraints.txt", _CONSTRAINTS, {"requirements.txt": kept, name: command, **code})
        assert result.text.endswith("\ntorch-neuronx==2.14.*\ntorch==2.14.*\n"), command
        assert "was left as it is" not in result.text, command


_CONVERTER = ("from optimum.neuron.models.training import consolidate_model_parallel_checkpoints_to_unified_checkpoint "
              "as merge\n\nmerge('old', 'out')\n")
_MIGRATED_TRAINER = "from optimum.neuron import NeuronTrainer\n\ntrainer = NeuronTrainer(model=None)\n"


def test_a_one_time_converter_does_not_hold_the_requirements_and_its_pins_are_named_for_the_legacy_set() -> None:
    # rt7L L14: consolidate.py, which NM206 says to run in the OLD environment before uninstalling optimum-neuron,
    # held the whole file on transformers 4.x with "port it first" while train.py moved to transformers 5
    body = "optimum-neuron[training]==0.3.0\ntransformers==4.48.0\ndatasets>=2.19\n"
    project = {"convert.py": _CONVERTER, "train.py": _MIGRATED_TRAINER}
    result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt", project=project)
    assert "transformers>=5.24" in result.text and "optimum-neuron[training]==0.3.0\n" not in result.text
    note = next(f.message for f in result.findings if f.rule == "NM501" and "one-time" in f.message)
    # never drop a package a file imports without saying where it goes: the converter's pins, for the legacy set
    assert "convert.py still imports optimum.neuron" in note and "port it first" not in note
    assert "(optimum-neuron[training]==0.3.0, transformers==4.48.0)" in note
    assert "create requirements-legacy.txt" in note and "`pip install -r requirements-legacy.txt`" in note
    # the legacy set itself, where one exists, stays on the old stack, and the main file's note names it
    legacy = "optimum-neuron[training]==0.3.0\ntransformers==4.48.0\n"
    project["requirements-legacy.txt"] = legacy
    kept = migrate(legacy, "NM501", kind=FileKind.REQUIREMENTS, path="requirements-legacy.txt", project=project)
    assert "\n".join(line for line in kept.text.splitlines() if not line.startswith("#")) + "\n" == legacy
    assert "keep them in requirements-legacy.txt" in migrate(
        body, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt", project=project).text


def test_a_converter_beside_another_held_importer_keeps_todays_hold() -> None:
    body = "optimum-neuron[training]==0.3.0\ntransformers==4.48.0\n"
    cache = "from optimum.neuron.utils.cache_utils import get_hf_hub_cache_repos\n\nprint(get_hf_hub_cache_repos())\n"
    for project in ({"convert.py": _CONVERTER, "cache_report.py": cache},
                    # a module import of optimum.neuron is no converter, whatever it calls
                    {"convert.py": "import optimum.neuron.models.training as t\n\n"
                                   "t.consolidate_model_parallel_checkpoints_to_unified_checkpoint('a', 'b')\n"}):
        result = migrate(body, "NM501", kind=FileKind.REQUIREMENTS, path="requirements.txt", project=project)
        assert "\noptimum-neuron[training]==0.3.0\n" in result.text and "port " in result.text, project
        assert "\ntransformers==4.48.0\n" in result.text and "one-time" not in result.text


def test_an_optimum_neuron_import_over_several_lines_is_an_import() -> None:
    """rtB B4: ``from optimum.neuron import (`` on a line of its own (black/ruff's long import) was no import for the
    dependency layer, so a module kept on optimum-neuron did not hold the requirements (ModuleNotFoundError)."""
    import json

    from codemods.deps._plan import legacy_converter, optimum_neuron_kept, uses_optimum_neuron

    parenthesized = ("from optimum.neuron import (\n    NeuronModelForSequenceClassification,  # the classifier\n"
                     "    NeuronModelForQuestionAnswering as QA,\n)\n")
    continued = "from optimum.neuron.utils import \\\n    get_neuron_cache_path\n"
    notebook = json.dumps({"cells": [{"cell_type": "code", "source": [
        "from optimum.neuron import (\n", "    NeuronModelForCausalLM,  # c\n", "    NeuronModelForQA as QA,\n",
        ")\n", "model = eval(\"QA\")\n"]}]}, indent=1)
    for text in (parenthesized, continued, notebook, "from optimum.neuron.utils import(get_neuron_cache_path)\n"):
        assert uses_optimum_neuron(text), text
    assert not uses_optimum_neuron("# from optimum.neuron import (\nimport optimum_neuron_tools\n")
    # the names they bind: ``A as B`` binds B (an eval of it keeps the import), imports A (a converter's name)
    assert optimum_neuron_kept(parenthesized + 'eval("QA")\n') and optimum_neuron_kept(notebook)
    assert optimum_neuron_kept(parenthesized + 'eval("NeuronModelForQuestionAnswering")\n') is None
    assert legacy_converter("from optimum.neuron.models.training import (\n"
                            "    consolidate_model_parallel_checkpoints_to_unified_checkpoint,\n)\n")
    assert not legacy_converter(parenthesized)
    # a module no rule ports (optimum-neuron's cache helpers) keeps such an import, and with it the package
    kept = "from optimum.neuron.utils.cache_utils import (\n    get_neuron_cache_path,\n)\n\nget_neuron_cache_path()\n"
    for project in ({"app/models.py": kept}, {"scripts/cache_report.py": continued + "\nget_neuron_cache_path()\n"}):
        result = _requirements("optimum-neuron==0.0.25\nfastapi\n", project=project)
        assert "\noptimum-neuron==0.0.25\n" in result.text and f"{next(iter(project))} still imports" in result.text
