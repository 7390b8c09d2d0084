"""NM316 xla-env-vars: XLA/Neuron environment variables set from Python are removed, reviewed or renamed.

What it does:

Handles ``os.environ["X"] = "v"``, ``os.environ.setdefault("X", "v")``, ``os.putenv("X", "v")`` (and, for notes only,
``os.environ.update``) statements whose
variable name is a string literal, following the table ``codemods/_tables/env_vars.py`` (shared with the
launch-layer rules):

* ``XLA_USE_BF16`` / ``XLA_DOWNCAST_BF16`` set on (``"1"``) follow one policy with the launchers (NM403): where
  the script builds its model in one place (every binding of it before the move, in one function, builds a
  transformers text model with no dtype: ``from_pretrained`` / ``from_config``, or the model class called with its
  config alone, ``BertForMaskedLM(BertConfig(...))`` / ``LlamaForCausalLM(config)``) and moves it once with
  ``model.to(device)``, as a statement or in that binding (``model = BertForMaskedLM(config).to(device)``; its
  only cast; ``import torch`` binds ``torch``; the file never names the variable elsewhere), the setting is
  removed and the move gets ``dtype=torch.bfloat16`` (``model.to(device, dtype=torch.bfloat16)``, both
  ``fixed``): weights, gradients and optimizer state stay bf16 as under torch_xla, and NM403 removes the variable
  from the launchers that run only such scripts (the project fact ``xla.bf16-model-scripts``, the same test).
  Anywhere else the setting stays with the todo NM403 gives a launcher's export: TorchNeuron ignores it, so
  removing it alone would turn the run into fp32 without a word; the todo names the condition that failed (no
  model moved, a model not built by a text model class, several models, another cast, a read of the variable, no
  ``import torch``). Set to ``0`` it is removed (it switched nothing on).
* ``remove`` (e.g. ``NEURON_EXTRACT_GRAPHS_ONLY``, ``PJRT_DEVICE``, ``XLA_*``): the statement is
  deleted. An assignment that implements
  an option of the script (its value reads a variable, or the ``if`` around it tests one:
  ``if flags.snapshot_step_list: os.environ["XLA_FLAGS"] = f"...{flags.dump_dir}"``) is kept, with a ``todo``
  naming the option: removing it would drop the option silently.
* ``review`` (``NEURON_CC_FLAGS``, ``NEURON_RT_*``): kept, with a ``todo``. A literal ``NEURON_CC_FLAGS`` value
  gets the note a shell ``export`` / notebook ``%env`` of it gets from NM405 (``cc_flags_message``): the options
  TorchNeuron derives itself or the XLA-era ones (``--target``, ``--lnc``, ``--cache_dir``,
  ``--retry_failed_compilation``: the ``CC_FLAGS`` table), each named to drop, else a review of each flag against
  the SDK's neuronx-cc; only in a file that keeps XLA-era code (below), which still compiles with these flags, does
  a value of options neuronx-cc still takes (``--model-type=transformer``) get none.
* ``os.environ.update({"X": "v", ...})`` / ``os.environ.update(X="v")``: the statement stays as it is (it sets the
  other variables too), with one ``todo`` giving each variable of the table its note (a variable the table removes
  or renames: the step to take).
* an environment built for a child process (``dict(os.environ, PJRT_DEVICE="NEURON")``, ``{**BASE_ENV,
  "XLA_USE_BF16": "1"}``, an ``env={...}`` of a subprocess call): left as it is (the script it reaches is not this
  file, and may stay on torch_xla), with one ``todo`` giving each variable of the table its note, as for
  ``os.environ.update``; an ``env=`` / ``environment=`` dict of a call NM411 reads (a SageMaker job) gets NM411's
  notes instead (rtE: such launchers were silent);
* ``replace`` (``NEURONX_DUMP_TO`` -> ``TORCH_NEURONX_DEBUG_DIR``): the variable is renamed.
* ``keep`` / unknown variables: untouched.
* Reads (``os.environ.get("XLA_USE_BF16")``) get a ``todo`` when the table removes the variable: the branch that
  reads it is now dead or must pick its dtype explicitly.
* In a file (a notebook: any of its code cells) that keeps XLA-era code no rule ports (``torch_neuronx.trace``,
  ``torch_neuronx.xla_impl`` ops, ``torch_neuronx.nki_jit`` kernels, ``nki.jit(mode="torchxla")`` kernels: NM330
  reports them and leaves them as they are), no variable is removed, renamed or edited: that code still runs on the
  torch_xla stack, which reads them (a trace compiled in fp32 once ``XLA_USE_BF16`` is gone). Each gets a ``todo``
  naming that code, with what to do once it runs on TorchNeuron. Only optimum-neuron's variables
  (``CUSTOM_CACHE_REPO``, ``OPTIMUM_NEURON_*`` ...) are still removed. A file left on torch_xla as a whole (NM318)
  is not touched by this rule at all.
* A module of the project whose importers are all left on torch_xla as a whole (an optimizer helper imported only
  by a script NM318 keeps; followed through modules kept the same way; see ``codemods/xla/_importers.py``) runs on
  the XLA stack with them: its settings and reads are left as they are, with one ``todo`` at the first of them that
  names those importers (NM902 then reports the module's references as one ``info``). A module that may run
  otherwise (a script, one a ported file or a notebook imports, one a launcher names) gets the notes above. The
  same holds for a pure Python launcher (it runs commands and has no torch_xla code) whose strings name only
  project scripts left on torch_xla as a whole (``run.py`` exporting ``NEURON_RT_*`` for ``sd_training_neuron.py``):
  what it exports reaches those scripts only.

Why:

The XLA runtime variables configured torch_xla and the lazy-tensor compiler; TorchNeuron reads its own set (the
Neuron runtime variables stay meaningful, the compiler options differ).

Before::

    os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --retry_failed_compilation"
    os.environ["XLA_USE_BF16"] = "1"
    ...
    model = AutoModelForCausalLM.from_pretrained(name)
    model.to(device)

After::

    # neuron-migrate: review NEURON_CC_FLAGS: TorchNeuron still passes it to neuronx-cc; drop --retry_failed_compilation ...
    os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --retry_failed_compilation"
    ...
    model = AutoModelForCausalLM.from_pretrained(name)
    model.to(device, dtype=torch.bfloat16)

Safety: needs-review. The table says which variables are only reported; a reviewer reads each ``todo`` (a dtype
to set explicitly, compiler flags to revisit).

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
* https://pytorch.org/xla/master/learn/api-guide.html
"""

