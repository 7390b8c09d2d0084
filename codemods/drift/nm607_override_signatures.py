"""NM607 override-signatures: a transformers 4 trainer override gets the parameter transformers 5 passes it.

What it does:

* In a class deriving from a stock trainer (``transformers.Trainer`` / ``Seq2SeqTrainer``, the trl trainers), or
  from an optimum-neuron trainer NM201 moves to one (``NeuronTrainer``, also under an alias, ``NeuronSFTTrainer``
  ...), an undecorated override that the library calls with ``num_items_in_batch`` it does not accept gets
  ``num_items_in_batch=None``: ``compute_loss(self, model, inputs, return_outputs=False)`` ->
  ``compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None)``, ``training_step(self,
  model, inputs)`` -> ``training_step(self, model, inputs, num_items_in_batch=None)``, ``log(self, logs)`` ->
  ``log(self, logs, start_time=None)`` (the table ``PARAMETERS``: a parameter the override can ignore and run as
  on transformers 4; ``log`` then gets no token-speed metrics, which 4.x did not pass). The library calls refused
  are NM704's (the index of how the library calls each method on ``self``, the calls of a caller the class
  overrides too left out); the parameter goes after the last positional parameter (before ``*`` / ``*args`` and
  keyword-only ones), and is added only when that makes every such call of the method accepted.
* A ``compute_loss`` so changed ignores ``num_items_in_batch`` and returns a per-batch mean, as it did on
  transformers 4: the class also gets ``loss_is_scaled_for_ga = False`` (first in its body, after the docstring,
  with a comment), unless it or a class of the file it derives from sets it. The installed Trainer then divides
  the loss by the gradient accumulation steps, as transformers 4 did.
* A ``compute_loss(self, model, inputs, return_outputs=False, **kwargs)`` whose body never reads ``kwargs`` drops
  the ``num_items_in_batch`` transformers 5 passes: the Trainer then takes its loss as normalized by that count
  and no longer divides it by the accumulation steps (transformers < 4.46 did). Which of the two the old run had
  depends on its transformers version, so this gets a todo (set ``loss_is_scaled_for_ga = False`` for a per-batch
  mean), unless the class or a class of the file it derives from sets the attribute.
* Anything else stays as it is and NM704 keeps reporting it: a parameter other than ``num_items_in_batch``
  (``return_outputs``: the caller then needs ``(loss, outputs)``, which an override written without it does not
  return), a required parameter the library does not pass, "got multiple values", a name the override already
  has, positional parameters of its own where the library passes one, a decorated method, a stock class whose
  index has no ``loss_is_scaled_for_ga`` (a todo for ``compute_loss``).

Scope per file: only the files the Neuron migration reaches (Neuron code, the modules it imports, the scripts
Neuron launchers run, the scripts where the project installs the Neuron stack; ``codemods/drift/_reach.py``).
Another file of the project, such as a GPU baseline with its own launcher, is left as it is with one ``info``
finding. So is a reached file that stays on the old stack after this run (it still imports optimum.neuron or uses
torch_xla once the run's rules have migrated it, NM501's decision), or a project module such a file imports: it
runs on optimum-neuron / torch_xla's transformers 4.x, where the transformers 5 names can fail (``dtype=`` is a
TypeError on 4.41); ``codemods/drift/_base.py``.

Why:

transformers 5's ``Trainer`` calls ``self.compute_loss(model, inputs, num_items_in_batch=...)`` and
``self.training_step(model, inputs, num_items_in_batch)``: a 4.x override without the parameter raises TypeError on
the first step (NM704), as ``self.log(logs, start_time)`` does at the first logging step, and in a ``NeuronTrainer`` subclass the verification withdraws NM201's class move, so the
file stays on optimum-neuron. When the model normalizes its loss by ``num_items_in_batch`` (it accepts loss
kwargs), transformers 5 does not divide the loss by the accumulation steps (``Trainer.loss_is_scaled_for_ga``);
an override that ignores the count returns a mean, and without ``loss_is_scaled_for_ga = False`` its gradients
would grow by the accumulation factor: a silent change of the learning rate.

Before::

    class SmoothedTrainer(NeuronTrainer):
        def compute_loss(self, model, inputs, return_outputs=False):
            ...

        def training_step(self, model, inputs):
            ...

After::

    class SmoothedTrainer(Trainer):
        # compute_loss returns a mean loss: Trainer divides it by the GA steps, as transformers 4 did
        loss_is_scaled_for_ga = False

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            ...

        def training_step(self, model, inputs, num_items_in_batch=None):
            ...

Safety: safe. The override runs as on transformers 4: the new parameter is not read, and the loss is scaled for
gradient accumulation as transformers 4 scaled it.

References:

* https://huggingface.co/docs/transformers/main_classes/trainer#transformers.Trainer.compute_loss
* docs/rules-verify.md
"""

