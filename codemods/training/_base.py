"""The training family's base (NM2xx), also used by the stock-drift rules NM601 and NM602: the field-map
application shared by the Neuron and stock argument rules, the scope-tracking mixin, the file's parsed-arguments
plan, the DistributedConfig mesh builders, ``tokenizer=`` -> ``processing_class=``, and the static-shape preamble.
Keyword-argument surgery that keeps a call's formatting is in ``codemods/_lib/cst.py``."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from codemods._lib.cst import find_keyword, keyword_arg, literal_value, rename_keyword, set_args, source_of
from codemods._lib.optimum_version import Line, data_parallel_key, optimum_line, zero_1_note
from codemods._lib.settings import place as place_settings
from codemods._tables.training_args import TRAINING_ARGS, FieldAction, FieldMapping
from migrate.snippets import parse_expression


@dataclass
class FieldResult:
    """What applying the field map to one call did."""

    args: list[cst.Arg]
    fixed: list[tuple[cst.CSTNode, str]] = field(default_factory=list)
    todo: list[tuple[cst.CSTNode, str]] = field(default_factory=list)
    distributed: dict[str, cst.BaseExpression] = field(default_factory=dict)  # DistributedConfig key -> value
    moved: dict[str, cst.Arg] = field(default_factory=dict)  # source field -> its (removed) argument


OWNERS = {  # stock target class -> table owners whose decisions apply to it
    "TrainingArguments": {"TrainingArguments"},
    "Seq2SeqTrainingArguments": {"TrainingArguments", "Seq2SeqTrainingArguments"},
    "SFTConfig": {"TrainingArguments", "SFTConfig"},
    "ORPOConfig": {"TrainingArguments", "ORPOConfig"},
}


def reported_keyword(original: cst.Call, name: str) -> cst.Arg:
    """The keyword ``name`` of the call as parsed (findings are reported on it, for its position), where the caller
    found it in the updated call: a leave_Call renames no keyword of its own call before this, so it is there."""
    return cast(cst.Arg, find_keyword(original, name))


def apply_field_map(call: cst.Call, original: cst.Call, target: str, only: set[str] | None = None) -> FieldResult:
    """Apply ``TRAINING_ARGS`` to the keyword arguments of ``call`` (built from) / ``original`` (reported on).

    ``target`` is the stock class name the call now builds (rows owned by another class are left alone:
    ORPO's old ``truncation_mode`` is not SFTConfig's); ``only`` restricts the decisions to those source names
    (the drift rule passes the removed fields)."""
    result = FieldResult(args=[])
    present = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    for arg, original_arg in zip(call.args, original.args):
        name = arg.keyword.value if arg.keyword is not None else None
        mapping: FieldMapping | None = TRAINING_ARGS.get(name) if name else None
        if (mapping is None or name is None or mapping.action is FieldAction.KEEP or (only is not None and name not in only)
                or mapping.owner not in OWNERS[target]):
            result.args.append(arg)
            continue
        value = literal_value(arg.value)
        if mapping.action is FieldAction.RENAME and mapping.target:
            if mapping.target in present:
                result.todo.append((original_arg, f"both {name} and {mapping.target} given: {mapping.message}; "
                                                  f"{name} removed, check {mapping.target}"))
                continue
            if mapping.value is not None:
                if value is True:
                    result.args.append(keyword_arg(mapping.target, mapping.value).with_changes(comma=arg.comma))
                    result.fixed.append((original_arg, mapping.message))
                elif value is False:
                    result.fixed.append((original_arg, f"{name}=False is the default: removed"))
                else:
                    result.args.append(arg)
                    result.todo.append((original_arg,
                                        f"{mapping.message}; {name} is not a literal, rewrite it by hand"))
                continue
            result.args.append(rename_keyword(arg, mapping.target))
            result.fixed.append((original_arg, mapping.message))
        elif mapping.action is FieldAction.DISTRIBUTED_CONFIG and mapping.target:
            result.distributed[mapping.target] = arg.value
            result.moved[name] = arg
        elif mapping.action is FieldAction.MODEL_INIT_KWARGS and mapping.target:
            result.moved[name] = arg
        elif mapping.action is FieldAction.DROP:
            result.fixed.append((original_arg, f"{name}: {mapping.message}"))
        elif name in ("pipeline_parallel_size", "pipeline_parallel_num_microbatches") and value in (1, -1):
            result.fixed.append((original_arg,
                                 f"{name}={value}: the optimum default (no pipeline parallelism), removed"))
        else:  # TODO: the stock class rejects the field, so it goes; the note keeps its value
            shown = source_of(arg.value)
            result.todo.append((original_arg, f"{name}={shown}: {mapping.message}"))
            result.moved[name] = arg
    return result


#: the environment variable transformers 5's TensorBoardCallback reads for its directory once logging_dir left
#: TrainingArguments (integrations/integration_utils.py:602 in 5.24, ``os.getenv("TENSORBOARD_LOGGING_DIR")`` in
#: ``__init__``, i.e. when the Trainer is built; unset, it writes to output_dir/runs/<date>, 4.x's default too)
TENSORBOARD_ENV = "TENSORBOARD_LOGGING_DIR"
#: calls that build a path string and nothing else: a value made of them is evaluated just as well one statement
#: earlier
_PATH_CALLS = frozenset({"os.path.join", "os.path.expanduser", "os.path.abspath", "posixpath.join", "str"})


def logging_dir_env(value: cst.BaseExpression) -> str | None:
    """The statement that gives transformers 5 what ``logging_dir=value`` gave 4.x (rt8P-10), to go just before
    the statement that builds the arguments: ``os.environ["TENSORBOARD_LOGGING_DIR"] = value`` for a string
    expression (literal, f-string, ``os.path.join(...)``, ``+`` of them), the same under ``if value is not None``
    (through ``os.fspath``, for a Path) for a name or attribute / subscript chain, which may hold None (4.x's
    default directory then: the variable is removed, ``else: os.environ.pop(...)``). An assignment, not
    setdefault: 4.x's explicit logging_dir ignored the environment. The variable outlives the call: the rule
    rewrites only the one arguments call of a file (``single_arguments_call``).
    None for anything else (a call, a conditional ...): not known to read the same one statement earlier."""

    def plain(node: cst.BaseExpression) -> bool:
        if isinstance(node, (cst.SimpleString, cst.Integer)):
            return True
        if isinstance(node, cst.ConcatenatedString):
            return plain(node.left) and plain(node.right)
        if isinstance(node, cst.FormattedString):
            return all(plain(part.expression) for part in node.parts if isinstance(part, cst.FormattedStringExpression))
        if isinstance(node, cst.BinaryOperation):
            return isinstance(node.operator, (cst.Add, cst.Modulo)) and plain(node.left) and plain(node.right)
        if isinstance(node, cst.Call):
            return source_of(node.func) in _PATH_CALLS and all(a.keyword is None and not a.star and plain(a.value)
                                                              for a in node.args)
        return chain(node)

    def chain(node: cst.BaseExpression) -> bool:
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            if isinstance(node, cst.Subscript) and not all(
                    isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.Integer))
                    for e in node.slice):
                return False
            node = node.value
        return isinstance(node, cst.Name) and node.value not in ("None", "True", "False")

    shown = source_of(value)
    if chain(value):  # None: 4.x's default directory, whatever an earlier run of the statement set
        return (f'if {shown} is not None:\n    os.environ["{TENSORBOARD_ENV}"] = os.fspath({shown})\n'
                f'else:\n    os.environ.pop("{TENSORBOARD_ENV}", None)\n')
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.BinaryOperation,
                          cst.Call)) and plain(value):
        return f'os.environ["{TENSORBOARD_ENV}"] = {shown}\n'
    return None


def single_arguments_call(source: str) -> bool:
    """The file builds training arguments in one call only (a Neuron or stock arguments / config class): a
    TENSORBOARD_LOGGING_DIR set for it cannot reach another one's Trainer, whose TensorBoard 4.x put in that
    one's own directory."""
    from codemods._tables.training_symbols import ARGS_CLASSES, NEURON_ARGS_CLASSES

    names = {name.rsplit(".", 1)[1] for name in (*ARGS_CLASSES, *NEURON_ARGS_CLASSES)}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and (node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")) in names]
    return len(calls) == 1


def on_direct_path(statement: cst.SimpleStatementLine, call: cst.Call) -> bool:
    """``call`` is evaluated each time ``statement`` runs, before anything the statement binds: the statement's
    one small statement (an assignment, an expression, a return) has it as its value, or as an argument (at any
    depth) of calls that are; not under a conditional, a lambda, a comprehension or a walrus."""
    if len(statement.body) != 1:
        return False
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign, cst.Expr, cst.Return)) else None

    def reaches(node: cst.BaseExpression | None) -> bool:
        if node is call:
            return True
        return isinstance(node, cst.Call) and any(reaches(a.value) for a in node.args)

    return reaches(value)


