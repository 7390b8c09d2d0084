"""NM703 stock-attributes: an attribute read on a value of known stock type that the type does not have.

What it does:

* Reports reads such as ``training_args.tensor_parallel_size`` or ``args.trn_config`` once
  ``NeuronTrainingArguments`` became ``TrainingArguments`` (``AttributeError`` at run time), ``getattr(x, "a")``
  without a default included.
* Types come from simple local inference (``codemods/verify/_facts.py``), which follows a value to a plain alias
  (``args = training_args; args.zero_1``) and to an unannotated parameter of a module-level function that every
  call in the file passes it (``def build(targs): return targs.tensor_parallel_size`` called as
  ``build(training_args)``; as for an annotated parameter, only the Neuron-era names are reported there), and to
  ``self`` in a plain method of a module-level class deriving from a stock class (``self.tensor_parallel_size`` in
  ``__post_init__`` of ``class MyArgs(TrainingArguments)``, where NM201 renamed the base: again only the Neuron-era
  names, as an instance may be of a subclass defined elsewhere). A function also called with other values, passed
  around or decorated is not followed. Attributes come from the generated
  index: dataclass fields, properties, methods (inherited too) and everything the class's methods assign to
  ``self``; a class with ``__getattr__`` or ``setattr(self, ...)`` (models, configs built from ``**kwargs``) is not
  checked.
* Across modules: a typed value handed to a function (or class) another module of the project defines, which reads a
  Neuron-era field on that parameter (``describe_world(training_args)`` with ``from helpers import
  describe_world``, relative imports too, where ``code/helpers.py`` reads ``training_args.tensor_parallel_size``,
  directly or through another function of that file: the project fact ``verify.param-reads``,
  ``codemods/verify/_param_reads.py``). Reported at the call, naming the file and line of the read; reads under
  ``hasattr``, with a ``getattr`` default or under ``except AttributeError`` there are not counted.
* Tokenizers loaded with ``AutoTokenizer.from_pretrained`` or ``<Name>Tokenizer[Fast].from_pretrained``: their
  attributes are dynamic (special tokens), so only the methods transformers 5 removed from tokenizers are reported
  (``encode_plus``, ``batch_encode_plus``, ``as_target_tokenizer``...; the generated ``TOKENIZER_GONE`` index, from
  the transformers 4 wheel's tokenizer base classes against every transformers 5 tokenizer class), with the fix
  (``tokenizer(...)``, i.e. ``__call__``). For ``AutoTokenizer`` a method a few special-purpose tokenizers keep
  (document layout, tables) is still reported, naming them.
* A class attribute of a transformers model Auto class (``AutoModel``, ``AutoModelFor<Task>``) other than
  ``from_pretrained`` / ``from_config`` / ``register``: ``AutoModelForCausalLM.get_neuron_config(...)`` or
  ``.export(...)`` (an optimum-neuron classmethod a class rename reached), with what replaces it.
* Not reported either: an attribute the file sets anywhere (``args.foo = ...``), probes (``hasattr``), reads with a
  default (``getattr(x, "a", None)``), reads under ``try: ... except AttributeError``, and a local subclass's own
  fields and methods.

Why:

The stock classes have no Neuron fields; a read of one raises only when it runs. Only what will certainly raise is
reported (docs/rules-verify.md, "Only what is certain").

Before::

    training_args = TrainingArguments(output_dir="out")
    tp = training_args.tensor_parallel_size

After (unchanged code; the report lists)::

    error  NM703  `training_args.tensor_parallel_size` will raise AttributeError: transformers.TrainingArguments
                  (transformers 5.x) has no attribute `tensor_parallel_size`; keep the degree in your own argument
                  (or `DistributedConfig.tp_size`): stock TrainingArguments has none

A tokenizer call::

    tokenizer = AutoTokenizer.from_pretrained(model_id)
    tokens = tokenizer.encode_plus(text, max_length=128, padding="max_length")

    error  NM703  `tokenizer.encode_plus` will raise AttributeError ...: call the tokenizer instead:
                  `tokenizer(text, ...)` (`__call__`) returns the same BatchEncoding

Safety: manual-only. Nothing is rewritten: the ``error`` says what will raise and the fix.

References:

* docs/rules-verify.md
* https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments
* https://github.com/huggingface/transformers/releases/tag/v5.0.0
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import Iterable, Iterator, TypeGuard, cast

from codemods._tables.training_args_data import ROWS
from codemods.verify import _index
from codemods.verify._facts import Facts, LocalClass, facts_for
from codemods.verify._param_reads import PARAM_READS, project_reads
from migrate.verification import VerifyRule, Violation

ATTRIBUTE_ERRORS = frozenset({"AttributeError"})
#: what an optimum-neuron attribute became (the message names the fix)
NEURON_FIXES = {
    "tensor_parallel_size": "keep the degree in your own argument (or `DistributedConfig.tp_size`): stock TrainingArguments has none",
    "trn_config": "build a `transformers.distributed.DistributedConfig(tp_size=...)` yourself and pass it to from_pretrained",
    "pipeline_parallel_size": "keep it in your own argument: stock TrainingArguments has no pipeline parallelism",
    "neuron_config": "read the value from your own settings or the GenerationConfig: stock models carry no neuron_config",
}
#: what the transformers model Auto classes (``AutoModel``, ``AutoModelFor<Task>``) have as class attributes besides
#: ``object``'s: the same on every one in transformers 5.24 (tests/verify/test_attributes.py checks it on the installed
#: transformers). A class rename that reaches an optimum-neuron classmethod (``get_neuron_config``, ``export``) ends here
AUTO_CLASS_ATTRIBUTES = frozenset({"from_config", "from_pretrained", "register", "_model_mapping",
                                   "_prepare_config_for_auto_class"})
AUTO_MODEL_CLASS = re.compile(r"transformers\.(?:models\.auto\.modeling_auto\.)?(AutoModel(?:For\w+)?)")
#: optimum-neuron classmethods of its model classes and what replaces them
CLASS_FIXES = {
    "get_neuron_config": "it is optimum-neuron's: pass its batch_size/sequence_length to the generation setup "
                         "(generation_config max_cache_len) and its tensor_parallel_size to "
                         "DistributedConfig(tp_size=...), and load with from_pretrained",
    "export": "it is optimum-neuron's: load the source checkpoint with from_pretrained (static-cache generation "
              "config for the compiled shapes)",
}
#: fields of optimum-neuron's training arguments that the stock classes do not keep (generated table)
NEURON_ONLY = frozenset({source for source, action, *_ in ROWS if action != "KEEP"}) | frozenset(NEURON_FIXES)


class StockAttributes(VerifyRule):
    """Attributes read on values of known stock type that the type does not have."""

    id = "NM703"
    name = "stock-attributes"
    facts = (PARAM_READS,)  # what the functions of other project modules read on the objects a file hands them

    def check(self, tree: ast.Module, shared: dict) -> Iterable[Violation]:
        facts = facts_for(tree, shared)
        yield from _passed_to_project_functions(facts, shared)
        for node in facts.nodes(ast.Attribute, ast.Call):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                target, attribute = node.value, node.attr
            elif _is_getattr_without_default(node):
                # the check matched a string constant
                target, attribute = node.args[0], cast(str, cast(ast.Constant, node.args[1]).value)
            else:
                continue
            if attribute in facts.exempt_attrs or attribute.startswith("__"):
                continue
            if isinstance(node, ast.Attribute) and (violation := _auto_class_read(facts, node)) is not None:
                yield violation
                continue
            type_ = facts.type_of(target)
            if type_ is None or type_.parses is not None or not isinstance(target, ast.Name):
                continue  # (type_of types names only)
            if type_.tokenizer is not None:
                violation = _tokenizer_method(facts, node, target, attribute, type_.tokenizer)
                if violation is not None:
                    yield violation
                continue
            known = facts.attributes(type_)
            if known is None or attribute in known or facts.guarded(node, ATTRIBUTE_ERRORS) or facts.version_guarded(node):
                continue
            if not type_.exact and attribute not in NEURON_ONLY:
                continue  # an annotated value may be a subclass from elsewhere: only the Neuron-era names are sure
            stock = facts.stock_class(type_)
            shown = type_.stock or f"{cast(LocalClass, type_.local).name} (a {stock})"
            yield facts.violation(node, ("attribute", stock, attribute), (
                f"`{target.id}.{attribute}` will raise AttributeError: {shown} "
                f"({_index.checked_against(_index.package_of(stock))}) has no attribute `{attribute}`; "
                f"{_fix(attribute, known)}"))


def _passed_to_project_functions(facts: Facts, shared: dict) -> Iterator[Violation]:
    """``describe_world(training_args)`` where ``describe_world``, imported from another module of the project, reads
    ``training_args.tensor_parallel_size`` (the project fact ``verify.param-reads``): the read raises there once the
    object is stock. Reported at the call, naming the file and line of the read."""
    project = shared.get("project")
    values = project.of(PARAM_READS.name) if project is not None else {}
    if not values:
        return
    here = shared.get("path") or ""
    callables = project_reads(dict(values))
    imports = {**_relative_imports(facts, here), **facts.imports}
    for call in facts.nodes(ast.Call):
        name = _imported_name(imports, call.func)
        found = callables.get(name) if name is not None else None
        if found is None or found[0] == here or facts.guarded(call, ATTRIBUTE_ERRORS):
            continue
        path, reads = found
        starred = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), len(call.args))
        # (the read's file, not its line: this run may rewrite that file, and the note must read the same on a second
        # run, rtE p3_sm)
        for position, param, attribute, _line in reads:
            value = call.args[position] if position is not None and position < starred else next(
                (k.value for k in call.keywords if k.arg == param), None)
            if not isinstance(value, ast.Name) or attribute in facts.exempt_attrs:
                continue
            type_ = facts.type_of(value)
            if type_ is None or type_.parses is not None or type_.tokenizer is not None:
                continue
            known = facts.attributes(type_)
            if known is None or attribute in known or attribute not in NEURON_ONLY:
                continue
            stock = facts.stock_class(type_)
            shown = type_.stock or f"{cast(LocalClass, type_.local).name} (a {stock})"
            callee = ast.unparse(call.func)
            yield facts.violation(call, ("passed", stock, attribute, name), (
                f"`{callee}` is given {value.id} (its parameter {param}) and reads `{attribute}` on it in "
                f"{path}: that will raise AttributeError: {shown} "
                f"({_index.checked_against(_index.package_of(stock))}) has no attribute `{attribute}`; "
                f"{_fix(attribute, known)}, and pass the value to {callee} (or change the read in {path})"))


def _relative_imports(facts: Facts, path: str) -> dict[str, str]:
    """``from .helpers import describe_world`` in ``pkg/train.py``: local name -> ``pkg.helpers.describe_world``."""
    package = path.split("/")[:-1]
    found: dict[str, str] = {}
    for node in facts.nodes(ast.ImportFrom):
        if not node.level or node.level - 1 > len(package):
            continue
        base = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
        for alias in node.names:
            if alias.name != "*":
                found[alias.asname or alias.name] = ".".join([*base, alias.name])
    return found


def _imported_name(imports: dict[str, str], func: ast.expr) -> str | None:
    """The qualified name a called expression has through the file's imports (``helpers.describe_world``)."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in imports:
        return None
    return ".".join([imports[func.id], *reversed(parts)])


