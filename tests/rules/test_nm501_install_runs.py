"""NM501: which requirements file serves which script (rt-D1, lora-llama-tp). A requirements file that a launcher,
Dockerfile or workflow installs before running named scripts serves those scripts (and what they import); one
that no install line ties to scripts serves its folder. A file kept on the old stack for a held script says which
moved file needs what and how to split it; nothing claims a file was moved when it was not."""

from codemods.deps._plan import install_runs, local_imports, new_stack_calls
from migrate.filekinds import FileKind
from migrate.testing import apply_rules

_ALL = ["NM1", "NM2", "NM3", "NM4", "NM5", "NM6", "NM7", "NM9"]
#: moved by the run: NeuronSFTTrainer with tensor_parallel_size -> SFTTrainer + distributed_config, tokenizer= ->
#: processing_class=
_TRAIN = ("from transformers import AutoTokenizer\nfrom optimum.neuron import NeuronSFTConfig, NeuronSFTTrainer\n"
          "tok = AutoTokenizer.from_pretrained('gpt2')\n"
          "args = NeuronSFTConfig(output_dir='out', tensor_parallel_size=8)\n"
          "NeuronSFTTrainer(model='gpt2', args=args, train_dataset=None, tokenizer=tok).train()\n")
#: held by the run: a compiled folder whose checkpoint nothing in the project names
_CHAT = ("from optimum.neuron import NeuronModelForCausalLM\n"
         "model = NeuronModelForCausalLM.from_pretrained('/opt/models/llama-neuron')\n")
_REQ = "transformers==4.41.2\noptimum-neuron==0.0.24\naccelerate==0.29.3\n"


def _run(project: dict[str, str], path: str = "requirements-train.txt"):
    project = {path: _REQ, **project}
    return apply_rules(project[path], FileKind.REQUIREMENTS, select=_ALL, path=path, project=project,
                       neuron_project=True)


def test_the_fact_reads_what_each_install_context_runs() -> None:
    assert install_runs("set -e\npip install -r requirements-train.txt\ntorchrun --nproc_per_node=8 train.py\n") \
        == ((("requirements-train.txt",), ("train.py",), (), True),)
    docker = ("FROM python:3.11\nRUN pip install -r a.txt\nCMD [\"python\", \"/app/serve.py\"]\n"
              "FROM python:3.11\nRUN pip install -r b.txt\nCMD uvicorn app.main:api\n")
    assert install_runs(docker) == ((("a.txt",), ("/app/serve.py",), (), True), (("b.txt",), (), (), False))
    # a module, pytest, a shell script: code the context runs that it does not name
    assert install_runs("pip install -r r.txt\npython train.py\npython -m mypkg.serve\n")[0][3] is False
    assert install_runs("pip install -r r.txt\npython train.py\npytest tests\n")[0][3] is False
    assert install_runs("pip install -r r.txt\nbash run.sh\n")[0][2] == ("run.sh",)
    assert install_runs("# pip install -r r.txt\npython train.py\n") is None  # a comment installs nothing
    assert local_imports("import os, helpers\nfrom utils.data import x\nfrom . import tools\n") == \
        ("data", "helpers", "os", "tools", "utils")


def test_new_stack_calls_are_read_on_code() -> None:
    code = ("m = AutoModel.from_pretrained('gpt2', dtype=torch.bfloat16)\nx = torch.zeros(2, dtype=torch.int64)\n"
            "# processing_class= in a comment\n")
    assert [label for label, _, _ in new_stack_calls(code)] == ["from_pretrained(dtype=)"]
    assert new_stack_calls("x = torch.zeros(2, dtype=torch.int64)\n") == ()


def test_a_requirements_file_installed_before_moved_scripts_only_is_moved() -> None:
    # train.sh installs requirements-train.txt and runs train.py; serve.sh installs the other file for chat.py,
    # which stays on optimum-neuron: requirements-train.txt does not serve chat.py
    result = _run({"train.sh": "pip install -r requirements-train.txt\ntorchrun --nproc_per_node=8 train.py\n",
                   "serve.sh": "pip install -r requirements-inference.txt\npython chat.py\n",
                   "requirements-inference.txt": "optimum-neuron==0.0.24\n", "train.py": _TRAIN, "chat.py": _CHAT})
    assert "optimum-neuron" not in result.text
    assert "transformers>=5.24" in result.text and "trl>=" in result.text  # the moved train.py imports trl
    assert any(f.rule == "NM501" and f.severity.value == "fixed" and "optimum-neuron" in f.message
               for f in result.findings)


