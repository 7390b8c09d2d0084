"""Finds every rule under the ``codemods`` package: adding a module there registers its rules.

The engine never names a rule. Modules and packages whose name starts with ``_`` hold helpers and
tables, not rules, and are not scanned.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
from typing import Iterable, Mapping, Sequence

from migrate.rule import ProjectRule, PythonRule, Rule, SweepRule, TextRule
from migrate.verification import VerifyRule

RULE_ID = re.compile(r"^NM\d{3}$")


class RegistryError(Exception):
    """The rule set is inconsistent (duplicate ids, malformed metadata)."""


class UnknownRuleError(ValueError):
    """A --select/--ignore/--explain value matches no rule."""


def _iter_rule_modules(package_name: str) -> Iterable[str]:
    package = importlib.import_module(package_name)
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        yield info.name


@functools.lru_cache(maxsize=None)
def all_rules(package_name: str = "codemods") -> tuple[type[Rule], ...]:
    """Every rule class, sorted by id. Validates ids and metadata once."""
    found: dict[str, type[Rule]] = {}
    for module_name in _iter_rule_modules(package_name):
        module = importlib.import_module(module_name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if obj.__module__ != module.__name__ or not issubclass(
                obj, (PythonRule, TextRule, SweepRule, VerifyRule, ProjectRule)
            ):
                continue
            if not obj.id:  # abstract helpers inside a rule module
                continue
            _validate(obj)
            if obj.id in found and found[obj.id] is not obj:
                raise RegistryError(f"rule id {obj.id} is declared twice: {found[obj.id].__module__} and {module_name}")
            found[obj.id] = obj
    return tuple(found[key] for key in sorted(found))


def _validate(rule: type[Rule]) -> None:
    if not RULE_ID.match(rule.id):
        raise RegistryError(f"{rule.__module__}.{rule.__name__}: id {rule.id!r} is not of the form NM123")
    if not rule.name or not rule.kinds or not rule.triggers:
        raise RegistryError(f"{rule.id}: a rule needs a name, file kinds and triggers")
    if not rule.summary():
        raise RegistryError(f"{rule.id}: a rule needs a docstring")
    if not isinstance(rule.markers, Mapping) or not all(
        isinstance(pair, tuple) and len(pair) == 2 for pairs in rule.markers.values() for pair in pairs
    ):
        raise RegistryError(f"{rule.id}: markers must map file kinds to (anchor, regex) pairs")


def select_rules(
    rules: Sequence[type[Rule]], select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> list[type[Rule]]:
    """Rules whose id starts with a --select prefix (all when none) and with no --ignore prefix."""
    for code in (*select, *ignore):
        if not any(rule.id.startswith(code.upper()) for rule in rules):
            raise UnknownRuleError(f"unknown rule or prefix {code!r} (see --list-rules)")
    chosen = [rule for rule in rules if not select or any(rule.id.startswith(c.upper()) for c in select)]
    return [rule for rule in chosen if not any(rule.id.startswith(c.upper()) for c in ignore)]


def find_rule(rules: Sequence[type[Rule]], code: str) -> type[Rule]:
    for rule in rules:
        if rule.id == code.upper() or rule.name == code:
            return rule
    raise UnknownRuleError(f"unknown rule {code!r} (see --list-rules)")
