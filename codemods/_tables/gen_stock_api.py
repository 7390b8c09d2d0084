"""Generate ``stock_api_data.py``: what the target stock libraries accept, for the verification pass (NM7xx).

Read from the INSTALLED target versions (transformers 5.x, trl, accelerate, peft, diffusers, torch), so the
pass itself never needs them: names each module exports, every module of each package, and for the
classes users build or subclass their accepted constructor keywords, their attributes, their methods'
signatures and how the library itself calls those methods (``self.compute_loss(model, inputs,
num_items_in_batch=...)``), which is what an override must accept.

Only what is certain goes in: a class with ``**kwargs`` in its ``__init__`` records ``None`` (anything is
accepted), a class with ``__getattr__`` or ``setattr(self, ...)`` records no attribute list, a module with
its own ``__getattr__`` records no export list.

Also: the model classes transformers 5 cannot shard with ``tp_size > 1`` (``TP_PLANLESS``), the tokenizer methods
transformers 5 removed (``TOKENIZER_GONE``, read against the old tokenizer base classes of a transformers 4 wheel),
and the two-model loaders that take prefixed keywords (``PREFIXED_LOADERS``).

Run (from the repository root, with the target versions installed; the argument is a transformers 4.x wheel, read
as data: the current file was generated with transformers-4.57.1-py3-none-any.whl)::

    .venv/bin/python -m codemods._tables.gen_stock_api transformers-4.57.1-py3-none-any.whl
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import importlib.metadata
import inspect
import os
import pprint
import re
import sys
import textwrap
import warnings
import zipfile
from pathlib import Path

PACKAGES = ("transformers", "trl", "accelerate", "peft", "diffusers", "torch")

#: architectures whose modeling/configuration modules users import from directly
ARCHITECTURES = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "phi3", "gpt2", "t5", "bert")
EXPORT_MODULES = (
    "transformers", "transformers.utils", "transformers.generation", "transformers.generation.utils",
    "transformers.trainer_utils", "transformers.trainer_pt_utils", "transformers.training_args",
    "transformers.modeling_utils", "transformers.trainer", "transformers.trainer_callback",
    "transformers.optimization", "transformers.data", "transformers.data.data_collator",
    "transformers.models.auto", "transformers.integrations", "transformers.pytorch_utils", "transformers.cache_utils",
    "transformers.modeling_outputs", "transformers.distributed",
    "transformers.utils.doc", "transformers.configuration_utils", "transformers.hf_argparser",
    *(f"transformers.models.{arch}{suffix}" for arch in ARCHITECTURES
      for suffix in ("", f".modeling_{arch}", f".configuration_{arch}")),
    "trl", "trl.trainer", "trl.trainer.utils", "trl.models", "trl.data_utils", "trl.scripts", "trl.scripts.utils",
    "peft", "peft.utils", "peft.tuners", "peft.tuners.lora",
    "accelerate", "accelerate.utils", "accelerate.state", "accelerate.logging",
    "diffusers", "diffusers.utils",
    "torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch.optim.lr_scheduler", "torch.utils",
    "torch.utils.data", "torch.utils.checkpoint", "torch.distributed", "torch.distributed.fsdp",
    "torch.distributed.tensor", "torch.distributed.tensor.parallel", "torch.distributed.checkpoint",
    "torch.distributed.device_mesh", "torch.amp", "torch.cuda", "torch.nn.parallel", "torch.multiprocessing",
    "torch.nn.utils", "torch.accelerator",
)
#: classes users construct, read attributes of, or subclass
CLASSES = (
    "transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments", "transformers.Trainer",
    "transformers.Seq2SeqTrainer", "transformers.GenerationConfig", "transformers.TrainerCallback",
    "transformers.HfArgumentParser", "transformers.BitsAndBytesConfig", "transformers.DataCollatorForLanguageModeling",
    "transformers.DataCollatorWithPadding", "transformers.DataCollatorForSeq2Seq", "transformers.PreTrainedModel",
    "transformers.PreTrainedConfig", "transformers.EarlyStoppingCallback", "transformers.TextStreamer",
    "transformers.distributed.DistributedConfig",
    *(f"trl.{name}" for name in (
        "SFTConfig", "SFTTrainer", "DPOConfig", "DPOTrainer", "GRPOConfig", "GRPOTrainer", "KTOConfig", "KTOTrainer",
        "RLOOConfig", "RLOOTrainer", "RewardConfig", "RewardTrainer", "ModelConfig", "ScriptArguments", "TrlParser")),
    "peft.LoraConfig", "peft.PeftModel", "peft.PeftConfig",
    "accelerate.Accelerator", "accelerate.PartialState", "accelerate.DataLoaderConfiguration",
    "accelerate.ParallelismConfig", "accelerate.FullyShardedDataParallelPlugin",
    "accelerate.DistributedDataParallelKwargs", "accelerate.InitProcessGroupKwargs",
    "torch.utils.data.DataLoader", "torch.optim.AdamW", "torch.optim.SGD",
)
#: removed from_pretrained keywords -> the fix (the generator stops on a removed keyword missing here)
FROM_PRETRAINED_FIXES = {
    "use_flash_attention_2": 'pass attn_implementation="flash_attention_2" instead',
    "load_in_4bit": "pass quantization_config=BitsAndBytesConfig(load_in_4bit=True) instead",
    "load_in_8bit": "pass quantization_config=BitsAndBytesConfig(load_in_8bit=True) instead",
    "use_auth_token": "pass token= instead",
    "resume_download": "remove it (downloads always resume)",
    "_adapter_model_path": "remove it (internal to transformers 4)",
    "ignore_metadata_errors": "remove it",
    "commit_message": "remove it (a push_to_hub argument)",
    "create_pr": "remove it (a push_to_hub argument)",
    "repo_id": "remove it (a push_to_hub argument)",
    "save_config": "remove it (a save_pretrained argument)",
}
#: old keywords that transformers 4 read outside ``modeling_utils``' kwargs.pop calls
OLD_FROM_PRETRAINED_EXTRA = ("use_flash_attention_2",)
FUNCTIONS = (
    "torch.distributed.init_process_group", "torch.compile", "torch.manual_seed", "transformers.set_seed",
    "peft.get_peft_model", "peft.prepare_model_for_kbit_training", "accelerate.notebook_launcher",
    "transformers.get_scheduler", "transformers.get_linear_schedule_with_warmup",
    "transformers.get_cosine_schedule_with_warmup", "torch.nn.utils.clip_grad_norm_",
)


def _obj(qualified: str):
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


# ---------------------------------------------------------------------------------------------- modules


def _source_root(package: str) -> Path:
    """The folder of an installed package's ``__init__.py`` (a namespace package has none: an error)."""
    init = importlib.import_module(package).__file__
    if init is None:
        raise TypeError(f"{package} is a namespace package: no source folder to read")
    return Path(init).parent