from __future__ import annotations

import ast
from typing import NamedTuple, cast

import libcst as cst

from codemods._tables.training_symbols import NEURON_TRAINERS, STOCK_TRAINERS
from codemods.drift._base import DriftRule
from codemods.verify import _index
from codemods.verify._facts import Facts, LocalClass
from codemods.verify.nm704_stock_overrides import refusals, signature_of
from migrate.rule import Safety

#: the parameter each override may take and ignore: the library passes it, and an override that ignores it runs as on
#: transformers 4 (for ``compute_loss`` with the class attribute below, which keeps its loss scaling; ``log`` then
#: gets no token-speed metrics, which transformers 4 did not pass either)
PARAMETERS = {"compute_loss": "num_items_in_batch", "training_step": "num_items_in_batch", "log": "start_time"}
SCALED = "loss_is_scaled_for_ga"
COMMENT = "# compute_loss returns a mean loss: Trainer divides it by the GA steps, as transformers 4 did"


class _Plan(NamedTuple):
    """What one override gets."""

    stock: str  # the stock class
    callers: tuple[str, ...]  # the library methods whose calls it refused
    parameter: str  # the parameter it gets (PARAMETERS)
    scaled: bool  # compute_loss: the class gets loss_is_scaled_for_ga = False
    todo: str | None  # why it is left (the index lacks the attribute)


def _function(node: ast.stmt) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


