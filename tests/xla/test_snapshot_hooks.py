"""Which HLO snapshot hooks and CPU copies keep a file on torch_xla: the project scan (``xla_blockers``, read from the
text) and the family's own blockers (NM318's note, read from the tree) must agree, or a launcher would keep the XLA
settings of a script the rules ported (or drop those of one they kept)."""

from __future__ import annotations

import pytest

from codemods._lib.launch_targets import xla_blockers
from codemods.xla._base import BLOCKED_NOTE
from migrate.testing import apply_rules

HEAD = "import torch\nimport torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\n"
PURE = "def keep(name, index, count):\n    if count in wanted:\n        return 'inputs outputs'\n    return ''\n"
HOOK = "if is_pt21_plus:\n    import libneuronxla\n    libneuronxla.register_hlo_snapshot_callback(keep)\n"

PORTED = {
    "pure callback under a version test": PURE + HOOK,
    "lambda callback": "keep = lambda name, index, count: ''\n" + HOOK,
    "import alias": PURE + "import libneuronxla as lnx\nlnx.register_hlo_snapshot_callback(keep)\n",
    "cpu copy": "state = xm._maybe_convert_to_cpu({'model': model.state_dict()})\n",
    "cpu copy, keywords": "state = xm._maybe_convert_to_cpu(data=model.state_dict(), convert=True)\n",
}
KEPT = {
    "callback that calls": "def keep(name, index, count):\n    seen.append(count)\n    return ''\n" + HOOK,
    "callback that writes state": "def keep(name, index, count):\n    state.count = count\n    return ''\n" + HOOK,
    "callback of unknown code": "def setup(keep):\n" + "".join("    " + line + "\n" for line in HOOK.splitlines()),
    "imported callback": "from hooks import keep\n" + HOOK,
    "another libneuronxla use": PURE + HOOK + "print(libneuronxla.__version__)\n",
    "from-import": PURE + "from libneuronxla import register_hlo_snapshot_callback\n"
                          "register_hlo_snapshot_callback(keep)\n",
    "a line of two statements": PURE + "import libneuronxla; libneuronxla.register_hlo_snapshot_callback(keep)\n",
    "cpu copy without convert": "state = xm._maybe_convert_to_cpu(model.state_dict(), convert=False)\n",
}


@pytest.mark.parametrize("body", PORTED.values(), ids=PORTED.keys())
def test_a_snapshot_hook_or_cpu_copy_no_rule_needs_by_hand_does_not_keep_the_file(body: str) -> None:
    text = HEAD + body
    assert xla_blockers(text) is None
    migrated = apply_rules(text, select=["NM3"], path="train.py").text
    assert BLOCKED_NOTE not in migrated
    code = "".join(line for line in migrated.splitlines(True) if not line.lstrip().startswith("#"))
    assert "libneuronxla" not in code
    assert "_maybe_convert_to_cpu" not in migrated and "xla_device" not in migrated


@pytest.mark.parametrize("body", KEPT.values(), ids=KEPT.keys())
def test_any_other_shape_keeps_the_file_on_torch_xla(body: str) -> None:
    text = HEAD + body
    assert xla_blockers(text)
    migrated = apply_rules(text, select=["NM3"], path="train.py").text
    assert BLOCKED_NOTE in migrated and "xm.xla_device()" in migrated
