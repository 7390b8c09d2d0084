"""NM102 neuron-internals: optimum-neuron base classes, generation helpers, compiled configs, star imports and dynamic class names.

What it does:

* ``isinstance(x, NeuronTracedModel)`` / ``NeuronBaseModel`` / ``NeuronModel`` / ``NeuronDecoderModel``
  -> ``isinstance(x, PreTrainedModel)``; ``NeuronDiffusionPipelineBase`` /
  ``NeuronStableDiffusionPipelineBase`` -> ``diffusers.DiffusionPipeline`` (also inside tuples and
  ``issubclass``);
* every other use of an internal with no stock counterpart (subclassing a Neuron base class,
  ``NeuronGenerationMixin``, ``TokenSelector``, ``FusedLogitsWarper``, ``NeuronConfig``, ``NxDNeuronConfig``,
  ``optimum.neuron.models.inference.backend.*``, ``optimum.neuron.vllm.*``, the diffusion mixins) gets a
  ``todo`` at the use (the import stays until the use is gone);
* ``from optimum.neuron import *`` (any optimum.neuron / optimum.exporters.neuron module) -> a ``todo``:
  import the stock names explicitly;
* ``eval(...)`` / ``exec(...)`` that may read an optimum-neuron name (a string spelling ``on.X``, or a string
  built elsewhere in a file importing an optimum.neuron module) keeps that import, with a ``todo``; for an
  f-string such as ``f"optimum.neuron.NeuronModelFor{task}"`` the todo spells the stock replacement
  (``eval(f"transformers.AutoModelFor{task}")``, ``diffusers.StableDiffusion...`` for the pipelines): the eval
  is not rewritten, since the class it returns still gets optimum's export arguments and compiled folders;
* ``eval(...)`` / ``getattr(optimum.neuron, ...)`` that builds a Neuron class name at run time -> a
  ``todo`` (nothing static can rewrite it);
* left alone: subclasses of Neuron base classes are only reported.

Why:

The public optimum-neuron classes (``NeuronModelFor<Task>``, the pipelines) are rewritten by the other
inference rules; code that reached below them, into optimum-neuron's base classes, its generation loop or its
compiled-model configs, has nothing to be moved to: on TorchNeuron a migrated model is an ordinary transformers
``PreTrainedModel`` (or a diffusers ``DiffusionPipeline``) that ``torch.compile(backend="neuron")`` compiles, and
generation is transformers' own. An ``isinstance`` check against the Neuron base classes therefore becomes a
check against the stock base; everything else needs a person who knows what the code wanted from the internal.
Star imports and class names built at run time hide which optimum-neuron names are used, so no rule can see
them.

Before::

    from optimum.neuron.modeling_traced import NeuronTracedModel

    def is_compiled(model):
        return isinstance(model, NeuronTracedModel)

After::

    from transformers import PreTrainedModel

    def is_compiled(model):
        return isinstance(model, PreTrainedModel)

Safety: needs-review. An ``isinstance`` check against a compiled-model base now accepts every stock model: a
reviewer checks what the check guarded; each internal with no stock counterpart is a ``todo``.

References:

* https://huggingface.co/docs/transformers/main_classes/model
* https://huggingface.co/docs/diffusers/api/pipelines/overview
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
"""

from __future__ import annotations

import re

import libcst as cst

from codemods._lib.cst import source_of
from codemods._tables.inference_symbols import EXPORTERS_PREFIX, INTERNAL_BASES, INTERNAL_PREFIXES, ON, internals_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import InferenceRule
from migrate.pyrun import KEPT_NAMES
from migrate.rule import Safety, dotted_name

MOVES = internals_moves()
BASES = {old: INTERNAL_BASES[old.rsplit(".", 1)[1]] for old in MOVES if old.rsplit(".", 1)[1] in INTERNAL_BASES}


def _internal(qualified: str) -> bool:
    return qualified in MOVES or any(qualified == p or qualified.startswith(p + ".") for p in INTERNAL_PREFIXES)