class OverrideSignatures(DriftRule):
    """Trainer overrides written for transformers 4 get the parameter transformers 5 passes them (``PARAMETERS``)."""

    id = "NM607"
    name = "override-signatures"
    safety = Safety.SAFE
    triggers = ("def compute_loss", "def training_step", "def log")
    # stock names trigger it: scope per file (DriftRule: only the files the Neuron migration reaches)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.tree_facts: Facts | None = None
        self.classes: dict[str, list[cst.ClassDef]] = {}
        self.plans: dict[int, dict[str, _Plan]] = {}  # id(ClassDef) -> method -> plan
        self.unread: dict[
            str, str
        ] = {}  # of the class being planned: compute_loss -> stock class (``_ignores_counted_loss``)
        self.unread_plans: dict[int, str] = {}  # id(ClassDef) -> the stock class of its compute_loss that gets a todo
        self.stack: list[cst.CSTNode] = []  # enclosing classes and functions

    def visit_Module(self, node: cst.Module) -> None:
        try:
            self.tree_facts = Facts(ast.parse(self.ctx.source))
        except (SyntaxError, ValueError, RecursionError):
            self.tree_facts = None
        collector = _Classes()
        node.visit(collector)
        self.classes = collector.classes

    # --------------------------------------------------------------------------------------------------- planning

    def _stock(self, node: cst.ClassDef, seen: frozenset[str] = frozenset()) -> str | None:
        """The one indexed stock trainer the class derives from (through classes of the file; an optimum-neuron
        trainer counts as the stock one NM201 moves it to), else None."""
        found = set()
        for base in node.bases:
            value = base.value
            if base.keyword is not None or base.star:
                return None
            if isinstance(value, cst.Name) and value.value in self.classes and value.value not in seen:
                local = self.classes[value.value]
                inner = self._stock(local[0], seen | {node.name.value}) if len(local) == 1 else None
                if inner is None:
                    return None
                found.add(inner)
                continue
            names = {NEURON_TRAINERS.get(name, name) for name in self.ctx.qualnames(value)}
            infos = {info.qualified for name in names if (info := _index.class_info(name)) is not None}
            if len(infos) != 1:
                return None
            found |= infos
        stock = found.pop() if len(found) == 1 else None
        return stock if stock in STOCK_TRAINERS else None

    def _plan(self, node: cst.ClassDef) -> dict[str, _Plan]:
        if self.tree_facts is None or len(self.classes.get(node.name.value, ())) != 1:
            return {}
        local = self.tree_facts.classes.get(node.name.value)
        stock = self._stock(node)
        if local is None or stock is None:
            return {}
        info = _index.indexed_class(stock)
        chain = list(self.tree_facts.local_chain(local))
        overridden = {name for chained in chain for name in chained.names}
        methods = [method for statement in local.node.body if (method := _function(statement)) is not None]
        plans = {}
        for method in methods:
            if method.name == "compute_loss" and not method.decorator_list and _ignores_counted_loss(method):
                if not _sets_scaled(chain) and info.attrs is not None and SCALED in info.attrs:
                    self.unread[method.name] = stock
                continue
            parameter = PARAMETERS.get(method.name)
            if parameter is None or method.decorator_list or [m.name for m in methods].count(method.name) != 1:
                continue
            refused = refusals(method.name, signature_of(method), info, overridden)
            if not refused or not _only_the_parameter(method, refused, info.methods[method.name], parameter):
                continue
            if refusals(method.name, signature_of(method, (parameter,)), info, overridden):
                continue  # adding it does not make every call accepted: NM704 says what else to do
            callers = tuple(dict.fromkeys(call.caller for call in refused))
            if method.name != "compute_loss" or _sets_scaled(chain):
                plans[method.name] = _Plan(stock, callers, parameter, False, None)
            elif info.attrs is None or SCALED not in info.attrs:
                plans[method.name] = _Plan(
                    stock,
                    callers,
                    parameter,
                    False,
                    (
                        f"{stock} ({_index.checked_against(_index.package_of(stock) or 'transformers')}) has no "
                        f"`{SCALED}`: adding `{parameter}=None` alone would change how the loss is scaled for gradient "
                        f"accumulation; take `{parameter}` and normalize the loss by it as the stock method does"
                    ),
                )
            else:
                plans[method.name] = _Plan(stock, callers, parameter, True, None)
        return plans

    # --------------------------------------------------------------------------------------------------- rewriting

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append(node)
        self.unread = {}
        plans = self._plan(node)
        if plans:
            self.plans[id(node)] = plans
        if self.unread:
            self.unread_plans[id(node)] = self.unread["compute_loss"]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.stack.pop()
        owner = self.stack[-1] if self.stack else None
        if isinstance(owner, cst.ClassDef) and original.name.value == "compute_loss" and id(owner) in self.unread_plans:
            if not original.decorators and _direct(owner, original):
                self._note_unread(owner, original, self.unread_plans[id(owner)])
            return updated
        plan = self.plans.get(id(owner), {}).get(original.name.value) if isinstance(owner, cst.ClassDef) else None
        if plan is None or original.decorators or not _direct(cast(cst.ClassDef, owner), original):
            return updated
        assert isinstance(owner, cst.ClassDef)
        method = f"`{owner.name.value}.{original.name.value}`"
        stock_name = plan.stock.rsplit(".", 1)[-1]
        calls = ", ".join(f"{stock_name}.{caller}" for caller in plan.callers)
        why = (
            f"{calls} ({_index.checked_against(_index.package_of(plan.stock) or 'transformers')}) "
            f"call{'s' if len(plan.callers) == 1 else ''} it with `{plan.parameter}`: a TypeError without it"
        )
        if plan.todo is not None:
            self.todo(original, f"{method} will raise TypeError: {why}; {plan.todo}")
            return updated
        message = f"{method}: added `{plan.parameter}=None` ({why}); the override does not read it"
        if plan.scaled:
            message += (
                f", and the class gets `{SCALED} = False`: the loss it returns is a per-batch mean, which "
                f"the Trainer divides by the gradient accumulation steps as in transformers 4 (without it "
                f"transformers 5 would not divide it, and the gradients would grow by that factor)"
            )
        self.fixed(original, message)
        return updated.with_changes(params=_with_parameter(updated.params, plan.parameter))

    def _note_unread(self, owner: cst.ClassDef, method: cst.FunctionDef, stock: str) -> None:
        stock_name = stock.rsplit(".", 1)[-1]
        checked = _index.checked_against(_index.package_of(stock) or "transformers")
        self.todo(
            method,
            f"`{owner.name.value}.compute_loss` takes `{PARAMETERS['compute_loss']}` only through `**` and never "
            f"reads it: {stock_name} ({checked}) then counts its loss as already normalized by the number of items "
            f"in the batch whenever the model accepts loss kwargs (causal LMs do), and no longer divides it by "
            f"gradient_accumulation_steps, as transformers < 4.46 did: with accumulation the gradients grow by that "
            f"factor. If it returns a per-batch mean, set `{SCALED} = False` on the class; or divide the summed loss "
            f"by `{PARAMETERS['compute_loss']}` as the stock method does",
        )

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.stack.pop()
        plans = self.plans.get(id(original), {})
        if not any(plan.scaled for plan in plans.values()) or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(updated.body.body)
        at = 1 if body and _is_docstring(body[0]) else 0
        line = cst.SimpleStatementLine(
            body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(SCALED))], value=cst.Name("False"))],
            leading_lines=[*([cst.EmptyLine(indent=False)] if at else []), cst.EmptyLine(comment=cst.Comment(COMMENT))],
        )
        if at < len(body):
            first = cast(cst.SimpleStatementLine, body[at])  # any statement: each has leading_lines
            if not first.leading_lines or first.leading_lines[0].comment is not None:
                body[at] = first.with_changes(leading_lines=[cst.EmptyLine(indent=False), *first.leading_lines])
        body.insert(at, line)
        return updated.with_changes(body=updated.body.with_changes(body=body))