def _tokenizer_method(facts, node: ast.AST, target: ast.Name, attribute: str, tokenizer: str) -> Violation | None:
    """A tokenizer method transformers 5 removed (``encode_plus``): its ``__getattr__`` serves special-token names
    only, then raises AttributeError."""
    gone = _index.tokenizer_gone(tokenizer)
    if attribute not in gone or facts.guarded(node, ATTRIBUTE_ERRORS) or facts.version_guarded(node):
        return None
    keepers = gone[attribute]
    unless = (f" unless the checkpoint's tokenizer is one of {', '.join(keepers)} (special-purpose tokenizers that "
              "keep it)" if keepers else "")
    return facts.violation(node, ("attribute", f"transformers.{tokenizer}", attribute), (
        f"`{target.id}.{attribute}` will raise AttributeError{unless}: tokenizers loaded with "
        f"{tokenizer}.from_pretrained have no `{attribute}` in {_index.checked_against('transformers')}; "
        f"{_index.tokenizer_fix(attribute)}"))


def _auto_class_read(facts, node: ast.Attribute) -> Violation | None:
    """``AutoModelForCausalLM.get_neuron_config``: a class attribute the stock Auto class does not have."""
    qualified = facts.qualified(node.value)
    match = AUTO_MODEL_CLASS.fullmatch(qualified) if qualified is not None else None
    if match is None or node.attr in AUTO_CLASS_ATTRIBUTES or facts.guarded(node, ATTRIBUTE_ERRORS) \
            or facts.version_guarded(node):
        return None
    name = match.group(1)
    fix = CLASS_FIXES.get(node.attr) or _fix(node.attr, AUTO_CLASS_ATTRIBUTES)
    return facts.violation(node, ("attribute", f"transformers.{name}", node.attr), (
        f"`{name}.{node.attr}` will raise AttributeError: transformers.{name} "
        f"({_index.checked_against('transformers')}) has no attribute `{node.attr}` (the Auto classes have "
        f"from_pretrained, from_config and register); {fix}"))


def _is_getattr_without_default(node: ast.AST) -> TypeGuard[ast.Call]:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) == 2 and not node.keywords and isinstance(node.args[0], ast.Name)
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))


def _fix(attribute: str, known: frozenset[str]) -> str:
    if attribute in NEURON_FIXES:
        return NEURON_FIXES[attribute]
    close = difflib.get_close_matches(attribute, known, n=1, cutoff=0.8)
    return f"did you mean `{close[0]}`?" if close else "keep the value in your own variable or argument"
