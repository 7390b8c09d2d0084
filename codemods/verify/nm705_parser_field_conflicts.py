"""NM705 parser-field-conflicts: a dataclass of the script declares a field a stock class parsed beside it declares too.

What it does:

* Reports ``HfArgumentParser((A, B, ...))`` / ``TrlParser((...))`` (a tuple or list of classes, or one class) where
  a ``@dataclass`` of the file declares a field that a stock arguments class of the same tuple (``TrainingArguments``,
  ``SFTConfig``, ``ModelConfig``, ``ScriptArguments`` ...: the generated index, fields that ``__init__`` takes)
  declares as well: the parser adds ``--<field>`` once per class and argparse refuses the second one
  (``argparse.ArgumentError: argument --chat_template_path/--chat-template-path: conflicting option strings``) when
  the parser is built, before any argument is read.
* This is what a class rename of the migration can bring in: ``NeuronSFTConfig`` (trl 0.11.x's fields) became trl
  1.x's ``SFTConfig``, which declares fields the old one had not (``chat_template_path``, ``eos_token``,
  ``completion_only_loss``, ``activation_offloading``...), so a dataclass of the script that already declared one
  of those names now collides with it. The verification withdraws such a rename (the file stays as it was, with
  the note of this finding).
* Reports a parse call (``parse_json_file`` / ``parse_yaml_file`` / TrlParser's ``parse_args_and_config``) where a
  config the project passes the script (or the script names) gives a ``tensor_parallel_size`` other than 1 and no
  dataclass of the parser declares it: the launch rules keep that setting (dropping it would train
  without tensor parallelism, with no error), and HfArgumentParser raises ``ValueError: Some keys are not used by
  the HfArgumentParser: ['tensor_parallel_size']``. A ``NeuronSFTConfig`` parsed alone, renamed to ``SFTConfig``
  with the key kept in ``sft.json``, is withdrawn (the project facts ``training.zero-1-configs`` /
  ``training.zero-1-launches``, ``codemods/_lib/zero_1.py``; NM208 moves the degree into a dataclass of the script
  where there is one, and then nothing is reported).
* The fields of a local dataclass are its annotated class attributes (and those of the local dataclasses it
  derives from, with the stock fields of a stock base), without ``ClassVar`` ones and ``field(init=False)`` ones,
  which the parser skips. A class the file does not define and the index does not hold (an imported project
  class) is not checked, nor is a conflict between two stock classes or two local ones (not the migration's).

Why:

``HfArgumentParser`` builds one argparse parser over every field of every dataclass it is given; argparse's default
``conflict_handler="error"`` raises for an option string added twice. The script stops at start-up.

Before::

    @dataclass
    class ExtraArguments:
        chat_template_path: str = None

    parser = TrlParser((ScriptArguments, NeuronSFTConfig, ExtraArguments))

After (the NM201 rename of ``NeuronSFTConfig`` withdrawn; the report lists)::

    todo   NM201  not rewritten: the rewrite would fail verification (`TrlParser(...)` will raise argparse.
                  ArgumentError when it is built: --chat_template_path is declared by ExtraArguments and by
                  trl.SFTConfig (trl 1.16.0) ...)

Safety: manual-only. Nothing is rewritten: rename the field of your dataclass (its ``--flag`` and config key with
it), or remove it and read the stock field, which now carries the same setting.

References:

* docs/rules-verify.md
* https://docs.python.org/3/library/argparse.html#conflict-handler
* https://huggingface.co/docs/transformers/main/en/internal/trainer_utils#transformers.HfArgumentParser
"""

from __future__ import annotations

import ast
from pathlib import PurePath
from typing import Iterable

from codemods._lib.zero_1 import ZERO_1_CONFIGS, ZERO_1_LAUNCHES, config_values, script_paths
from codemods.verify import _index
from codemods.verify._facts import PARSERS, Facts, LocalClass, facts_for
from migrate.verification import VerifyRule, Violation

#: the settings the launch rules keep in a config / on a command for a script none of whose parsed dataclasses
#: declares them once migrated (NM408 / NM412: a tensor-parallel degree other than 1 would otherwise be dropped
#: without an error, the job running as plain data-parallel replicas)
KEPT_SETTINGS = ("tensor_parallel_size",)
#: parse methods that read a config file given to the script (TrlParser: its --config). The flags of launch lines
#: (``--tensor_parallel_size 8`` kept by NM408 with a todo) are not checked here
CONFIG_METHODS = frozenset({"parse_json_file", "parse_yaml_file", "parse_args_and_config"})


class ParserFieldConflicts(VerifyRule):
    """A field of a local dataclass that a stock class parsed by the same HfArgumentParser / TrlParser declares."""

    id = "NM705"
    name = "parser-field-conflicts"
    facts = (ZERO_1_CONFIGS, ZERO_1_LAUNCHES)  # the configs and launch lines that give a script its settings

    def check(self, tree: ast.Module, shared: dict) -> Iterable[Violation]:
        facts = facts_for(tree, shared)
        yield from _undeclared_settings(facts, tree, shared)
        for node in facts.nodes(ast.Call):
            parser = facts.class_type(node.func)
            if parser is None or parser.stock not in PARSERS:
                continue
            classes = _parsed_classes(node)
            if classes is None:
                continue
            stock: list[tuple[str, frozenset[str]]] = []
            local: list[tuple[str, frozenset[str]]] = []
            for element in classes:
                fields = _local_fields(facts, element)
                if fields is not None:
                    local.append((element.id, fields))  # type: ignore[attr-defined]
                    continue
                class_type = facts.class_type(element)
                if class_type is None or class_type.stock is None:
                    continue
                init = _index.indexed_class(class_type.stock).init
                if init is not None:
                    stock.append((class_type.stock, init))
            shown = ast.unparse(node.func)
            for local_name, local_fields in local:
                for stock_name, stock_fields in stock:
                    for name in sorted(local_fields & stock_fields):
                        yield facts.violation(
                            node,
                            ("parser-field", local_name, name),
                            (
                                f"`{shown}(...)` will raise argparse.ArgumentError when it is built: --{name} is "
                                f"declared by {local_name} and by {stock_name} "
                                f"({_index.checked_against(_index.package_of(stock_name) or 'transformers')}), and "
                                f"argparse refuses an option given twice; rename the field of {local_name} (its --flag "
                                f"and config key with it), or remove it and read the {stock_name.rsplit('.', 1)[-1]} "
                                f"field `{name}`, which now carries that setting"
                            ),
                        )


