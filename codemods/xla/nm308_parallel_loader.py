"""NM308 parallel-loader: ``pl.MpDeviceLoader`` / ``pl.ParallelLoader`` become the plain loader; the loop moves the batch.

What it does:

* The loader is replaced by the underlying ``DataLoader`` only when every use of it is a ``for`` loop of this file
  that then moves its batch: a loop that unpacks the batch into names (``for x, y in loader`` /
  ``for step, (x, y) in enumerate(loader)``) gets the move at the top of its body; a loop that already moves it
  (``batch = {k: v.to(device) ...}``) is kept as it is.
* ``pl.ParallelLoader(loader, [device]).per_device_loader(device)`` is handled the same way, also when the
  ``ParallelLoader`` is kept in a variable that is only used through ``.per_device_loader(device)``.
* Otherwise (the loader is passed to another function, a loop keeps the batch in one name of unknown structure,
  a ``ParallelLoader(...)`` kept as an object without the chained ``per_device_loader``) the loader line stays,
  with a ``todo`` saying why and what to move where.

Why:

The XLA loaders moved every batch to the device (in a background thread). A plain ``DataLoader`` yields CPU
tensors, so the move must be written in the loop. Sharding the data across processes is unchanged (it was always
the sampler's job).

Before::

    train_device_loader = pl.MpDeviceLoader(train_loader, device)
    for step, (x, y) in enumerate(train_device_loader):
        loss = loss_fn(model(x), y)

After::

    train_device_loader = train_loader
    for step, (x, y) in enumerate(train_device_loader):
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)

Safety: needs-review. Where a ``todo`` is left (single-name batches, loaders used outside a ``for``) the loader
line is unchanged and the reviewer moves the batch by hand.

References:

* https://pytorch.org/docs/stable/data.html
* https://pytorch.org/xla/master/learn/api-guide.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib import device as dev
from codemods.xla._base import Safety, XlaRule, arg, names
from migrate import cstwalk
from migrate.snippets import parse_statement

PL = "torch_xla.distributed.parallel_loader"
MP_LOADER = names((PL, ["MpDeviceLoader"]))
PARALLEL_LOADER = names((PL, ["ParallelLoader"]))
MOVE = (
    "MpDeviceLoader/ParallelLoader moved every batch to the device: replace it with the DataLoader it wraps and, in "
    "every loop over it, move the batch at its top (x, y = x.to(device), y.to(device); batch = batch.to(device); "
    "dict batches: batch = {k: v.to(device) for k, v in batch.items()})"
)


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
        if isinstance(target, (cst.Tuple, cst.List)) and target.elements and all(
            isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements
        ):
            return [e.value.value for e in target.elements]
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

    def visit_Module(self, node: cst.Module) -> None:
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
        self.parallel_objects: dict[str, cst.Call] = {}
        for name, values in assigns.items():
            value = values[0]
            if (
                len(values) == 1 and isinstance(value, cst.Call) and self.ctx.matches(value.func, PARALLEL_LOADER)
                and arg(value, 0, "loader") is not None and per_device.get(name)
                and references.get(name, 0) == len(per_device[name]) + 1  # the assignment target + the .per_device_loader uses
            ):
                self.parallel_objects[name] = value
        self.plans: dict[int, tuple[list[str], cst.BaseExpression | None]] = {}
        self.handled: set[int] = set()
        self.why: dict[int, str] = {}  # loader call -> why it is left as it is
        loaders: dict[str, tuple] = {}
        for name, values in assigns.items():
            found = self._loader_call(values[0]) if len(values) == 1 else None
            if found:
                loaders[name] = found
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
        self.parallel_handled = {
            name for name in self.parallel_objects if all(id(call) in self.handled for call in per_device[name])
        }

    # ---------------------------------------------------------------- rewriting
    def _device_source(self, device: cst.BaseExpression | None) -> str:
        if isinstance(device, cst.Name):
            return device.value
        return self.quote_safe(self.code(self.emit(dev.device(self.ctx.options.device_style))))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self._loader_call(original) is None:
            return updated
        if self.ctx.matches(original.func, MP_LOADER):
            loader = arg(updated, 0, "loader")
        elif isinstance(original.func.value, cst.Name):  # para_loader.per_device_loader(device) -> para_loader
            loader = cst.Arg(updated.func.value)
        else:
            inner = updated.func.value if isinstance(updated.func, cst.Attribute) else None
            loader = arg(inner, 0, "loader") if isinstance(inner, cst.Call) else None
        if loader is None:
            return updated
        if id(original) not in self.handled:
            why = self.why.get(id(original), "it is not iterated by a for loop in this file")
            self.todo(original, f"{MOVE} (left as it is: {why})")
            return updated
        self.fixed(original, "XLA device loader -> the DataLoader; the loop moves each batch to the device")
        return loader.value

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
            return updated.with_changes(value=arg(updated.value, 0, "loader").value)
        if isinstance(value, cst.Call) and self.ctx.matches(value.func, PARALLEL_LOADER):
            self.todo(original, "pl.ParallelLoader object: iterate the underlying DataLoader directly (per_device_loader(device) -> the loader) and move batches with .to(device)")
        return updated