# ------------------------------------------------------------------------------------ shared rewrites


class TracksScope:
    """Mixin for rules: ``self.scope_path`` is the enclosing def/class names joined by dots ("" at module level),
    the same keys ``codemods._lib.parsed_args`` gives variables. A rule that defines these callbacks itself
    calls the mixin's. ``leave_Module`` adds the function the mesh builders call (``insert_data_parallel_size``)."""

    @property
    def scopes(self) -> list[str]:
        return self.__dict__.setdefault("_scopes", [])

    @property
    def scope_path(self) -> str:  # not ``scope``: that is the rule's project scope
        return ".".join(self.scopes)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node.name.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.scopes.pop()
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.scopes.pop()
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        # the mesh builders call _data_parallel_size: its function, once per file (a rule with its own leave_Module
        # calls insert_data_parallel_size itself)
        return insert_data_parallel_size(updated, self.ctx)  # type: ignore[attr-defined]


def moved_value(holder, attr: str, key: str) -> cst.BaseExpression | None:
    """What a read of ``<holder>.tensor_parallel_size`` / ``.trn_config`` becomes: the script dataclass's field
    (NM208 moved it there) or the literal degree the arguments were built with; None when neither exists.
    ``key``: where the data-parallel rest of the mesh goes (``mesh_key``)."""
    from codemods._lib.parsed_args import MOVED_FIELD

    if holder is None:
        return None
    degree: cst.BaseExpression
    if holder.script_var is not None:
        degree = cst.Attribute(value=cst.Name(holder.script_var), attr=cst.Name(MOVED_FIELD))
    elif holder.degree is not None:
        degree = cst.Integer(str(holder.degree))
    else:
        return None
    if attr == MOVED_FIELD:
        return degree
    built = distributed_config_for(degree, key)  # a degree of 1 builds no mesh: from_pretrained's default, None
    return parse_expression(built) if built is not None else cst.Name("None")


