"""The models a project loads (migrate/models.py) and their matrix verdicts, on fixtures of each source kind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from compat_matrix.checkpoints import model_type_of
from migrate.models import find_models, project_models

SCAN_ROWS = Path(__file__).resolve().parents[1] / "reports" / "fixtures" / "scan-cpu-llama.jsonl"


def _project(tmp_path: Path, files: dict[str, str]) -> list[Path]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return sorted(p for p in tmp_path.rglob("*") if p.is_file())


def _by_checkpoint(tmp_path: Path, files: dict[str, str]) -> dict[str, tuple[str | None, str, list[str]]]:
    return {use.checkpoint: (use.model_type, use.how, use.where) for use in find_models(_project(tmp_path, files), tmp_path)}


def test_python_sources(tmp_path):
    found = _by_checkpoint(tmp_path, {"train.py": (
        "from transformers import AutoModelForCausalLM\n"
        "model_id = 'Qwen/Qwen3-8B'\n"
        "model = AutoModelForCausalLM.from_pretrained(\n    \"meta-llama/Llama-3.1-8B\", dtype='auto')\n"
        "parser.add_argument('--model_name_or_path', type=str, default=\"mistralai/Mistral-7B-v0.1\")\n"
        "tok = AutoTokenizer.from_pretrained(model_id)\n")})
    assert found["Qwen/Qwen3-8B"][:2] == ("qwen3", "name pattern")
    assert found["Qwen/Qwen3-8B"][2] == ["train.py:2"]
    assert found["meta-llama/Llama-3.1-8B"][0] == "llama" and found["meta-llama/Llama-3.1-8B"][2] == ["train.py:4"]
    assert found["mistralai/Mistral-7B-v0.1"][0] == "mistral"


def test_launcher_and_config_sources(tmp_path):
    found = _by_checkpoint(tmp_path, {
        "run.sh": "torchrun --nproc_per_node 2 train.py \\\n  --model_name_or_path Qwen/Qwen2.5-7B-Instruct --bf16\n",
        "sft.yaml": "model_id: \"google/gemma-2-2b\"   # the base model\nlearning_rate: 1e-4\n",
        "args.json": json.dumps({"model_name_or_path": "facebook/opt-125m", "output_dir": "out"}),
    })
    assert found["Qwen/Qwen2.5-7B-Instruct"] == ("qwen2", "registry", ["run.sh:2"])
    assert found["google/gemma-2-2b"][:2] == ("gemma2", "registry")
    assert found["facebook/opt-125m"][:2] == ("opt", "registry")


def test_notebook_cells_are_read_as_code_not_json(tmp_path):
    notebook = {"cells": [
        {"cell_type": "markdown", "source": ["We fine-tune `Qwen/Qwen3-0.6B` here"]},
        {"cell_type": "code", "source": ["%%writefile cfg.yaml\n", "model_id: \"Qwen/Qwen3-0.6B\"\n"]},
        {"cell_type": "code", "source": ["!python train.py --model_id gpt2\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    found = _by_checkpoint(tmp_path, {"nb.ipynb": json.dumps(notebook, indent=1)})
    assert found["Qwen/Qwen3-0.6B"] == ("qwen3", "registry", ["nb.ipynb (cell 2, line 2)"])  # not the markdown
    assert found["gpt2"][0] == "gpt2"


def test_local_config_json_gives_the_type(tmp_path):
    found = _by_checkpoint(tmp_path, {
        "checkpoints/base/config.json": json.dumps({"model_type": "qwen3", "hidden_size": 8}),
        "infer.py": "m = AutoModelForCausalLM.from_pretrained('./checkpoints/base')\n",
    })
    assert len(found) == 1
    (model_type, how, where), = found.values()
    assert (model_type, how) == ("qwen3", "config.json")
    assert sorted(where) == ["checkpoints/base/config.json:1", "infer.py:1"]


def test_no_change_cases_are_not_models(tmp_path):
    found = _by_checkpoint(tmp_path, {
        "a.py": "out = from_pretrained(path)\nmodel_id = f'{org}/{name}'\nsave('llama3_trn')\nmodel_name = 'merged_model'\n",
        "run.sh": "python train.py --model_id $MODEL_ID --model ${MODEL}\n",
        "README.md": "model_id: meta-llama/Llama-3.1-8B\n",  # prose is not a load
        "b.py": "checkpoint = '2.1'\nmodel_id = './not-here'\n",
    })
    assert found == {}


def test_unknown_ids_are_listed_as_unknown_not_guessed():
    assert model_type_of("stabilityai/stable-diffusion-2-1") == (None, "unknown")
    assert model_type_of("openai/whisper-large-v3") == (None, "unknown")
    assert model_type_of("Qwen/Qwen2-VL-7B-Instruct") == (None, "unknown")  # a vision-language type, not qwen2
    assert model_type_of("Qwen/Qwen3-30B-A3B-Instruct-2507")[0] == "qwen3_moe"


def test_verdicts_from_a_scan_the_user_points_to(tmp_path):
    scan = tmp_path / "scan-out"
    scan.mkdir()
    shutil.copy(SCAN_ROWS, scan / "results.jsonl")
    files = _project(tmp_path / "proj", {"train.py": "AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.2-1B')\n",
                                         "other.py": "AutoModel.from_pretrained('openai/whisper-small')\n"})
    uses, source = project_models(files, tmp_path / "proj", compat_results=scan)
    assert source.startswith(f"scan {scan}") and "cpu/" in source
    llama = next(use for use in uses if use.model_type == "llama")
    assert llama.verdicts == {"eager": "pass", "compiled": "pass"}
    assert llama.summary() == "meta-llama/Llama-3.2-1B (llama): eager pass, compiled pass"
    whisper = next(use for use in uses if use.model_type is None)
    assert whisper.summary() == "openai/whisper-small (architecture unknown): not in the compatibility matrix's list"


def test_the_migrate_report_and_summary_name_the_models(tmp_path):
    from click.testing import CliRunner

    from migrate.cli import main

    scan = tmp_path / "scan-out"
    scan.mkdir()
    shutil.copy(SCAN_ROWS, scan / "results.jsonl")
    project = tmp_path / "proj"
    _project(project, {
        "requirements.txt": "optimum-neuron==0.4.5\n",
        "infer.py": "from optimum.neuron import NeuronModelForCausalLM\n"
                    "model = NeuronModelForCausalLM.from_pretrained('meta-llama/Llama-3.2-1B')\n",
    })
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["--diff", str(project), "--compat-results", str(scan), "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "this project loads meta-llama/Llama-3.2-1B (llama): eager pass, compiled pass" in result.output
    models = json.loads(report.read_text())["models"]
    assert models["modes"] == ["eager", "compiled"]
    assert [use["checkpoint"] for use in models["uses"]] == ["meta-llama/Llama-3.2-1B"]
    assert models["uses"][0]["where"] == ["infer.py:2"]


def test_the_shipped_matrix_is_the_default_and_its_generator_writes_it(tmp_path):
    from compat_matrix.shipped_verdicts import main as write_shipped

    files = _project(tmp_path / "proj", {"train.py": "AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.2-1B')\n"})
    uses, source = project_models(files, tmp_path / "proj")
    assert source.startswith("shipped matrix (") and uses[0].verdicts  # the package ships a full scan's verdicts
    assert list(uses[0].verdicts)[:2] == ["eager", "compiled"]  # modes in the matrix's order
    out = tmp_path / "shipped.json"
    assert write_shipped([str(SCAN_ROWS), "-o", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["verdicts"] == {"llama": {"compiled": "pass", "eager": "pass"}}
    assert "1 architecture," in written["source"] and "cpu/" in written["source"]
    assert oct(out.stat().st_mode & 0o777) == "0o644"