from __future__ import annotations

import ast
import builtins
import re

import libcst as cst

from codemods._lib.cst import source_of
from codemods._tables.env_vars import ENV_PREFIXES, ENV_VARS, cc_flag_actions, lookup, message_for
from codemods.launch.nm405_review_neuron_env import cc_flags_message
from codemods.xla._base import NKI_JIT, ImportMap, PythonContext, Safety, XlaRule, arg, python_chunks, string_value
from codemods.xla._importers import FACTS, kept_message, kept_with_importers, launched_kept_scripts, launcher_message
from migrate import cstwalk
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind

ENVIRON = frozenset({"os.environ"})
SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})
UPDATERS = frozenset({"os.environ.update"})
GETTERS = frozenset({"os.environ.get", "os.getenv"})
_NOT_INPUT = frozenset(dir(builtins)) | {"__name__"}
_MAIN = re.compile(r"""__name__\s*==\s*["']__main__["']""")
_OWN_XLA_IMPORT = re.compile(r"^[ \t]*(?:import|from)[ \t]+(?:torch_xla|libneuronxla|neuronx_distributed)\b", re.MULTILINE)
_REMOVED = re.compile(r"\s*\(removed\)|; removed:")  # the table's wording for a deleted assignment
#: XLA-era code no rule ports and NM330 leaves as it is: it still runs on the torch_xla stack, which reads the XLA
#: variables set beside it (``torch_neuronx.trace`` compiles in bf16 under XLA_USE_BF16)
KEPT_XLA_CODE = ("torch_neuronx.trace", "torch_neuronx.xla_impl", "torch_neuronx.nki_jit")
TORCHXLA_MODE = "torchxla"  # nki.jit(mode="torchxla"): a kernel pinned to the XLA device
#: variables that configured optimum-neuron, not the torch_xla stack: removed wherever they are
OPTIMUM_ONLY = frozenset({"CUSTOM_CACHE_REPO", "DISABLE_TRANSFORMERS_PATCHING", "NEURON_CUSTOM_SILU"})
_KEPT_MEMO = "_nm316_kept_xla_code"  # the attribute of a notebook's SharedNamespace that holds its kept XLA-era code

# ------------------------------------------------------------------- XLA_USE_BF16: one policy, Python and launchers

BF16_NAMES = ("XLA_USE_BF16", "XLA_DOWNCAST_BF16")
#: the todo for a bf16 variable kept in place, in Python (NM316) and in launchers (NM403, NM410): the same words
BF16_KEPT_TODO = ("{name} was left as it is: TorchNeuron ignores it, so removing it alone would turn this bf16 run "
                  "into fp32 without a word, and {why}; carry the precision to the script (--bf16 true for a script "
                  "that parses TrainingArguments, bf16=True in its TrainingArguments, or the model loaded with "
                  "dtype=torch.bfloat16), then remove {name}")