class NeuronInternals(InferenceRule):
    """Neuron base classes in isinstance -> PreTrainedModel/DiffusionPipeline; other internals, star imports, eval: todo."""

    id = "NM102"
    name = "neuron-internals"
    safety = Safety.NEEDS_REVIEW
    triggers = (*OPTIMUM_NEURON_IMPORTS, "optimum.exporters.neuron")
    moves = MOVES
    legacy_modules = ("optimum.neuron",)

    def prepare(self, module: cst.Module) -> None:
        self._in_check = 0
        self._reported: set[int] = set()

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar) and node.module is not None and not node.relative:
            module = dotted_name(node.module)
            if module == ON or module.startswith(ON + ".") or module.startswith(EXPORTERS_PREFIX):
                self.todo(node, f"`from {module} import *` cannot be migrated: import the names you use explicitly "
                          "(then re-run neuron-migrate)")

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass"):
            self._in_check += 1
        if isinstance(node.func, cst.Name) and node.func.value in ("eval", "exec") and node.args:
            kept = self._names_evaluated(node.args[0].value)
            if kept:
                # the import that binds them stays: removing it would turn this eval into a NameError
                self.ctx.shared.setdefault(KEPT_NAMES, set()).update(kept)
                stock = _stock_spelling(node.args[0].value, kept)
                package = stock.split(".")[0].lstrip("rf").strip("\"'") if stock else ""
                how = (f"replace it with {node.func.value}({stock}) (import {package}), "
                       "drop the export / shape / compiler arguments from the from_pretrained calls of the class "
                       "it returns, and load a plain checkpoint with it (stock classes cannot load Neuron-compiled "
                       "folders)" if stock else
                       "replace it with an explicit stock class (AutoModelFor<Task>, a diffusers pipeline, ...)")
                self.todo(node, f"{node.func.value}(...) may use {', '.join(f'`{n}`' for n in sorted(kept))} "
                          f"(optimum-neuron, whose import is kept for it): {how}, then remove the import")
                return
        if isinstance(node.func, cst.Name) and node.func.value in ("eval", "getattr") and node.args:
            first = node.args[0].value
            names = self.ctx.qualnames(first) if node.func.value == "getattr" else set()
            if any(q == ON or q.startswith(ON + ".") for q in names) or _mentions_neuron(first):
                self.todo(node, f"{node.func.value}(...) builds an optimum-neuron name at run time: replace it with an "
                          "explicit stock class (AutoModelFor<Task>, a diffusers pipeline, ...)")

    def _names_evaluated(self, source: cst.BaseExpression) -> set[str]:
        """The optimum-neuron names an ``eval``/``exec`` of ``source`` may read: the local names bound to
        optimum.neuron that a string literal (f-string parts included) spells; for a string built elsewhere
        (``eval(pipe_class)``), every name bound to an optimum.neuron module (``import optimum.neuron as on``)."""
        # `import optimum.neuron` binds `optimum`: its attribute path reaches optimum.neuron too
        legacy = {local for local, qualifieds in self.ctx.imports.bindings.items()
                  if any(q in (ON, ON.split(".")[0]) or q.startswith(ON + ".") for q in qualifieds)}
        if isinstance(source, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return legacy & set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source_of(source)))
        modules = {local for local in legacy
                   if any(q in (ON, ON.split(".")[0]) or (q.startswith(ON + ".") and q[len(ON) + 1:].islower())
                          for q in self.ctx.imports.bindings[local])}
        return modules

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not (isinstance(original.func, cst.Name) and original.func.value in ("isinstance", "issubclass")):
            return updated
        self._in_check -= 1
        if len(original.args) != 2:
            return updated
        new_second = self._replace_bases(original.args[1].value, updated.args[1].value)
        if new_second is None:
            return updated
        return updated.with_changes(args=[updated.args[0], updated.args[1].with_changes(value=new_second)])

    def _replace_bases(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression | None:
        qualified = self.ctx.matches(original, BASES)
        if qualified is not None:
            module, name = BASES[qualified].rsplit(".", 1)
            self.ctx.add_import(module, name)
            self._reported.add(id(original))
            self.fixed(original, f"isinstance check against {qualified} -> {BASES[qualified]} (accepts every stock "
                                 "model)")
            return cst.Name(name)
        if isinstance(original, cst.Tuple) and isinstance(updated, cst.Tuple):
            changed = False
            elements = []
            for o, u in zip(original.elements, updated.elements):
                new = self._replace_bases(o.value, u.value)
                changed |= new is not None
                elements.append(u.with_changes(value=new) if new is not None else u)
            if not changed:
                return None
            unique, seen = [], set()
            for element in elements:
                text = source_of(element.value)
                if text not in seen:
                    seen.add(text)
                    unique.append(element)
            if len(unique) == 1:
                return unique[0].value
            unique[-1] = unique[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(elements=unique)
        return None

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        self._flag(original)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        if id(original.value) in self._reported:
            self._reported.add(id(original))
        else:
            self._flag(original)
        return updated

    # names that are not references
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reported.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._reported.add(id(node.keyword))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self._reported.add(id(node.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._reported.add(id(node.name))

    def visit_Param(self, node: cst.Param) -> None:
        self._reported.add(id(node.name))

    def _flag(self, node: cst.CSTNode) -> None:
        if id(node) in self._reported or self._in_import():
            return
        for qualified in sorted(self.ctx.qualnames(node)):
            if _internal(qualified) and not (self._in_check and qualified in BASES):
                self._reported.add(id(node))
                name = qualified.rsplit(".", 1)[1]
                self.todo(node, f"`{name}` ({qualified}) is an optimum-neuron internal with no stock equivalent: "
                          f"{_advice(qualified)}")
                return

    def _in_import(self) -> bool:
        statement = self.current_statement()
        return isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def _advice(qualified: str) -> str:
    if ".generation" in qualified:
        return "use transformers' GenerationMixin / LogitsProcessorList and generate() kwargs"
    if qualified.endswith(("NeuronConfig", "NxDNeuronConfig", "NeuronDefaultConfig")):
        return "its shapes become generation_config (max_cache_len) and DistributedConfig(tp_size=...)"
    if qualified.rsplit(".", 1)[1] in INTERNAL_BASES:
        return "subclass the stock class (PreTrainedModel / DiffusionPipeline) or drop the subclass"
    return "remove this use"


#: the start of a Neuron class name built in an eval string -> the stock module and name start it becomes
STOCK_SPELLINGS = (("NeuronStableDiffusion", "diffusers.StableDiffusion"), ("NeuronModel", "transformers.AutoModel"))


def _stock_spelling(source: cst.BaseExpression, legacy: set[str]) -> str | None:
    """``f"transformers.AutoModelFor{task}"`` for ``f"optimum.neuron.NeuronModelFor{task}"`` / ``f"on.Neuron..."``
    (an f-string whose text starts with an optimum-neuron module and a known class-name start), else None."""
    if not isinstance(source, cst.FormattedString) or not source.parts:
        return None
    first = source.parts[0]
    if not isinstance(first, cst.FormattedStringText):
        return None
    for local in legacy:
        for module in (f"{local}.neuron.", f"{local}."):
            if not first.value.startswith(module):
                continue
            rest = first.value[len(module):]
            for neuron, stock in STOCK_SPELLINGS:
                if rest.startswith(neuron) and "." not in rest:
                    text = stock + rest[len(neuron):]
                    return source_of(source.with_changes(parts=[first.with_changes(value=text), *source.parts[1:]]))
    return None


def _mentions_neuron(node: cst.CSTNode) -> bool:
    text = source_of(node)
    return "optimum.neuron" in text or "NeuronModelFor" in text or "NeuronStableDiffusion" in text
