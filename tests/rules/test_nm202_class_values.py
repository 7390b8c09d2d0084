"""NM202 (rt7L L2, L4, L8): a Neuron arguments class used as a value (passed to a factory, stored, assigned) is
renamed by NM201, but the object is built elsewhere from keywords no rule checks: the call that passes it and the
``cls(**...)`` it reaches in the file get todos. A script that trains with a Neuron trainer on arguments a helper
module builds gets the TorchNeuron preamble at its entry point; the helper (no entry point) gets a todo naming the
project scripts that import it, and no import it does not use."""

from tests.rules.case import migrate

LOADER = """
import dataclasses

from optimum.neuron import NeuronSFTConfig, NeuronTrainingArguments


def build_args(cls, section, overrides=None):
    values = dict(section)
    values.update(overrides or {})
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in values.items() if k in known})


def sft_args(cfg, **overrides):
    return build_args(NeuronSFTConfig, cfg["sft"], overrides)


REGISTRY = {"reward": NeuronTrainingArguments}
"""

SCRIPT = """
from optimum.neuron import NeuronSFTTrainer

from config_loader import sft_args


def main():
    args = sft_args({"sft": {}})
    NeuronSFTTrainer(model="m", args=args)


if __name__ == "__main__":
    main()
"""


def _todos(result, line=None):
    return [f.message for f in result.findings if f.rule == "NM202" and f.severity.value == "todo"
            and (line is None or f.line == line)]


def test_class_passed_as_a_value_notes_the_construction_it_reaches() -> None:
    project = {"config_loader.py": LOADER, "train.py": SCRIPT}
    result = migrate(LOADER, "NM202", family="NM2", path="config_loader.py", project=project)
    assert "return build_args(SFTConfig, cfg[\"sft\"], overrides)" in result.text
    assert any("cls is NeuronSFTConfig (now SFTConfig) here (passed on line 14)" in m for m in _todos(result, 10))
    assert any("NeuronSFTConfig is passed as a value to build_args" in m for m in _todos(result, 14))
    stored = _todos(result, 17)
    assert any("NeuronTrainingArguments is stored in a dict" in m and "torch_compile=True" in m for m in stored)
    # a module of definitions: no preamble, no import for it; train.py, which imports it, trains with a Neuron
    # trainer and gets the settings from this rule itself (below): no todo asks for them again (rtA-06)
    assert "import os" not in result.text and "import torch" not in result.text
    assert not any("no entry point" in m for m in _todos(result, 1))


STOCK_SCRIPT = """
from trl import SFTTrainer

from config_loader import sft_args


def main():
    SFTTrainer(model="m", args=sft_args({"sft": {}}))


if __name__ == "__main__":
    main()
"""


def test_the_entry_point_todo_names_only_importers_that_do_not_get_the_settings() -> None:
    project = {"config_loader.py": LOADER, "train.py": SCRIPT, "train_stock.py": STOCK_SCRIPT}
    result = migrate(LOADER, "NM202", family="NM2", path="config_loader.py", project=project)
    todos = [m for m in _todos(result, 1) if "no entry point" in m]
    assert len(todos) == 1 and "in train_stock.py, which imports it" in todos[0] and "train.py" not in todos[0]
    # and that script gets no preamble from NM202 (it names no Neuron class): the todo is what tells
    script = migrate(STOCK_SCRIPT, "NM202", family="NM2", path="train_stock.py", project=project)
    assert "automatic_dynamic_shapes" not in script.text


def test_trainer_script_of_helper_built_arguments_gets_the_preamble() -> None:
    project = {"config_loader.py": LOADER, "train.py": SCRIPT}
    result = migrate(SCRIPT, "NM202", family="NM2", path="train.py", project=project)
    assert "    torch._dynamo.config.automatic_dynamic_shapes = False\n" in result.text
    assert '    os.environ.setdefault("HF_DEACTIVATE_ASYNC_LOAD", "1")\n' in result.text
