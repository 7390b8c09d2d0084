"""NM308 parallel-loader: ``pl.MpDeviceLoader`` / ``pl.ParallelLoader`` become a stock loader that moves each batch.

What it does:

* The loader is replaced by the underlying ``DataLoader`` only when every use of it is a ``for`` loop of this file
  that then moves its batch: a loop that unpacks the batch into names (``for x, y in loader`` /
  ``for step, (x, y) in enumerate(loader)``) gets the move at the top of its body; a loop that already moves it
  (``batch = {k: v.to(device) ...}``) is kept as it is.
* ``pl.ParallelLoader(loader, [device]).per_device_loader(device)`` is handled the same way, also when the
  ``ParallelLoader`` is kept in a variable that is only used through ``.per_device_loader(device)``.
* Otherwise (the loader is passed to a ``train_loop_fn(loader, epoch)``, a loop keeps the batch in one name:
  ``for step, batch in enumerate(loader)`` over dicts from a collate_fn) the loader expression becomes
  ``_DeviceLoader(loader, device)``, a class the rule adds once to the module, after its imports (under a name
  the module does not bind: ``_DeviceLoader2`` ... otherwise). It does for the user what MpDeviceLoader did:
  iterable again every epoch, ``len()`` is the loader's, every tensor of each batch moved to ``device`` (the
  call's own device argument), tuples, namedtuples, lists, sets and dicts (``OrderedDict``, transformers'
  ``BatchEncoding``, a ``UserDict``) rebuilt in their own types, and an object with a ``__dict__`` (a
  ``@dataclass`` batch from a collate_fn, frozen or not, any batch class) copied with ``copy.copy`` and each of
  its attributes moved, as torch_xla's ``send_cpu_data_to_device`` did (what the batch holds twice is moved
  once, so a cycle ends); other values (strings, numbers, ``__slots__`` objects) pass through as they are. The
  prefetch keywords (``loader_prefetch_size``, ``device_prefetch_size``, ``host_to_device_transfer_threads``)
  are dropped. A ``ParallelLoader`` object made for one device (``pl.ParallelLoader(loader, [device])``, also
  made again each epoch) becomes the loader and its ``.per_device_loader(device)`` the class.
* The line stays, with a ``todo`` saying why and what to move where, when a use needs the XLA object itself:
  the file refers to the class (``isinstance(x, pl.MpDeviceLoader)``, an annotation); its attributes are read
  (``loader._loader``, ``loader._device``), on the variable or, followed into the functions of this file it is
  passed to, on their parameter; another keyword (``batchdim=``), a ``ParallelLoader`` over several devices or
  a ``ParallelLoader`` object used otherwise; or the module binds ``torch``, ``copy`` or ``collections`` to
  something else (the class reads them).
* A module whose only torch_xla uses are ``if isinstance(x, pl.MpDeviceLoader):`` tests (``ParallelLoader``,
  ``PerDeviceLoader`` too; ``elif`` as well), like a Trainer subclass in a utils module that passes prefetch
  settings to the XLA loader: such a test is always false once torch_xla is gone (stock PyTorch and transformers
  never build an XLA loader), so the ``if`` is replaced by its ``else`` (or removed), and the import goes with
  its last use. A local the dropped branch read (``kwargs = {"loader_prefetch_size": self.args....}``) goes too
  when it is a plain ``name = value`` of the function's body whose value calls nothing (literals, name and
  attribute reads) and nothing else in the function names it; one read elsewhere or built by a call stays. Where the module has other torch_xla uses (and builds no XLA loader itself: then the loader's own
  ``todo`` says it) the test stays, with a ``todo`` to drop the branch once those are ported.

Why:

The XLA loaders moved every batch to the device (in a background thread). A plain ``DataLoader`` yields CPU
tensors, so the move must be written in the loop, or done by a loader that moves it. The class is plain code in
the file rather than ``torch.utils._pytree.tree_map_only``: torch's pytree module is private (torch has no public
pytree API), and a reviewer reads a class of twenty lines once. A function defined in another module that gets
the loader is not seen: it gets an object that iterates and has a length, as before. Sharding the data across
processes is unchanged (it was always the sampler's job).

Before::

    train_device_loader = pl.MpDeviceLoader(train_loader, device)
    for step, (x, y) in enumerate(train_device_loader):
        loss = loss_fn(model(x), y)

After::

    train_device_loader = train_loader
    for step, (x, y) in enumerate(train_device_loader):
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)

Safety: needs-review. The reviewer checks that no function of another module needs the XLA loader object; where
a ``todo`` is left the loader line is unchanged and the reviewer moves the batch by hand.

References:

* https://pytorch.org/docs/stable/data.html
* https://pytorch.org/xla/master/learn/api-guide.html
"""