def follow_moved_field(plan, scope: str, expression: cst.BaseExpression, key: str) -> cst.BaseExpression | None:
    """``expression`` with each read of the Neuron arguments' tensor_parallel_size / trn_config replaced by the
    script dataclass's field (NM208 moves it there); None when a read stays (nothing may be built on it). Reads of
    the script's own argparse options are kept as they are."""
    from codemods._lib.parsed_args import MOVED_FIELD, TRN_CONFIG

    blocked = False

    class Follow(cst.CSTTransformer):
        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
            nonlocal blocked
            if original.attr.value not in (MOVED_FIELD, TRN_CONFIG):
                return updated
            name = original.value.value if isinstance(original.value, cst.Name) else None
            holder = plan.args_var(scope, name) if name else None
            if name is not None and holder is None and (scope, name) in plan.argparse_vars:
                return updated
            followed = moved_value(holder, original.attr.value, key)
            if followed is None:
                blocked = True
                return updated
            return followed

    # an expression visited by a transformer that only swaps attributes for expressions stays an expression
    followed = cast(cst.BaseExpression, expression.visit(Follow()))
    return None if blocked else followed


#: ``ctx.shared`` key: the degree reads of the ``lazy_load_for_parallelism`` blocks NM205 removes because every degree
#: the project gives the script is 1 (NM208 gives them no todo: the read goes with the block)
DROPPED_DEGREES = "NM205-dropped-degree-reads"
#: ``ctx.shared`` key NM208 sets when it runs on the file: it carries a built tensor_parallel_size to the model load
CARRIES_DEGREE = "NM208-carries-degree"


def args_plan(ctx):
    """The file's parsed-arguments plan (see codemods/_lib/parsed_args.py), computed once for all rules; the
    project's own subclasses of the stock arguments classes count as those classes."""
    from codemods._lib.parsed_args import ARGS_FACTORIES, ArgsPlan, analyse, factories_of

    subclasses = project_args_subclasses(ctx)
    targets = {name: base for name, (base, _) in subclasses.items()}
    declared = frozenset(name for _, fields in subclasses.values() for name in fields)
    # the project's functions that return arguments (``args = sft_args(cfg)``): reads on their result are followed
    factories = factories_of(ctx.options.project.of(ARGS_FACTORIES.name))
    return ctx.memo("parsed-args-plan", lambda: analyse(ctx.source, targets, declared, factories=factories) or ArgsPlan())


def project_args_subclasses(ctx) -> dict:
    """Qualified name -> (stock class, fields it declares) of the project's TrainingArguments subclasses."""
    from codemods._lib.parsed_args import STOCK_SUBCLASSES, stock_subclasses_of

    return ctx.memo("stock-args-subclasses",
                    lambda: stock_subclasses_of(ctx.options.project.of(STOCK_SUBCLASSES.name)))


WORLD_SIZE = 'int(os.environ.get("WORLD_SIZE", "1"))'


def mesh_key(ctx) -> str:
    """The DistributedConfig key for the data-parallel rest of the mesh in this file: the zero_1 the script and its
    launchers show (``codemods/_lib/zero_1.py``: True -> ``fsdp_size``, the closest to ZeRO-1; False ->
    ``dp_replicate_size``); where none is visible or they disagree, the project's optimum-neuron line decides
    (``fsdp_size`` on 0.4.x, zero_1 on by default; ``dp_replicate_size`` otherwise,
    codemods/_lib/optimum_version.py)."""
    zero_1 = file_zero_1(ctx)
    if zero_1.value is not None:
        return "fsdp_size" if zero_1.value else "dp_replicate_size"
    return data_parallel_key(project_line(ctx))


def file_zero_1(ctx):
    """The zero_1 the file's script ran with, where the file or the project's launchers show it, or the Hydra
    config group its training arguments are built from (``hydra_zero_1``)."""
    from codemods._lib.zero_1 import zero_1_of

    def find():
        found = zero_1_of(ctx.source, ctx.path, ctx.options.project)
        return found if found.visible else hydra_zero_1(ctx) or found

    return ctx.memo("zero-1-value", find)


def hydra_zero_1(ctx):
    """zero_1 of a script whose Neuron training arguments are built from a Hydra config group
    (``@hydra.main(config_path="../conf")`` and ``NeuronTrainingArguments(**OmegaConf.to_container(cfg.trainer))``):
    the ``zero_1:`` keys of that group's option files (``conf/trainer/*.yaml``, project fact ZERO_1_CONFIGS). The
    version default says nothing of such a run (rt4E 5: ``zero_1: true`` in the config, ``dp_replicate_size``
    advised). None when the file is not such a script or no option file of the group sets zero_1; options that
    disagree give a Zero1 without a value (the mesh doubt todo)."""
    from posixpath import join, normpath

    from codemods._lib.launch_targets import hydra_argument_groups
    from codemods._lib.zero_1 import ZERO_1_CONFIGS, Zero1, truth

    # the same reading of the script as the launch rules' (NM408 links a group's YAML files to it)
    groups = hydra_argument_groups(ctx.source) or frozenset()
    if len(groups) != 1:
        return None
    [(config_path, group)] = groups
    folder = normpath(join(ctx.path.parent.as_posix(), config_path, group))
    configs = ctx.options.project.of(ZERO_1_CONFIGS.name) or {}
    found = [(given, f"zero_1: {given} in {path}, an option of the Hydra config group the script's "
                     "@hydra.main composes into its training arguments")
             for path, fields in sorted(configs.items())
             if path.rsplit("/", 1)[0] == folder and path.endswith((".yaml", ".yml"))
             for given in fields.get("zero_1", ())]
    if not found:
        return None
    seen = {truth(given) for given, _ in found}
    value = seen.pop() if len(seen) == 1 else None
    return Zero1(value, tuple(where for _, where in found), tuple(given for given, _ in found))


