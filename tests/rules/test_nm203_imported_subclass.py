"""NM203: a trainer subclass imported from another module of the project is followed like a class of the file
(T1): ``from trainers import PackedTrainer; PackedTrainer(..., tokenizer=tok)`` with ``class PackedTrainer(
NeuronTrainer)`` in trainers.py gets ``processing_class=tok`` (it kept ``tokenizer=``, a TypeError on transformers 5,
with no note). The module is looked up through the project fact ``training.trainer-subclasses``."""

from __future__ import annotations

from migrate.testing import apply_rules

TRAINERS = """
from optimum.neuron import NeuronSFTTrainer, NeuronTrainer


class PackedTrainer(NeuronTrainer):
    def __init__(self, *args, packing=False, **kwargs):
        super().__init__(*args, **kwargs)


class KeepsTokenizer(NeuronTrainer):
    def __init__(self, *args, tokenizer=None, **kwargs):
        super().__init__(*args, **kwargs)


class Pops(NeuronTrainer):
    def __init__(self, *args, **kwargs):
        kwargs.pop("extra", None)
        super().__init__(*args, **kwargs)


class Sft(NeuronSFTTrainer):
    pass
"""


def _migrate(script: str, path: str, project: dict[str, str]):
    project = {**project, path: script}
    return apply_rules(script, path=path, select=["NM2"], project=project)


def test_absolute_import_from_the_script_folder_is_renamed():
    result = _migrate("from trainers import PackedTrainer\nPackedTrainer(tokenizer=tok, packing=True)\n",
                      "train.py", {"trainers.py": TRAINERS})
    assert "PackedTrainer(processing_class=tok, packing=True)" in result.text


def test_relative_import_and_a_chain_across_modules():
    middle = "from .base import PackedTrainer\n\n\nclass LoggedTrainer(PackedTrainer):\n    pass\n"
    script = "from .logged import LoggedTrainer\nLoggedTrainer(tokenizer=tok)\n"
    result = _migrate(script, "pkg/train.py", {"pkg/__init__.py": "", "pkg/base.py": TRAINERS,
                                               "pkg/logged.py": middle})
    assert "LoggedTrainer(processing_class=tok)" in result.text


def test_src_layout_package_is_found():
    result = _migrate("from mypkg.trainers import PackedTrainer as PT\nPT(tokenizer=tok)\n", "scripts/train.py",
                      {"src/mypkg/__init__.py": "", "src/mypkg/trainers.py": TRAINERS})
    assert "PT(processing_class=tok)" in result.text


def test_a_local_subclass_of_an_imported_one():
    script = "from trainers import PackedTrainer\n\n\nclass Mine(PackedTrainer):\n    pass\n\n\nMine(tokenizer=tok)\n"
    result = _migrate(script, "train.py", {"trainers.py": TRAINERS})
    assert "Mine(processing_class=tok)" in result.text


def test_own_tokenizer_stays_and_a_kwargs_reader_gets_a_todo():
    script = "from trainers import KeepsTokenizer, Pops\nKeepsTokenizer(tokenizer=tok)\nPops(tokenizer=tok)\n"
    result = _migrate(script, "train.py", {"trainers.py": TRAINERS})
    assert "KeepsTokenizer(tokenizer=tok)" in result.text and "Pops(tokenizer=tok)" in result.text
    todos = [f.message for f in result.findings if f.rule == "NM203"]
    assert len(todos) == 1 and "Pops derives from NeuronTrainer" in todos[0] and "reads or changes kwargs" in todos[0]


def test_sft_subclass_loses_model_init_with_a_todo():
    result = _migrate("from trainers import Sft\nSft(tokenizer=tok, model_init=build)\n", "train.py",
                      {"trainers.py": TRAINERS})
    assert "Sft(processing_class=tok)" in result.text
    assert any("model_init=build" in f.message for f in result.findings if f.severity.value == "todo")


def test_two_modules_that_disagree_leave_the_call():
    other = "class PackedTrainer:\n    def __init__(self, tokenizer=None):\n        pass\n"
    script = "from trainers import PackedTrainer\nPackedTrainer(tokenizer=tok)\n"
    result = _migrate(script, "scripts/train.py", {"scripts/trainers.py": TRAINERS, "trainers.py": other})
    assert result.text == script


def test_a_module_not_in_the_project_is_not_guessed():
    script = ("from optimum.neuron import NeuronTrainer\nfrom elsewhere import PackedTrainer\n"
              "PackedTrainer(tokenizer=tok)\n")
    result = _migrate(script, "train.py", {})
    assert "PackedTrainer(tokenizer=tok)" in result.text
