"""A moved or added import is not written when the file (or an earlier notebook cell) already imports that name
from the same place: no ``from transformers import AutoModelForCausalLM`` twice, no second ``import torch``."""

import json

from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from tests.rules.case import migrate


def test_stock_import_just_below_serves() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM
        from transformers import AutoModelForCausalLM, AutoTokenizer

        def model_fn(model_dir):
            model = NeuronModelForCausalLM.from_pretrained(model_dir, export=True)
            return model, AutoTokenizer.from_pretrained(model_dir)
        """,
        "NM110",
    )
    imports = [line for line in result.text.splitlines() if line.startswith("from transformers import")]
    assert sum("AutoModelForCausalLM" in line for line in imports) == 1
    assert "AutoModelForCausalLM.from_pretrained(model_dir" in result.text
    assert not any("optimum" in line for line in result.text.splitlines() if not line.lstrip().startswith("#"))


def test_stock_import_above_serves() -> None:
    result = migrate(
        """
        from transformers import AutoModelForSequenceClassification
        from optimum.neuron import NeuronModelForSequenceClassification, NeuronModelForCausalLM

        model = NeuronModelForSequenceClassification.from_pretrained("m", export=True)
        other = NeuronModelForCausalLM
        """,
        "NM1",
    )
    assert result.text.count("AutoModelForSequenceClassification\n") == 1
    # the moved name joins the user's line (migrate/needed_imports.py), at its sorted place
    assert "from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification\n" in result.text


def test_a_read_before_the_stock_import_keeps_the_moved_one() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM
        print(NeuronModelForCausalLM)
        from transformers import AutoModelForCausalLM
        """,
        "NM110",
    )
    assert result.text.splitlines()[:2] == ["from transformers import AutoModelForCausalLM",
                                            "print(AutoModelForCausalLM)"]


def test_fallback_import_in_a_try_block_stays_valid() -> None:
    result = migrate(
        """
        try:
            from optimum.neuron import NeuronModelForSequenceClassification as Model
        except ImportError:
            from transformers import AutoModelForSequenceClassification as Model
        model = Model.from_pretrained("m", export=True)
        """,
        "NM1",
    )
    assert "except ImportError:" in result.text
    assert "Model.from_pretrained(\"m\"" in result.text


def _notebook(*sources: str) -> str:
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": source.splitlines(keepends=True)} for source in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_notebook_cell_reuses_earlier_cells_imports() -> None:
    notebook = _notebook(
        "import torch\nfrom transformers import AutoModelForSequenceClassification\n",
        "from optimum.neuron import NeuronModelForSequenceClassification\n"
        'model = NeuronModelForSequenceClassification.from_pretrained("m", export=True)\n',
    )
    result = apply_rules(notebook, FileKind.NOTEBOOK, select=["NM1"], path="nb.ipynb")
    second = "".join(json.loads(result.text)["cells"][1]["source"])
    assert "import torch" not in second
    assert "import AutoModelForSequenceClassification" not in second
    assert "AutoModelForSequenceClassification.from_pretrained(\"m\"" in second
    again = apply_rules(result.text, FileKind.NOTEBOOK, select=["NM1"], path="nb.ipynb")
    assert again.text == result.text


def test_notebook_cell_without_earlier_imports_gets_them() -> None:
    notebook = _notebook(
        "x = 1\n",
        "from optimum.neuron import NeuronModelForSequenceClassification\n"
        'model = NeuronModelForSequenceClassification.from_pretrained("m", export=True)\n',
    )
    result = apply_rules(notebook, FileKind.NOTEBOOK, select=["NM1"], path="nb.ipynb")
    second = "".join(json.loads(result.text)["cells"][1]["source"])
    assert "import torch" in second
    assert "from transformers import AutoModelForSequenceClassification" in second