from __future__ import annotations

from typing import Sequence, cast

import libcst as cst

from codemods._lib import device as dev
from codemods._lib.cst import source_of
from codemods.xla._base import Safety, XlaRule, arg, names
from migrate import cstwalk
from migrate.rule import dotted_name
from migrate.snippets import parse_statement

PL = "torch_xla.distributed.parallel_loader"
MP_LOADER = names((PL, ["MpDeviceLoader"]))
PARALLEL_LOADER = names((PL, ["ParallelLoader"]))
MOVE = (
    "MpDeviceLoader/ParallelLoader moved every batch to the device: replace it with the DataLoader it wraps and, in "
    "every loop over it, move the batch at its top (x, y = x.to(device), y.to(device); batch = batch.to(device); "
    "dict batches: batch = {k: v.to(device) for k, v in batch.items()})"
)
LOADER_CLASSES = MP_LOADER | PARALLEL_LOADER
#: the classes an ``isinstance`` test can name: none of them is ever built without torch_xla
CHECKED_CLASSES = LOADER_CLASSES | names((PL, ["PerDeviceLoader"]))
KEPT_CHECK = ("isinstance(..., {name}) is always false once torch_xla is gone (stock PyTorch and transformers never "
              "build an XLA loader): once the other torch_xla uses of this module are ported, keep only the else "
              "branch")
KEPT_MARK = "once the other torch_xla uses of this module are ported"  # how a second run recognizes the todo
DEAD_CHECK = ("isinstance(..., {name}) is always false once torch_xla is gone (stock PyTorch and transformers never "
              "build an XLA loader): the branch is removed{rest}")
#: keywords of MpDeviceLoader / ParallelLoader that only tune the background prefetch (nothing to carry)
PREFETCH_KEYWORDS = frozenset({"loader_prefetch_size", "device_prefetch_size", "host_to_device_transfer_threads"})
#: modules the added class reads (module-level names it needs: a file that binds them otherwise keeps its loader)
HELPER_MODULES = ("torch", "copy", "collections")
HELPER = "_DeviceLoader"
#: The class added once to a module whose loader is used beyond loops that unpack the batch (passed to a
#: ``train_loop_fn(loader, epoch)``, a ``for step, batch in enumerate(loader)`` over dicts): what MpDeviceLoader
#: did for the user, in plain code. Not torch's pytree: ``torch.utils._pytree`` is private (torch has no public
#: pytree API), and a class in the file is code a reviewer reads once.
HELPER_SOURCE = '''\
class {name}:
    """Added by neuron-migrate in place of MpDeviceLoader: each batch of ``loader`` with its tensors on ``device``."""

    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __iter__(self):
        for batch in self.loader:
            yield self.move(batch)

    def __len__(self):
        return len(self.loader)

    def move(self, value, seen=None):
        seen = {{}} if seen is None else seen  # id -> moved: what the batch holds twice is moved once
        if id(value) in seen:
            return seen[id(value)]
        if isinstance(value, torch.Tensor):
            moved = value.to(self.device)
        elif isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
            moved = type(value)(*(self.move(item, seen) for item in value))
        elif isinstance(value, (tuple, list, set, frozenset)):
            moved = type(value)(self.move(item, seen) for item in value)
        elif isinstance(value, collections.abc.MutableMapping):  # dict, OrderedDict, transformers' BatchEncoding
            moved = copy.copy(value)  # the same type, with its other attributes
            moved.update((key, self.move(item, seen)) for key, item in value.items())
        elif isinstance(value, collections.abc.Mapping):
            moved = {{key: self.move(item, seen) for key, item in value.items()}}
        elif hasattr(value, "__dict__") and not isinstance(value, type):  # a dataclass, any batch object
            moved = seen[id(value)] = copy.copy(value)  # as MpDeviceLoader did: a copy, each attribute moved
            for key in list(vars(moved)):
                vars(moved)[key] = self.move(vars(moved)[key], seen)
        else:
            moved = value
        seen[id(value)] = moved
        return moved
'''