#: what follows the reason NM316's todo gives for a bf16 variable it keeps (``bf16_model_plan``)
BF16_NOT_CARRIED = "{reason} (a launcher that exports {name} for it keeps it the same way)"
BF16_REMOVED = ("{name} removed: torch_xla held every fp32 tensor in bf16 under it and TorchNeuron ignores it; the model "
                "is moved to the device in bf16 instead (`{model}.to(..., dtype=torch.bfloat16)` below), which keeps "
                "the weights, gradients and optimizer state in bf16 as before (a launcher that runs only such scripts drops {name} too)")
BF16_MOVED = ("dtype=torch.bfloat16 added: {names} (removed) held this model in bf16 on torch_xla; TorchNeuron ignores "
              "{them}, and the model would train in fp32")
_ON = frozenset({"1", "true", "True", "TRUE", "yes"})
#: transformers text models: their inputs are token ids and masks, so bf16 weights need no other cast (a float input,
#: pixel_values, would need one: XLA_USE_BF16 converted it too)
_TEXT_MODEL = re.compile(r"^\w*For(?:CausalLM|MaskedLM|Seq2SeqLM|SequenceClassification|TokenClassification|"
                         r"QuestionAnswering|MultipleChoice)$")
_LOADERS = frozenset({"from_pretrained", "from_config"})
_CASTS = frozenset({"to", "half", "float", "bfloat16", "double", "type", "cuda"})


def bf16_model_move(text: str) -> tuple[int, str, bool] | None:
    """(line, model variable, fused) of the one move to the device that can carry the XLA bf16 settings of a script,
    or None (``bf16_model_plan``). ``fused``: the move is part of the binding (``model = Cls(config).to(device)``)."""
    return bf16_model_plan(text)[0]