def test_a_script_the_moved_script_imports_counts() -> None:
    # train.py imports helpers, which stays on optimum-neuron: the file installed for train.py keeps the old stack
    train = "import helpers\n" + _TRAIN
    result = _run({"train.sh": "pip install -r requirements-train.txt\npython train.py\n", "train.py": train,
                   "helpers.py": _CHAT})
    assert result.text.count("optimum-neuron==0.0.24") == 1
    assert "after this run helpers.py still imports optimum.neuron" in result.text


def test_an_install_context_that_runs_unnamed_code_serves_its_folder() -> None:
    for installer, text in (("Dockerfile", "FROM python:3.11\nRUN pip install -r requirements-train.txt\n"
                                           "RUN python train.py\nCMD [\"uvicorn\", \"chat:app\"]\n"),
                            ("train.sh", "pip install -r requirements-train.txt\npython train.py\nbash serve.sh\n"),
                            ("setup.sh", "pip install -r requirements-train.txt\n")):
        result = _run({installer: text, "train.py": _TRAIN, "chat.py": _CHAT})
        assert "optimum-neuron==0.0.24" in result.text, installer
        assert "after this run chat.py still imports optimum.neuron" in result.text, installer
        assert not any(f.rule == "NM501" and f.severity.value == "fixed" for f in result.findings), installer


def test_a_file_kept_for_a_held_script_says_how_to_split_it() -> None:
    # one requirements file, no install line: it serves train.py (moved) and chat.py (held); no pin serves both
    merge = ("import torch\nfrom transformers import AutoModelForCausalLM\n"
             "AutoModelForCausalLM.from_pretrained('gpt2', torch_dtype=torch.bfloat16).save_pretrained('m')\n")
    result = _run({"train.py": _TRAIN, "merge.py": merge, "chat.py": _CHAT}, path="requirements.txt")
    note = next(f.message for f in result.findings if f.rule == "NM501" and f.message.startswith("optimum-neuron"))
    assert "it also installs for merge.py, train.py, which this run rewrote to calls only the new stack has" in note
    assert "(no `pip install -r requirements.txt` in a launcher, Dockerfile or workflow of the project runs only " \
        "named scripts after it, so it counts for every Python file of its folder)" in note
    assert "merge.py: from_pretrained(dtype=) needs transformers>=4.56" in note
    assert "processing_class= needs transformers>=4.46" in note
    assert "which chat.py needs: no pin of one file serves both" in note
    assert "give merge.py, train.py a requirements file of their own (transformers>=5.24, torch-neuronx==2.14.*" in note
    assert "keep this one for chat.py" in note
    assert [line for line in result.text.splitlines() if not line.startswith("#")] == _REQ.splitlines()
    project = {"requirements.txt": result.text, "train.py": _TRAIN, "merge.py": merge, "chat.py": _CHAT}
    again = apply_rules(result.text, FileKind.REQUIREMENTS, select=_ALL, path="requirements.txt", project=project,
                        neuron_project=True)
    assert again.text == result.text  # a second run names the same files
    assert not any(f.rule == "NM501" and f.severity.value == "fixed" for f in result.findings)


def test_a_pin_that_admits_the_moved_call_is_no_conflict() -> None:
    # the moved file calls torch.accelerator; a file that pins torch>=2.6 beside the kept optimum-neuron does
    # not exclude it for torch (it still does for the transformers that optimum-neuron keeps)
    moved = "import torch\nprint(torch.accelerator.is_available())\n"
    project = {"requirements.txt": "optimum-neuron==0.0.24\ntorch>=2.6\n", "run.py": moved, "chat.py": _CHAT}
    result = apply_rules(project["requirements.txt"], FileKind.REQUIREMENTS, select=_ALL, path="requirements.txt",
                         project=project, neuron_project=True)
    assert "it also installs for" not in result.text
