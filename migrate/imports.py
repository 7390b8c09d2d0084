"""Adding imports to a module: the behaviour of libcst's ``AddImportsVisitor``, at a fraction of its cost.

libcst's codemod visitors introspect their own methods every time one is built and copy the tree for
metadata, which costs several times the parse of a small file; the engine adds imports to most
migrated files. This module reproduces the visitor's result (the test suite compares the two on many
module shapes) by looking only at the module's top-level statements:

* only imports in the leading import block count as present (after a docstring or ``__strict__``);
* a ``from m import ...`` to add joins the first existing ``from m import ...`` of that block,
  new names first and sorted;
* the rest are inserted after that block: ``import m`` (sorted), ``import m as a``, then one
  ``from m import ...`` per module (``__future__`` imports go before the block), and the first
  statement after them gets a blank line above it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import libcst as cst

from migrate.snippets import parse_statement


def bound_name(alias: cst.ImportAlias) -> str:
    """The name an import binds: ``import a.b`` -> ``a``; ``import a.b as c``, ``from m import x as c`` -> ``c``;
    ``from m import x`` -> ``x``."""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return alias.evaluated_name.split(".")[0]


def default_commas(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    """``aliases`` with the commas libcst writes itself: for a list made from part of another one."""
    return [alias.with_changes(comma=cst.MaybeSentinel.DEFAULT) for alias in aliases]


def skip_first(module: cst.Module) -> bool:
    """A docstring or ``__strict__`` flag stays first."""
    if not module.body or not isinstance(module.body[0], cst.SimpleStatementLine):
        return False
    body = module.body[0].body
    if len(body) != 1:
        return False
    statement = body[0]
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.SimpleString):
        return True
    return (
        isinstance(statement, cst.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0].target, cst.Name)
        and statement.targets[0].target.value == "__strict__"
    )


def import_of(statement: cst.BaseStatement) -> cst.Import | cst.ImportFrom | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            return small
    return None


def absolute_module(node: cst.ImportFrom) -> str | None:
    if node.relative or node.module is None:
        return None  # relative imports need a package name; migrated code never adds them
    return cst.helpers.get_full_name_for_node(node.module)


def add_imports(module: cst.Module, needed: Sequence[tuple[str, str | None, str | None]]) -> cst.Module:
    """Add ``(module, name, asname)`` imports (``name`` None: ``import module [as asname]``)."""
    module_imports = {mod for mod, name, alias in needed if name is None and alias is None}
    module_aliases = {mod: alias for mod, name, alias in needed if name is None and alias is not None}
    module_mapping = {
        mod: {name for m, name, alias in needed if m == mod and name is not None and alias is None}
        for mod in sorted({mod for mod, name, alias in needed if name is not None and alias is None})
    }
    alias_mapping = {
        mod: [(name, alias) for m, name, alias in needed if m == mod and name is not None and alias is not None]
        for mod in sorted({mod for mod, name, alias in needed if name is not None and alias is not None})
    }

    start = 1 if skip_first(module) else 0
    block_end = start
    top: list[tuple[int, cst.Import | cst.ImportFrom]] = []
    for index, statement in enumerate(module.body[start:], start=start):
        found = import_of(statement)
        if found is None:
            break
        top.append((index, found))
        block_end = index + 1

    # what the leading block already imports
    for _, found in top:
        if isinstance(found, cst.Import):
            for alias in found.names:
                name = alias.evaluated_name
                if alias.asname is not None:
                    if module_aliases.get(name) == alias.evaluated_alias:
                        del module_aliases[name]
                else:
                    module_imports.discard(name)
            continue
        source = absolute_module(found)
        if source is None:
            continue
        if isinstance(found.names, cst.ImportStar):
            module_mapping.pop(source, None)
            continue
        for alias in found.names:
            if alias.asname is not None and source in alias_mapping:
                pair = (alias.evaluated_name, alias.evaluated_alias)
                if pair in alias_mapping[source]:
                    alias_mapping[source].remove(pair)
                    if not alias_mapping[source]:
                        del alias_mapping[source]
            elif alias.asname is None and source in module_mapping:
                module_mapping[source].discard(alias.evaluated_name)
                if not module_mapping[source]:
                    del module_mapping[source]

    body = list(module.body)
    # new names join the first `from m import ...` of the block
    for index, found in top:
        if not isinstance(found, cst.ImportFrom) or isinstance(found.names, cst.ImportStar):
            continue
        source = absolute_module(found)
        if source is None or (source not in module_mapping and source not in alias_mapping):
            continue
        plain = sorted(module_mapping.pop(source, ()))
        aliased = sorted(alias_mapping.pop(source, ()))
        names = [
            *(cst.ImportAlias(name=cst.Name(name)) for name in plain),
            *(cst.ImportAlias(name=cst.Name(name), asname=cst.AsName(name=cst.Name(alias))) for name, alias in aliased),
            *found.names,
        ]
        line = body[index]
        body[index] = line.with_changes(body=[found.with_changes(names=names)])

    if not (module_imports or module_mapping or module_aliases or alias_mapping):
        return module.with_changes(body=body)

    grouped: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    for mod, pairs in alias_mapping.items():
        grouped[mod].extend(pairs)
    for mod, plain_names in module_mapping.items():
        grouped[mod].extend((name, None) for name in plain_names)

    def from_line(mod: str, pairs) -> cst.BaseStatement:
        listed = ", ".join(name if alias is None else f"{name} as {alias}" for name, alias in sorted(pairs, key=_key))
        return parse_statement(f"from {mod} import {listed}", config=module.config_for_parsing)

    after = body[block_end:]
    if after:
        first = after[0]
        if not first.leading_lines:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(),))
        elif first.leading_lines[0].comment is not None:
            after[0] = first.with_changes(leading_lines=(cst.EmptyLine(), *first.leading_lines))
    new_body = [
        *body[:start],
        *(from_line(mod, pairs) for mod, pairs in grouped.items() if mod == "__future__"),
        *body[start:block_end],
        *(parse_statement(f"import {mod}", config=module.config_for_parsing) for mod in sorted(module_imports)),
        *(
            parse_statement(f"import {mod} as {alias}", config=module.config_for_parsing)
            for mod, alias in module_aliases.items()
        ),
        *(from_line(mod, pairs) for mod, pairs in grouped.items() if mod != "__future__"),
        *after,
    ]
    return module.with_changes(body=new_body)


def _key(pair: tuple[str, str | None]) -> tuple[str, str]:
    return (pair[0], pair[1] or "")