def bf16_model_plan(text: str) -> tuple[tuple[int, str, bool] | None, str]:
    """The move that carries the XLA bf16 settings of a script and "", or None and the condition that failed (for the
    todo). The script sets ``XLA_USE_BF16`` / ``XLA_DOWNCAST_BF16`` to a literal on-value at module level and reads
    neither; ``import torch`` binds ``torch``; the model is moved once, with ``<model>.to(<device variable>)`` as a
    statement, or in its binding (``model = BertForMaskedLM(config).to(device)``); that is the only cast of
    ``<model>`` in the file, and every binding of ``<model>`` before it, in its function, builds a transformers text
    model: ``AutoModelForCausalLM.from_pretrained(...)`` / ``.from_config(...)`` with no ``dtype`` /
    ``torch_dtype``, or the class called with its config (``BertForMaskedLM(BertConfig(...))``, ``LlamaForCausalLM(config)``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None, "this file does not parse"
    if any(code in text for code in (*KEPT_XLA_CODE, TORCHXLA_MODE)):
        return None, "this file keeps XLA-era code that reads it"  # kept_xla_code
    mentions = sum(1 for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in BF16_NAMES)
    settings = [n for n in tree.body if _bf16_setting(n)]
    if not settings or mentions != len(settings):
        # read somewhere, set off, or set elsewhere than at module level: its meaning is the code's
        inside = {id(n) for setting in settings for n in ast.walk(setting)}
        other = sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in BF16_NAMES
                        and id(n) not in inside})
        return None, (f"this file also names {' and '.join(other)} outside a module-level setting to on (a read, or "
                      "a setting inside a function or branch), so what it does is the code's to decide")
    classes = {alias.asname or alias.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
               and n.module.split(".")[0] == "transformers" for alias in n.names if _TEXT_MODEL.match(alias.name)}
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    moves: list[tuple[int, str]] = []  # every `<model>.to(<device>)` statement and `<model> = <call>.to(<device>)`
    found = []
    for statement in ast.walk(tree):
        if isinstance(statement, ast.Expr) and _device_move(statement.value) \
                and isinstance(statement.value.func.value, ast.Name):  # type: ignore[attr-defined]
            model, built = statement.value.func.value.id, None  # type: ignore[attr-defined]
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and _device_move(statement.value) \
                and _model_call(statement.value.func.value):  # type: ignore[attr-defined]
            model, built = statement.targets[0].id, statement.value.func.value  # type: ignore[attr-defined]
        else:
            continue
        moves.append((statement.lineno, model))
        function: ast.AST | None = parents.get(id(statement))
        while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            function = None if isinstance(function, (ast.ClassDef, ast.Lambda)) else parents.get(id(function))
        if function is None:
            continue
        bindings = [n for n in ast.walk(function) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                    and n.lineno < statement.lineno and any(isinstance(t, ast.Name) and t.id == model for t in _targets(n))]
        loads = [built] if built is not None else [n.value for n in bindings]
        if built is not None and bindings:
            continue  # bound before its fused move: which object trains is not one load
        if loads and all(_loads_text_model(value, classes) for value in loads) and _local(function, model, tree):
            found.append((statement.lineno, model, built is not None))
    if not found:
        if not moves:
            return None, ("no statement moves a model to the device with `<model>.to(device)` (one device argument, "
                          "no dtype), where the edit would give it dtype=torch.bfloat16")
        shown = ", ".join(dict.fromkeys(f"`{model}`" for _, model in moves))
        return None, (f"the model moved to the device ({shown}) is not built, in the function that moves it, by a "
                      "transformers text model class (*ForCausalLM, *ForMaskedLM, ...: from_pretrained / from_config "
                      "without a dtype, or the class called with its config), whose weights alone need the cast")
    if len(found) != 1:
        shown = ", ".join(dict.fromkeys(f"`{model}`" for _, model, _ in found))
        return None, f"several models are moved to the device ({shown}): which one the setting was for is not known"
    line, model, fused = found[0]
    if not any(isinstance(n, ast.Import) and any(a.name == "torch" and a.asname is None for a in n.names)
               for n in tree.body):
        return None, f"this file has no module-level `import torch`, which dtype=torch.bfloat16 on `{model}` needs"
    if any(setting.lineno > line for setting in settings):
        return None, f"it is set after `{model}` is moved to the device"
    casts = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in _CASTS and isinstance(n.func.value, ast.Name) and n.func.value.id == model]
    if len(casts) != (0 if fused else 1):
        again = ", ".join(dict.fromkeys(f"`{ast.unparse(n.func)}(...)`" for n in casts if fused or n.lineno != line))
        return None, f"`{model}` is cast or moved again ({again}): the dtype it ends in is the code's to decide"
    return found[0], ""


_MODEL_NAME = re.compile(r"Model|For[A-Z]")


def _model_call(node: ast.expr) -> bool:
    """A call that looks like it builds a model (``X.from_pretrained(...)``, ``BertForMaskedLM(...)``): a tensor's
    ``torch.randn(...).to(device)`` is no model move."""
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr in _LOADERS:
        return True
    name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id if isinstance(node.func, ast.Name) else ""
    return _MODEL_NAME.search(name) is not None


def _device_move(call: ast.expr) -> bool:
    """``<x>.to(<device variable>)``: one positional name or attribute, no keywords."""
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "to"
            and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], (ast.Name, ast.Attribute)))


def _bf16_setting(node: ast.stmt) -> bool:
    """``os.environ["XLA_USE_BF16"] = "1"`` / ``os.environ.setdefault("XLA_USE_BF16", "1")``."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        target = node.targets[0]
        name, value = target.slice, node.value
        if ast.unparse(target.value) != "os.environ":
            return False
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and len(node.value.args) == 2 \
            and ast.unparse(node.value.func) == "os.environ.setdefault":
        name, value = node.value.args
    else:
        return False
    return (isinstance(name, ast.Constant) and name.value in BF16_NAMES and isinstance(value, ast.Constant)
            and value.value in _ON)


def _targets(node: ast.stmt) -> list[ast.AST]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
    return [leaf for target in targets for leaf in ast.walk(target)]


def _loads_text_model(value: ast.expr | None, classes: set[str]) -> bool:
    """A transformers text model built with no dtype of its own: ``Cls.from_pretrained(...)`` /
    ``Cls.from_config(...)``, or the model class called with its config alone (``BertForMaskedLM(config)``,
    ``LlamaForCausalLM(config=cfg)``: float32 weights, as from_config's)."""
    if not isinstance(value, ast.Call) or any(k.arg in ("dtype", "torch_dtype") for k in value.keywords):
        return False
    if isinstance(value.func, ast.Attribute):
        return value.func.attr in _LOADERS and isinstance(value.func.value, ast.Name) and value.func.value.id in classes
    given = [*value.args, *value.keywords]
    return (isinstance(value.func, ast.Name) and value.func.id in classes and len(given) == 1
            and not isinstance(value.args[0] if value.args else None, ast.Starred)
            and all(k.arg == "config" for k in value.keywords))


def _local(function: ast.AST, model: str, tree: ast.Module) -> bool:
    """The model variable is bound in this function only: not global or nonlocal anywhere, not bound in another
    function of the file or in one nested in this one."""
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and model in n.names for n in ast.walk(tree)):
        return False
    inside = {id(n) for n in ast.walk(function)}
    nested = {id(n) for scope in ast.walk(function) if scope is not function
              and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
              for n in ast.walk(scope)}
    return all(id(n) in inside and id(n) not in nested for n in ast.walk(tree)
               if isinstance(n, ast.Name) and n.id == model and isinstance(n.ctx, ast.Store))