def package_folders(package: str) -> dict[str, list[str]]:
    """Every package folder of ``package`` (dotted) -> the names of its submodules, from its files (nothing
    imported). Private and test folders are left out: below them nothing is checked."""
    root = _source_root(package)
    found: dict[str, list[str]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if (Path(folder, d) / "__init__.py").exists())
        relative = Path(folder).relative_to(root).parts
        stems = {file.split(".")[0] for file in files if file.endswith((".py", ".so", ".pyd"))} | set(dirs)
        stems.discard("__init__")
        found[".".join((package, *relative))] = sorted(stems)
        # below private, test and deep folders (torch's, diffusers' pipelines) nothing is checked
        keep = len(relative) < (1 if package == "diffusers" else 2)
        dirs[:] = [d for d in dirs if keep and not d.startswith("_") and d not in ("tests", "testing")]
    return found


def exports(module_name: str) -> tuple[str | None, str]:
    """(names ``from module import NAME`` accepts besides its submodules, or None when they are dynamic;
    the name endings a lazy module resolves by fallback, e.g. transformers 5 serves ``*TokenizerFast``
    through the non-Fast class: names with them are never reported)."""
    module = importlib.import_module(module_name)
    names = set(dir(module))
    getattr_hook = module.__dict__.get("__getattr__")
    suffixes = ""
    if module_name == "torch":  # its __getattr__ serves these tables only (see torch/__init__.py)
        names |= set(module._lazy_modules) | set(module._deprecated_attrs) | {"set_vital"}
    elif type(module).__name__ == "_LazyModule":
        for table in ("_class_to_module", "_objects", "_object_missing_backend", "_modules"):
            names |= set(getattr(module, table, ()) or ())
        for values in (getattr(module, "_explicit_import_shortcut", None) or {}).values():
            names |= set(values)
        source = inspect.getsource(type(module).__getattr__)
        suffixes = " ".join(sorted(set(re.findall(r"name\.endswith\(\s*[\"'](\w+)[\"']", source))))
    elif getattr_hook is not None:
        return None, ""
    return " ".join(sorted(name for name in names if not name.startswith("__"))), suffixes