class _Classes(cst.CSTVisitor):
    """Every class of the module by name (a name given twice: which one a base means is not known)."""

    def __init__(self) -> None:
        self.classes: dict[str, list[cst.ClassDef]] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.setdefault(node.name.value, []).append(node)


def _only_the_parameter(
    method: ast.FunctionDef | ast.AsyncFunctionDef, refused, stock_text: str, parameter: str
) -> bool:
    """Every refusal is the missing ``parameter``: an unexpected keyword, or one positional argument more than the
    override takes where its positional parameters are the stock method's first ones and the stock method's next
    one is ``parameter`` (``self`` dropped); and the override has no parameter of that name."""
    own = signature_of(method)
    stock = _index.Signature.parse(stock_text, drop_first=True)
    names = {arg.arg for arg in (*method.args.posonlyargs, *method.args.args, *method.args.kwonlyargs)}
    if parameter in names:
        return False
    for call in refused:
        if call.reason == f"unexpected keyword argument `{parameter}`":
            if parameter not in call.keywords:
                return False
        elif call.reason.startswith("takes"):
            count = len(own.positional)
            if (
                call.npos != count + 1
                or stock.positional[:count] != own.positional
                or stock.positional[count : count + 1] != (parameter,)
            ):
                return False
        else:
            return False
    return True


def _ignores_counted_loss(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``compute_loss`` takes ``num_items_in_batch`` only through ``**kwargs`` and its body never reads that name
    (not even to pass it on): the count transformers 5 passes is dropped."""
    arguments = method.args
    if arguments.kwarg is None:
        return False
    named = {arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    if PARAMETERS["compute_loss"] in named or arguments.vararg is not None:
        return False
    read = {node.id for statement in method.body for node in ast.walk(statement) if isinstance(node, ast.Name)}
    return arguments.kwarg.arg not in read and "locals" not in read


def _sets_scaled(chain: list[LocalClass]) -> bool:
    """The class, or a class of the file it derives from, sets ``loss_is_scaled_for_ga`` itself."""
    return any(SCALED in local.names for local in chain)


def _direct(owner: cst.ClassDef, method: cst.FunctionDef) -> bool:
    return isinstance(owner.body, cst.IndentedBlock) and any(statement is method for statement in owner.body.body)


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _with_parameter(params: cst.Parameters, name: str) -> cst.Parameters:
    """``name=None`` after the last positional parameter (before ``*``, ``*args``, keyword-only ones and
    ``**kwargs``), keeping the signature's layout: on its own line in a signature written one parameter a line."""
    added = cst.Param(
        cst.Name(name),
        default=cst.Name("None"),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    positional = list(params.params)
    if not positional:
        return params.with_changes(params=[added])
    last = positional[-1]
    follows = (
        params.star_arg is not cst.MaybeSentinel.DEFAULT or bool(params.kwonly_params) or params.star_kwarg is not None
    )
    separator = next((p.comma for p in reversed(positional[:-1]) if isinstance(p.comma, cst.Comma)), None)
    if separator is None and params.posonly_params and isinstance(params.posonly_params[-1].comma, cst.Comma):
        separator = params.posonly_params[-1].comma
    if not follows:
        # the new parameter ends the list: it takes the old last one's trailing comma and the space before ``)``,
        # the old last one the separator between parameters
        added = added.with_changes(comma=last.comma, whitespace_after_param=last.whitespace_after_param)
        last = last.with_changes(
            comma=separator or cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
            whitespace_after_param=cst.SimpleWhitespace(""),
        )
    else:
        added = added.with_changes(comma=last.comma)
    return params.with_changes(params=[*positional[:-1], last, added])