def mesh_note(ctx) -> str:
    """Why the data-parallel rest of the mesh went where ``mesh_key`` put it, for the rules' messages."""
    zero_1 = file_zero_1(ctx)
    where = "; ".join(zero_1.sources)
    if zero_1.value is True:
        return (f"zero_1 is True for this script ({where}): ZeRO-1 sharded the optimizer state across the "
                "data-parallel ranks, so the data-parallel rest of the mesh goes to fsdp_size, the closest stock "
                "layout (FSDP2 also shards parameters and gradients, more than ZeRO-1 did)")
    if zero_1.value is False:
        return (f"zero_1 is False for this script ({where}): the data-parallel rest of the mesh stays plain "
                "replication (dp_replicate_size)")
    if zero_1.visible:
        return (f"zero_1 is not certain for this script ({where}): {mesh_key(ctx)} was chosen as for no value, "
                "see the todo")
    return zero_1_note(project_line(ctx))


def mesh_doubt(ctx) -> str | None:
    """A todo for a mesh built where the script's zero_1 is visible but not one literal value (launchers disagree,
    or pass a value known only at run time): the chosen key follows the version default and may be wrong."""
    from codemods._lib.zero_1 import truth

    zero_1 = file_zero_1(ctx)
    if zero_1.value is not None or not zero_1.visible:
        return None
    mixed = all(truth(value) is not None for value in zero_1.values)
    how = "differs between the runs of this script" if mixed else "is not a literal for this script"
    return (f"zero_1 {how} ({'; '.join(zero_1.sources)}): the data-parallel rest of the mesh uses {mesh_key(ctx)}, "
            "as for a run that does not set it on the project's optimum-neuron line; a run with zero_1 True (ZeRO-1 "
            "sharded optimizer state) needs fsdp_size, the closest stock layout (FSDP2 also shards parameters and "
            "gradients), one with zero_1 False dp_replicate_size")


def note_mesh_doubt(rule, node: cst.CSTNode) -> None:
    """The ``mesh_doubt`` todo, on ``node``, for a rule that just built a mesh."""
    doubt = mesh_doubt(rule.ctx)
    if doubt is not None:
        rule.todo(node, doubt)


#: what Trainer needs of the arguments for a model sharded at load time (transformers 5 trainer.py raises "Resuming
#: is not supported for models sharded at load time (DistributedConfig)" otherwise)
CHECKPOINT_NEED = ("Trainer raises unless the parsed arguments set save_only_model=True or save_strategy=\"no\": "
                   "pass --save_only_model true (or the config key save_only_model: true) where the run is launched; "
                   "checkpoints then hold no optimizer/scheduler state")


def trainer_arguments(ctx) -> str | None:
    """Where the training arguments of this file's trainers come from: "built" when a trainer is given arguments
    built in the file (``args = TrainingArguments(...)`` or inline; NM202 edits those), "parsed" when the file
    parses training arguments (``HfArgumentParser`` / ``TrlParser``) and no trainer gets built ones, None when the
    file shows neither (no training arguments in view: nothing to ask for)."""
    from codemods._lib.parsed_args import ANY_ARGS_CLASSES, PARSE_METHODS

    def find() -> str | None:
        try:
            tree = ast.parse(ctx.source)
        except (SyntaxError, ValueError):
            return None
        plan = args_plan(ctx)
        known = {name for _, name in plan.args_vars}
        classes = {q.rsplit(".", 1)[-1] for q in [*ANY_ARGS_CLASSES, *project_args_subclasses(ctx)]}
        built: set[str] = set()
        parsed: set[str] = set()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            names = {e.id for t in node.targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
                     if isinstance(e, ast.Name)}
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr in PARSE_METHODS:
                parsed |= names & known
            elif _callee(func) in classes:
                built |= names
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _callee(node.func).endswith("Trainer")):
                continue
            given = next((k.value for k in node.keywords if k.arg == "args"),
                         node.args[1] if len(node.args) > 1 else None)
            if (isinstance(given, ast.Name) and given.id in built) or (
                    isinstance(given, ast.Call) and _callee(given.func) in classes):
                return "built"
        return "parsed" if parsed else None

    return ctx.memo("training.trainer-arguments", find)


def _above_one(value: str) -> bool:
    text = value.strip("\"'")
    return text.isdigit() and int(text) > 1