# ---------------------------------------------------------------------------------------------- classes


def signature_text(function) -> str | None:
    """``a,/,b=,*args,c=,**`` (``/`` ends the positional-only ones, ``*`` starts keyword-only ones);
    None when it cannot be read."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    parts = []
    wrapped = _renames_keywords(function)
    for index, parameter in enumerate(parameters):
        kind = parameter.kind
        if kind is parameter.VAR_POSITIONAL:
            parts.append("*" + parameter.name)
        elif kind is parameter.VAR_KEYWORD:
            parts.append("**")
        else:
            if kind is parameter.KEYWORD_ONLY and not any(part.startswith("*") for part in parts):
                parts.append("*")
            parts.append(parameter.name + ("=" if parameter.default is not parameter.empty else ""))
            following = parameters[index + 1].kind if index + 1 < len(parameters) else None
            if kind is parameter.POSITIONAL_ONLY and following is not parameter.POSITIONAL_ONLY:
                parts.append("/")
    if wrapped and "**" not in parts:
        parts.append("**")
    return ",".join(parts)


def _renames_keywords(function) -> bool:
    """Wrapped by a deprecation decorator (``@deprecate_kwarg``): it accepts old keyword names the wrapped
    function does not have, so its keywords are not known. Plain pass-through wrappers (torch's loggers)
    are read through."""
    while function is not None:
        if "deprecat" in getattr(function, "__qualname__", "").lower():
            return True
        function = getattr(function, "__wrapped__", None)
    return False


def _library_classes(cls) -> list[type]:
    return [klass for klass in cls.__mro__ if klass.__module__.split(".")[0] in PACKAGES]


def _class_tree(klass) -> ast.ClassDef | None:
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):
        return None
    node = ast.parse(source).body[0]
    return node if isinstance(node, ast.ClassDef) else None


def attributes(cls) -> str | None:
    """Every attribute an instance has: ``dir`` of the class, dataclass fields, and what its methods (and
    its bases') assign to ``self``. None when attributes are dynamic (``__getattr__``, ``setattr(self``)."""
    names = set(dir(cls))
    if dataclasses.is_dataclass(cls):
        names |= {f.name for f in dataclasses.fields(cls)}
    for klass in cls.__mro__:
        if klass is object:
            continue
        if "__getattr__" in klass.__dict__ or "__getattribute__" in klass.__dict__:
            return None
        if klass.__module__.split(".")[0] not in PACKAGES:
            return None  # a base from elsewhere: its attributes are not read here
        tree = _class_tree(klass)
        if tree is None:
            return None
        names |= set(getattr(klass, "__annotations__", {}))
        loops: dict[str, set[str]] = {}  # loop variable -> the strings its literal iterable holds
        for node in ast.walk(tree):
            if isinstance(node, ast.For):
                held = _literal_strings(node.iter, klass)
                if held is not None:
                    for target in ast.walk(node.target):
                        if isinstance(target, ast.Name):
                            loops.setdefault(target.id, set()).update(held)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
                name = node.args[1] if len(node.args) > 1 else None
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    names.add(name.value)
                elif isinstance(name, ast.Name) and name.id in loops:
                    names |= loops[name.id]  # `for field in ("a", "b"): setattr(self, field, ...)`
                else:
                    return None
            if isinstance(node, ast.Attribute) and node.attr == "__dict__":
                return None
    if cls.__name__.endswith(("Arguments", "Config")):
        names |= stored_from_outside()
    return " ".join(sorted(names))


def _literal_strings(node: ast.expr, klass) -> set[str] | None:
    """The strings a literal iterable holds (nested tuples too), or a class attribute's literal value
    (``self._VALID_DICT_FIELDS``); None when it is not literal."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        value = getattr(klass, node.attr, None)
        if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
            return set(value)
        return None
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return None
    found = set()
    for element in node.elts:
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            found.add(element.value)
        else:
            inner = _literal_strings(element, klass)
            if inner is None:
                return None
            found |= inner
    return found


@functools.lru_cache(maxsize=None)
def stored_from_outside() -> frozenset[str]:
    """Attribute names the libraries set on argument and config objects from other classes
    (``self.args.x = ...``, ``training_args.x = ...``): an instance may have them too."""
    names = set()
    for package in ("transformers", "trl", "accelerate", "peft"):
        root = _source_root(package)
        for path in root.rglob("*.py"):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    owner = ast.unparse(node.value)
                    if owner != "self" and owner.rsplit(".", 1)[-1].endswith(("args", "config", "arguments")):
                        names.add(node.attr)
    return frozenset(names)


def methods(cls) -> dict[str, str]:
    found = {}
    for name, member in inspect.getmembers(cls):
        if name.startswith("__") or not callable(member):
            continue
        owner = next((k for k in cls.__mro__ if name in k.__dict__), None)
        if owner is None or owner.__module__.split(".")[0] not in PACKAGES:
            continue
        raw = owner.__dict__[name]
        if isinstance(raw, (staticmethod, classmethod, type)) or not inspect.isfunction(raw):
            continue
        text = signature_text(raw)
        if text is not None:
            found[name] = text
    return found


def library_calls(cls, names: set[str]) -> dict[str, list[str]]:
    """How the library calls its own methods on ``self``: ``caller|npos|kw1,kw2`` per call (the method
    making the call, the positional count, the keywords), for methods in ``names``. Calls that spread
    ``*args``/``**kwargs`` are left out (their shape is unknown)."""
    shapes: dict[str, set[str]] = {}
    for klass in _library_classes(cls):
        tree = _class_tree(klass)
        if tree is None:
            continue
        for caller in tree.body:
            if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(caller):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                        and node.func.attr in names):
                    continue
                if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
                    continue
                keywords = ",".join(sorted(k.arg for k in node.keywords if k.arg is not None))
                shapes.setdefault(node.func.attr, set()).add(f"{caller.name}|{len(node.args)}|{keywords}")
    return {name: sorted(found) for name, found in sorted(shapes.items())}


def class_entry(qualified: str) -> dict:
    cls = _obj(qualified)
    init = inspect.signature(cls)
    accepted = None
    decorated = _renames_keywords(cls.__init__)
    if not decorated and not any(p.kind is p.VAR_KEYWORD for p in init.parameters.values()):
        accepted = " ".join(p.name for p in init.parameters.values()
                            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    found = methods(cls)
    return {
        "defined": f"{cls.__module__}.{cls.__qualname__}",
        "init": accepted,
        "attrs": attributes(cls),
        "methods": found,
        "calls": library_calls(cls, set(found)),
    }


def as_delta(qualified: str, entry: dict, entries: dict[str, dict]) -> dict:
    """The entry relative to its nearest indexed base (``base``): attributes, methods and calls it adds or
    changes. The reader merges the chain back (``codemods/verify/_index.py``)."""
    cls = _obj(qualified)
    indexed = {entries[name]["defined"]: name for name in entries}
    base = next((indexed[f"{k.__module__}.{k.__qualname__}"] for k in cls.__mro__[1:]
                 if f"{k.__module__}.{k.__qualname__}" in indexed), None)
    if base is None:
        return entry
    parent = entries[base]
    delta = {"defined": entry["defined"], "base": base, "init": entry["init"]}
    if entry["attrs"] is None or parent["attrs"] is None:
        delta["attrs"] = entry["attrs"]
    else:
        delta["attrs"] = " ".join(sorted(set(entry["attrs"].split()) - set(parent["attrs"].split())))
    delta["methods"] = {name: text for name, text in entry["methods"].items() if parent["methods"].get(name) != text}
    delta["calls"] = {
        name: [shape for shape in shapes if shape not in parent["calls"].get(name, [])]
        for name, shapes in entry["calls"].items() if set(shapes) - set(parent["calls"].get(name, []))
    }
    return delta


# ----------------------------------------------------------------------------------------- from_pretrained


def _old_from_pretrained_keywords(wheel: Path) -> set[str]:
    """Keywords the old ``modeling_utils`` (a wheel read as data) took from ``from_pretrained``'s kwargs."""
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read("transformers/modeling_utils.py").decode()
    names = set(re.findall(r"kwargs\.pop\(\s*[\"'](\w+)[\"']", source))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "from_pretrained":
            names |= {a.arg for a in (*node.args.args, *node.args.kwonlyargs)}
    return (names | set(OLD_FROM_PRETRAINED_EXTRA)) - {"cls", "self"}


def removed_from_pretrained_keywords(wheel: Path) -> dict[str, str]:
    """Old keywords that transformers 5's ``from_pretrained`` no longer takes: it hands them to the model's
    ``__init__``, which raises ``TypeError``. Tried for real on a tiny model (no download), each one alone;
    keyword -> what to pass instead."""
    import tempfile

    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, vocab_size=32)
    gone = []
    with tempfile.TemporaryDirectory() as folder:
        LlamaForCausalLM(config).save_pretrained(folder)
        for name in sorted(_old_from_pretrained_keywords(wheel)):
            try:
                AutoModelForCausalLM.from_pretrained(folder, **{name: None})
            except TypeError as error:
                if f"unexpected keyword argument '{name}'" in str(error):
                    gone.append(name)
            except Exception:  # refused for its value, not for its name: still accepted
                pass
    unknown = [name for name in gone if name not in FROM_PRETRAINED_FIXES]
    if unknown:
        raise SystemExit(f"add a fix to FROM_PRETRAINED_FIXES for: {unknown}")
    return {name: FROM_PRETRAINED_FIXES[name] for name in gone}


# ------------------------------------------------------------------------------------------------ tokenizers


#: the old tokenizer base classes (read from the transformers 4 wheel) whose public methods users call
OLD_TOKENIZER_BASES = {
    "transformers/tokenization_utils_base.py": ("PreTrainedTokenizerBase", "SpecialTokensMixin"),
    "transformers/tokenization_utils.py": ("PreTrainedTokenizer",),
    "transformers/tokenization_utils_fast.py": ("PreTrainedTokenizerFast",),
}
#: tokenizer methods transformers 5 removed -> the fix (the generator stops on a removed method missing here)
TOKENIZER_FIXES = {
    "encode_plus": "call the tokenizer instead: `tokenizer(text, ...)` (`__call__`) returns the same BatchEncoding",
    "batch_encode_plus": "call the tokenizer on the list instead: `tokenizer(texts, ...)` (`__call__`)",
    "as_target_tokenizer": "pass the targets as `tokenizer(text_target=...)` instead of entering this context",
    "sanitize_special_tokens": "remove the call (special tokens are kept consistent by add_special_tokens)",
    "all_special_tokens_extended": "read `tokenizer.all_special_tokens` instead",
    "special_tokens_map_extended": "read `tokenizer.special_tokens_map` instead",
    "truncate_sequences": "pass truncation=... to `tokenizer(...)` instead",
    "prepare_seq2seq_batch": "call `tokenizer(text, text_target=...)` instead",
    "get_added_vocab": "read `tokenizer.added_tokens_decoder` instead",
}


#: a removed method AutoTokenizer's classes keep in at most this many of them is still reported (with them named)
AUTO_KEEPERS_AT_MOST = 12


def _old_tokenizer_methods(wheel: Path) -> set[str]:
    found = set()
    with zipfile.ZipFile(wheel) as archive:
        for path, classes in OLD_TOKENIZER_BASES.items():
            for node in ast.parse(archive.read(path).decode()).body:
                if isinstance(node, ast.ClassDef) and node.name in classes:
                    found |= {m.name for m in node.body
                              if isinstance(m, ast.FunctionDef) and not m.name.startswith("_")}
    return found


def _assigned_to_self(cls) -> set[str]:
    """What the methods of ``cls`` and its library bases assign to ``self`` (instance attributes)."""
    return set().union(*(_self_stores(klass) for klass in _library_classes(cls)))


@functools.lru_cache(maxsize=None)
def _self_stores(klass) -> frozenset[str]:
    tree = _class_tree(klass)
    if tree is None:
        return frozenset()
    return frozenset(node.attr for node in ast.walk(tree)
                     if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                     and node.value.id == "self" and isinstance(node.ctx, ast.Store))


def tokenizer_gone(wheel: Path) -> dict[str, str]:
    """Tokenizer class -> the old tokenizer methods an instance of it no longer has in transformers 5 (its
    ``__getattr__`` serves special-token names only, then raises AttributeError); ``AutoTokenizer`` -> those no
    class it can return has. Space-separated names; classes that lost none are left out."""
    import transformers
    from transformers.models.auto import tokenization_auto

    old = _old_tokenizer_methods(wheel)
    base = transformers.PreTrainedTokenizerBase
    classes = {}
    for name in dir(transformers):
        value = getattr(transformers, name, None) if "Tokenizer" in name else None
        if isinstance(value, type) and issubclass(value, base):
            classes[name] = value
    # a class's own gaps are reported for the removed API only (TOKENIZER_FIXES): a method a slow tokenizer
    # never had (backend_tokenizer) is not a migration error
    gone = {name: sorted(m for m in old & set(TOKENIZER_FIXES)
                         if not hasattr(cls, m) and m not in _assigned_to_self(cls))
            for name, cls in sorted(classes.items())}
    returned = {n for n in tokenization_auto.TOKENIZER_MAPPING_NAMES.values() if isinstance(n, str)} & set(classes)
    gone["AutoTokenizer"] = sorted(m for m in old if not any(hasattr(classes[n], m) for n in returned))
    unknown = sorted(set(gone["AutoTokenizer"]) - set(TOKENIZER_FIXES))
    for method in sorted(old & set(TOKENIZER_FIXES) - set(gone["AutoTokenizer"])):
        # kept by a few special-purpose tokenizers only (document layout, tables): `name=Keeper,...`, the
        # finding names them
        keepers = sorted(n for n in returned if hasattr(classes[n], method))
        if len(keepers) <= AUTO_KEEPERS_AT_MOST:
            gone["AutoTokenizer"].append(f"{method}={','.join(keepers)}")
    if unknown:
        raise SystemExit(f"add a fix to TOKENIZER_FIXES for: {unknown}")
    return {name: " ".join(names) for name, names in gone.items() if names}


# ------------------------------------------------------------------------------------ composite loaders


def prefixed_loaders() -> dict[str, str]:
    """transformers classmethods ``from_*_pretrained`` that load two models and hand each the keywords with its
    prefix (``from_vision_text_pretrained(..., vision_token=..., text_token=...)``), the rest going to the joint
    config (so an unprefixed ``token=`` reaches neither load) -> the prefixes, space-separated. Read from the
    sources (nothing imported)."""
    root = _source_root("transformers")
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("modeling_*.py")):
        text = path.read_text(encoding="utf-8")
        if not re.search(r"def from_\w+_pretrained\(", text):
            continue
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.FunctionDef) and re.fullmatch(r"from_\w+_pretrained", node.name)
                    and any(ast.unparse(d) == "classmethod" for d in node.decorator_list)):
                continue
            prefixes = {call.args[0].value.rstrip("_") for call in ast.walk(node)
                        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "startswith" and call.args and isinstance(call.args[0], ast.Constant)
                        and isinstance(call.args[0].value, str) and call.args[0].value.endswith("_")}
            if prefixes:
                found.setdefault(node.name, set()).update(prefixes)
    return {name: " ".join(sorted(prefixes)) for name, prefixes in sorted(found.items())}


