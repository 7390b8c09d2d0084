"""Dicts of Neuron export arguments bound in a project module: a project fact. Not a rule module.

``from app.config import T5_INPUT_SHAPES`` ... ``NeuronModelForSeq2SeqLM.from_pretrained(m, **T5_INPUT_SHAPES)``:
the dict is a module-level literal of another file of the run. The scan pass records, per Python file, each
module-level name bound exactly once (and never changed in place at module level) to a dict literal or
``dict(k=v)`` whose keys are identifiers and whose values are constants, when one of its keys is a Neuron
export key (:data:`ANCHORS`). The NM1xx splat expansion (``InferenceRule.dict_items``) reads them for a name
imported from that module, so the keys are sorted like inline keywords. Values are kept as their source text:
constants only, so they mean the same in the importing file.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Mapping
from typing import Any

from codemods._tables.inference_arguments import MUTATING_METHODS, NEURON_ONLY, TRACED_DROP
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind

#: the keys that make a dict worth recording (one of them in the file text lets the scan read it)
ANCHORS = tuple(sorted(NEURON_ONLY | TRACED_DROP))


def _dict_items(value: ast.expr, source: str) -> list[tuple[str, str]] | None:
    if isinstance(value, ast.Dict):
        pairs = list(zip(value.keys, value.values))
        if any(key is None or not (isinstance(key, ast.Constant) and isinstance(key.value, str)
                                   and key.value.isidentifier()) for key, _ in pairs):
            return None
        keyed = [(str(key.value), item) for key, item in pairs if isinstance(key, ast.Constant)]
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" \
            and not value.args and all(keyword.arg is not None for keyword in value.keywords):
        keyed = [(str(keyword.arg), keyword.value) for keyword in value.keywords]
    else:
        return None
    items = []
    for key, item in keyed:
        try:
            ast.literal_eval(item)
        except (ValueError, SyntaxError, TypeError):
            return None
        text = ast.get_source_segment(source, item)
        if text is None or "\n" in text:
            return None
        items.append((key, text))
    return items


def collect_module_dicts(text: str) -> dict[str, list[tuple[str, str]]] | None:
    """Module-level ``NAME = {...}`` / ``NAME = dict(...)`` of constants holding a Neuron export key, bound once."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    counts = binding_counts(tree)
    found: dict[str, list[tuple[str, str]]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            items = _dict_items(statement.value, text)
            if items is not None and any(key in NEURON_ONLY or key in TRACED_DROP for key, _ in items):
                found[statement.targets[0].id] = items
    found = {name: items for name, items in found.items() if counts.get(name) == 1}
    return found or None


def binding_counts(tree: ast.Module) -> dict[str, int]:
    """Name -> how often the file binds it anywhere (an in-place change or a ``global`` counts twice): a module-level
    name bound once is its one value everywhere in the file."""
    counts: dict[str, int] = {}
    for node in ast.walk(tree):  # any other binding or in-place change anywhere makes the name unknown
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets * 2
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.attr in MUTATING_METHODS:
            counts[node.func.value.id] = counts.get(node.func.value.id, 0) + 2
        elif isinstance(node, ast.Global):
            for name in node.names:
                counts[name] = counts.get(name, 0) + 2
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Name):
                    counts[sub.id] = counts.get(sub.id, 0) + 1
    return counts


MODULE_DICTS = ProjectFact("inference.module-dicts", frozenset({FileKind.PYTHON}), ANCHORS, collect_module_dicts)


def module_dict(project: ProjectFacts, importer: str, qualified: str) -> tuple[str, list[tuple[str, str]]] | None:
    """The project file and items of the dict ``qualified`` (``app.config.T5_INPUT_SHAPES``) names, as the
    importer ``importer`` (a display path) finds it: the closest file whose path ends with ``app/config.py``
    (or ``app/config/__init__.py``). None when no such recorded dict exists."""
    return closest_module_value(project.of(MODULE_DICTS.name), importer, qualified)


def closest_module_value(per_file: Mapping[str, Mapping[str, Any]], importer: str, qualified: str) -> tuple[str, Any] | None:
    """``(file, value)`` of the module-level name ``qualified`` (``app.config.NAME``) in a project fact recorded per
    file as name -> value: the closest file to ``importer`` whose path ends with ``app/config.py`` (or
    ``app/config/__init__.py``) and records the name; None when none does."""
    if "." not in qualified:
        return None
    module, name = qualified.rsplit(".", 1)
    tail = module.replace(".", "/")
    here = posixpath.dirname(importer)
    dicts = per_file
    matches = [path for path in dicts for suffix in (f"{tail}.py", f"{tail}/__init__.py")
               if (path == suffix or path.endswith("/" + suffix)) and name in dicts[path]]
    if not matches:
        return None
    path = max(matches, key=lambda p: len(posixpath.commonprefix([p, here + "/"])))
    return path, dicts[path][name]
