"""The transformers-5 drift rules (NM6xx) leave a file that stays on the old stack after this run: one that still
imports optimum.neuron or uses torch_xla once the run's rules have migrated it (NM501's decision, which holds its
requirements on that stack, transformers 4.x with them), and a project module such a file imports. transformers
4.41 has no ``dtype=`` (TypeError) and no ``activation_checkpointing_enable`` (AttributeError), so the rename would
break the kept script on its own stack; a file that moves to TorchNeuron beside it is still renamed."""

from __future__ import annotations

import textwrap

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

KEPT = """
import torch
from optimum.neuron.distributed import ParallelizersManager
from transformers import AutoModelForCausalLM

from helpers import load_reference

model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
parallelizer = ParallelizersManager.parallelizer_for_model(model)
reference = load_reference("gpt2")
"""
HELPERS = """
import torch
from transformers import AutoModelForCausalLM


def load_reference(name):
    return AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float32)
"""
MOVED = """
import torch
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
model.gradient_checkpointing_enable()
trainer = NeuronTrainer(model=model, args=NeuronTrainingArguments(output_dir="out"))
"""
XLA_KEPT = """
import torch
import torch_xla.distributed.spmd as xs
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.bfloat16)
xs.set_global_mesh(xs.Mesh(list(range(8)), (8, 1)))
"""


def _project(**files: str) -> dict[str, str]:
    return {f"{name.replace('_', '/')}.py": textwrap.dedent(text).lstrip("\n") for name, text in files.items()}


def _run(project: dict[str, str], path: str, select: tuple[str, ...] = ()):
    text = project[path]
    result = apply_rules(text, FileKind.PYTHON, path=path, project=project, select=select)
    again = apply_rules(result.text, FileKind.PYTHON, path=path, project=project, select=select)
    assert again.text == result.text
    return text, result


def _drift(result) -> list[tuple[int, str, str, str]]:
    return sorted((f.line, f.severity.value, f.rule, f.message) for f in result.findings if f.rule.startswith("NM6"))


def test_a_file_kept_on_optimum_neuron_keeps_its_transformers_4_names_with_one_info_per_rule() -> None:
    project = _project(kept=KEPT, helpers=HELPERS, moved=MOVED)
    text, result = _run(project, "kept.py", ("NM2", "NM6"))
    assert result.text == text
    found = _drift(result)
    assert [(line, severity, rule) for line, severity, rule, _ in found] == [(7, "info", "NM604"), (8, "info", "NM606")]
    assert all("this file still imports optimum.neuron after this run" in message for *_, message in found)
    assert "first: torch_dtype= -> dtype= (transformers 5)" in found[0][3]


def test_a_module_the_kept_file_imports_is_left_too() -> None:
    project = _project(kept=KEPT, helpers=HELPERS, moved=MOVED)
    text, result = _run(project, "helpers.py", ("NM2", "NM6"))
    assert result.text == text
    found = _drift(result)
    assert [(line, severity, rule) for line, severity, rule, _ in found] == [(6, "info", "NM604")]
    assert "this file is imported by kept.py, which still imports optimum.neuron after this run" in found[0][3]


def test_the_file_the_run_moves_to_torchneuron_beside_it_is_renamed() -> None:
    project = _project(kept=KEPT, helpers=HELPERS, moved=MOVED)
    _, result = _run(project, "moved.py", ("NM2", "NM6"))
    assert 'from_pretrained("gpt2", dtype=torch.bfloat16)' in result.text
    assert "model.activation_checkpointing_enable()" in result.text
    assert "from optimum" not in result.text
    assert {(line, severity, rule) for line, severity, rule, _ in _drift(result)} == {(5, "fixed", "NM604"),
                                                                                       (6, "fixed", "NM606")}


def test_the_helper_is_renamed_when_no_kept_file_imports_it() -> None:
    project = _project(helpers=HELPERS, moved="from helpers import load_reference\n" + textwrap.dedent(MOVED))
    _, result = _run(project, "helpers.py", ("NM2", "NM6"))
    assert "dtype=torch.float32" in result.text and "torch_dtype" not in result.text


def test_a_file_still_using_torch_xla_keeps_its_names() -> None:
    project = _project(kept=XLA_KEPT)
    text, result = _run(project, "kept.py")
    assert "torch_xla" in result.text
    assert 'from_pretrained("gpt2", torch_dtype=torch.bfloat16)' in result.text
    found = _drift(result)
    assert [(severity, rule) for _, severity, rule, _ in found] == [("info", "NM604")]
    assert "this file still uses torch_xla after this run" in found[0][3]


#: transformers.deepspeed is gone in transformers 5 (transformers.integrations.deepspeed); no rule rewrites it
KEPT_WITH_GONE_IMPORT = """
from optimum.neuron.distributed import ParallelizersManager
from transformers.deepspeed import is_deepspeed_zero3_enabled

parallelizer = ParallelizersManager.parallelizer_for_model(model) if is_deepspeed_zero3_enabled() else None
"""
MOVED_WITH_GONE_IMPORT = """
from optimum.neuron import NeuronTrainer
from transformers.deepspeed import is_deepspeed_zero3_enabled

trainer = NeuronTrainer(model=model) if is_deepspeed_zero3_enabled() else None
"""


def test_verification_of_a_kept_file_says_what_fails_once_it_is_ported_not_that_it_raises() -> None:
    # the kept file runs on optimum-neuron's transformers 4.x, which has the docstring constant: no error there
    _, result = _run(_project(kept=KEPT_WITH_GONE_IMPORT), "kept.py")
    (found,) = [f for f in result.findings if f.rule == "NM701"]
    assert found.severity.value == "info" and found.line == 2
    assert found.message.startswith("once this file is ported to transformers 5 (it still imports optimum.neuron "
                                    "after this run, so it runs on the old stack's transformers 4.x for now): ")
    assert "ModuleNotFoundError" in found.message and "`transformers.deepspeed`" in found.message


def test_verification_of_a_file_the_run_moves_still_reports_an_error() -> None:
    _, result = _run(_project(moved=MOVED_WITH_GONE_IMPORT), "moved.py")
    assert "from optimum" not in result.text
    assert [(f.severity.value, f.line) for f in result.findings if f.rule == "NM701"] == [("error", 2)]
