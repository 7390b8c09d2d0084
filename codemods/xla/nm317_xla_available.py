"""NM317 xla-available-guard: ``if is_torch_xla_available():`` keeps its Neuron path behind a native Neuron check.

What it does:

In a dual-path project the XLA side of ``if is_torch_xla_available():`` is the Trainium path, the other side the
GPU / CPU path. When the XLA side, as the other rules ported it, holds no torch_xla name and no other rule's todo,
both sides stay and the test becomes the native check (the same under every ``--device-style``)::

    torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "neuron"

``if not is_torch_xla_available():`` becomes ``if not (<check>):`` the same way. The torch_xla imports of the
XLA side go. An XLA side left with nothing once ported (only ``xm.mark_step()``) keeps the other side behind
``if not (<check>):`` (``if not is_torch_xla_available(): A`` with no ``else`` too); with no other side the
``if`` is removed. An XLA side of imports only (the module-level ``if is_torch_xla_available(): import
torch_xla.core.xla_model as xm``) goes, the other side (if any) stays in place of the ``if``; a module-level one
stays with a ``todo`` while a guard left in place uses a name it binds.

An XLA side that is not ported (a torch_xla name left, another rule's todo inside) keeps the guard with a
``todo`` naming what is left: on TorchNeuron the check is False and the other side runs; the Neuron path must be
ported by hand. Fixes other rules made inside it are reported as ``todo``. A guard with a ``neuron-migrate:``
note of an earlier run above it or in its XLA side is left as it is (the note says what to do).

When the XLA side binds a name (``import torch_xla.core.xla_model as xm``, ``HAS_XLA = True``) that the file tests
elsewhere as a flag (``if xm is not None:``, ``if not xm:``, ``hasattr(xm, ...)``), the guard stays as it is with a
``todo``: in a dual-path project that name means "on the accelerator", and keeping the other side would make
every branch behind it dead on TorchNeuron. Fixes other rules make behind such a flag are reported as ``todo``
(they cannot run until the flag is replaced by a native check).

When the XLA side averages the gradients over the replicas (``xm.optimizer_step`` / ``xm.reduce_gradients``,
which the other side seldom does) and holds nothing else but step boundaries, the XLA side is kept instead, as
NM303 ported it (the average runs only in a process group of more than one rank, so it is right on every
device); beside other code, the guard stays with a ``todo``: dropping that side would drop the average.

Outside a whole ``if`` test:

* ``if is_torch_xla_available() and X:`` (or ``X and <check>``) keeps X and gets the native Neuron check in
  place of the XLA one when X has no side effects (names, attributes, literals, comparisons, ``int()`` /
  ``os.environ.get()`` reads) and the branch needs no torch_xla after the run (no name of it left, no other
  rule's todo inside): that branch is the Neuron path, which runs on TorchNeuron as it ran on XLA
  (``init_process_group`` ported by NM309), and stays off on a CPU or CUDA host as it was.
* ``A if is_torch_xla_available() else B`` gets the native Neuron check as its test when ``A`` (``B`` for
  ``not <check>``) is a literal: TorchNeuron gets the value the XLA run had (``mixed_precision="bf16"``), other
  devices keep theirs (``"no"``); dropping the test would move a GPU or CPU path to bf16.
* Any other combined test, conditional expression or use of the check (``on_xla = is_torch_xla_available()``)
  gets a ``todo``; ``elif`` chains are reported, not rewritten. Fixes other rules make inside a guard left in
  place are reported as ``todo``: that code does not run on TorchNeuron.

A module-level ``from ... import is_torch_xla_available`` whose last use the run removed goes with it (one the
file never used, or names in a string such as ``__all__``, stays; in a notebook it stays).

Recognised: ``transformers``, ``transformers.utils``, ``transformers.utils.import_utils``, ``accelerate.utils`` and
``accelerate.utils.imports`` spellings, and the older names of the same check, read exactly the same way:
transformers' ``is_torch_tpu_available`` (also from ``transformers.file_utils``; transformers 5 still has it, True
only on an accelerator of type ``tpu``, so False on TorchNeuron) and accelerate's ``is_tpu_available``. A call
is the check with no argument, ``check_device=True`` / ``False`` or ``check_is_tpu=False`` /
``check_is_gpu=False``; one whose argument narrows it to XLA on a TPU or a GPU (``check_is_gpu=True``), or is not
a literal, was not the Trainium path: it stays with a ``todo``, and the fixes inside its branch are todos.

Why:

TorchNeuron is not torch_xla: ``is_torch_xla_available()`` is False once torch-xla is uninstalled (or with
``USE_TORCH_XLA=0``). Keeping only the other side would run the GPU / CPU path on Trainium: a CUDA device that
raises there, or a silent move of the run to the host CPU. The native check is True only where TorchNeuron
registers ``neuron`` as the accelerator, so Trainium runs the ported Neuron path and every other host the side it
ran before.

Before::

    if is_torch_xla_available():
        device = xm.xla_device()
    else:
        device = torch.device("cpu")

After::

    if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "neuron":
        device = torch.accelerator.current_accelerator() or torch.device("cpu")
    else:
        device = torch.device("cpu")

Safety: needs-review. The kept Neuron path is what the other rules ported; the other side is unchanged and runs
only where TorchNeuron does not. A reviewer may fold the two once the project no longer needs its GPU / CPU path.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib import device as dev
from codemods.xla._base import XM, Safety, XlaRule, module_uses, names, subtree, walk
from migrate import cstwalk
from migrate.imports import bound_name
from migrate.rule import Severity
from migrate.textdoc import NOTE_PREFIX

#: the parameters of the checks, in order, with the literal values that keep the test "torch_xla is there" (the
#: Trainium path of a dual-path project): ``check_device`` asks for a device or only the package, both true on a
#: Trainium host with torch_xla; ``check_is_tpu=True`` / ``check_is_gpu=True`` narrow it to XLA on a TPU / a GPU,
#: which was never Trainium
_XLA_PARAMETERS: tuple[tuple[str, frozenset[bool]], ...] = (("check_is_tpu", frozenset({False})),
                                                            ("check_is_gpu", frozenset({False})))
_TPU_PARAMETERS: tuple[tuple[str, frozenset[bool]], ...] = (("check_device", frozenset({True, False})),)
#: ``is_torch_tpu_available`` (transformers < 4.44) and accelerate's ``is_tpu_available`` are the older names of the
#: same XLA check: they are read exactly as ``is_torch_xla_available``
CHECK_PARAMETERS: dict[str, tuple[tuple[str, frozenset[bool]], ...]] = {
    **dict.fromkeys(("transformers.is_torch_xla_available",
                     "transformers.utils.is_torch_xla_available",
                     "transformers.utils.import_utils.is_torch_xla_available",
                     "accelerate.utils.is_torch_xla_available",
                     "accelerate.utils.imports.is_torch_xla_available"), _XLA_PARAMETERS),
    **dict.fromkeys(("transformers.is_torch_tpu_available",
                     "transformers.utils.is_torch_tpu_available",
                     "transformers.utils.import_utils.is_torch_tpu_available",
                     "transformers.file_utils.is_torch_tpu_available",
                     "accelerate.utils.is_tpu_available",
                     "accelerate.utils.imports.is_tpu_available"), _TPU_PARAMETERS),
}
CHECKS = frozenset(CHECK_PARAMETERS)
#: xm calls that average the gradients over the replicas: the other side of a guard seldom does (NM303 ports them)
GRADIENT_STEPS = names((XM, ["optimizer_step", "reduce_gradients"]))
IMPORTS_ONLY = "is_torch_xla_available() is False on TorchNeuron: XLA branch removed (it only imported torch_xla)"
#: xm calls a step side may hold beside them: NM302 removes them
STEP_BOUNDARIES = names((XM, ["mark_step"]), ("torch_xla", ["sync"]))


class XlaAvailableGuard(XlaRule):
    """if is_torch_xla_available(): ... -> the ported XLA branch behind a native Neuron check."""

    id = "NM317"
    name = "xla-available-guard"
    safety = Safety.NEEDS_REVIEW
    triggers = ("is_torch_xla_available", "is_torch_tpu_available", "is_tpu_available")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._kept_flags: set[str] = set()  # names bound by an XLA side this rule kept because the file tests them
        self._handled: set[int] = set()  # ids of the checks in if / conditional-expression tests (the others: todo)
        #: id(updated test) -> (that test, original guard, its XLA side) for the module-level guards
        #: of imports only
        self._import_guards: dict[int, tuple[cst.BaseExpression, cst.If, cst.BaseSuite]] = {}
        self._needed: set[str] = set()  # the names used in the XLA branches of the guards left in place

    def _is_check(self, node: cst.CSTNode) -> bool:
        """A call of an XLA check whose arguments keep its meaning "torch_xla is there" (none, ``check_device=``
        True / False, ``check_is_tpu=False``): the test of the Trainium path."""
        qualified = self._named_check(node)
        if qualified is None:
            return False
        parameters = CHECK_PARAMETERS[qualified]
        seen: set[str] = set()
        for position, argument in enumerate(cast(cst.Call, node).args):
            if argument.star:
                return False
            name = argument.keyword.value if argument.keyword is not None else \
                parameters[position][0] if position < len(parameters) else None
            allowed = dict(parameters).get(name) if name is not None else None
            value = argument.value
            if allowed is None or name in seen or not (isinstance(value, cst.Name) and value.value in ("True", "False")) \
                    or (value.value == "True") not in allowed:
                return False
            seen.add(cast(str, name))
        return True

    def _named_check(self, node: cst.CSTNode) -> str | None:
        """The qualified name of an XLA check called by ``node``, whatever its arguments."""
        return self.ctx.matches(node.func, CHECKS) if isinstance(node, cst.Call) else None

    def _flags(self) -> "_FlagTests":
        return self.ctx.memo("nm317-flag-tests", lambda: _FlagTests.of(self.ctx.shared.get("module")))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        updated = self._without_import_guards(updated)
        updated = self._without_unused_check_import(original, updated)
        if self._kept_flags:
            gated = self._flags().gatedsubtree(self._kept_flags)
            for finding in self.ctx.findings:
                if finding.severity is Severity.FIXED and finding.rule != self.id and id(finding.node) in gated:
                    finding.severity = Severity.TODO
                    finding.message += (
                        f" (not run on TorchNeuron: this code is reached only when {_listed(self._kept_flags)} is set, "
                        "and the kept is_torch_xla_available() guard leaves it unset there; see the NM317 todo)")
        return updated

    def _without_unused_check_import(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        """A module-level ``from ... import is_torch_xla_available`` whose last use this run removed goes (one the
        file never used, or names in a string such as ``__all__``, stays). Not in a notebook: other cells may use
        it."""
        if self.ctx.namespace is not None:
            return updated
        body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []  # the comments above a removed import, for the next statement
        for statement in updated.body:
            if carried:
                statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
                carried = []
            node = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                else None
            if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None \
                    or isinstance(node.names, cst.ImportStar):
                body.append(statement)
                continue
            module = cst.Module(body=[]).code_for_node(node.module)
            unused = {bound_name(alias) for alias in node.names
                      if f"{module}.{alias.evaluated_name}" in CHECKS
                      and self._used_before(original, bound_name(alias)) and not module_uses(updated, bound_name(alias))}
            keep = [alias for alias in node.names if bound_name(alias) not in unused]
            if not unused:
                body.append(statement)
            elif not keep:
                carried = [line for line in statement.leading_lines if line.comment is not None]
            else:
                keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                several = len(keep) > 1  # one name needs no parentheses
                body.append(statement.with_changes(body=[node.with_changes(
                    names=keep, lpar=node.lpar if several else None, rpar=node.rpar if several else None)]))
        if carried:
            return updated  # a removed last statement: nothing to carry its comments to
        return updated if len(body) == len(updated.body) and all(
            a is b for a, b in zip(body, updated.body)) else updated.with_changes(body=body)

    def _used_before(self, original: cst.Module, name: str) -> bool:
        """Whether the original module used the check this run's import binds as ``name``: by that name, or, for
        a name the original did not import (NM603 renamed ``is_torch_tpu_available`` to
        ``is_torch_xla_available``), by the name of a check it did import."""
        if module_uses(original, name):
            return True
        imported = {bound_name(alias) for statement in original.body if isinstance(statement, cst.SimpleStatementLine)
                    for node in statement.body if isinstance(node, cst.ImportFrom) and node.module is not None
                    and not node.relative and not isinstance(node.names, cst.ImportStar)
                    for alias in node.names
                    if f"{_code(node.module)}.{alias.evaluated_name}" in CHECKS}
        return name not in imported and any(module_uses(original, other) for other in imported)

    def fixed(self, node: cst.CSTNode, message: str) -> None:
        super().fixed(node, self._in_words(node, message))

    def todo(self, node: cst.CSTNode, message: str) -> None:
        super().todo(node, self._in_words(node, message))

    def _in_words(self, node: cst.CSTNode, message: str) -> str:
        """The message with the check spelled as the file spells it (``is_torch_tpu_available()``)."""
        test = node.test if isinstance(node, (cst.If, cst.IfExp)) else node
        call = next((n for n in subtree(test) if self._named_check(n) is not None), None)
        func = cast(cst.Call, call).func if call is not None else None
        spelled = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) \
            else None
        if spelled is None or spelled == "is_torch_xla_available":
            return message
        return message.replace("is_torch_xla_available()", f"{spelled}()")

    def leave_If(self, original: cst.If, updated: cst.If):
        test = original.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and self._is_check(test.expression)
        if not (self._is_check(test) or negated):
            if walk(test, self._is_check):
                rest = self._rest_of_and(test)
                if rest is not None and not self._keeps_xla(original.body, updated.body):
                    # the branch is the Neuron path: on TorchNeuron it runs as it ran on XLA, and elsewhere (CPU,
                    # CUDA) it stays off as before, so the check becomes the native one rather than going away
                    native = dev.emit(self.ctx, dev.on_neuron(self.ctx.options.device_style))
                    self.fixed(original, "`is_torch_xla_available() and X` -> `<on Neuron> and X`: the branch it "
                               "guarded is the Neuron path, which runs on TorchNeuron as it ran on XLA (its torch_xla "
                               "code ported) and stays off on other devices as before")
                    left = self._is_check(cast(cst.BooleanOperation, original.test).left)  # the side the check is on
                    return updated.with_changes(test=_and_replacing_check(cast(cst.BooleanOperation, updated.test),
                                                                          left, native))
                self.todo(original, "is_torch_xla_available() is False on TorchNeuron: simplify this condition and drop the XLA branch")
                self._demote(original.body, original)
                self._left_in_place(original)
            elif walk(test, lambda n: self._named_check(n) is not None):  # a narrowed check: its todo says it
                self._demote(original.body, original)
                self._left_in_place(original)
            return updated
        if isinstance(updated.orelse, cst.If):
            self.todo(original, "is_torch_xla_available() is False on TorchNeuron: drop the XLA branch of this if/elif chain")
            self._left_in_place(original)
            if not negated:
                self._demote(original.body, original)
            return updated
        xla_side = original.orelse.body if negated and isinstance(original.orelse, cst.Else) else original.body
        flags = sorted(self._flags().tested_outside(_bound_names(xla_side) if not negated or original.orelse else set(),
                                                    original))
        if flags:
            self._kept_flags.update(flags)
            self.todo(original, f"the XLA branch binds {_listed(flags)}, which this file tests elsewhere as its \"on the "
                      "accelerator\" flag (is None / is not None / truthiness / hasattr): keeping only the other branch "
                      "would make every branch behind that flag dead on TorchNeuron (is_torch_xla_available() is False "
                      "there). Replace the flag by a native check (torch.accelerator.current_accelerator() is not None, "
                      "or its .type == \"neuron\") and drop this guard")
            return updated
        steps = self._gradient_steps(xla_side)
        if steps is not None:
            ported = {id(f.node) for f in self.ctx.findings if f.rule == "NM303" and f.severity is Severity.FIXED}
            if steps and all(id(call) in ported for call in steps):  # NM303 wrote the average: keep that side
                self.fixed(original, "is_torch_xla_available() is False on TorchNeuron: the XLA branch is kept, its "
                           "gradient step ported by NM303 (the other branch would step without averaging the "
                           "gradients over the replicas), the other branch removed")
                return self._flattened(original, updated, updated.orelse.body if negated and isinstance(
                    updated.orelse, cst.Else) else updated.body)
            self.todo(original, "is_torch_xla_available() is False on TorchNeuron, but the XLA branch averages the "
                      "gradients over the replicas (xm.optimizer_step / reduce_gradients) and the other branch does "
                      "not: keep the average (dist.all_reduce(p.grad); p.grad /= dist.get_world_size() for each "
                      "parameter, or wrap the model in DDP/FSDP2), then drop this guard")
            self._left_in_place(xla_side)
            return updated
        keep: cst.BaseSuite | None
        if negated:
            keep = updated.body
        else:
            keep = updated.orelse.body if isinstance(updated.orelse, cst.Else) else None
        if (negated and original.orelse is None) or not _only_imports(xla_side):  # the Neuron path of the project
            return self._neuron_path(original, updated, negated, keep)
        module = self.ctx.shared.get("module")
        if module is not None and any(statement is original for statement in module.body):
            # decided in leave_Module (a guard left in place may use it); the test node is what reaches the module
            # unchanged (later rules and the notes rebuild the if around it)
            self._import_guards[id(updated.test)] = (updated.test, original, xla_side)
            return updated
        self.fixed(original, IMPORTS_ONLY)
        if keep is None:
            return cst.RemoveFromParent()
        return self._flattened(original, updated, keep)

    def _without_import_guards(self, updated: cst.Module) -> cst.Module:
        """The module-level guards of imports only go, unless a guard this rule left in place uses a name one
        binds (its XLA branch would lose its import)."""
        if not self._import_guards:
            return updated
        body: list[cst.BaseStatement] = []
        seen: set[int] = set()
        for statement in updated.body:
            pending = self._import_guards.get(id(statement.test)) if isinstance(statement, cst.If) else None
            if pending is None:
                body.append(statement)
                continue
            _, original, xla_side = pending
            statement = cast(cst.If, statement)
            needed = sorted(_bound_names(xla_side) & self._needed)
            if needed:
                seen.add(id(original))
                self.todo(original, f"is_torch_xla_available() is False on TorchNeuron: this guard only imports "
                          f"torch_xla, but {_listed(needed)} is used in an is_torch_xla_available() guard left in "
                          "place (see its todo): drop this guard once that branch is ported")
                body.append(statement)
                continue
            self.fixed(original, IMPORTS_ONLY)
            seen.add(id(original))
            negated = isinstance(original.test, cst.UnaryOperation)
            other = statement.body if negated else statement.orelse.body if isinstance(statement.orelse, cst.Else) \
                else None
            if other is not None:
                body.extend(cast(cst.FlattenSentinel, self._flattened(original, statement, other)).nodes)
        for _, original, _ in self._import_guards.values():
            if id(original) not in seen and not any(f.node is original for f in self.ctx.findings):
                self.fixed(original, IMPORTS_ONLY)  # the run removed it on its own (every import in it went)
        return updated.with_changes(body=body)

    def _neuron_path(self, original: cst.If, updated: cst.If, negated: bool, other: cst.BaseSuite | None):
        """The XLA side of the guard, as the other rules ported it, runs on Trainium: it stays behind a native
        Neuron check, the other side behind its ``not`` (a GPU or CPU host runs it as before). A side left with
        torch_xla or another rule's todo keeps the guard with a todo."""
        if negated and original.orelse is None:  # `if not <check>: A`: the XLA side does nothing
            xla_original: cst.BaseSuite = cst.IndentedBlock(body=[])
            ported = None
        else:
            xla_original = cast(cst.Else, original.orelse).body if negated else original.body
            ported = _without_xla_imports(cast(cst.Else, updated.orelse).body if negated else updated.body)
        if any(line.comment is not None and NOTE_PREFIX in line.comment.value for line in original.leading_lines) \
                or NOTE_PREFIX in _code(xla_original):
            self._left_in_place(xla_original)
            return updated  # a note of an earlier run (this todo, or another rule's in the branch) is not resolved
        if self._keeps_xla(xla_original, ported if ported is not None else cst.IndentedBlock(body=[])):
            self._left_in_place(xla_original)
            used = {q for n in (subtree(ported) if ported is not None else []) if isinstance(n, (cst.Name, cst.Attribute))
                    for q in self.ctx.qualnames(n) if q.startswith("torch_xla")}
            left = sorted(q for q in used if not any(u.startswith(q + ".") for u in used))
            inside = _ids(xla_original, set())
            todos = sorted({f.rule for f in self.ctx.findings if f.severity is Severity.TODO and id(f.node) in inside})
            what = "; ".join([*([f"it still uses {_listed(left)}"] if left else []),
                              *([f"{', '.join(todos)} left a todo there"] if todos else [])])
            self.todo(original, f"is_torch_xla_available() is False on TorchNeuron, so the other branch runs there, "
                      f"but the XLA branch is the Neuron path of this project and it is not ported ({what}): port "
                      f"that branch by hand, then replace the test by a native check ({dev.ON_NEURON}) keeping both "
                      "branches; dropping the XLA branch would drop the Neuron path")
            self._demote(xla_original, original)
            return updated
        if ported is None and other is None:
            self.fixed(original, "is_torch_xla_available() is False on TorchNeuron: XLA branch removed (nothing of "
                       "it is left to run once ported)")
            return cst.RemoveFromParent()
        style = self.ctx.options.device_style
        if ported is None:  # nothing runs on Trainium: the other side only elsewhere
            self.fixed(original, "is_torch_xla_available() -> a native Neuron check: the XLA branch did nothing "
                       "once ported, so the other branch now runs where TorchNeuron does not, as it ran off XLA")
            test = dev.emit(self.ctx, dev.on_neuron(style, negated=True))
            return updated.with_changes(test=test, body=cast(cst.BaseSuite, other), orelse=None)
        self.fixed(original, "is_torch_xla_available() -> a native Neuron check: Trainium runs the XLA branch as "
                   "the other rules ported it (the Neuron path), a GPU or CPU host the other branch as before")
        test = dev.emit(self.ctx, dev.on_neuron(style, negated=negated))
        if negated:
            return updated.with_changes(test=test, orelse=cast(cst.Else, updated.orelse).with_changes(body=ported))
        return updated.with_changes(test=test, body=ported)

    def visit_If(self, node: cst.If) -> None:
        self._handled.update(id(n) for n in subtree(node.test) if self._is_check(n))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._handled.update(id(n) for n in subtree(node.test) if self._is_check(n))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self._named_check(original) is not None and not self._is_check(original):
            self.todo(original, f"`{_code(original)}` is not the plain XLA check (an argument narrows it to XLA on a "
                      "TPU / GPU, or is not a literal True / False): it was not the Trainium path, and torch_xla is "
                      "not installed on TorchNeuron, so it is False there; keep what the project needs on Trainium "
                      f"behind a native check ({dev.ON_NEURON}) and drop the rest")
        elif id(original) not in self._handled and self._is_check(original):
            self.todo(original, "is_torch_xla_available() is False on TorchNeuron (torch_xla is not installed): this "
                      "use of it now always sees False; give the Neuron path the value it had on XLA")
        return updated

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        test = original.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and self._is_check(test.expression)
        if not (self._is_check(test) or negated):
            if walk(test, self._is_check):
                self.todo(original, "is_torch_xla_available() is False on TorchNeuron: `A if <test> else B` now always "
                          "takes B; simplify the test and keep the value the Neuron path had on XLA")
            return updated
        neuron, other = (updated.orelse, updated.body) if negated else (updated.body, updated.orelse)
        if _literal(neuron):
            # the Neuron run keeps the value it had on XLA, every other device the one it had: only the test changes
            native = dev.emit(self.ctx, dev.on_neuron(self.ctx.options.device_style, negated=negated))
            self.fixed(original, f"`{_code(neuron)} if is_torch_xla_available() else {_code(other)}`: the test is "
                       f"now the native Neuron check, so TorchNeuron gets `{_code(neuron)}` as the XLA run did and "
                       f"other devices keep `{_code(other)}` (is_torch_xla_available() is False on TorchNeuron)")
            return updated.with_changes(test=native)
        self.todo(original, f"is_torch_xla_available() is False on TorchNeuron: this now always takes "
                  f"`{_code(other)}`; replace the expression by the value the Neuron path needs (on XLA: "
                  f"`{_code(neuron)}`)")
        self._demote(original.orelse if negated else original.body, original)
        return updated

    def _rest_of_and(self, test: cst.BaseExpression) -> cst.BaseExpression | None:
        """X for ``check() and X`` / ``X and check()`` when X has no side effects (names, attributes, literals,
        comparisons, int()/str()/os.environ.get() reads): the only test of the check to resolve."""
        if not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And)):
            return None
        if self._is_check(test.left):
            rest = test.right
        elif self._is_check(test.right):
            rest = test.left
        else:
            return None
        if walk(rest, self._is_check) or not _pure(self.ctx, rest):
            return None
        return rest

    def _keeps_xla(self, original: cst.BaseSuite, updated: cst.BaseSuite) -> bool:
        """Whether the branch still needs torch_xla after the run (a name of it, or another rule's todo inside)."""
        inside = _ids(original, set())
        if any(f.severity is Severity.TODO and id(f.node) in inside for f in self.ctx.findings):
            return True
        return walk(updated, lambda n: isinstance(n, (cst.Name, cst.Attribute))
                    and any(q.startswith("torch_xla") for q in self.ctx.qualnames(n)))

    def _left_in_place(self, tree: cst.CSTNode) -> None:
        """The names a guard left in place uses: a module-level guard of imports only binding one stays."""
        self._needed.update(n.value for n in subtree(tree) if isinstance(n, cst.Name))

    def _demote(self, suite: cst.CSTNode, guard: cst.CSTNode) -> None:
        """Other rules' fixes inside a branch the guard left in place cannot run on TorchNeuron: todo, not fixed."""
        inside = _ids(suite, set())
        for finding in self.ctx.findings:
            if finding.severity is Severity.FIXED and finding.rule != self.id and id(finding.node) in inside:
                finding.severity = Severity.TODO
                finding.message += self._in_words(guard, " (not run on TorchNeuron while the is_torch_xla_available() "
                                                  "guard around it stays: see the NM317 todo)")

    def _gradient_steps(self, xla_side: cst.BaseSuite) -> list[cst.Call] | None:
        """None when the XLA side averages no gradients (no xm.optimizer_step / reduce_gradients, no all_reduce); else
        its gradient-step calls when it holds nothing but statement lines of them and of step boundaries ([] when it
        holds anything else too)."""
        averages = GRADIENT_STEPS | {"torch.distributed.all_reduce"}  # the average NM303 wrote, on a second run
        if not walk(xla_side, lambda n: isinstance(n, cst.Call) and self.ctx.matches(n.func, averages) is not None):
            return None
        if isinstance(xla_side, cst.SimpleStatementSuite):
            return []  # a one-line block: NM303 cannot place the average there
        calls: list[cst.Call] = []
        for statement in xla_side.body:
            small = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
            for item in small:
                value = item.value if isinstance(item, cst.Expr) else None
                if not isinstance(value, cst.Call):
                    return []
                if self.ctx.matches(value.func, GRADIENT_STEPS):
                    calls.append(value)
                elif not self.ctx.matches(value.func, STEP_BOUNDARIES):
                    return []
        return calls

    def _flattened(self, original: cst.If, updated: cst.If, keep: cst.BaseSuite):
        statements: list[cst.BaseStatement]
        if isinstance(keep, cst.SimpleStatementSuite):
            statements = [cst.SimpleStatementLine(body=list(keep.body))]
        else:
            statements = list(cast(cst.IndentedBlock, keep).body)  # the other kind of suite
        # libcst: every BaseStatement subclass has leading_lines, the base class does not declare it
        leading = statements[0].leading_lines  # type: ignore[attr-defined]
        statements[0] = statements[0].with_changes(leading_lines=[*updated.leading_lines, *leading])
        return cst.FlattenSentinel(statements)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    return isinstance(node, cst.Name) and node.value in ("True", "False", "None")


