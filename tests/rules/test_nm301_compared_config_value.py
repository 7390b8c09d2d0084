"""NM301: a comparison with "xla" of a value read from a config file names the file's load and key (rt4E 8: the
YAML's `device: xla` was not mentioned, and a user who changed only the check sent "xla" to torch.device)."""

from __future__ import annotations

from tests.rules.case import findings, migrate

RULE = "NM301"
SCRIPT = """
    import torch
    import torch_xla.core.xla_model as xm
    import yaml

    def pick_device(path):
        cfg = yaml.safe_load(open(path))
        if cfg["device"] == "xla":
            return xm.xla_device()
        return torch.device(cfg["device"])
"""


def test_the_note_names_the_config_load_and_its_key() -> None:
    result = migrate(SCRIPT, RULE, family="NM3")
    note = next(f.message for f in result.findings if f.rule == RULE and f.severity.value == "todo")
    assert note.startswith('comparison with "xla": the migrated device type is "neuron"')
    assert 'cfg["device"], is read from the config file that `yaml.safe_load(open(path))` loads' in note
    assert "`device: xla` there together with this check" in note
    assert findings(result, RULE) == {(7, "todo"), (8, "fixed")}


def test_a_value_of_other_data_is_named_without_a_load() -> None:
    result = migrate("""
        import torch_xla.core.xla_model as xm

        def pick_device(opts):
            if opts.device == "xla":
                return xm.xla_device()
            return None
    """, RULE, family="NM3")
    note = next(f.message for f in result.findings if f.rule == RULE and f.severity.value == "todo")
    assert "opts.device, is data this file reads" in note and "config file that" not in note


def test_a_comparison_of_a_device_type_says_nothing_of_a_source() -> None:
    result = migrate("""
        import torch_xla.core.xla_model as xm

        def on_xla(t, device):
            return t.device.type == "xla" or device.type == "xla"
    """, RULE, family="NM3")
    notes = [f.message for f in result.findings if f.rule == RULE and f.severity.value == "todo"]
    assert notes and all(note.endswith("update this check") for note in notes)