def _callee(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def note_checkpoint_need(rule, load: cst.CSTNode, degree: cst.BaseExpression, built: bool | None = None) -> None:
    """The one decision about checkpoints for a model load a rule (NM205, NM208) just gave a ``distributed_config``
    of degree ``degree`` (not literally 1): Trainer.__init__ raises for a model sharded at load time unless the
    arguments say ``save_only_model=True`` or ``save_strategy="no"``. Arguments built in the file (``built``, else
    ``trainer_arguments``) get ``save_only_model`` from NM202 (its ``_checkpoint_constraint``, also for the
    degree it moves into ``model_init_kwargs``): no todo here, unless NM202 does not run on the file. Parsed
    arguments are not in the code: a todo on the load asks for the flag or config key, naming the launch lines and
    configs of the project that give the script a degree above 1 (``codemods/_lib/zero_1.py``). A file that shows
    no training arguments gets nothing."""
    from codemods._lib.zero_1 import config_values, launch_values, script_paths

    ctx = rule.ctx
    where = ("built" if built else "parsed") if built is not None else trainer_arguments(ctx)
    if where is None:
        return
    rules = ctx.options.rules
    shown = source_of(degree)
    literal = isinstance(literal_value(degree), int)
    sharded = f"with tensor parallel degree {shown}" if literal else f"with {shown} above 1"
    if where == "built":
        if rules is None or "NM202" in rules:
            return  # NM202 adds save_only_model to those arguments (or a todo on the one they pass)
        rule.todo(load, f"{sharded} this model is sharded at load time and Trainer raises unless the training "
                        "arguments built in this file say save_only_model=True or save_strategy=\"no\": add "
                        "save_only_model=True to them (NM202, which does that, did not run); checkpoints then hold "
                        "no optimizer/scheduler state")
        return
    project = ctx.options.project
    paths = script_paths(project, ctx.path, ctx.source)
    # the configs and launch lines that give the script a literal degree above 1: each needs the setting
    asks: list[str] = []
    for value, place in config_values(project, paths, ctx.source, "tensor_parallel_size"):
        if _above_one(value):
            asks.append(f"add save_only_model: true to {place.split(', the config ')[0].split(' in ', 1)[1]} "
                        f"(tensor_parallel_size: {value.strip(chr(34) + chr(39))})")
    for value, place in launch_values(project, paths, "tensor_parallel_size", variables=True):
        if _above_one(value):
            asks.append(f"add --save_only_model true beside {place}")
    runs = f"; the project runs it with a degree above 1: {'; '.join(dict.fromkeys(asks))}" if asks else ""
    rule.todo(load, f"{sharded} this model is sharded at load time and {CHECKPOINT_NEED}{runs}")


def project_line(ctx) -> Line:
    return ctx.memo("optimum-neuron-line", lambda: optimum_line(ctx.options.project, ctx.path))


def _divisor(tp: cst.BaseExpression) -> str:
    tp_source = source_of(tp)
    return tp_source if isinstance(tp, (cst.Integer, cst.Name, cst.Attribute)) else f"({tp_source})"


#: the module-level function the mesh's data-parallel rest calls (``mesh_rest``), added once per file that calls it
DATA_PARALLEL_SIZE = "_data_parallel_size"
#: what ``insert_data_parallel_size`` writes: torchrun's world size over the degree, or a stop that names the
#: torchrun command where the degree does not divide it
DATA_PARALLEL_SIZE_DEF = f'''def {DATA_PARALLEL_SIZE}(tp_size: int) -> int:
    """torchrun's processes per tensor-parallel group: the mesh's data-parallel size (added by neuron-migrate)."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size % tp_size:
        sys.exit(f"tensor parallel degree {{tp_size}} needs a multiple of {{tp_size}} processes, got {{world_size}}: "
                 f"launch with torchrun --nproc_per_node {{tp_size}} {{' '.join(sys.argv)}}")
    return world_size // tp_size
'''


def mesh_rest(tp: cst.BaseExpression) -> str:
    """Source of the data-parallel rest of a tensor-parallel mesh of degree ``tp``: ``_data_parallel_size(tp)``,
    a function the rule's ``leave_Module`` adds once per file (``insert_data_parallel_size``) that returns
    WORLD_SIZE // tp, or stops with the torchrun command where the degree does not divide WORLD_SIZE. A plain
    ``python`` run of a degree-2 script got 1 // 2 = 0, which DistributedConfig rejects with "Parallelism sizes
    must be >= 1, got 0" and no word of the launch, and a WORLD_SIZE of 3 transformers' "The parallel mesh requires
    2 processes, but world_size is 3"; optimum-neuron 0.4.5 failed there too (TrainingNeuronConfig needs torchrun's
    process group and NxD's initialize_model_parallel a world size the degree divides), so stopping changes no run
    that worked."""
    return f"{DATA_PARALLEL_SIZE}({source_of(tp)})"


def insert_data_parallel_size(module: cst.Module, ctx) -> cst.Module:
    """``module`` with ``DATA_PARALLEL_SIZE_DEF`` after its leading imports (before any module-level code, so
    before every call) where it calls ``_data_parallel_size`` and neither it nor an earlier notebook cell defines
    it (a second run adds nothing); schedules ``import os`` / ``import sys``, which it reads."""
    from migrate import cstwalk
    from migrate.imports import import_of, skip_first
    from migrate.snippets import parse_statement

    def calls(node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Name) and node.value == DATA_PARALLEL_SIZE

    defines = any(isinstance(statement, cst.FunctionDef) and statement.name.value == DATA_PARALLEL_SIZE
                  for statement in module.body)
    if defines or DATA_PARALLEL_SIZE in ctx.imports.defined or not cstwalk.find(module, calls):
        return module
    ctx.add_import("os")
    ctx.add_import("sys")
    ctx.imports.defined.add(DATA_PARALLEL_SIZE)  # a later rule, and a later cell of a notebook, see it defined
    body = list(module.body)
    index = 1 if skip_first(module) else 0
    while index < len(body) and import_of(body[index]) is not None:
        index += 1
    helper = parse_statement(DATA_PARALLEL_SIZE_DEF, config=module.config_for_parsing)
    if index:
        helper = helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    if index < len(body):  # two blank lines after the function, above what followed the imports
        after = body[index]
        leading = list(after.leading_lines)
        blank = next((n for n, line in enumerate(leading) if line.comment is not None), len(leading))
        body[index] = after.with_changes(leading_lines=[cst.EmptyLine()] * max(0, 2 - blank) + leading)
    return module.with_changes(body=[*body[:index], helper, *body[index:]])


def distributed_dict(tp: cst.BaseExpression, key: str) -> str:
    """Source of the ``distributed_config`` dict of a tensor-parallel run (tp_size x the rest = WORLD_SIZE)."""
    return f'{{"tp_size": {source_of(tp)}, "{key}": {mesh_rest(tp)}}}'


def spelled_distributed_dict(tp: cst.BaseExpression, key: str) -> str:
    """``distributed_dict`` for a todo's advice: the rest spelled out (``WORLD_SIZE // tp``), since the file may not
    have the function ``mesh_rest`` calls."""
    return f'{{"tp_size": {source_of(tp)}, "{key}": {WORLD_SIZE} // {_divisor(tp)}}}'


def distributed_config_call(tp: cst.BaseExpression, key: str) -> str:
    return f"DistributedConfig(tp_size={source_of(tp)}, {key}={mesh_rest(tp)})"


def only_when_parallel(tp: cst.BaseExpression, built: str) -> str | None:
    """What a model load gets for tensor parallel degree ``tp``: nothing (None) for a literal 1, ``built`` for a
    literal above 1, and ``(built if tp > 1 else None)`` for a degree known at run time. A degree of 1 must stay
    plain data parallelism (DDP under torchrun): a mesh of WORLD_SIZE // 1 replicas would make the Trainer wrap
    the model in FSDP2; ``distributed_config=None`` is from_pretrained's default (no mesh)."""
    degree = literal_value(tp)
    if degree == 1:
        return None
    if isinstance(degree, int):
        return built
    return f"({built} if {_divisor(tp)} > 1 else None)"


def distributed_config_for(tp: cst.BaseExpression, key: str) -> str | None:
    """The ``distributed_config=`` value for degree ``tp`` (``only_when_parallel``), None when none is passed."""
    return only_when_parallel(tp, distributed_config_call(tp, key))


def tp_planless(ctx, loader: cst.BaseExpression) -> str | None:
    """The stock model class ``loader`` names when transformers 5 knows it has no tensor-parallel plan (its config
    has no ``base_model_tp_plan``; an Auto class none of whose models has one): ``from_pretrained`` with
    ``tp_size > 1`` raises "has no tp_plan" there. None when it has one or is not known."""
    from codemods._tables.stock_api_data import TP_PLANLESS

    planless = frozenset(TP_PLANLESS.split())
    for qualified in ctx.qualnames(loader):
        name = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("transformers.") and name in planless:
            return name
    return None


_MODEL_CLASS = re.compile(r"Model|For[A-Z]")


def loaded_planless(ctx) -> str | None:
    """The stock model classes this file loads with ``from_pretrained`` when transformers 5 knows that none of them
    has a tensor-parallel plan (``tp_planless``), so a degree above 1 cannot shard the model the trainer gets
    (rt4D 8: ViT). None when the file loads no model, loads one that has a plan, or loads through a name that is
    not a transformers import (a variable, a class of its own: not known)."""

    def find() -> str | None:
        try:
            tree = ast.parse(ctx.source)
        except (SyntaxError, ValueError):
            return None
        models = set()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "from_pretrained"):
                continue
            receiver = ast.unparse(node.func.value)
            if not all(part.isidentifier() for part in receiver.split(".")):
                return None
            qualified = ctx.qualnames(cst.parse_expression(receiver))
            if not qualified:
                return None  # a variable or a class of the file: the class is not known
            stock = {name for name in qualified if name.startswith("transformers.")}
            if not stock:
                if all(name.startswith("peft.") for name in qualified):
                    continue  # PeftModel.from_pretrained(base, ...) wraps a model loaded beside it
                return None
            names = {name.rsplit(".", 1)[-1] for name in stock}
            if any(_MODEL_CLASS.search(name) for name in names):
                if len(names) > 1:
                    return None
                models |= names
        if not models or not models <= _planless():
            return None
        return ", ".join(sorted(models))

    return ctx.memo("training.loaded-planless", find)


