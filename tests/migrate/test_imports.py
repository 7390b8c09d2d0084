"""``migrate.imports.add_imports`` gives exactly what libcst's ``AddImportsVisitor`` gives, only faster."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from migrate.imports import add_imports

MODULES = {
    "empty": "",
    "code only": "x = 1\n",
    "docstring": '"""Doc."""\nx = 1\n',
    "docstring and imports": '"""Doc."""\nimport os\nfrom transformers import AutoTokenizer\n\nx = 1\n',
    "strict flag": "__strict__ = True\nimport os\n",
    "comment first": "# a comment\nimport os\n# about x\nx = 1\n",
    "from import to extend": "from transformers import AutoTokenizer, pipeline as pl\nimport torch\nx = 1\n",
    "star import": "from transformers import *\nx = 1\n",
    "already there": "import torch\nimport torch.distributed as dist\nfrom transformers import Trainer\n",
    "imports after code": "x = 1\nimport torch\nfrom transformers import Trainer\n",
    "nested import only": "def f():\n    from transformers import Trainer\n    return Trainer\n",
    "future": '"""Doc."""\nfrom __future__ import annotations\nimport os\n',
    "multi statement line": "import os; import sys\nx = 1\n",
    "relative": "from . import sibling\nx = 1\n",
}

NEEDED = [
    [("torch", None, None)],
    [("transformers", "Trainer", None), ("transformers", "TrainingArguments", None)],
    [("torch.distributed", None, "dist"), ("torch", None, None), ("transformers", "CompileConfig", None)],
    [("transformers", "pipeline", "pl"), ("os", None, None), ("transformers.distributed", "DistributedConfig", None)],
    [("__future__", "annotations", None), ("accelerate", "PartialState", None)],
]


def reference(source: str, needed) -> str:
    context = CodemodContext()
    for module, name, alias in needed:
        AddImportsVisitor.add_needed_import(context, module, name, alias)
    return AddImportsVisitor(context).transform_module(cst.parse_module(source)).code


@pytest.mark.parametrize("needed", NEEDED, ids=lambda n: "+".join(f"{m}.{o or ''}" for m, o, _ in n))
@pytest.mark.parametrize("name", sorted(MODULES))
def test_same_result_as_libcst(name: str, needed) -> None:
    source = MODULES[name]
    assert add_imports(cst.parse_module(source), needed).code == reference(source, needed)


def test_nothing_needed_returns_the_same_code() -> None:
    source = "import os\nx = 1\n"
    assert add_imports(cst.parse_module(source), [("os", None, None)]).code == source