class ParallelLoader(XlaRule):
    """pl.MpDeviceLoader(loader, device) -> loader, with the batch moved to the device in the loop."""

    id = "NM308"
    name = "parallel-loader"
    safety = Safety.NEEDS_REVIEW

    # ---------------------------------------------------------------- planning (original tree)
    def _loader_call(self, node: cst.CSTNode):
        """(loader call, device node) when ``node`` is an XLA device loader expression."""
        if not isinstance(node, cst.Call):
            return None
        if self.ctx.matches(node.func, MP_LOADER):
            device = arg(node, 1, "device")
            return node, device.value if device is not None else None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "per_device_loader" and (
            (isinstance(func.value, cst.Call) and self.ctx.matches(func.value.func, PARALLEL_LOADER))
            or (isinstance(func.value, cst.Name) and func.value.value in getattr(self, "parallel_objects", {}))
        ):
            device = arg(node, 0, "device")
            return node, device.value if device is not None else None
        return None

    @staticmethod
    def _batch_names(target: cst.BaseExpression) -> list[str] | None:
        if isinstance(target, (cst.Tuple, cst.List)) and target.elements:
            names_ = [e.value.value for e in target.elements
                      if isinstance(e, cst.Element) and isinstance(e.value, cst.Name)]
            if len(names_) == len(target.elements):
                return names_
        return None

    def _loop_source(self, loop: cst.For):
        """(iterated expression, batch target) of ``for t in X`` / ``for i, t in enumerate(X)``."""
        it, target = loop.iter, loop.target
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" and it.args:
            if isinstance(target, cst.Tuple) and len(target.elements) == 2:
                return it.args[0].value, target.elements[1].value
            return None
        return it, target

    @staticmethod
    def _moved(loop: cst.For, name: str) -> bool:
        """The loop body already moves ``name`` (``batch = {k: v.to(device) ...}``, ``x = x.to(device)``)."""
        if not isinstance(loop.body, cst.IndentedBlock):
            return False
        for statement in loop.body.body:
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign)):
                continue
            assign = statement.body[0]
            targets = [t.target for t in assign.targets]
            assigned = {n.value for t in targets for n in ([t] if isinstance(t, cst.Name) else [e.value for e in getattr(t, "elements", ())]) if isinstance(n, cst.Name)}
            if name in assigned and cstwalk.find(assign.value, lambda n: isinstance(n, cst.Name) and n.value == name) and cstwalk.find(
                assign.value, lambda n: isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "to"
            ):
                return True
        return False

    def _checked_class(self, test: cst.BaseExpression) -> str | None:
        """The XLA loader class of an ``isinstance(x, pl.MpDeviceLoader)`` test."""
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" \
                and len(test.args) == 2 and not any(a.star or a.keyword for a in test.args):
            qualified = self.ctx.matches(test.args[1].value, CHECKED_CLASSES)
            return qualified.rsplit(".", 1)[-1] if qualified else None
        return None

    def _dead_checks(self, module: cst.Module | None) -> tuple[set[int], set[int], set[int]]:
        """(ids of the ``if`` / ``elif`` nodes whose test is an XLA loader ``isinstance``, ids of those that are an
        ``elif``) when those tests are the module's only torch_xla uses, else empty sets; and the ids of the tests
        that stay (other torch_xla uses, no XLA loader built here) for a ``todo``."""
        checks: set[int] = set()
        elifs: set[int] = set()
        allowed: set[int] = set()  # ids of the class expressions in those tests, and of the nodes inside them
        rule = self
        if module is None:  # no tree of the file to read
            return checks, elifs, set()

        def allow(node: cst.CSTNode) -> bool:
            allowed.add(id(node))
            return False  # never a hit: find visits every node

        class _Checks(cst.CSTVisitor):
            def visit_If(self, node: cst.If) -> None:
                if rule._checked_class(node.test) is not None:
                    checks.add(id(node))
                    cstwalk.find(cast(cst.Call, node.test).args[1].value, allow)  # an isinstance(x, Class) test
                if isinstance(node.orelse, cst.If):
                    elifs.add(id(node.orelse))

        cstwalk.visit(module, _Checks())
        if not checks:
            return set(), set(), set()
        other_uses: list[cst.CSTNode] = []
        builds = cstwalk.find(module, lambda n: isinstance(n, cst.Call)
                              and bool(rule.ctx.matches(n.func, LOADER_CLASSES)))

        class _Uses(cst.CSTVisitor):
            def visit_Import(self, node: cst.Import) -> bool:
                return False

            def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
                return False

            def visit_Name(self, node: cst.Name) -> None:
                self._use(node)

            def visit_Attribute(self, node: cst.Attribute) -> None:
                self._use(node)

            def _use(self, node: cst.CSTNode) -> None:
                if id(node) not in allowed and any(q.split(".")[0] == "torch_xla" for q in rule.ctx.qualnames(node)):
                    other_uses.append(node)

        cstwalk.visit(module, _Uses())
        # an earlier run left the todo (the other uses it names were ported then): a second run keeps it as it is
        if other_uses or KEPT_MARK in self.ctx.source:
            return set(), set(), set() if builds else checks
        return checks, elifs & checks, set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._folded_reads.append(set())

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """``kwargs = {...}`` built only for a folded ``if isinstance(x, pl.MpDeviceLoader):`` branch goes: its
        value has no effect (literals, name and attribute reads) and nothing else in the function reads it."""
        reads = self._folded_reads.pop()
        body = updated.body
        if not reads or not isinstance(body, cst.IndentedBlock):
            return updated
        counts: dict[str, int] = {}
        for n in _names(updated):
            counts[n.value] = counts.get(n.value, 0) + 1
        if any(counts.get(dynamic) for dynamic in ("locals", "vars", "eval", "exec")):
            return updated  # the function may read its locals by name
        keep = []
        for statement in body.body:
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                else None
            target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
            if isinstance(target, cst.Name) and target.value in reads and counts.get(target.value) == 1 \
                    and _effect_free(cast(cst.Assign, small).value) \
                    and not any(line.comment is not None for line in cast(cst.SimpleStatementLine, statement).leading_lines):
                self.fixed(statement, f"`{target.value} = ...` was built only for the folded MpDeviceLoader branch "
                           "and nothing else reads it: removed with that branch")
                continue
            keep.append(statement)
        if len(keep) == len(body.body) or not keep:
            return updated
        return updated.with_changes(body=body.with_changes(body=keep))

    def visit_If(self, node: cst.If) -> None:
        kept = self.ctx.memo("xla-dead-loader-checks", lambda: self._dead_checks(self.module))[2]
        if id(node) in kept:
            self.todo(node.test, KEPT_CHECK.format(name=self._checked_class(node.test)))

    def leave_If(self, original: cst.If, updated: cst.If):
        checks, elifs, _ = self.ctx.memo("xla-dead-loader-checks", lambda: self._dead_checks(self.module))
        if id(original) not in checks:
            return updated
        name = self._checked_class(original.test)
        orelse = updated.orelse
        if self._folded_reads:  # the names the dropped branch read: a binding made only for it is dead now
            self._folded_reads[-1].update(n.value for n in _names(original.body))
        if id(original) in elifs:  # an `elif`: its parent's orelse becomes this one's
            self.fixed(original, DEAD_CHECK.format(name=name, rest=", the rest of the chain kept"))
            return orelse if orelse is not None else cst.RemoveFromParent()
        if orelse is None:
            self.fixed(original, DEAD_CHECK.format(name=name, rest=""))
            return cst.RemoveFromParent()
        if isinstance(orelse, cst.If):  # `elif` -> `if`
            self.fixed(original, DEAD_CHECK.format(name=name, rest=", the elif kept as an if"))
            return orelse.with_changes(leading_lines=updated.leading_lines)
        if not isinstance(orelse.body, cst.IndentedBlock):  # `else: x = 1` on one line: rare, left as it is
            return updated
        self.fixed(original, DEAD_CHECK.format(name=name, rest=", its else kept"))
        body = list(orelse.body.body)
        # libcst: every BaseStatement subclass has leading_lines, the base class does not declare it
        leading = body[0].leading_lines  # type: ignore[attr-defined]
        body[0] = body[0].with_changes(leading_lines=[*updated.leading_lines, *leading])
        return cst.FlattenSentinel(body)

    def visit_Module(self, node: cst.Module) -> None:
        self._folded_reads: list[set[str]] = []  # per enclosing function: the names its folded branches read
        assigns: dict[str, list[cst.BaseExpression]] = {}
        loops: list[cst.For] = []
        references: dict[str, int] = {}
        per_device: dict[str, list[cst.Call]] = {}
        passed_to: dict[str, list[str]] = {}  # loader name -> the functions it is passed to

        class _Scan(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                references[n.value] = references.get(n.value, 0) + 1

            def visit_Call(self, n: cst.Call) -> None:
                func = n.func
                if isinstance(func, cst.Attribute) and func.attr.value == "per_device_loader" and isinstance(func.value, cst.Name):
                    per_device.setdefault(func.value.value, []).append(n)
                callee = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
                for a in n.args:
                    if isinstance(a.value, cst.Name) and callee is not None and callee != "enumerate":
                        passed_to.setdefault(a.value.value, []).append(callee)

            def visit_Assign(self, n: cst.Assign) -> None:
                for t in n.targets:
                    if isinstance(t.target, cst.Name):
                        assigns.setdefault(t.target.value, []).append(n.value)

            def visit_For(self, n: cst.For) -> None:
                loops.append(n)

        cstwalk.visit(node, _Scan())
        # para_loader = pl.ParallelLoader(loader, [device]) used only as para_loader.per_device_loader(device)
        # (assigned again each epoch, it is the same object for this purpose)
        self.parallel_objects: dict[str, list[cst.Call]] = {}
        for assigned, values in assigns.items():
            if (
                all(isinstance(value, cst.Call) and self.ctx.matches(value.func, PARALLEL_LOADER)
                    and arg(value, 0, "loader") is not None for value in values) and per_device.get(assigned)
                # every reference is an assignment or a .per_device_loader use
                and references.get(assigned, 0) == len(per_device[assigned]) + len(values)
            ):
                self.parallel_objects[assigned] = cast("list[cst.Call]", values)  # all Calls (checked above)
        self.plans: dict[int, tuple[list[str], cst.BaseExpression | None]] = {}
        self.handled: set[int] = set()
        self.why: dict[int, str] = {}  # loader call -> why it is left as it is
        loaders: dict[str, tuple] = {}
        for assigned, values in assigns.items():
            found = self._loader_call(values[0]) if len(values) == 1 else None
            if found:
                loaders[assigned] = found
        calls: dict[int, tuple] = {id(found[0]): found for found in loaders.values()}
        by_call: dict[int, list[tuple[cst.For, cst.BaseExpression, cst.BaseExpression | None]]] = {}
        for loop in loops:
            source = self._loop_source(loop)
            if source is None:
                continue
            iterated, target = source
            found = loaders.get(iterated.value) if isinstance(iterated, cst.Name) else self._loader_call(iterated)
            if found:
                calls[id(found[0])] = found
                by_call.setdefault(id(found[0]), []).append((loop, target, found[1]))
        names_by_call = {id(found[0]): name for name, found in loaders.items()}
        for call_id in calls:
            entries = by_call.get(call_id, [])
            name = names_by_call.get(call_id)
            # every use of the loader variable must be one of these loops (a loop in another function is out of reach)
            other_uses = references.get(name, 0) - 1 - len(entries) if name else 0
            if other_uses or not entries:
                functions = sorted(set(passed_to.get(name, []))) if name else []
                where = f"it is passed to {', '.join(functions)}" if functions else "it is not iterated by a for loop in this file"
                self.why[call_id] = f"`{name}` is not iterated here ({where})" if name else where
                continue
            plans = {}
            for loop, target, device in entries:
                batch = self._batch_names(target)
                single = target.value if isinstance(target, cst.Name) else None
                if batch and all(self._moved(loop, n) for n in batch) or single and self._moved(loop, single):
                    continue  # the loop already moves its batch
                if not batch:
                    self.why[call_id] = "a loop over it keeps the batch in one name, whose structure is unknown"
                    break
                plans[id(loop)] = (batch, device)
            else:
                self.handled.add(call_id)
                self.plans.update(plans)
        self._plan_wrapped(node, per_device)

    # ---------------------------------------------------------------- the loaders the added class stands for
    def _plan_wrapped(self, module: cst.Module, per_device: dict[str, list[cst.Call]]) -> None:
        """Loaders left by the plain-loader plan become ``_DeviceLoader(loader, device)`` when every use of them is
        one the class carries (iterated again and again, ``len()``); else ``self.why`` says what keeps them."""
        sites = _LoaderSites(self, module)
        cstwalk.visit(module, sites)
        self.wrapped: set[int] = set()
        self.helper_name = _free_name(HELPER, self.ctx.imports)
        clash = next((name for name in HELPER_MODULES if self.ctx.imports.bindings.get(name, {name}) != {name}
                      or name in self.ctx.imports.defined), None)
        for call in sites.calls:
            if id(call) in self.handled:
                continue
            why = self._kept_by(call, sites, per_device)
            if why is None and sites.class_references:
                why = (f"the file refers to the class itself (`{sites.class_references[0]}`: an isinstance test, an "
                       "annotation), which a port would change")
            if why is None and clash:
                why = f"the module binds `{clash}` to something else, and the class that would replace it reads it"
            if why is None:
                self.wrapped.add(id(call))
            else:
                self.why[id(call)] = why
        for name in self.parallel_objects:  # para_loader and its per_device_loader calls move together
            calls = per_device[name]
            if not all(id(call) in self.handled or id(call) in self.wrapped for call in calls):
                for call in calls:
                    self.wrapped.discard(id(call))
                    self.why.setdefault(id(call), f"another use of `{name}` stays")
        self.parallel_handled = {
            name for name in self.parallel_objects
            if all(id(call) in self.handled or id(call) in self.wrapped for call in per_device[name])
        }

    @staticmethod
    def _arguments_kept_by(constructor: cst.Call) -> str | None:
        """What in the arguments of ``MpDeviceLoader(loader, device)`` / ``ParallelLoader(loader, [device])`` has
        no equivalent in the added class (the prefetch settings have nothing to tune there)."""
        if any(a.star for a in constructor.args) or len([a for a in constructor.args if a.keyword is None]) > 2:
            return "its arguments are not (loader, device)"
        extra = sorted(a.keyword.value for a in constructor.args if a.keyword is not None
                       and a.keyword.value not in ("loader", "device", "devices", *PREFETCH_KEYWORDS))
        if extra:
            return f"`{extra[0]}=` has no plain-loader equivalent"
        return None if arg(constructor, 0, "loader") is not None else "the loader is not given"

    def _kept_by(self, call: cst.Call, sites: "_LoaderSites", per_device: dict[str, list[cst.Call]]) -> str | None:
        """What keeps ``call`` (a device loader expression) from becoming the added class, or None."""
        if self.ctx.matches(call.func, MP_LOADER):
            why = self._arguments_kept_by(call) or (None if arg(call, 1, "device") else "the device is not given")
            if why:
                return why
        else:
            owner = cast(cst.Attribute, call.func).value  # para_loader.per_device_loader(device)
            # the owner is a ParallelLoader(...) call or a name bound only to such calls
            constructors = (self.parallel_objects[owner.value] if isinstance(owner, cst.Name)
                            else [cast(cst.Call, owner)])
            for constructor in constructors:
                devices = arg(constructor, 1, "devices")
                listed = devices.value if devices is not None else None
                one = isinstance(listed, (cst.List, cst.Tuple)) and len(listed.elements) == 1
                if not one:
                    return "its ParallelLoader feeds more than one device (or a device list built elsewhere)"
                why = self._arguments_kept_by(constructor)
                if why:
                    return why
            if len(call.args) != 1 or call.args[0].star or call.args[0].keyword not in (None,) and \
                    call.args[0].keyword.value != "device":
                return "per_device_loader is not called with one device"
        if id(call) in sites.unfollowed:
            return sites.unfollowed[id(call)]
        reads: list[str] = []
        if id(call) in sites.assigned:
            holder, scope, statement = sites.assigned[id(call)]
            reads = _attribute_reads(scope, holder, statement, sites.functions)
        elif id(call) in sites.passed:
            reads = _callee_reads(sites.passed[id(call)], sites.functions)
        if reads:
            return f"`{reads[0]}` reads an attribute of the XLA loader, which a plain loader does not have"
        return None

    # ---------------------------------------------------------------- rewriting
    def _device_source(self, device: cst.BaseExpression | None) -> str:
        if isinstance(device, cst.Name):
            return device.value
        return self.quote_safe(source_of(self.emit(dev.device(self.ctx.options.device_style))))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self._loader_call(original) is None:
            return updated
        if self.ctx.matches(original.func, MP_LOADER):
            loader = arg(updated, 0, "loader")
        elif isinstance(cast(cst.Attribute, original.func).value, cst.Name):  # para_loader.per_device_loader(device)
            loader = cst.Arg(cast(cst.Attribute, updated.func).value)  # -> para_loader
        else:
            inner = updated.func.value if isinstance(updated.func, cst.Attribute) else None
            loader = arg(inner, 0, "loader") if isinstance(inner, cst.Call) else None
        if loader is None:
            return updated
        if id(original) in getattr(self, "wrapped", ()):
            mp_loader = self.ctx.matches(original.func, MP_LOADER)
            device = arg(updated, 1, "device") if mp_loader else arg(updated, 0, "device")
            self.helper_used = True
            self.fixed(original, f"XLA device loader -> {self.helper_name}(loader, device), a class added to this "
                                 "module that moves every batch to the device as the XLA loader did")
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            # a wrapped call names its device (_blocker said why otherwise)
            arguments = [cst.Arg(loader.value, comma=comma), cst.Arg(cast(cst.Arg, device).value)]
            return cst.Call(func=cst.Name(self.helper_name), args=arguments)
        if id(original) not in self.handled:
            why = self.why.get(id(original), "it is not iterated by a for loop in this file")
            self.todo(original, f"{MOVE} (left as it is: {why})")
            return updated
        self.fixed(original, "XLA device loader -> the DataLoader; the loop moves each batch to the device")
        return loader.value

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not getattr(self, "helper_used", False):
            return updated
        for module in ("torch", "copy", "collections.abc"):
            top = module.split(".")[0]
            if self.ctx.namespace is not None and self.ctx.imports.bindings.get(top) == {top}:
                continue  # a notebook cell: an earlier cell imports it (the kernel shares one namespace)
            self.ctx.add_import(module)
        helper = parse_statement(HELPER_SOURCE.format(name=self.helper_name))
        body = list(updated.body)
        index = _after_leading_imports(body)
        helper = helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()] if index else [])
        if index < len(body):  # two blank lines after a class, above the comments of what follows
            lines = list(body[index].leading_lines)
            blank = next((n for n, line in enumerate(lines) if line.comment is not None), len(lines))
            body[index] = body[index].with_changes(leading_lines=[cst.EmptyLine()] * max(0, 2 - blank) + lines)
        return updated.with_changes(body=[*body[:index], helper, *body[index:]])

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        plan = getattr(self, "plans", {}).get(id(original))
        if plan is None or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        batch, device = plan
        device_source = self._device_source(device)
        move = parse_statement(f"{', '.join(batch)} = {', '.join(f'{n}.to({device_source})' for n in batch)}\n")
        return updated.with_changes(body=updated.body.with_changes(body=[move, *updated.body.body]))

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        value = original.value
        if len(original.targets) == 1 and isinstance(original.targets[0].target, cst.Name) and original.targets[0].target.value in getattr(self, "parallel_handled", ()):
            self.fixed(original, "pl.ParallelLoader(loader, devices) -> loader")
            loader = cast(cst.Arg, arg(cast(cst.Call, updated.value), 0, "loader"))  # a ParallelLoader(loader, ...)
            return updated.with_changes(value=loader.value)
        if isinstance(value, cst.Call) and self.ctx.matches(value.func, PARALLEL_LOADER):
            self.todo(original, "pl.ParallelLoader object: iterate the underlying DataLoader directly (per_device_loader(device) -> the loader) and move batches with .to(device)")
        return updated