def _collect_bf16_model(text: str) -> bool | None:
    return True if bf16_model_move(text) is not None else None


#: the scripts whose model carries the XLA bf16 settings once NM316 has run (``bf16_model_move``): NM403 removes the
#: variables their launchers export for them
BF16_MODEL_SCRIPTS = ProjectFact("xla.bf16-model-scripts", frozenset({FileKind.PYTHON}), BF16_NAMES, _collect_bf16_model)


def kept_xla_code(ctx) -> tuple[str, ...]:
    """The XLA-era constructs (``KEPT_XLA_CODE``, NKI kernels in ``mode="torchxla"``) the file keeps, over every code
    cell of a notebook (they share one kernel: a variable set in one cell reaches a trace in another)."""
    if ctx.namespace is None:
        return ctx.memo("nm316-kept-xla-code", lambda: tuple(sorted(_kept_in(ctx, ctx.shared.get("module")))))
    memo = vars(ctx.namespace)
    if _KEPT_MEMO not in memo:
        trees = python_chunks(ctx.namespace.trigger_text)
        imports = ImportMap()
        for tree in trees:
            imports = imports.merged_with(ImportMap.from_module(tree))
        found: set[str] = set()
        for tree in trees:
            found |= _kept_in(PythonContext(path=ctx.path, source=tree.code, options=ctx.options, imports=imports), tree)
        memo[_KEPT_MEMO] = tuple(sorted(found))
    return memo[_KEPT_MEMO]


