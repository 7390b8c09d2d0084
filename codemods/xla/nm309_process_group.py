"""NM309 xla-process-group: ``init_process_group("xla")`` gets the native backend, a group of one without torchrun.

What it does:

* ``dist.init_process_group("xla", init_method="xla://")`` (also ``backend="xla"`` and ``init_method="pjrt://"``)
  gets the backend expression of ``codemods/_lib/device.py``: ``dist.get_default_backend_for_device(...)`` in
  portable style (``neuron`` on Trainium, ``gloo`` on CPU), ``"neuron"`` with ``--device-style neuron``. The XLA
  ``init_method`` is dropped (torchrun's ``env://`` is the default).
* Without ``RANK`` in the environment the group is one process over an in-memory store (``store=``, ``rank=`` and
  ``world_size=`` are passed from the environment, defaults 0 and 1); a call that names its own ``store=`` or a
  non-XLA ``init_method`` is left as it is.
* Removes the side-effect imports that registered the XLA backend: ``import torch_xla.distributed.xla_backend``
  and ``import torch_xla.experimental.pjrt_backend``.
* A backend held in a variable is followed (``codemods/xla/_values.py``): ``init_process_group(device)`` after
  ``device = "xla"`` gets ``dist.get_default_backend_for_device(device)``; ``backend = "xla"`` read only as a
  backend becomes the backend.
* A script launched by torchrun needed no process group for torch_xla's collectives (PJRT joined the processes from
  torchrun's environment), while their ports (NM303, NM306, NM311: gradient average, barrier, all-reduce,
  mesh-reduce) run only ``if dist.is_initialized()``: with no group every rank would skip them and keep its own
  values, silently (rtD D2). So when no file of the project creates a group (``init_process_group``,
  ``xmp.spawn``/``torch_xla.launch``, ``deepspeed.init_distributed``, an ``Accelerator``/``PartialState``,
  a ``Trainer``, DDP/FSDP: project fact ``xla.process-group-setups``) and the script or a project module it imports
  (followed through the import graph ``xla.module-uses``) calls ``xm.all_reduce`` / ``mesh_reduce`` /
  ``rendezvous`` / ``optimizer_step`` / ``reduce_gradients`` (fact ``xla.collective-users``), the script's entry
  point (``codemods/_lib/settings.py``: the ``__main__`` block, else ``main()``) starts with the group torchrun
  asks for::

      if int(os.environ.get("WORLD_SIZE", 1)) > 1 and not dist.is_initialized():
          dist.init_process_group(dist.get_default_backend_for_device(...))

  A single process (no torchrun, or ``--nproc_per_node 1``) creates none, as before. Only a script the family
  migrates gets it (one with torch_xla code of its own, not left on torch_xla as a whole). A file with no
  ``__main__`` block and no ``main()`` gets none: a module's top-level code runs when it is imported, and a
  script whose code all runs at module level is not told apart from it (not done: a todo for such a script).

Why:

TorchNeuron's collectives run on the ``neuron`` process-group backend of native ``torch.distributed``.
torch_xla's rendezvous also worked in a plain ``python train.py``; ``env://`` needs torchrun's variables, hence
the group of one when they are absent, so every ``dist.*`` call after it stays valid (docs/rules-xla.md, "One
process or torchrun").

Before::

    import torch.distributed as dist
    import torch_xla.distributed.xla_backend
    dist.init_process_group("xla", init_method="xla://")

After::

    import torch
    import torch.distributed as dist
    dist.init_process_group(dist.get_default_backend_for_device(torch.accelerator.current_accelerator() or torch.device("cpu")),
                            store=None if "RANK" in os.environ else dist.HashStore(),
                            rank=int(os.environ.get("RANK", 0)), world_size=int(os.environ.get("WORLD_SIZE", 1)))

Safety: safe. Launch with ``torchrun`` (see NM310 for ``xmp.spawn``).

References:

* docs/device-expression.md
* https://pytorch.org/docs/stable/distributed.html#torch.distributed.init_process_group
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/guides/torch-distributed.html
"""

from __future__ import annotations

import re

import libcst as cst

from codemods._lib import device as dev
from codemods._lib import settings
from codemods._lib.cst import Import, source_of
from codemods._lib.notebook_cells import code_cells
from codemods.xla import _values as values
from codemods.xla._base import RANK, WORLD_SIZE, Safety, XlaRule, arg, is_xla_string
from codemods.xla._importers import USES, _index, imported_files
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind

INIT = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})
SIDE_EFFECT = ("torch_xla.distributed.xla_backend", "torch_xla.experimental.pjrt_backend")
XLA_METHODS = ("xla://", "pjrt://")

#: what creates a process group (or has a library create one): a program holding one of these is not touched
_SETUP_WORDS = ("init_process_group", "spawn", "torch_xla.launch", "init_distributed", "initialize_model_parallel",
                "Accelerator", "PartialState", "Trainer", "DistributedDataParallel", "DDP", "fully_shard", "FSDP")
_SETUP = re.compile(r"\b(?:init_process_group|spawn|torch_xla\.launch|init_distributed|initialize_model_parallel|"
                    r"Accelerator|PartialState|\w*Trainer|DistributedDataParallel|DDP|fully_shard|\w*FSDP\w*)\s*\(")
#: the torch_xla collectives whose ports run only `if dist.is_initialized()`
_COLLECTIVE_WORDS = ("all_reduce", "mesh_reduce", "rendezvous", "optimizer_step", "reduce_gradients")
_COLLECTIVE = re.compile(r"\.(?:all_reduce|mesh_reduce|rendezvous|optimizer_step|reduce_gradients)\s*\(")
JOIN = """if int(os.environ.get("WORLD_SIZE", 1)) > 1 and not dist.is_initialized():
    dist.init_process_group({backend})"""
JOIN_COMMENT = ("torch_xla's collectives needed no process group under torchrun; their torch.distributed ports "
                "(guarded by dist.is_initialized()) do")


def _code(text: str) -> str:
    """The lines of a file (a notebook's code cells) that are not comments."""
    code = "\n".join(code_cells(text) or []) if text.lstrip().startswith("{") else text
    return "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))


def _collect_setup(text: str) -> bool | None:
    return True if _SETUP.search(_code(text)) else None


_XLA_IMPORT = re.compile(r"^\s*(?:import|from)\s+torch_xla\b", re.M)


def _collect_collectives(text: str) -> bool | None:
    code = _code(text)
    return True if _XLA_IMPORT.search(code) and _COLLECTIVE.search(code) else None


SETUPS = ProjectFact("xla.process-group-setups", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}), _SETUP_WORDS,
                     _collect_setup)
COLLECTIVE_USERS = ProjectFact("xla.collective-users", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}),
                               _COLLECTIVE_WORDS, _collect_collectives)


def _entry_statement(module: cst.Module) -> cst.CSTNode:
    """Where ``settings.place`` put the group: the ``__main__`` block, else ``main()`` (the line the finding names)."""
    for statement in module.body:
        if settings._is_main_guard(statement):
            return statement
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "main":
            return statement
    return module.body[0] if module.body else module


def collective_modules(project: ProjectFacts, path: str) -> list[str]:
    """The files among ``path`` and the project modules it imports (followed through their own imports) that call a
    torch_xla collective; empty when some file of the project creates a process group."""
    if project.of(SETUPS.name):
        return []
    users = project.of(COLLECTIVE_USERS.name)
    uses = project.of(USES.name)
    index = _index(project.files)
    seen, todo = {path}, [path]
    while todo:
        importer = todo.pop()
        for level, dotted, names in uses.get(importer, {}).get("imports", ()):
            for target in imported_files(project.files, index, importer, level, dotted, names):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
    return sorted(file for file in seen if file in users)