# ---------------------------------------------------------------------------------------- tensor parallel


def tp_planless() -> str:
    """The transformers model classes ``from_pretrained(..., distributed_config=DistributedConfig(tp_size>1))``
    cannot shard (``ValueError: ... has no tp_plan``): a head class whose config class has no
    ``base_model_tp_plan`` and which has no ``_tp_plan`` of its own, and an Auto class none of whose models has a
    plan. Space-separated class names."""
    import transformers
    from transformers.models.auto import configuration_auto, modeling_auto

    def config_has_plan(model_type: str) -> bool:
        config = getattr(transformers, configuration_auto.CONFIG_MAPPING_NAMES.get(model_type, ""), None)
        return bool(getattr(config, "base_model_tp_plan", None))

    planless, planned_types = set(), {t for t in configuration_auto.CONFIG_MAPPING_NAMES if config_has_plan(t)}
    for name in sorted(dir(modeling_auto)):
        mapping = getattr(modeling_auto, name)
        if not (name.startswith("MODEL") and name.endswith("_MAPPING_NAMES") and isinstance(mapping, dict)):
            continue
        for model_type, classes in mapping.items():
            for class_name in (classes,) if isinstance(classes, str) else classes:
                if model_type in planned_types:
                    continue
                try:
                    model_class = getattr(transformers, class_name)
                except Exception:  # a backend that is not installed: not known
                    continue
                if not getattr(model_class, "_tp_plan", None):
                    planless.add(class_name)
    for name in dir(transformers):
        auto = getattr(transformers, name, None) if name.startswith("AutoModel") else None
        mapping = getattr(auto, "_model_mapping", None)
        names = getattr(mapping, "_model_mapping", None)
        if isinstance(names, dict) and names and not any(model_type in planned_types for model_type in names):
            planless.add(name)
    return " ".join(sorted(planless))