def _kept_in(ctx, module: cst.Module | None) -> set[str]:
    found: set[str] = set()

    def note(node: cst.BaseExpression) -> None:
        for qualified in ctx.qualnames(node):
            found.update(prefix for prefix in KEPT_XLA_CODE if qualified == prefix or qualified.startswith(prefix + "."))

    class _Kept(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            note(node.func)
            call = node.func if isinstance(node.func, cst.Call) else node  # nki.jit(mode=...)(kernel)
            mode = arg(call, 1, "mode") if ctx.matches(call.func, NKI_JIT) else None
            if mode is not None and string_value(mode.value) == TORCHXLA_MODE:
                found.add(f'NKI kernels in mode="{TORCHXLA_MODE}"')

        def visit_Decorator(self, node: cst.Decorator) -> None:
            note(node.decorator)  # @torch_neuronx.nki_jit

    if module is not None:
        cstwalk.visit(module, _Kept())
    return found


def _literal(value: cst.BaseExpression) -> str | None:
    """The value of a plain string literal, implicit concatenations of them included; else None."""
    if isinstance(value, cst.ConcatenatedString):
        left, right = _literal(value.left), _literal(value.right)
        return left + right if left is not None and right is not None else None
    return string_value(value)


class XlaEnvVars(XlaRule):
    """os.environ[...] = ... for XLA/Neuron variables: remove / review / rename per the shared table."""

    id = "NM316"
    name = "xla-env-vars"
    safety = Safety.NEEDS_REVIEW
    #: every variable the table acts on (CUSTOM_CACHE_REPO, MALLOC_ARENA_MAX ...): a file naming only one of those
    #: was skipped by a first run, then woken by the text of another rule's note in a second one
    triggers = tuple(sorted({"XLA_", "NEURON_", "PJRT_DEVICE", "NEURONX_"}
                            | {name for name, action in {**ENV_VARS, **ENV_PREFIXES}.items() if action.action != "keep"}))
    facts = FACTS  # the import graph: a module whose importers all stay on torch_xla keeps its XLA settings

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        path = str(ctx.path).replace("\\", "/")
        script = bool(_MAIN.search(ctx.source))
        project = ctx.options.project
        self._importers = () if ctx.namespace is not None or script else kept_with_importers(project, path)
        # a pure launcher of scripts left on torch_xla: what it exports reaches those scripts only
        self._launched = () if ctx.namespace is not None or self._importers else launched_kept_scripts(
            project, path, ctx.source)
        self._kept_noted = False
        #: the one ``model.to(device)`` that carries the XLA bf16 settings (``bf16_model_move``), and the settings
        #: this pass removed for it
        plain = ctx.namespace is None and not self._importers and not self._launched
        self._bf16_move: tuple[int, str, bool] | None = None
        #: why no move carries them (the todo names the condition that failed)
        self._bf16_why = ("in a notebook the model is not followed across its cells, so no move to the device is given "
                          "dtype=torch.bfloat16")
        if plain and any(n in ctx.source for n in BF16_NAMES):
            self._bf16_move, self._bf16_why = bf16_model_plan(ctx.source)
        self._bf16_removed: list[str] = []

    def _noted_by_nm318(self) -> bool:
        """A module kept with its importers that imports torch_xla (or libneuronxla / neuronx_distributed) itself gets
        NM318's one note there (``kept_importers``); this rule then adds none."""
        rules = self.ctx.options.rules
        return (rules is None or "NM318" in rules) and _OWN_XLA_IMPORT.search(self.code_text()) is not None

    def _kept_with_importers(self, node: cst.CSTNode) -> bool:
        """In a module kept on torch_xla with its importers: its one note, at its first XLA setting or read; then
        nothing (no edit, no other note: following porting advice there would change the XLA run)."""
        if not self._importers and not self._launched:
            return False
        if not self._kept_noted:
            self._kept_noted = True
            if self._importers and self._noted_by_nm318():
                return True  # its one note is NM318's, above the first torch_xla import
            project = self.ctx.options.project
            self.todo(node, kept_message(project, self._importers) if self._importers
                      else launcher_message(project, self._launched))
        return True

    def _target(self, stmt: cst.BaseSmallStatement):
        """(variable name, name node, value node) of an env assignment statement, else None."""
        if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0].target
            if isinstance(target, cst.Subscript) and self.ctx.matches(target.value, ENVIRON) and len(target.slice) == 1:
                index = target.slice[0].slice
                if isinstance(index, cst.Index):
                    name = string_value(index.value)
                    if name is not None:
                        return name, index.value, stmt.value
        if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and self.ctx.matches(stmt.value.func, SETTERS):
            args = stmt.value.args
            if len(args) == 2 and string_value(args[0].value) is not None:
                return string_value(args[0].value), args[0].value, args[1].value
        return None

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if len(original.body) != 1 or len(updated.body) != 1:
            return updated
        found = self._target(original.body[0])
        if found is None:
            self._update_notes(original)
            return updated
        name, name_node, value = found
        action = lookup(name)
        if action is None or action.action == "keep":
            return updated
        if self._kept_with_importers(original):
            return updated
        message = message_for(name, action)
        if action.action == "review":
            literal = _literal(value) if name == "NEURON_CC_FLAGS" else None
            if literal is not None:  # the whole value is here: the launchers' note (NM405), the flags to drop or check
                if not cc_flag_actions(literal) and kept_xla_code(self.ctx):
                    return updated  # only options neuronx-cc still takes, read by XLA-era code that stays: as before
                message = cc_flags_message(literal)
        kept_code = kept_xla_code(self.ctx)
        if kept_code and name not in OPTIMUM_ONLY and not name.startswith("OPTIMUM_NEURON_"):
            # the XLA-era code left beside it still runs on the torch_xla stack and reads it: removing, renaming or
            # editing it would change that code (a trace compiled in fp32 instead of bf16)
            kept = _REMOVED.sub(lambda m: ":" if m.group(0).startswith(";") else "", message)
            where = "notebook" if self.ctx.namespace is not None else "file"
            self.todo(original, f"{name} was left as it is: this {where} keeps {', '.join(kept_code)} (XLA-era code, "
                      f"left untouched), where it keeps its torch_xla meaning; once that code runs on TorchNeuron: {kept}")
            return updated
        if action.action == "remove":
            driver = self._driver(value)
            if driver is not None:  # the assignment implements an option of the script: removing it would drop the option silently
                kept = _REMOVED.sub(lambda m: ":" if m.group(0).startswith(";") else "", message)
                self.todo(original, f"{kept}; left as it is because it implements an option of this script (set from "
                          f"`{driver}`): remove that option together with it, or give the option a TorchNeuron meaning")
                return updated
            if name in BF16_NAMES and _literal(value) in _ON:
                # one policy with the launchers (NM403): removed only where the model carries the precision in the
                # same edit, else kept in both places with the same todo
                if self._bf16_move is not None:
                    self._bf16_removed.append(name)
                    self.fixed(original, BF16_REMOVED.format(name=name, model=self._bf16_move[1]))
                    return cst.RemoveFromParent()
                self.todo(original, BF16_KEPT_TODO.format(
                    name=name, why=BF16_NOT_CARRIED.format(reason=self._bf16_why, name=name)))
                return updated
            (self.todo if action.todo else self.fixed)(original, message)
            return cst.RemoveFromParent()
        if action.action == "review":
            self.todo(original, message)
            return updated
        if action.action == "replace" and action.replacement:
            (self.todo if action.todo else self.fixed)(original, message)
            quote = name_node.quote if isinstance(name_node, cst.SimpleString) else '"'
            new_name = cst.SimpleString(f"{name_node.prefix}{quote}{action.replacement}{quote}")
            old_name = self._find(updated, name)
            return updated.deep_replace(old_name, new_name) if old_name else updated
        return updated

    def _update_notes(self, original: cst.SimpleStatementLine) -> None:
        """``os.environ.update({"NEURON_CC_FLAGS": "...", ...})`` / ``os.environ.update(NAME=...)``: each variable the
        table acts on gets its note, the value left as it is (the statement sets the others too)."""
        statement = original.body[0]
        how = "set with os.environ.update beside other variables"
        pairs: list[tuple[str, cst.BaseExpression]] = []
        if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call) \
                and self.ctx.matches(statement.value.func, UPDATERS):
            for argument in statement.value.args:
                if argument.keyword is not None:
                    pairs.append((argument.keyword.value, argument.value))
                elif isinstance(argument.value, cst.Dict) and not argument.star:
                    pairs.extend((key, element.value) for element in argument.value.elements
                                 if isinstance(element, cst.DictElement)
                                 and (key := string_value(element.key)) is not None)
        else:
            # a child process's environment built from this one (``dict(os.environ, PJRT_DEVICE="NEURON")``,
            # ``{**os.environ, "XLA_USE_BF16": "1"}``) or given whole (``env={...}`` of a subprocess call): the
            # variables reach the script it runs, which this statement does not show; each gets its note (rtE)
            pairs = self._child_env_pairs(statement)
            how = "in the environment this statement gives a child process"
        notes = []
        for name, value in pairs:
            action = lookup(name)
            if action is None or action.action == "keep":
                continue
            literal = _literal(value) if name == "NEURON_CC_FLAGS" else None
            message = cc_flags_message(literal) if literal is not None else message_for(name, action)
            if action.action != "review":  # the value stays: the step to take, not an edit made
                message = f"{name} was left as it is ({how}): " + \
                    _REMOVED.sub(lambda m: ":" if m.group(0).startswith(";") else "", message) + \
                    ("" if action.action == "remove" else f" (rename it to {action.replacement})"
                     if action.replacement else "")
            notes.append(message)
        if notes and not self._kept_with_importers(original):
            kept = kept_xla_code(self.ctx)
            where = "notebook" if self.ctx.namespace is not None else "file"
            self.todo(original, (f"this {where} keeps {', '.join(kept)} (XLA-era code, left untouched), which reads "
                                 "these settings as torch_xla does; once that code runs on TorchNeuron: " if kept else "")
                      + "; ".join(notes))

    def _child_env_pairs(self, statement: cst.BaseSmallStatement) -> list[tuple[str, cst.BaseExpression]]:
        """(variable, value) of each literal key of the environments the statement builds for a child process."""
        # (the names of the table are environment variables wherever they key a mapping: a dict built for
        # ``env=``, from ``os.environ`` or from another such dict, ``{**BASE_ENV, "XLA_USE_BF16": "1"}``)
        # (an ``env=`` / ``environment=`` dict of a call gets NM411's notes where that rule runs on the file)
        from codemods.launch.nm411_deployment_glue_python import NeuronDeploymentGluePython as Glue

        selected = self.ctx.options.rules
        glue = (selected is None or Glue.id in selected) and any(
            trigger in self.ctx.source for trigger in Glue.triggers)
        pairs: list[tuple[str, cst.BaseExpression]] = []
        skipped: set[int] = set()

        class _Envs(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                if isinstance(node.func, cst.Name) and node.func.value == "dict":
                    pairs.extend((argument.keyword.value, argument.value) for argument in node.args
                                 if argument.keyword is not None)
                if glue:
                    skipped.update(id(argument.value) for argument in node.args if argument.keyword is not None
                                   and argument.keyword.value in ("env", "environment"))

            def visit_Dict(self, node: cst.Dict) -> None:
                if id(node) in skipped:
                    return
                pairs.extend((key, element.value) for element in node.elements
                             if isinstance(element, cst.DictElement) and (key := string_value(element.key)) is not None)

        statement.visit(_Envs())
        first: dict[str, cst.BaseExpression] = {}
        for name, value in pairs:
            first.setdefault(name, value)
        return list(first.items())

    def _driver(self, value: cst.BaseExpression) -> str | None:
        """What an env assignment depends on when the file does not fix it: a variable its value reads
        (``f"--xla_dump_to={args.dump_dir}"``) or that the nearest enclosing ``if`` tests
        (``if flags.snapshot_step_list:``). Environment reads, ``__name__`` and builtins do not count."""
        found = self._inputs(value)
        if not found:
            for statement in reversed(self.ctx.statement_stack[:-1]):
                if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                    break
                if isinstance(statement, cst.If):
                    found = self._inputs(statement.test)
                    break
        return ", ".join(dict.fromkeys(found)) if found else None

    def _inputs(self, node: cst.CSTNode) -> list[str]:
        """The variables (``args.x``, ``dump_dir``) an expression reads, in order."""
        found: list[str] = []
        rule = self

        class _Reads(cst.CSTVisitor):
            def visit_Attribute(self, n: cst.Attribute) -> bool:
                root = n.value
                while isinstance(root, cst.Attribute):
                    root = root.value
                if isinstance(root, cst.Name):
                    if not rule._ignored(root):
                        found.append(source_of(n))
                    return False
                return True

            def visit_Name(self, n: cst.Name) -> None:
                if not rule._ignored(n):
                    found.append(n.value)

        cstwalk.visit(node, _Reads())
        return found

    def _ignored(self, name: cst.Name) -> bool:
        return name.value in _NOT_INPUT or any(q == "os" or q.startswith("os.") for q in self.ctx.qualnames(name))

    @staticmethod
    def _find(node: cst.CSTNode, name: str) -> cst.SimpleString | None:
        found: list[cst.SimpleString] = []

        class _V(cst.CSTVisitor):
            def visit_SimpleString(self, n: cst.SimpleString) -> None:
                if string_value(n) == name and not found:
                    found.append(n)

        cstwalk.visit(node, _V())
        return found[0] if found else None

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """``model.to(device)`` -> ``model.to(device, dtype=torch.bfloat16)`` (``model = Cls(config).to(device)`` ->
        ``model = Cls(config).to(device, dtype=torch.bfloat16)``) where this pass removed the XLA bf16 settings for it."""
        move, func = self._bf16_move, original.func
        if move is None or not self._bf16_removed or not isinstance(func, cst.Attribute) or func.attr.value != "to" \
                or len(updated.args) != 1 or updated.args[0].keyword is not None:
            return updated
        if move[2]:  # fused: `model = Cls(config).to(device)`, the value of the model's one binding
            statement = self.ctx.statement_stack[-1] if self.ctx.statement_stack else None
            assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
            if not (isinstance(assign, cst.Assign) and assign.value is original and len(assign.targets) == 1
                    and isinstance(assign.targets[0].target, cst.Name) and assign.targets[0].target.value == move[1]
                    and isinstance(func.value, cst.Call)):
                return updated
        elif not isinstance(func.value, cst.Name) or func.value.value != move[1]:
            return updated
        self._bf16_move = None  # the one call
        names = sorted(set(self._bf16_removed))
        self.fixed(original, BF16_MOVED.format(names=" and ".join(names), them="them" if len(names) > 1 else "it"))
        first = updated.args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        dtype = cst.Arg(value=cst.parse_expression("torch.bfloat16"), keyword=cst.Name("dtype"),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace("")))
        return updated.with_changes(args=[first, dtype])

    def visit_Call(self, node: cst.Call) -> None:
        # reads: os.environ.get("XLA_USE_BF16") / os.getenv(...)
        if not self.ctx.matches(node.func, GETTERS) or not node.args:
            return
        name = string_value(node.args[0].value)
        action = lookup(name) if name else None
        if name and action is not None and action.action == "remove":
            if self._kept_with_importers(node):
                return
            hint = "; choose the dtype explicitly (torch.bfloat16)" if "BF16" in name else ""
            self.todo(node, f"{name} belonged to the XLA stack and TorchNeuron ignores it; it is still set only where a "
                      f"launcher exports it (the launch rules keep such an export while code reads it): decide here "
                      f"explicitly{hint}, then remove this read and the export")

    def visit_Subscript(self, node: cst.Subscript) -> None:
        # reads: os.environ["XLA_USE_BF16"] in an expression (assignments are handled above)
        if not self.ctx.matches(node.value, ENVIRON) or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        stmt = self.ctx.statement_stack[-1] if self.ctx.statement_stack else None
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign) and any(t.target is node for t in stmt.body[0].targets):
            return
        name = string_value(node.slice[0].slice.value)
        action = lookup(name) if name else None
        if action is not None and action.action == "remove":
            if self._kept_with_importers(node):
                return
            self.todo(node, f"{name} is no longer set on TorchNeuron (reading it raises KeyError): simplify this code")

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # "XLA_USE_BF16" in os.environ: only the note of a module kept with its importers (NM902 reports such reads)
        if not (self._importers or self._launched) or self._kept_noted or len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        name = string_value(node.left)
        action = lookup(name) if name else None
        if (isinstance(target.operator, (cst.In, cst.NotIn)) and self.ctx.matches(target.comparator, ENVIRON)
                and action is not None and action.action == "remove"):
            self._kept_with_importers(node)