def _planless() -> frozenset[str]:
    from codemods._tables.stock_api_data import TP_PLANLESS

    return frozenset(TP_PLANLESS.split())


def batch_change(tp: cst.BaseExpression) -> str:
    """What training with data parallelism alone, where optimum-neuron ran tensor parallel degree ``tp``, does to
    the batch arithmetic (rt8P-03). optimum's data-parallel width was WORLD_SIZE // tp (its ``dp = world // tp``);
    a model loaded whole makes every process a data-parallel rank (transformers 5.24 Trainer: dp_world_size =
    world_size // tp_size, with tp_size 1), so the global batch per optimizer step and the optimizer steps per
    epoch change by the degree: a hyper-parameter change, never a fix, and what keeps them is said."""
    literal = isinstance(literal_value(tp), int)
    degree = source_of(tp) if literal else "T"
    named = "" if literal else f" (T = {source_of(tp)})"
    return (f"with the model whole every process is a data-parallel rank: the data-parallel width is WORLD_SIZE, "
            f"where optimum-neuron's was WORLD_SIZE // {degree}{named}, so the global batch per optimizer step "
            f"(per_device_train_batch_size x gradient_accumulation_steps x that width) is {degree} times larger and "
            f"an epoch has {degree} times fewer optimizer steps (a warmup or schedule counted in steps moves with "
            f"them): divide gradient_accumulation_steps (or per_device_train_batch_size) by {degree} to keep them")


