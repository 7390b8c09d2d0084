"""What the target stock libraries accept, read from the generated ``codemods/_tables/stock_api_data.py``.

Lookups answer ``None`` for "not known": the checks then say nothing (a finding must be certain).
"""

from __future__ import annotations

import functools
import importlib.metadata
from dataclasses import dataclass
from typing import Any, cast

from codemods._tables import stock_api_data as data
from codemods._tables.gen_stock_api import PACKAGES


def package_of(qualified: str) -> str | None:
    top = qualified.split(".", 1)[0]
    return top if top in PACKAGES else None


@functools.lru_cache(maxsize=None)
def checked_against(package: str) -> str:
    """`transformers 5.24.0`, and the installed version when it is newer than the one indexed."""
    indexed = data.VERSIONS[package]
    try:
        installed = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed and _key(installed) > _key(indexed):
        return f"{package} {indexed} (checked; {installed} is installed here)"
    return f"{package} {indexed}"


def _key(version: str) -> tuple:
    return tuple(int(part) if part.isdigit() else 0 for part in version.replace("+", ".").split(".")[:3])


@functools.lru_cache(maxsize=None)
def submodules(module: str) -> frozenset[str] | None:
    """Submodules of a package folder; None when its folder is not listed (nothing known)."""
    stems = data.FOLDERS.get(module)
    if stems is None:
        return None
    leaf = module.rsplit(".", 1)[-1]
    return frozenset(stem.replace("~", leaf) for stem in stems.split())


@functools.lru_cache(maxsize=None)
def exports(module: str) -> frozenset[str] | None:
    """Every name ``from module import NAME`` accepts; None when not known."""
    names = data.EXPORTS.get(module)
    if names is None:
        return None
    return frozenset(names.split()) | (submodules(module) or frozenset())


def resolved_by_fallback(module: str, name: str) -> bool:
    """A lazy module serves names with these endings through a fallback (transformers 5: ``*TokenizerFast``
    -> the tokenizer class): whether they import is not known here."""
    return name.endswith(tuple(data.FALLBACK_SUFFIXES.get(module, "").split() or ("\0",)))


def module_state(module: str) -> tuple[bool | None, str]:
    """(exists, the first missing component's parent) for a dotted module of a stock package: True, False
    (certainly missing), or None (not known)."""
    parts = module.split(".")
    if parts[0] not in PACKAGES:
        return None, ""
    for depth in range(1, len(parts)):
        parent, child = ".".join(parts[:depth]), parts[depth]
        children = submodules(parent)
        if children is None:
            return None, ""
        if child in children:
            continue
        names = exports(parent)
        if names is not None and child in names:
            return None, ""  # an attribute of the package: `import` of it may still work through sys.modules
        return False, parent
    return True, ""


# the generated literal mixes str, None and dict values, which mypy joins to object
_CLASSES = cast(dict[str, dict[str, Any]], data.CLASSES)


@dataclass(frozen=True)
class ClassInfo:
    qualified: str  # the name it is indexed under (its public import path)
    init: frozenset[str] | None  # keywords the constructor accepts; None: anything (**kwargs)
    attrs: frozenset[str] | None  # attributes of an instance; None: dynamic
    methods: dict[str, str]  # name -> signature text (see gen_stock_api.signature_text)
    calls: dict[str, tuple[str, ...]]  # method -> how the library calls it on self: "npos|kw1,kw2"


@functools.lru_cache(maxsize=None)
def _defined_at() -> dict[str, str]:
    """Where each indexed class is defined -> the name it is indexed under (one class, many import paths)."""
    return {entry["defined"]: name for name, entry in _CLASSES.items()}


def class_info(qualified: str) -> ClassInfo | None:
    name = qualified if qualified in _CLASSES else _defined_at().get(qualified)
    return _merged(name) if name else None


def indexed_class(qualified: str) -> ClassInfo:
    """``class_info`` of a name the caller knows is indexed (a ``Type``'s stock class, the stock base of a local
    class a ``Type`` was made for)."""
    return cast(ClassInfo, class_info(qualified))


