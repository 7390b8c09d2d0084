"""The import helpers the passes share (migrate/imports.py, migrate/snippets.py)."""

from __future__ import annotations

import libcst as cst
import pytest

from migrate.imports import bound_name, default_commas
from migrate.snippets import parse_dotted


def aliases(statement: str) -> list[cst.ImportAlias]:
    node = cst.parse_statement(statement)
    assert isinstance(node, cst.SimpleStatementLine)
    small = node.body[0]
    assert isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar)
    return list(small.names)


@pytest.mark.parametrize(("statement", "names"), [
    ("import torch_xla.core.xla_model", ["torch_xla"]),
    ("import torch_xla.core.xla_model as xm, os", ["xm", "os"]),
    ("from torch_xla.core import xla_model", ["xla_model"]),
    ("from torch_xla.core import xla_model as xm, xla_env_vars", ["xm", "xla_env_vars"]),
])
def test_the_name_an_import_binds(statement: str, names: list[str]) -> None:
    assert [bound_name(alias) for alias in aliases(statement)] == names


def test_a_part_of_an_import_list_is_written_with_its_own_commas() -> None:
    kept = aliases("from m import (a, b, c,)")[1:]
    statement = cst.ImportFrom(module=parse_dotted("m"), names=default_commas(kept))
    assert cst.Module(body=[cst.SimpleStatementLine(body=[statement])]).code == "from m import b, c\n"


def test_only_a_dotted_name_is_an_import_s_module() -> None:
    assert isinstance(parse_dotted("torch.distributed"), cst.Attribute)
    with pytest.raises(ValueError):
        parse_dotted("f(x)")