# ------------------------------------------------------------------------------------------------ write


def main(old_transformers_wheel: Path) -> None:
    warnings.simplefilter("ignore")
    versions = {package: importlib.metadata.version(package) for package in PACKAGES}
    folders = {name: stems for package in PACKAGES for name, stems in package_folders(package).items()}
    exported = {name: exports(name) for name in EXPORT_MODULES}
    fallbacks = {name: suffixes for name, (_, suffixes) in exported.items() if suffixes}
    entries = {name: class_entry(name) for name in CLASSES}
    classes = {name: as_delta(name, entry, entries) for name, entry in entries.items()}
    functions = {name: signature_text(_obj(name)) for name in FUNCTIONS}
    removed = removed_from_pretrained_keywords(old_transformers_wheel)
    planless = tp_planless()
    loaders = prefixed_loaders()
    tokenizers = tokenizer_gone(old_transformers_wheel)
    used_fixes = {name: TOKENIZER_FIXES[name]
                  for name in sorted({m.split("=")[0] for v in tokenizers.values() for m in v.split()})}
    out = Path(__file__).with_name("stock_api_data.py")
    with out.open("w", encoding="utf-8") as handle:
        handle.write('"""GENERATED by codemods/_tables/gen_stock_api.py from the installed target packages. Do not edit:\n'
                     'change the lists in the generator and re-run it. Name lists are space-separated strings."""\n\n')
        handle.write(f"VERSIONS = {pprint.pformat(versions, width=120)}\n\n")
        handle.write("# package folder -> its submodules; `~` stands for the folder's own name (modeling_~)\n")
        handle.write("FOLDERS = {\n")
        for name, stems in folders.items():
            leaf = name.rsplit(".", 1)[-1]
            text = " ".join(stem.replace(leaf, "~") if len(leaf) > 2 else stem for stem in stems)
            handle.write(f"    {name!r}: {text!r},\n")
        handle.write("}\n\n# module -> the names `from module import NAME` accepts besides submodules (None: dynamic)\n")
        handle.write("EXPORTS = {\n")
        for name, (names, _) in exported.items():
            handle.write(f"    {name!r}: {names!r},\n")
        handle.write("}\n\n# lazy module -> name endings its __getattr__ resolves by fallback (never reported)\n")
        handle.write(f"FALLBACK_SUFFIXES = {pprint.pformat(fallbacks, width=120)}\n\n")
        handle.write("# class -> defined, base (nearest indexed base: the entry adds to it), init (accepted keywords, None for\n"
                     "# **kwargs), attrs (None: dynamic), methods (signature text), calls (how the library calls its own\n"
                     "# methods on self: 'positional count|keywords')\n")
        handle.write("CLASSES = {\n")  # one line per class: an indented dump is a third bigger
        for name, entry in classes.items():
            handle.write(f"    {name!r}: {entry!r},\n")
        handle.write("}\n\n")
        handle.write(f"FUNCTIONS = {pprint.pformat(functions, width=120)}\n\n")
        handle.write("# keywords transformers 4 from_pretrained took and transformers 5 hands to the model (TypeError)\n")
        handle.write(f"FROM_PRETRAINED_REMOVED = {pprint.pformat(removed, width=120)}\n\n")
        handle.write("# model classes with no tensor-parallel plan: tp_size > 1 raises at from_pretrained\n")
        handle.write(f"TP_PLANLESS = {planless!r}\n\n")
        handle.write("# tokenizer class -> methods transformers 4 had that its instances lack (AttributeError)\n")
        handle.write(f"TOKENIZER_GONE = {pprint.pformat(tokenizers, width=120)}\n")
        handle.write(f"TOKENIZER_FIXES = {pprint.pformat(used_fixes, width=120)}\n\n")
        handle.write("# classmethods loading two models from prefixed keywords (vision_token=...) -> the prefixes\n")
        handle.write(f"PREFIXED_LOADERS = {pprint.pformat(loaders, width=120)}\n")
    print(f"wrote {out} ({out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