def batch_places(ctx) -> str:
    """The launch lines, SageMaker hyperparameters and argument configs of the project that give this script a
    literal tensor parallel degree above 1, each with the gradient_accumulation_steps that keeps its global batch
    once the model trains whole (``batch_change``): '' when none does. A file's value pairs with the
    gradient_accumulation_steps of the same file, when it gives one value."""
    from codemods._lib.zero_1 import config_values, launch_values, script_paths

    project = ctx.options.project
    paths = script_paths(project, ctx.path, ctx.source)

    def where(place: str) -> str:  # the file a config_values / launch_values place names
        if ", the config " in place:
            return place.split(", the config ")[0].split(" in ", 1)[1]
        return place.rsplit(" of " if " on a launch line of " in place else " in ", 1)[1]

    def grouped(field: str) -> dict[str, list[tuple[str, str]]]:
        found: dict[str, list[tuple[str, str]]] = {}
        values = [*config_values(project, paths, ctx.source, field), *launch_values(project, paths, field)]
        for value, place in values:
            found.setdefault(where(place), []).append((value.strip("\"'"), place))
        return found

    steps = grouped("gradient_accumulation_steps")
    told: list[str] = []
    for file, degrees in grouped("tensor_parallel_size").items():
        for degree, place in degrees:
            if not _above_one(degree):
                continue
            accumulations = {value for value, _ in steps.get(file, [])}
            if len(accumulations) != 1:
                keep = (f"gradient_accumulation_steps is not set there (default 1): divide "
                        f"per_device_train_batch_size by {degree}" if not accumulations else
                        f"it sets several gradient_accumulation_steps: divide each by {degree}")
            else:
                accumulation = accumulations.pop()
                if accumulation.isdigit() and int(accumulation) % int(degree) == 0:
                    keep = (f"gradient_accumulation_steps {accumulation} there: {int(accumulation) // int(degree)} "
                            f"keeps the global batch and the step count")
                else:
                    keep = (f"gradient_accumulation_steps {accumulation} there is not a multiple of {degree}: "
                            f"divide per_device_train_batch_size x gradient_accumulation_steps by {degree}")
            told.append(f"{place} ({keep})")
    return "; ".join(dict.fromkeys(told))


def planless_stop(degree: str, name: str):
    """``if <degree> > 1: raise SystemExit(...)`` for a run-time degree (a name or attribute chain: ``args.tp``)
    that the model class ``name`` cannot take (no tensor-parallel plan): at 1 the run is what it was; above 1 no
    stock mesh shards the model, and training it whole would change the data-parallel width, the global batch and
    the step count (``batch_change``), so the run stops with what to pass instead (NM202 for built arguments,
    NM208 for parsed ones)."""
    from migrate.snippets import parse_statement

    why = (f": {name} has no tensor-parallel plan in transformers 5 (no base_model_tp_plan), so a tensor parallel "
           "degree above 1 cannot shard it; run with a degree of 1 (data parallelism, one process per NeuronCore "
           "under torchrun) and divide gradient_accumulation_steps by the old degree to keep the global batch and "
           "the step count (the data-parallel width is then WORLD_SIZE, it was WORLD_SIZE // degree)")
    quoted = why.replace("\\", "\\\\").replace('"', "'").replace("{", "{{").replace("}", "}}")
    return parse_statement(f'if {degree} > 1:\n    raise SystemExit(f"{degree}={{{degree}}}{quoted}")\n')


def planless_advice(name: str, tp: cst.BaseExpression) -> str:
    """What to do with a degree ``tp`` for a model whose class has no tensor-parallel plan."""
    return (f"{name} has no tensor-parallel plan in transformers 5 (the model class this file loads: its config has "
            f"no base_model_tp_plan), so from_pretrained(..., distributed_config=DistributedConfig(tp_size="
            f"{source_of(tp)})) raises ValueError \"has no tp_plan\" for a degree above 1: train it with data "
            "parallelism instead (torchrun, one process per NeuronCore; DistributedConfig(fsdp_size=WORLD_SIZE) "
            "to shard it) and delete this argument, or pass DistributedConfig(tp_plan={...}) with a plan of your "
            "own for this model; " + batch_change(tp))


def planless_note(name: str, tp: cst.BaseExpression) -> str:
    return (f"no distributed_config added: {name} has no tensor-parallel plan in transformers 5 (no "
            f"base_model_tp_plan), so from_pretrained(..., distributed_config=DistributedConfig(tp_size="
            f"{source_of(tp)})) raises ValueError for a degree above 1; the model loads whole (plain data parallelism "
            f"under torchrun): keep tensor_parallel_size at 1, or pass DistributedConfig(tp_plan={{...}}) with a plan "
            f"of your own for this model; " + batch_change(tp))


def tokenizer_to_processing_class(rule, updated: cst.Call, original: cst.Call) -> cst.Call:
    """``tokenizer=`` -> ``processing_class=`` (transformers 5 Trainer / trl 1.x trainers)."""
    arg = find_keyword(updated, "tokenizer")
    if arg is None:
        return updated
    if find_keyword(updated, "processing_class") is not None:
        rule.todo(find_keyword(original, "tokenizer"), "both tokenizer= and processing_class= given: tokenizer= was "
                  "removed in transformers 5, keep processing_class=")
        return set_args(updated, [a for a in updated.args if a is not arg])
    rule.fixed(find_keyword(original, "tokenizer"),
               "tokenizer= -> processing_class= (removed in transformers 5 / trl 1.x)")
    return updated.with_changes(args=[rename_keyword(a, "processing_class") if a is arg else a for a in updated.args])