# -------------------------------------------------------------------- following a loader through the module
def _names(tree: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    def note(node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name):
            found.append(node)
        return False  # walk the whole tree

    cstwalk.find(tree, note)
    return found


def _effect_free(node: cst.BaseExpression) -> bool:
    """Literals, containers of them, name and attribute reads: building it calls nothing."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Attribute):
        return _effect_free(node.value)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _effect_free(e.key) and _effect_free(e.value)
                   for e in node.elements)
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return all(isinstance(e, cst.Element) and _effect_free(e.value) for e in node.elements)
    return False


class _LoaderSites(cst.CSTVisitor):
    """Where each XLA device loader expression of the module stands: assigned to a name (and in which function),
    passed to a call, or read as an object (``pl.MpDeviceLoader(...)._loader``); and the references to the loader
    classes themselves (``isinstance(x, pl.MpDeviceLoader)``, annotations) that a port would change."""

    def __init__(self, rule: ParallelLoader, module: cst.Module) -> None:
        self.rule = rule
        self.module = module
        self.scopes: list[cst.CSTNode] = [module]
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self.calls: list[cst.Call] = []
        self.assigned: dict[int, tuple[str, cst.CSTNode, cst.Assign]] = {}  # call -> (holder, scope, statement)
        self.passed: dict[int, tuple[str, int | str, bool]] = {}  # call -> (callee, position or keyword, method)
        self.unfollowed: dict[int, str] = {}  # call -> why its uses are not followed
        self.class_references: list[str] = []
        self._not_references: set[int] = set()  # call functions and attribute names

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.setdefault(node.name.value, []).append(node)
        self.scopes.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        self._not_references.add(id(node.func))
        if self.rule._loader_call(node):
            self.calls.append(node)
        callee = _callee(node)
        for where, argument in _call_arguments(node):
            if callee is not None and self.rule._loader_call(argument.value):
                self.passed[id(argument.value)] = (callee[0], where, callee[1])

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.rule._loader_call(node.value):
            return
        holder = dotted_name(node.targets[0].target) if len(node.targets) == 1 else ""
        if not holder:
            self.unfollowed[id(node.value)] = "it is assigned in a form whose uses are not followed"
        else:  # an attribute (self.loader) is read anywhere in the module
            self.assigned[id(node.value)] = (holder, self.scopes[-1] if "." not in holder else self.module, node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_references.add(id(node.attr))
        if self.rule._loader_call(node.value):
            self.unfollowed[id(node.value)] = f"its attribute `.{node.attr.value}` is read"
        self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _reference(self, node: cst.BaseExpression) -> None:
        if id(node) not in self._not_references and self.rule.ctx.matches(node, LOADER_CLASSES):
            self.class_references.append(source_of(node))


def _call_arguments(call: cst.Call):
    """(position or keyword, argument) of a call's arguments, up to the first ``*args``."""
    position = 0
    for argument in call.args:
        if argument.star:
            if argument.star == "*":
                return
            continue
        if argument.keyword is not None:
            yield argument.keyword.value, argument
        else:
            yield position, argument
            position += 1


def _callee(call: cst.Call) -> tuple[str, bool] | None:
    """(name, called as a method) of ``f(...)`` / ``obj.f(...)``."""
    if isinstance(call.func, cst.Name):
        return call.func.value, False
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value, True
    return None


class _HolderUses(cst.CSTVisitor):
    """Attributes read on ``holder`` and the calls it is passed to, from ``after`` (a statement of the function
    whose body is walked) on: a read above it is of the value it had before, unless a nested function makes it."""

    def __init__(self, holder: str, after: cst.CSTNode | None) -> None:
        self.holder, self.after = holder, after
        self.started = after is None
        self.nested = 0  # functions and lambdas inside the walked body run later, when the name holds the loader
        self.attributes: list[str] = []
        self.passed: list[tuple[str, int | str, bool]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.nested += 1

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.nested -= 1

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.nested += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.nested -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        self.started = self.started or node is self.after

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if (self.started or self.nested) and dotted_name(node.value) == self.holder:
            self.attributes.append(f"{self.holder}.{node.attr.value}")

    def visit_Call(self, node: cst.Call) -> None:
        callee = _callee(node)
        if not (self.started or self.nested) or callee is None:
            return
        for where, argument in _call_arguments(node):
            if dotted_name(argument.value) == self.holder:
                self.passed.append((callee[0], where, callee[1]))


def _parameter(function: cst.FunctionDef, where: int | str, method: bool) -> str | None:
    """The parameter of ``function`` that receives argument ``where`` (a position or a keyword)."""
    params = [*function.params.posonly_params, *function.params.params]
    if isinstance(where, str):
        return where if any(p.name.value == where for p in [*params, *function.params.kwonly_params]) else None
    if method and params and params[0].name.value in ("self", "cls"):
        where += 1
    return params[where].name.value if where < len(params) else None


def _callee_reads(passed: tuple[str, int | str, bool], functions: dict[str, list[cst.FunctionDef]],
                  depth: int = 0) -> list[str]:
    """Attributes the functions of this module named like the callee read on the parameter that gets the loader
    (a callee defined elsewhere is not seen: it gets an object that iterates and has a length, as before)."""
    name, where, method = passed
    reads: list[str] = []
    for function in functions.get(name, ()):
        parameter = _parameter(function, where, method)
        if parameter is not None:
            reads += _attribute_reads(function, parameter, None, functions, depth + 1)
    return reads


def _attribute_reads(scope: cst.CSTNode, holder: str, after: cst.CSTNode | None,
                     functions: dict[str, list[cst.FunctionDef]], depth: int = 0) -> list[str]:
    uses = _HolderUses(holder, after if isinstance(scope, cst.FunctionDef) else None)  # a global is read anywhere
    cstwalk.visit(scope.body if isinstance(scope, cst.FunctionDef) else scope, uses)
    reads = list(uses.attributes)
    if depth < 3:  # train(loader) -> train_loop_fn(loader) -> step(loader): deeper is not followed
        for passed in uses.passed:
            reads += _callee_reads(passed, functions, depth)
    return reads


def _free_name(name: str, imports) -> str:
    """``name``, or ``name2``, ``name3`` ... when the module already binds it."""
    candidate, number = name, 1
    while candidate in imports.bindings or candidate in imports.defined:
        number += 1
        candidate = f"{name}{number}"
    return candidate


def _after_leading_imports(body: Sequence[cst.BaseStatement]) -> int:
    """The index after the module's docstring and leading imports (guarded ``try: import`` blocks included)."""
    index = 0
    for position, statement in enumerate(body):
        is_import = isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)
        docstring = position == 0 and isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and (
            isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))
        if is_import or docstring or (isinstance(statement, cst.Try) and index == position):
            index = position + 1
        else:
            break
    return index