#: calls that only read: a test made of them and of names, attributes, literals and comparisons has no side effects
PURE_CALLS = frozenset({"os.environ.get", "os.getenv"})
PURE_BUILTINS = frozenset({"int", "float", "str", "bool", "len"})


def _pure(ctx, node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Call):
        name = node.func.value if isinstance(node.func, cst.Name) else None
        if not (name in PURE_BUILTINS or ctx.matches(node.func, PURE_CALLS)):
            return False
        return all(not a.star and _pure(ctx, a.value) for a in node.args)
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(ctx, node.value)
    if isinstance(node, cst.Comparison):
        return _pure(ctx, node.left) and all(_pure(ctx, c.comparator) for c in node.comparisons)
    if isinstance(node, cst.BooleanOperation):
        return _pure(ctx, node.left) and _pure(ctx, node.right)
    if isinstance(node, cst.UnaryOperation):
        return _pure(ctx, node.expression)
    return False



def _statements(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    if isinstance(suite, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=list(suite.body))]
    return list(cast(cst.IndentedBlock, suite).body)


def _only_imports(suite: cst.BaseSuite) -> bool:
    """Whether a branch holds only import statements (and pass): the module-level ``import torch_xla... as xm``."""
    return all(isinstance(statement, cst.SimpleStatementLine)
               and all(isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass)) for small in statement.body)
               for statement in _statements(suite))


