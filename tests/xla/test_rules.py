"""Unit checks of the torch_xla family: scope, markers, emitted APIs exist, quoting, env table."""

from __future__ import annotations

import ast
import inspect

import torch
import torch.distributed as dist

from codemods._tables import env_vars
from codemods.xla._base import MARKERS
from migrate.registry import all_rules
from migrate.testing import apply_rules

XLA_RULES = [rule for rule in all_rules() if rule.id.startswith("NM3")]


def test_rules_are_documented_and_scoped():
    assert len(XLA_RULES) >= 15
    for rule in XLA_RULES:
        doc = rule.explanation()
        assert "Before" in doc and "safety" in doc.lower(), rule.id
        if rule.id not in ("NM320", "NM330"):  # NxD / torch_neuronx are Neuron-only by themselves
            assert rule.scope == "neuron-project" and rule.markers, rule.id


def test_markers_come_from_the_project_table():
    from migrate.filekinds import FileKind

    anchors = [anchor for anchor, _ in MARKERS[FileKind.PYTHON]]
    assert anchors and "NEURON" not in anchors


def test_tpu_code_is_untouched_outside_neuron_projects():
    source = "import torch_xla.core.xla_model as xm\ndevice = xm.xla_device()\nxm.mark_step()\n"
    assert apply_rules(source, select=["NM3"], neuron_project=False).text == source
    assert "xla_device" not in apply_rules(source, select=["NM3"]).text


def test_emitted_apis_exist():
    assert callable(torch.accelerator.current_accelerator) and callable(torch.accelerator.synchronize)
    assert dist.get_default_backend_for_device(torch.device("cpu")) == "gloo"
    assert "use_reentrant" in inspect.signature(torch.utils.checkpoint.checkpoint).parameters
    for op in ("SUM", "PRODUCT", "BAND", "BOR", "MIN", "MAX"):
        assert hasattr(dist.ReduceOp, op)
    for name in ("AdamW", "Adam", "SGD"):
        assert hasattr(torch.optim, name)
    assert callable(torch.nn.utils.clip_grad_norm_) and callable(torch.manual_seed)
    assert "device_type" in inspect.signature(torch.autocast).parameters
    for name in ("is_initialized", "barrier", "all_reduce", "all_gather_object", "init_process_group"):
        assert hasattr(dist, name)


def test_emitted_code_inside_fstrings_parses_on_this_python():
    source = 'import torch_xla.core.xla_model as xm\nprint(f"rank {xm.get_ordinal()} on {xm.xla_device()}")\n'
    text = apply_rules(source, select=["NM3"]).text
    ast.parse(text)
    assert "RANK" in text and "xm." not in text


def test_env_table_is_consistent():
    for name, action in {**env_vars.ENV_VARS, **env_vars.ENV_PREFIXES, **env_vars.CC_FLAGS}.items():
        assert action.action in {"remove", "keep", "review", "replace"}, name
        assert action.action == "keep" or action.message, name
        assert (action.action == "replace") == bool(action.replacement), name
    assert env_vars.lookup("NEURON_RT_LOG_LEVEL").action == "keep"
    assert env_vars.lookup("XLA_SOMETHING_NEW").action == "remove"
    assert env_vars.lookup("HOME") is None


def test_all_reduce_constant_is_not_half_migrated():
    source = "import torch_xla.core.xla_model as xm\nxm.all_reduce(xm.REDUCE_SUM, grads, groups=g)\n"
    text = apply_rules(source, select=["NM3"]).text
    assert "xm.all_reduce(xm.REDUCE_SUM" in text and "neuron-migrate" in text


def test_a_file_kept_on_torch_xla_gets_one_note_and_its_references_as_information():
    # XLA ZeRO has no rule: porting the device alone would leave a file that runs on neither stack
    source = (
        "import torch\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.xla_backend\n"
        "from torch_xla.distributed.zero_redundancy_optimizer import ZeroRedundancyOptimizer\n\n"
        "device = xm.xla_device()\nopt = ZeroRedundancyOptimizer([], torch.optim.AdamW, lr=1e-3)\nxm.mark_step()\n"
    )
    result = apply_rules(source, select=["NM3", "NM9"])
    assert "device = xm.xla_device()" in result.text and "xm.mark_step()" in result.text
    assert "import torch_xla.distributed.xla_backend" in result.text  # it registers the backend the file still uses
    assert not [f for f in result.findings if f.severity.value == "fixed"]
    assert [f.rule for f in result.findings if "no rule ports" in f.message] == ["NM318"]
    # each reference is still reported, as information pointing at that note: no line notes, nothing silent
    leftovers = [f for f in result.findings if f.rule == "NM902"]
    assert leftovers and all(f.severity.value == "info" and "the note at its top" in f.message for f in leftovers)


def test_leftover_precision_variable_note_says_set_or_read():
    from codemods.sweep.nm902_torch_xla_leftovers import TorchXlaLeftovers
    from migrate.filekinds import FileKind
    from migrate.rule import RuleOptions

    rule = TorchXlaLeftovers(RuleOptions())
    text = 'import os\nos.environ["XLA_USE_BF16"] = "1"\nif "XLA_DOWNCAST_BF16" in os.environ:\n    pass\n'
    messages = {hit.line: hit.message for hit in rule.scan(text, FileKind.PYTHON)}
    assert "still set" in messages[2] and "still read" in messages[3]