PREAMBLE = (
    "torch._dynamo.config.automatic_dynamic_shapes = False",
    'os.environ.setdefault("HF_DEACTIVATE_ASYNC_LOAD", "1")',
)


def insert_preamble(module: cst.Module, ctx, note: bool = True) -> cst.Module:
    """The static-shape / synchronous-loading settings (``PREAMBLE``), once, at the module's entry point
    (codemods/_lib/settings.py). ``note``: a module without an entry point gets a todo saying where they go."""
    text = ctx.source  # no rule writes these settings but this one: the file as read tells if they are there
    markers = ("automatic_dynamic_shapes", "HF_DEACTIVATE_ASYNC_LOAD")
    missing = [line for line, marker in zip(PREAMBLE, markers) if marker not in text]
    if not missing:
        return module
    why = "TorchNeuron: one compiled graph per shape (pad to fixed lengths); synchronous weight loading"
    scripts = importing_scripts(ctx) if note else ()
    # the scripts that name a Neuron trainer or arguments class themselves get the settings from this rule in the
    # same run (their own entry point): the todo names only the others, and none when every importer is such a one
    left = tuple(script for script in scripts if not _sets_preamble(ctx, script))
    return place_settings(module, ctx, missing, why, "NM202" if note and (left or not scripts) else None,
                          entry_points=left)[0]


def _sets_preamble(ctx, script: str) -> bool:
    """Whether the project script ``script`` imports a Neuron trainer or arguments class by name (``from
    optimum.neuron import NeuronTrainer``): NM202 migrates it and writes the process-wide settings at its entry
    point, or finds them there already."""
    from codemods._tables.training_symbols import NEURON_ARGS_CLASSES, NEURON_TRAINERS
    from codemods.xla._importers import USES

    project = getattr(ctx.options, "project", None)
    record = project.of(USES.name).get(script) if project is not None else None
    if not record or not record.get("main"):
        return False
    return any(level == 0 and f"{dotted}.{name}" in NEURON_TRAINERS.keys() | NEURON_ARGS_CLASSES.keys()
               for level, dotted, names in record["imports"] for name in names)


def importing_scripts(ctx) -> tuple[str, ...]:
    """The project scripts (``__main__``) that import this module, directly or through other modules of the project
    (display paths, sorted): where the process-wide settings of a module of definitions go. Empty without the
    import graph (a single file)."""
    from codemods.xla._importers import USES, _index, imported_files

    project = getattr(ctx.options, "project", None)
    if project is None or ctx.namespace is not None:
        return ()
    uses = project.of(USES.name)
    index = _index(project.files)
    importers: dict[str, set[str]] = {}
    for importer, value in uses.items():
        for level, dotted, names in value["imports"]:
            for target in imported_files(project.files, index, importer, level, dotted, names):
                if target != importer:
                    importers.setdefault(target, set()).add(importer)
    here = str(ctx.path).replace("\\", "/")
    seen, todo, found = {here}, [here], set()
    while todo:
        for user in importers.get(todo.pop(), ()):
            if user in seen or not user.endswith(".py"):
                continue
            seen.add(user)
            if uses.get(user, {}).get("main"):
                found.add(user)
            else:
                todo.append(user)
    return tuple(sorted(found))


#: the fields that said how optimum-neuron's bf16 ran (with either given, bf16=True says no more than stock does)
BF16_MODE_FIELDS = ("use_autocast", "half_precision_backend")


def bf16_meant(line: Line) -> str:
    """What optimum-neuron did with ``bf16=True``, for the project's line (migration map: half_precision_backend,
    T19): 0.4.x without use_autocast cast the model (FULL_BF16); up to 0.3.0 the default half_precision_backend
    "xla" cast the model too (through XLA_USE_BF16 before 0.1.0)."""
    if line is Line.FROM_04:
        return "optimum-neuron 0.4.x (without use_autocast it cast the model to bf16)"
    if line is Line.UP_TO_03:
        return ('optimum-neuron <= 0.3.0 (its default half_precision_backend "xla" cast the model to bf16; before '
                "0.1.0 through XLA_USE_BF16)")
    return ('optimum-neuron (0.4.x without use_autocast, and up to 0.3.0 with the default half_precision_backend "xla", '
            "cast the model to bf16)")


def bf16_weights_note(line: Line, field: str = "bf16=True") -> str:
    """The precision note for a Neuron arguments ``bf16`` set to true with neither of ``BF16_MODE_FIELDS`` given:
    stock bf16 is autocast over fp32 weights. The same words for a keyword (NM202), a config key or a
    hyperparameter, a launch flag (NM408, NM412: ``field`` as written there); the value is never changed."""
    return (f"{field} meant full-bf16 weights in {bf16_meant(line)}; stock bf16=True is autocast over fp32 weights: "
            "load the model with dtype=torch.bfloat16 to keep bf16 weights")


def bf16_mode_noted(text: str) -> bool:
    """Whether ``text`` holds the field map's note on a removed ``use_autocast`` / ``half_precision_backend`` (a
    first run removed it): the bf16 mode was given, so a later run adds no ``bf16_weights_note``."""
    return any((mapping := TRAINING_ARGS.get(field)) is not None and bool(mapping.message) and mapping.message in text
               for field in BF16_MODE_FIELDS)