@functools.lru_cache(maxsize=None)
def _merged(name: str) -> ClassInfo:
    entry = _CLASSES[name]
    base = _merged(entry["base"]) if entry.get("base") else None
    attrs = None if entry["attrs"] is None else frozenset(entry["attrs"].split())
    if attrs is not None and base is not None:
        attrs = None if base.attrs is None else attrs | base.attrs
    methods = {**(base.methods if base else {}), **entry["methods"]}
    calls = {key: tuple(value) for key, value in (base.calls if base else {}).items()}
    for method, shapes in entry["calls"].items():
        calls[method] = tuple(dict.fromkeys((*calls.get(method, ()), *shapes)))
    init = None if entry["init"] is None else frozenset(entry["init"].split())
    return ClassInfo(name, init, attrs, methods, calls)


def tokenizer_class(qualified: str | None) -> str | None:
    """The indexed tokenizer class a transformers name loads (``*TokenizerFast`` is served by the tokenizer class in
    transformers 5), or None."""
    if qualified is None or not qualified.startswith("transformers."):
        return None
    name = qualified.rsplit(".", 1)[-1]
    if name.endswith("TokenizerFast") and name not in data.TOKENIZER_GONE:
        name = name.removesuffix("Fast")
    return name if name in data.TOKENIZER_GONE else None


@functools.lru_cache(maxsize=None)
def tokenizer_gone(name: str) -> dict[str, tuple[str, ...]]:
    """Methods transformers 4 tokenizers had that an instance of ``name`` lacks in transformers 5 -> the classes
    that still have it (for ``AutoTokenizer``: a few special-purpose ones; empty otherwise)."""
    gone = {}
    for item in data.TOKENIZER_GONE.get(name, "").split():
        method, _, keepers = item.partition("=")
        gone[method] = tuple(keepers.split(",")) if keepers else ()
    return gone


def tokenizer_fix(method: str) -> str:
    return data.TOKENIZER_FIXES[method]


def function_signature(qualified: str) -> str | None:
    return data.FUNCTIONS.get(qualified)


def removed_from_pretrained(keyword: str) -> str | None:
    """The fix for a keyword transformers 5's ``from_pretrained`` no longer accepts, else None."""
    return data.FROM_PRETRAINED_REMOVED.get(keyword)


@dataclass(frozen=True)
class Signature:
    """A parsed signature text: what a call may pass."""

    positional: tuple[str, ...]  # parameters that take a positional argument, in order
    required: frozenset[str]  # parameters without default (positional or keyword-only)
    keywords: frozenset[str]  # parameters a keyword may name
    var_positional: bool
    var_keyword: bool

    @classmethod
    def parse(cls, text: str, drop_first: bool = False) -> "Signature":
        positional, required, keywords = [], set(), set()
        var_positional = var_keyword = keyword_only = False
        items = [item for item in text.split(",") if item]
        if drop_first and items and not items[0].startswith("*"):
            items = items[1:]
        posonly = "/" in items
        for item in items:
            if item == "/":
                posonly = False
            elif item == "*":
                keyword_only = True
            elif item == "**":
                var_keyword = True
            elif item.startswith("*"):
                var_positional = keyword_only = True
            else:
                name = item.rstrip("=")
                if not item.endswith("="):
                    required.add(name)
                if not keyword_only:
                    positional.append(name)
                if not posonly:
                    keywords.add(name)
        return cls(tuple(positional), frozenset(required), frozenset(keywords), var_positional, var_keyword)

    def refuses(self, npos: int, keywords: set[str] | frozenset[str]) -> str | None:
        """Why a call with ``npos`` positional arguments and these keywords raises TypeError, else None."""
        if npos > len(self.positional) and not self.var_positional:
            return f"takes {len(self.positional)} positional arguments, {npos} given"
        unexpected = sorted(k for k in keywords if k not in self.keywords)
        if unexpected and not self.var_keyword:
            return f"unexpected keyword argument `{unexpected[0]}`"
        filled = set(self.positional[:npos]) | set(keywords)
        twice = sorted(set(self.positional[:npos]) & set(keywords))
        if twice:
            return f"got multiple values for argument `{twice[0]}`"
        missing = sorted(self.required - filled)
        if missing:
            return f"missing required argument `{missing[0]}`"
        return None