def _xla_import(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, cst.Import):
        return all(cst.Module(body=[]).code_for_node(alias.name).split(".")[0] == "torch_xla" for alias in small.names)
    if isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
        return cst.Module(body=[]).code_for_node(small.module).split(".")[0] == "torch_xla"
    return False


def _without_xla_imports(suite: cst.BaseSuite) -> cst.BaseSuite | None:
    """``suite`` without its torch_xla imports and pass statements (a name they bound that is still used is seen
    by the caller as torch_xla left); None when nothing else is left."""
    kept: list[cst.BaseStatement] = []
    for statement in _statements(suite):
        if isinstance(statement, cst.SimpleStatementLine):
            rest = [small for small in statement.body
                    if not (isinstance(small, cst.Pass) or _xla_import(small))]
            if not rest:
                continue
            if len(rest) != len(statement.body):
                rest[-1] = rest[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                statement = statement.with_changes(body=rest)
        kept.append(statement)
    if not kept:
        return None
    statements = _statements(suite)
    if isinstance(suite, cst.IndentedBlock) and len(kept) == len(statements) \
            and all(a is b for a, b in zip(kept, statements)):
        return suite
    first = statements[0]
    if kept[0] is not first and isinstance(suite, cst.IndentedBlock):  # the removed first line's comments lead
        # libcst: every BaseStatement subclass has leading_lines, the base class does not declare it
        own = list(kept[0].leading_lines)  # type: ignore[attr-defined]
        while own and own[0].comment is None:
            own.pop(0)  # the blank lines that separated it from the removed import
        kept[0] = kept[0].with_changes(leading_lines=[*first.leading_lines, *own])  # type: ignore[attr-defined]
    if isinstance(suite, cst.SimpleStatementSuite):
        return suite.with_changes(body=[small for line in kept for small in cast(cst.SimpleStatementLine, line).body])
    return cast(cst.IndentedBlock, suite).with_changes(body=kept)


def _listed(names) -> str:
    return ", ".join(f"`{name}`" for name in sorted(names))


def _bound_names(suite: cst.BaseSuite) -> set[str]:
    """The names a branch binds at its own level: imports, plain assignments, defs and classes."""
    found: set[str] = set()
    for statement in suite.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            found.add(statement.name.value)
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                found.update(bound_name(alias) for alias in small.names)
            elif isinstance(small, cst.Assign):
                found.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                found.add(small.target.value)
    return found


def _tested_name(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``(name, when_set)`` for a test of a bare name as a flag: ``N``, ``N is not None``, ``hasattr(N, ...)``,
    ``bool(N)`` run their body when N is set (True); ``not N``, ``N is None`` their else side (False)."""
    if isinstance(test, cst.Name) and test.value not in ("True", "False", "None"):
        return test.value, True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _tested_name(test.expression)
        return (inner[0], not inner[1]) if inner else None
    if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)
            and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))):
        return test.left.value, isinstance(test.comparisons[0].operator, cst.IsNot)
    if (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value in ("hasattr", "bool")
            and test.args and isinstance(test.args[0].value, cst.Name)):
        return test.args[0].value.value, True
    return None


class _FlagTests:
    """Where the original file tests a bare name as a flag, and the nodes each such test runs only when it is set."""

    def __init__(self) -> None:
        self.tests: dict[str, list[cst.CSTNode]] = {}  # name -> the test nodes
        self.gated: dict[str, list[cst.CSTNode]] = {}  # name -> the suites / values that run only when it is set

    @classmethod
    def of(cls, module: cst.Module | None) -> "_FlagTests":
        found = cls()

        def note(test: cst.BaseExpression, when_set: cst.CSTNode | None, when_unset: cst.CSTNode | None) -> None:
            operands = [test]
            if isinstance(test, cst.BooleanOperation):  # `N and x`: the body runs only when N is set as well
                operands = [test.left, test.right] if isinstance(test.operator, cst.And) else []
                when_unset = None
            for operand in operands:
                tested = _tested_name(operand)
                if tested is None:
                    continue
                name, positive = tested
                found.tests.setdefault(name, []).append(operand)
                gated = when_set if positive else when_unset
                if gated is not None:
                    found.gated.setdefault(name, []).append(gated)

        class Tests(cst.CSTVisitor):
            def visit_If(self, node: cst.If) -> None:
                note(node.test, node.body, node.orelse)

            def visit_While(self, node: cst.While) -> None:
                note(node.test, node.body, None)

            def visit_IfExp(self, node: cst.IfExp) -> None:
                note(node.test, node.body, node.orelse)

            def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
                tested = _tested_name(node.left)
                if tested is not None:
                    found.tests.setdefault(tested[0], []).append(node.left)

        if module is not None:
            cstwalk.visit(module, Tests())
        return found

    def tested_outside(self, names: set[str], guard: cst.CSTNode) -> set[str]:
        inside = _ids(guard, set())
        return {name for name in names if any(id(test) not in inside for test in self.tests.get(name, ()))}

    def gatedsubtree(self, names: set[str]) -> set[int]:
        ids: set[int] = set()
        for name in names:
            for node in self.gated.get(name, ()):
                _ids(node, ids)
        return ids


def _ids(tree: cst.CSTNode, into: set[int]) -> set[int]:
    """``into`` with the ids of ``tree`` and every node below it."""
    def note(node: cst.CSTNode) -> bool:
        into.add(id(node))
        return False  # go on: every node

    cstwalk.find(tree, note)
    return into


def _and_replacing_check(test: cst.BooleanOperation, left: bool, native: cst.BaseExpression) -> cst.BooleanOperation:
    """``check() and X`` (``left``) / ``X and check()`` with the check replaced by ``native`` (parenthesized when it is
    itself an ``and``/``or``, so the test keeps its meaning)."""
    if isinstance(native, cst.BooleanOperation):
        native = native.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return test.with_changes(left=native) if left else test.with_changes(right=native)
