"""NM201 training-classes: an alias that names a Neuron class is dropped with the move when that is safe.

``from optimum.neuron import Seq2SeqNeuronTrainer as NeuronSeq2SeqTrainer`` became ``Seq2SeqTrainer as
NeuronSeq2SeqTrainer``: valid, but it reads as a Neuron class it no longer is. Now the import binds the stock name and
every use is renamed, unless the stock name is bound or read in the module, the alias is bound otherwise, a string
(``__all__``, ``getattr``) holds it, or another project file names it; then the alias stays as before.
"""

from __future__ import annotations

import json

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

HEAD = "from optimum.neuron import Seq2SeqNeuronTrainer as NeuronSeq2SeqTrainer\n"
USE = "\ndef main(model, args):\n    trainer = NeuronSeq2SeqTrainer(model=model, args=args)\n    trainer.train()\n"


def test_neuron_named_alias_dropped() -> None:
    result = migrate(HEAD + USE, "NM201")
    assert "from transformers import Seq2SeqTrainer\n" in result.text
    assert "NeuronSeq2SeqTrainer" not in result.text
    assert "trainer = Seq2SeqTrainer(model=model, args=args)" in result.text
    assert findings(result, "NM201") == {(1, "fixed")}


def test_other_alias_kept() -> None:
    result = migrate("from optimum.neuron import Seq2SeqNeuronTrainer as S2STrainer\nS2STrainer()\n", "NM201")
    assert result.text == "from transformers import Seq2SeqTrainer as S2STrainer\nS2STrainer()\n"


def test_docstring_mention_does_not_keep_it() -> None:
    result = migrate('"""Trains with NeuronSeq2SeqTrainer."""\n' + HEAD + USE, "NM201")
    assert "trainer = Seq2SeqTrainer(" in result.text


KEPT = {
    "all": '__all__ = ["NeuronSeq2SeqTrainer"]\n',
    "getattr": 'cls = getattr(__import__("train"), "NeuronSeq2SeqTrainer")\n',
    "stock read": "print(Seq2SeqTrainer)\n",
    "stock parameter": "def build(Seq2SeqTrainer=None):\n    return NeuronSeq2SeqTrainer\n",
    "alias assigned": "NeuronSeq2SeqTrainer = NeuronSeq2SeqTrainer\n",
    "alias parameter": "def build(NeuronSeq2SeqTrainer=None):\n    return NeuronSeq2SeqTrainer\n",
    "stock class": "class Seq2SeqTrainer(NeuronSeq2SeqTrainer):\n    pass\n",
    "star import": "from helpers import *\n",
    "stock imported": "from mylib import Seq2SeqTrainer as _unused\nimport Seq2SeqTrainer\n",
}


def test_alias_kept_where_unsafe() -> None:
    for label, extra in KEPT.items():
        result = migrate(HEAD + USE + extra, "NM201")
        assert "import Seq2SeqTrainer as NeuronSeq2SeqTrainer\n" in result.text, label
        assert "trainer = NeuronSeq2SeqTrainer(" in result.text, label


def test_alias_kept_when_another_file_names_it() -> None:
    for other, text in {
        "evaluate.py": "from train import NeuronSeq2SeqTrainer\n",
        "run.py": "import train\ntrain.NeuronSeq2SeqTrainer\n",
        "conf/trainer.yaml": "_target_: train.NeuronSeq2SeqTrainer\n",
    }.items():
        result = migrate(HEAD + USE, "NM201", project={other: text})
        assert "import Seq2SeqTrainer as NeuronSeq2SeqTrainer\n" in result.text, other


def test_sibling_importing_the_same_alias_from_the_library_does_not_keep_it() -> None:
    result = migrate(HEAD + USE, "NM201", project={"evaluate.py": HEAD + "NeuronSeq2SeqTrainer()\n"})
    assert "trainer = Seq2SeqTrainer(" in result.text


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": cell.splitlines(keepends=True)} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_notebook_cells_share_the_decision() -> None:
    notebook = _notebook("!pip install optimum-neuron\n" + HEAD, "trainer = NeuronSeq2SeqTrainer(model=m)\n")
    dropped = migrate(notebook, "NM201", kind=FileKind.NOTEBOOK, path="nb.ipynb", project={"nb.ipynb": notebook})
    assert "NeuronSeq2SeqTrainer" not in dropped.text and "Seq2SeqTrainer(model=m)" in dropped.text
    kept = migrate(_notebook(HEAD, "trainer = NeuronSeq2SeqTrainer(model=m)\n", "print(Seq2SeqTrainer)\n"),
                   "NM201", kind=FileKind.NOTEBOOK, path="nb.ipynb")
    assert "NeuronSeq2SeqTrainer(model=m)" in kept.text and "Seq2SeqTrainer as NeuronSeq2SeqTrainer" in kept.text


def test_migrated_code_runs_against_transformers(tmp_path) -> None:
    source = ("from optimum.neuron import NeuronTrainingArguments as NeuronArgs\n"
              "from optimum.neuron import NeuronHfArgumentParser as NeuronParser\n"
              "def build(out):\n"
              "    parser = NeuronParser(NeuronArgs)\n"
              "    (args,) = parser.parse_args_into_dataclasses(['--output_dir', out])\n"
              "    assert isinstance(args, NeuronArgs)\n"
              "    return args\n")
    result = migrate(source, "NM201")
    assert "Neuron" not in result.text
    namespace: dict = {}
    exec(compile(result.text, "train.py", "exec"), namespace)
    args = namespace["build"](str(tmp_path))
    assert type(args).__name__ == "TrainingArguments" and args.output_dir == str(tmp_path)