class XlaProcessGroup(XlaRule):
    """init_process_group("xla") -> the native backend; drop the xla_backend side-effect import."""

    id = "NM309"
    name = "xla-process-group"
    safety = Safety.SAFE
    facts = (SETUPS, COLLECTIVE_USERS, USES)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        project = self.ctx.options.project
        if self.ctx.namespace is not None or project is None:
            return updated  # a notebook is one process
        if _collect_setup(self.ctx.source):
            return updated  # this file creates a group itself (or an earlier run gave it one)
        path = str(self.ctx.path).replace("\\", "/")
        modules = collective_modules(project, path)
        if not modules:
            return updated
        if not any(settings._is_main_guard(statement) or (isinstance(statement, cst.FunctionDef)
                                                            and statement.name.value == "main")
                   for statement in updated.body):
            return updated  # no entry point of its own (a module, or a script run at module level): see the docstring
        backend = dev.process_group_backend(self.ctx.options.device_style)
        new, placed = settings.place(updated, self.ctx, [JOIN.format(backend=backend.source)], JOIN_COMMENT)
        if not placed:
            return updated  # a module of definitions: the script that runs it gets the group
        for module, name, asname in (Import("os"), Import("torch.distributed", alias="dist"), *backend.imports):
            self.ctx.add_import(module, name, asname)  # scheduled: placed after the traversal
        where = "this file" if modules == [path] else ", ".join(modules)
        self.fixed(_entry_statement(original),
                   f"torch_xla's collectives ({where}) ran under torchrun with no process group; their "
                   "torch.distributed ports run only if dist.is_initialized(), and no file of this project creates a "
                   "group: the entry point now creates one when torchrun starts more than one process (without it "
                   "every rank would skip the reductions and barriers and keep its own values)")
        return new

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.ctx.matches(original.func, INIT):
            return updated
        backend = arg(original, 0, "backend")
        if backend is None:
            return updated
        style = self.ctx.options.device_style
        value = values.plan(self).backend_reads.get(id(backend.value))
        if is_xla_string(backend.value) or (value is not None and value.kind == values.DEVICE):
            # a variable now holding the device gives its backend; a literal gets the accelerator's
            device_source = value.name if value is not None else dev.PORTABLE_DEVICE
            new_backend = self.emit(dev.process_group_backend(style, device_source))
        elif value is not None and value.kind == values.BACKEND:
            new_backend = None  # the variable holds the native backend now (leave_Assign)
        else:
            return updated
        args = []
        dropped_method = False
        for o, a in zip(original.args, updated.args):
            if o is backend and new_backend is not None:
                args.append(a.with_changes(value=new_backend))
            elif o.keyword is not None and o.keyword.value == "init_method" and isinstance(o.value, cst.SimpleString) and any(
                str(o.value.evaluated_value).startswith(m) for m in XLA_METHODS
            ):
                dropped_method = True
            else:
                args.append(a)
        if dropped_method and args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        args.extend(self._group_of_one(original))
        self.fixed(original, 'init_process_group("xla") -> native backend (neuron on Trainium, gloo on CPU); a process group of one without torchrun')
        return updated.with_changes(args=args)

    def _group_of_one(self, call: cst.Call) -> list[cst.Arg]:
        """torch_xla's rendezvous worked in a plain ``python train.py``; env:// needs torchrun's RANK and
        MASTER_ADDR. Without them the group is one process over an in-memory store."""
        if arg(call, None, "store") is not None or (
            (init_method := arg(call, 1, "init_method")) is not None and not _is_xla_method(init_method)
        ):
            return []  # the script chose its own rendezvous
        extra = [("store", 'None if "RANK" in os.environ else dist.HashStore()')]
        if arg(call, None, "rank") is None:
            extra.append(("rank", RANK))
        if arg(call, None, "world_size") is None:
            extra.append(("world_size", WORLD_SIZE))
        imports = (Import("os"), Import("torch.distributed", alias="dist"))
        return [
            cst.Arg(keyword=cst.Name(name), value=self.expr(source, *imports), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            for name, source in extra
        ]

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        # backend = "xla", only ever used as a backend (codemods/xla/_values.py)
        value = values.plan(self).values.get(id(original)) if is_xla_string(original.value) else None
        if value is None or value.kind != values.BACKEND:
            return updated
        self.fixed(original, '"xla" backend -> native backend (neuron on Trainium, gloo on CPU)')
        return updated.with_changes(value=self.emit(dev.process_group_backend(self.ctx.options.device_style, dev.PORTABLE_DEVICE)))

    def leave_If(self, original: cst.If, updated: cst.If):
        return values.leave_if(self, original, updated, values.BACKEND)

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        keep = []
        for alias in updated.names:
            full = source_of(alias.name)
            if full in SIDE_EFFECT and alias.asname is None:
                self.fixed(original, f"side-effect import {full} removed (the neuron backend registers itself)")
                continue
            keep.append(alias)
        if len(keep) == len(updated.names):
            return updated
        if not keep:
            return cst.RemoveFromParent()
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=keep)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        # from torch_xla.distributed import xla_backend  (side effect only)
        if original.module is None or original.relative or isinstance(original.names, cst.ImportStar) \
                or isinstance(updated.names, cst.ImportStar):
            return updated
        module = source_of(original.module)
        keep = [a for a in updated.names if f"{module}.{source_of(a.name)}" not in SIDE_EFFECT]
        if len(keep) == len(updated.names):
            return updated
        self.fixed(original, "side-effect import of the XLA process-group backend removed")
        if not keep:
            return cst.RemoveFromParent()
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=keep)


def _is_xla_method(argument: cst.Arg) -> bool:
    value = argument.value
    return isinstance(value, cst.SimpleString) and any(str(value.evaluated_value).startswith(m) for m in XLA_METHODS)