def _undeclared_settings(facts: Facts, tree: ast.Module, shared: dict) -> Iterable[Violation]:
    """A config-reading parse call of a parser none of whose dataclasses declares a setting (KEPT_SETTINGS) that a
    config the project passes the script (or the script parses by name) gives a value other than 1:
    HfArgumentParser raises ``ValueError: Some keys are not used by the HfArgumentParser``."""
    project = shared.get("project")
    path = shared.get("path")
    if project is None or not path or not (project.of(ZERO_1_CONFIGS.name) or project.of(ZERO_1_LAUNCHES.name)):
        return
    paths = script_paths(project, PurePath(path), "")
    source: str | None = None
    parsers: dict[str, ast.Call] = {}  # a name bound once to a call (a parser construction) -> that call
    bound: list[str] = [n.id for n in facts.nodes(ast.Name) if not isinstance(n.ctx, ast.Load)]
    for node in facts.nodes(ast.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call) \
                and bound.count(node.targets[0].id) == 1:
            parsers[node.targets[0].id] = node.value
    for call in facts.nodes(ast.Call):
        if not (isinstance(call.func, ast.Attribute) and call.func.attr in CONFIG_METHODS):
            continue
        holder = call.func.value
        built = holder if isinstance(holder, ast.Call) else parsers.get(holder.id) if isinstance(holder, ast.Name) else None
        if built is None:
            continue
        parser = facts.class_type(built.func)
        classes = _parsed_classes(built) if parser is not None and parser.stock in PARSERS else None
        declared = _declared_by(facts, classes) if classes else None
        if declared is None:
            continue
        for setting in KEPT_SETTINGS:
            if setting in declared:
                continue
            source = ast.unparse(tree) if source is None else source
            given = [(value, place) for value, place in config_values(project, paths, source, setting)
                     if value.strip().strip("\"'") != "1"]
            if not given:
                continue
            value, place = given[0]
            stock = declared[""] or ""
            yield facts.violation(call, ("parser-setting", stock, setting), (
                f"`{ast.unparse(call.func)}(...)` will raise ValueError (Some keys are not used by the "
                f"HfArgumentParser): the project gives this script "
                f"{place}, which the launch rules keep (dropping it would train without tensor parallelism, with no "
                f"error), and no dataclass this parser parses declares {setting} once migrated ({stock} "
                f"({_index.checked_against(_index.package_of(stock) or 'transformers')}) has none): declare "
                f"{setting}: int = 1 in a dataclass of your own parsed with the arguments and pass "
                f"distributed_config=DistributedConfig(tp_size=...) where the model is loaded"))


def _declared_by(facts: Facts, classes: list[ast.expr]) -> dict[str, str | None] | None:
    """Every field the parser adds for ``classes`` -> the stock class declaring it (None for a local one), with the
    first stock class under the key "" ; None when one of the classes is not known (an imported project class)."""
    declared: dict[str, str | None] = {}
    first: str | None = None
    for element in classes:
        fields = _local_fields(facts, element)
        if fields is not None:
            declared.update(dict.fromkeys(fields, None))
            continue
        class_type = facts.class_type(element)
        init = _index.indexed_class(class_type.stock).init if class_type is not None and class_type.stock else None
        if init is None or class_type is None:
            return None
        first = first or class_type.stock
        declared.update(dict.fromkeys(init, class_type.stock))
    if first is None:
        return None  # no stock class: not what the migration changed
    declared[""] = first
    return declared


def _parsed_classes(call: ast.Call) -> list[ast.expr] | None:
    argument = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "dataclass_types"), None)
    if isinstance(argument, (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in argument.elts):
            return None
        return list(argument.elts)
    return [argument] if argument is not None else None


def _local_fields(facts: Facts, element: ast.expr) -> frozenset[str] | None:
    """The fields the parser adds for a ``@dataclass`` of the file (None: not one, or not known)."""
    if not isinstance(element, ast.Name) or element.id not in facts.classes:
        return None
    names: set[str] = set()
    for local in facts.local_chain(facts.classes[element.id]):
        if not local.dataclass or local.dynamic:
            return None
        names |= _declared(local)
    base = facts.stock_base(facts.classes[element.id])
    if base is not None:
        init = _index.indexed_class(base).init
        if init is None:
            return None
        names |= init
    elif any(
        not (isinstance(b, ast.Name) and b.id in facts.classes)
        for local in facts.local_chain(facts.classes[element.id])
        for b in local.bases
    ):
        return None  # a base we know nothing of may declare anything
    return frozenset(names)


def _declared(local: LocalClass) -> set[str]:
    names = set()
    for statement in local.node.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        if "ClassVar" in ast.unparse(statement.annotation):
            continue
        value = statement.value
        if (
            isinstance(value, ast.Call)
            and ast.unparse(value.func).rsplit(".", 1)[-1] == "field"
            and any(
                k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False for k in value.keywords
            )
        ):
            continue
        names.add(statement.target.id)
    return names
