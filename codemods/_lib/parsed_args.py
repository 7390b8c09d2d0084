"""Where the fields of parsed Neuron training arguments go: one analysis of a script's source (stdlib ``ast``,
no libcst, so the launch layer can call it from the scan pass) shared by the training rules and the launch rules.

The stock ``TrainingArguments`` / ``SFTConfig`` have no ``tensor_parallel_size`` (nor ``trn_config``), and
``HfArgumentParser`` aborts on a flag that no parsed dataclass declares. When a script parses a Neuron arguments
class together with a dataclass of its own and every read of ``<training_args>.tensor_parallel_size`` (or
``.trn_config``) can reach that dataclass's variable, the field moves into the dataclass: the flag and the
config key keep working and the reads follow it. Otherwise nothing moves and the reads get todos.
The same move is made, on parsed stock arguments too, for the stock fields transformers 5 removed that only
scripts ever read (``overwrite_output_dir``: ``codemods/_tables/script_fields.py``).
See docs/rules-training.md, "Parsed training arguments".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import cast

from codemods._tables.script_fields import NEURON_SCRIPT_FIELDS, SCRIPT_FIELDS
from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from codemods._tables.training_symbols import ARGS_CLASSES, NEURON_ARGS_CLASSES, NEURON_TRAINERS, TRAINING_MOVES
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind

#: every arguments class whose objects lack the Neuron-only fields: the Neuron ones and their stock targets (a
#: second run sees the stock ones, and must judge the same reads the same way)
ANY_ARGS_CLASSES = {**NEURON_ARGS_CLASSES, **ARGS_CLASSES}

PARSERS = ({old for old, new in TRAINING_MOVES.items() if new == "transformers.HfArgumentParser"}
           | {"transformers.HfArgumentParser", "transformers.hf_argparser.HfArgumentParser", "trl.TrlParser",
              "trl.scripts.utils.TrlParser"})
PARSE_METHODS = {"parse_args_into_dataclasses", "parse_args_and_config", "parse_json_file", "parse_yaml_file", "parse_dict"}
DATACLASS = {"dataclasses.dataclass"}
#: the one field whose value has somewhere to arrive once it leaves the arguments: DistributedConfig(tp_size=...)
MOVED_FIELD = "tensor_parallel_size"
#: optimum-neuron's NeuronTrainingArguments.trn_config was built from tensor_parallel_size (and optimum-only options)
TRN_CONFIG = "trn_config"
#: fields of optimum's TrainingNeuronConfig (``training_args.trn_config``) whose reads have a stock value: the degree
#: the move carries (``tensor_parallel_size``) and the pipeline size, which the stock Trainer never splits
#: (``pipeline_parallel_size``: 1 unless the field itself moved into the script's dataclass)
TRN_CONFIG_READS = frozenset({MOVED_FIELD, "pipeline_parallel_size"})
#: attributes of the Neuron arguments that a read may name and the stock classes lack (KEEP fields read fine)
GONE_FIELDS = frozenset({TRN_CONFIG} | {name for name, row in TRAINING_ARGS.items() if row.action is not FieldAction.KEEP})

Scope = str  # "" for the module, "main", "Trainer.train": the enclosing def/class names joined by dots


@dataclass(frozen=True)
class ArgsVar:
    """A variable that holds the parsed Neuron arguments (directly, or a parameter every call passes them to)."""

    scope: Scope
    name: str
    script_var: str | None  # the variable holding the script dataclass there, when the field moved and one reaches
    #: for arguments built in the script (``NeuronTrainingArguments(..., tensor_parallel_size=8)``): the literal
    #: degree it was given (optimum's default 1 when absent); None when it is not a literal
    degree: int | None = None
    target: str = "TrainingArguments"  # the stock class it is now (TrainingArguments, SFTConfig, ...)
    #: the variable holding the script dataclass there whenever one reaches (moved fields or not): where the
    #: reads of a moved script-only field (``plan.script_moves``) go
    reach: str | None = None


@dataclass(frozen=True)
class TrnAlias:
    """``trn_config = training_args.trn_config``: a variable bound once to the Neuron arguments' ``trn_config``.
    Rewritten to the ``DistributedConfig`` (or None), its reads must follow: ``reads`` are the fields read on it
    (all in TRN_CONFIG_READS when ``blocked`` is empty); ``blocked`` says why it cannot be followed."""

    scope: Scope
    name: str
    args: str  # the arguments variable it was read from
    reads: frozenset[str] = frozenset()
    blocked: str = ""


@dataclass
class ArgsPlan:
    script_class: str | None = None  # the dataclass that receives MOVED_FIELD, when the move is made
    args_vars: dict[tuple[Scope, str], ArgsVar] = field(default_factory=dict)
    argparse_vars: set[tuple[Scope, str]] = field(default_factory=set)  # argparse Namespaces: the script's own options
    #: (scope, model variable) -> the degree's source: a model the Neuron trainer sharded itself (the script never
    #: read the degree); its from_pretrained gets distributed_config with that degree
    loads: dict[tuple[Scope, str], str] = field(default_factory=dict)
    #: arguments built in the script whose non-trivial tensor_parallel_size one of ``loads`` carries to the model
    carried: set[tuple[Scope, str]] = field(default_factory=set)
    #: such arguments -> the source of the class whose from_pretrained loads the model (``AutoModelForCausalLM``):
    #: NM202 drops the degree only where NM208 can give that load a mesh (a class with a tensor-parallel plan)
    carried_loaders: dict[tuple[Scope, str], str] = field(default_factory=dict)
    #: the ``loads`` whose degree comes from such built arguments (NM202 gives those arguments save_only_model)
    built_loads: set[tuple[Scope, str]] = field(default_factory=set)
    blocked: str = ""  # why MOVED_FIELD was not moved although the script reads it ("" when moved or not read)
    cli_fields: frozenset[str] = frozenset()  # fields of the script's parsed dataclasses after the migration
    #: removed stock fields only scripts read (SCRIPT_FIELDS) -> the script dataclass that receives them
    script_moves: dict[str, str] = field(default_factory=dict)
    #: such a field the script reads on the arguments -> why it was not moved
    script_blocked: dict[str, str] = field(default_factory=dict)
    #: (scope, variable) -> the variable bound to the arguments' trn_config there (``TrnAlias``)
    trn_aliases: dict[tuple[Scope, str], TrnAlias] = field(default_factory=dict)

    @property
    def moved(self) -> bool:
        return self.script_class is not None

    def args_var(self, scope: Scope, name: str) -> ArgsVar | None:
        return self.args_vars.get((scope, name))


def script_cli_fields(source: str) -> frozenset[str]:
    """The fields that the script's own dataclasses parsed by HfArgumentParser / TrlParser declare after the
    training migration (declared ones plus the moved ``tensor_parallel_size`` and script-only fields). Same answer
    before and after the migration. A ``--flag`` or config key in this set belongs to the script: the launch layer
    keeps it. The project's own subclasses of the stock arguments (``from common.hf_utils import
    TrnTrainingArguments``) are not known from one file's text: an imported ``*TrainingArguments`` class of a
    module outside transformers / optimum / trl counts as one, so the answer errs towards keeping a flag."""
    plan = analyse(source, guess_subclasses=True)
    return plan.cli_fields if plan is not None else frozenset()


def script_field_reads(source: str) -> frozenset[tuple[str, str]]:
    """(field, the read as written) for every read of a removed script-only field (SCRIPT_FIELDS) in the script:
    ``<anything>.overwrite_output_dir`` or ``getattr(<anything>, "overwrite_output_dir"...)``. Where such a field is
    not one of the script's CLI fields (nothing moved it there), its flag still decides what the script does: the
    launch layer must not remove it."""
    if not any(name in source for name in SCRIPT_FIELDS):
        return frozenset()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in SCRIPT_FIELDS and isinstance(node.ctx, ast.Load):
            found.add((node.attr, ast.unparse(node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in SCRIPT_FIELDS:
            found.add((cast(str, node.args[1].value), ast.unparse(node)))
    return frozenset(found)


def analyse(source: str, subclasses: dict[str, str] | None = None, declared: frozenset[str] = frozenset(),
            guess_subclasses: bool = False, factories: dict[str, str] | None = None) -> ArgsPlan | None:
    """The plan for one Python source (None when it does not parse). ``subclasses``: qualified names of the
    project's own subclasses of the stock arguments classes -> the stock class (``stock_subclasses_of``);
    ``declared``: the fields those subclasses declare themselves (a script-only field one of them declares again
    is read fine and stays); ``guess_subclasses``: without the project, take every imported ``*TrainingArguments``
    of a module outside transformers / optimum / trl for such a subclass."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    subclasses = dict(subclasses or {})
    if guess_subclasses:
        for qualnames in _imports(tree).values():
            for qualified in qualnames:
                name = qualified.rsplit(".", 1)[-1]
                if "." in qualified and name.endswith("TrainingArguments") and qualified.split(".")[0] not in _STOCK_PACKAGES:
                    subclasses.setdefault(qualified, "Seq2SeqTrainingArguments" if "Seq2Seq" in name else "TrainingArguments")
    return _Analysis(tree, subclasses, declared, factories or {}).plan()


_STOCK_PACKAGES = {"transformers", "optimum", "trl"}


_STOCK_BASES = {"TrainingArguments", "Seq2SeqTrainingArguments"}


def stock_subclasses(text: str) -> dict[str, tuple[str, frozenset[str]]] | None:
    """Project fact: the module-level classes of a file that subclass transformers' TrainingArguments /
    Seq2SeqTrainingArguments (``class TrnTrainingArguments(TrainingArguments)``) -> (stock class, the fields the
    subclass declares itself). A script importing one parses the stock fields through it."""
    if "TrainingArguments" not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    imports = _imports(tree)
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
            qualified = imports.get(base.id, set()) if isinstance(base, ast.Name) else {f"transformers.{name}"}
            if name in _STOCK_BASES and any(q.startswith("transformers.") for q in qualified):
                fields = frozenset(s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
                found[node.name] = (name, fields)
    return found or None


def stock_subclasses_of(values: dict[str, dict[str, tuple[str, frozenset[str]]]]) -> dict[str, tuple[str, frozenset[str]]]:
    """The fact's values (display path -> classes) as importable qualified names (``common.hf_utils.TrnTrainingArguments``)."""
    qualified = {}
    for path, classes in values.items():
        module = path[:-3].replace("/", ".") if path.endswith(".py") else None
        if module is None:
            continue
        parts = module.split(".")
        for start in range(len(parts)):  # the script may import it from any folder level it runs in
            for name, record in classes.items():
                qualified[".".join(parts[start:] + [name])] = record
    return qualified


STOCK_SUBCLASSES = ProjectFact("training.stock-args-subclasses", frozenset({FileKind.PYTHON}), ("TrainingArguments",),
                               stock_subclasses)


def args_factories(text: str) -> dict[str, str] | None:
    """Project fact: the module-level functions of a file that return training arguments -> the stock class they
    are now (``def sft_args(cfg): return build_args(NeuronSFTConfig, cfg["sft"])`` -> ``SFTConfig``): each
    ``return`` calls an arguments class (Neuron or stock: a second run must judge the same), or a module-level
    function of the file with such a class as an argument whose parameter that function calls
    (``cls(**values)``). A script that imports one reads the fields of its result like those of arguments it built."""
    if not any(name.rsplit(".", 1)[1] in text for name in ANY_ARGS_CLASSES):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    imports = _imports(tree)
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def target(node: ast.AST) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        suffix = ".".join(reversed(parts))
        return next((ANY_ARGS_CLASSES[q] for base in sorted(imports.get(node.id, ()))
                     if (q := f"{base}.{suffix}" if suffix else base) in ANY_ARGS_CLASSES), None)

    def built(call: ast.expr) -> str | None:
        if not isinstance(call, ast.Call):
            return None
        direct = target(call.func)
        if direct is not None or not (isinstance(call.func, ast.Name) and call.func.id in functions):
            return direct
        function = functions[call.func.id]
        params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        given = [*zip(params, call.args), *((k.arg, k.value) for k in call.keywords if k.arg)]
        called = {c.func.id for c in ast.walk(function) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        return next((t for param, value in given if param in called and (t := target(value)) is not None), None)

    found = {}
    for name, function in functions.items():
        returns = [n.value for n in ast.walk(function) if isinstance(n, ast.Return) and n.value is not None]
        classes = {built(value) for value in returns}
        if returns and len(classes) == 1 and None not in classes:
            found[name] = cast(str, next(iter(classes)))
    return found or None


def factories_of(values: dict[str, dict[str, str]]) -> dict[str, str]:
    """The fact's values (display path -> functions) as importable qualified names (``config_loader.sft_args``)."""
    qualified = {}
    for path, functions in values.items():
        if not path.endswith(".py"):
            continue
        parts = path[:-3].split("/")
        for start in range(len(parts)):  # the script may import it from any folder level it runs in
            for name, stock in functions.items():
                qualified[".".join(parts[start:] + [name])] = stock
    return qualified


ARGS_FACTORIES = ProjectFact("training.args-factories", frozenset({FileKind.PYTHON}),
                             tuple(sorted({name.rsplit(".", 1)[1] for name in ANY_ARGS_CLASSES})), args_factories)


class _Analysis:
    def __init__(self, tree: ast.Module, subclasses: dict[str, str], declared: frozenset[str] = frozenset(),
                 factories: dict[str, str] | None = None) -> None:
        self.tree = tree
        self.subclasses = subclasses
        self.factories = factories or {}  # project functions that return arguments (ARGS_FACTORIES) -> stock class
        self.declared = declared
        self.imports = _imports(tree)
        self.scopes: dict[ast.AST, Scope] = {}
        self.built_loaders: dict[tuple[Scope, str], str] = {}  # see ArgsPlan.carried_loaders
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}  # module-level defs
        self._index(tree)
        self.built_degrees: dict[tuple[Scope, str], ast.expr] = {}  # constructed Neuron arguments -> degree given
        self.dataclasses = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)
                            and any(self._resolves(_decorator(d), DATACLASS) for d in node.decorator_list)}

    # ----------------------------------------------------------------------------------- name resolution
    def _qualnames(self, node: ast.AST) -> set[str]:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.imports:
            return set()
        suffix = ".".join(reversed(parts))
        return {f"{base}.{suffix}" if suffix else base for base in self.imports[node.id]}

    def _args_target(self, node: ast.AST) -> str | None:
        classes = {**ANY_ARGS_CLASSES, **self.subclasses}
        return next((classes[q] for q in sorted(self._qualnames(node)) if q in classes), None)

    def _resolves(self, node: ast.AST, names) -> bool:
        return any(q in names for q in self._qualnames(node))

    def _index(self, tree: ast.Module) -> None:
        """The scope of every node (iterative: long expression chains would exceed the recursion limit)."""
        stack: list[tuple[ast.AST, Scope]] = [(child, "") for child in tree.body]
        while stack:
            node, scope = stack.pop()
            self.scopes[node] = scope
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if scope == "" and not isinstance(node, ast.ClassDef):
                    self.functions[node.name] = node
                inner = f"{scope}.{node.name}" if scope else node.name
                outer = {id(part) for part in (*node.decorator_list, *getattr(node, "bases", ()), *getattr(node, "keywords", ()))}
                stack.extend((child, scope if id(child) in outer else inner) for child in ast.iter_child_nodes(node))
            else:
                stack.extend((child, scope) for child in ast.iter_child_nodes(node))

    # ------------------------------------------------------------------------------------------- parsers
    def _parser_classes(self, call: ast.Call) -> list[str] | None:
        """For ``Parser((A, B))``: per position "neuron", "script:<Name>" or "other"; None if not a parser call."""
        if not self._resolves(call.func, PARSERS):
            return None
        if not call.args:
            return []
        spec = call.args[0]
        elements = spec.elts if isinstance(spec, (ast.Tuple, ast.List)) else [spec]
        kinds = []
        for element in elements:
            target = self._args_target(element)
            if target:
                kinds.append(f"{'neuron' if self._resolves(element, NEURON_ARGS_CLASSES) else 'stock'}:{target}")
            elif isinstance(element, ast.Name) and element.id in self.dataclasses:
                kinds.append(f"script:{element.id}")
            elif isinstance(element, ast.Name) and len(self.imports.get(element.id, ())) == 1 \
                    and next(iter(self.imports[element.id])).split(".")[0] not in _STOCK_PACKAGES:
                kinds.append(f"imported:{next(iter(self.imports[element.id]))}")  # a dataclass of another module
            else:
                kinds.append("other")
        return kinds

    def _parse_sites(self):
        """(scope, classes, target names) of every ``a, b = parser.parse_...(...)``."""
        parsers: dict[tuple[Scope, str], list[str]] = {}
        every: list[list[str]] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                kinds = self._parser_classes(node)
                if kinds is not None:
                    every.append(kinds)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call):
                kinds = self._parser_classes(node.value)
                if kinds is not None:
                    parsers[(self.scopes.get(node, ""), node.targets[0].id)] = kinds
        sites = []
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
                    and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in PARSE_METHODS):
                continue
            scope, receiver = self.scopes.get(node, ""), node.value.func.value
            if isinstance(receiver, ast.Call):
                kinds = self._parser_classes(receiver)
            elif isinstance(receiver, ast.Name):
                kinds = parsers.get((scope, receiver.id), parsers.get(("", receiver.id)))
            else:
                kinds = None
            target = node.targets[0]
            names = [e.id if isinstance(e, ast.Name) else None for e in target.elts] if isinstance(target, (ast.Tuple, ast.List)) \
                else [target.id] if isinstance(target, ast.Name) and kinds is not None and len(kinds) == 1 else []
            if kinds is not None and len(names) >= len(kinds):
                sites.append((scope, kinds, names))
        return sites, every

    def _argparse_vars(self) -> set[tuple[Scope, str]]:
        found = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                    and node.value.func.attr in ("parse_args", "parse_known_args"):
                target = node.targets[0]
                first = target.elts[0] if isinstance(target, (ast.Tuple, ast.List)) and target.elts else target
                if isinstance(first, ast.Name):
                    found.add((self.scopes.get(node, ""), first.id))
        return found

    # ---------------------------------------------------------------------------------------------- plan
    def plan(self) -> ArgsPlan:
        plan = ArgsPlan(argparse_vars=self._argparse_vars())
        sites, every = self._parse_sites()
        direct: dict[tuple[Scope, str], str | None] = {}  # Neuron-args var -> script var of its parse
        targets: dict[tuple[Scope, str], str] = {}  # Neuron-args var -> the stock class it is now
        script_classes = set()
        parsed_with: set[str] = set()  # script dataclasses parsed with any arguments class: the first of each parse
        beside: set[str] = set()  # ... and every script dataclass of those parses
        for scope, kinds, names in sites:
            script = next((i for i, kind in enumerate(kinds) if kind.startswith("script:")), None)
            if script is not None and any(kind.startswith(("neuron:", "stock:")) for kind in kinds):
                parsed_with.add(kinds[script].split(":", 1)[1])
                beside.update(kind.split(":", 1)[1] for kind in kinds if kind.startswith("script:"))
            for index, kind in enumerate(kinds):
                if kind.startswith(("neuron:", "stock:")) and names[index]:
                    direct[(scope, names[index])] = names[script] if script is not None else None
                    targets[(scope, names[index])] = kind.split(":", 1)[1]
            if any(kind.startswith("neuron:") for kind in kinds) and script is not None:
                script_classes.add(kinds[script].split(":", 1)[1])
        built = self._constructed()
        direct.update({key: None for key in built})
        targets.update({key: target for key, (_, target) in built.items()})
        reachable = {**self._through_parameters(direct, targets), **direct}
        needing = {(self.scopes.get(node, ""), node.value.id) for node in ast.walk(self.tree)
                   if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                   and node.attr in (MOVED_FIELD, TRN_CONFIG)} & (reachable.keys() - built.keys())
        loads = self._trainer_loads({key: value for key, value in reachable.items() if key not in built})
        carried = self._trainer_loads_built()
        if needing or loads:
            unreachable = sorted(key for key in needing if reachable[key] is None)
            if len(script_classes) != 1:
                imported = sorted({kind.split(":", 1)[1] for _, kinds, _ in sites if any(k.startswith("neuron:") for k in kinds)
                                   for kind in kinds if kind.startswith("imported:")})
                plan.blocked = ("the script parses no dataclass of its own beside the Neuron arguments" if not script_classes
                                and not imported else
                                f"the dataclass parsed beside the Neuron arguments, {imported[0]}, is imported from "
                                "another module, and the field moves only into a dataclass of the same file: declare "
                                f"tensor_parallel_size: int = 1 in {imported[0].rsplit('.', 1)[-1]} where it is "
                                "defined, read it there" if not script_classes
                                else "the Neuron arguments are parsed with several script dataclasses")
            elif unreachable:
                scope, var = unreachable[0]
                plan.blocked = f"no variable of the script dataclass reaches {var} in {scope or 'the module'}"
            else:
                plan.script_class = next(iter(script_classes))
                plan.loads = {key: f"{script_var}.{MOVED_FIELD}" for key, (script_var, _) in loads.items()}
        for key, (degree, args_key) in carried.items():
            if key not in plan.loads:
                plan.loads[key] = degree
                plan.built_loads.add(key)
            plan.carried.add(args_key)
            plan.carried_loaders[args_key] = self.built_loaders[args_key]
        plan.args_vars = {key: ArgsVar(key[0], key[1], script_var if plan.moved else None,
                                       built[key][0] if key in built else None, targets.get(key, "TrainingArguments"),
                                       script_var)
                          for key, script_var in reachable.items()}
        plan.trn_aliases = self._trn_aliases(reachable.keys())
        self._script_fields(plan, reachable, built.keys(), parsed_with, beside)
        neuron_only = not any(kind.startswith("stock:") for _, kinds, _ in sites for kind in kinds)
        self._neuron_fields(plan, reachable, built.keys(), script_classes if neuron_only else set(), beside)
        fields: set[str] = set()
        for kinds in every:
            for kind in kinds:
                if kind.startswith("script:"):
                    fields |= _fields(self.dataclasses[kind.split(":", 1)[1]])
        if plan.moved:
            fields.add(MOVED_FIELD)
        plan.cli_fields = frozenset(fields | plan.script_moves.keys())
        return plan

    def _trn_aliases(self, args_vars) -> dict[tuple[Scope, str], TrnAlias]:
        """``x = <args>.trn_config`` on an arguments variable: every use of ``x`` (a read of a field in
        TRN_CONFIG_READS, or the object handed to ``from_pretrained`` / an optimum call, which the model-loading
        rules carry) or why one cannot be followed (another field, another use, a second binding, a use in a
        nested function)."""
        parents = {id(child): node for node in ast.walk(self.tree) for child in ast.iter_child_nodes(node)}
        found: dict[tuple[Scope, str], TrnAlias] = {}
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Attribute) and node.value.attr == TRN_CONFIG
                    and isinstance(node.value.value, ast.Name)):
                continue
            scope, name = self.scopes.get(node, ""), node.targets[0].id
            if (scope, node.value.value.id) not in args_vars:
                continue
            reads: set[str] = set()
            blocked = ""
            for use in ast.walk(self.tree):
                if not (isinstance(use, ast.Name) and use.id == name) or use is node.targets[0]:
                    continue
                where = self.scopes.get(use, "")
                if where != scope:
                    if scope == "" or where.startswith(f"{scope}."):
                        blocked = blocked or f"{name} is used in {where}, a scope of its own"
                    continue
                parent = parents.get(id(use))
                if not isinstance(use.ctx, ast.Load):
                    blocked = blocked or f"{name} is bound again"
                elif isinstance(parent, ast.Attribute) and parent.value is use:
                    if parent.attr in TRN_CONFIG_READS and isinstance(parent.ctx, ast.Load):
                        reads.add(parent.attr)
                    else:
                        blocked = blocked or (f"{name}.{parent.attr} has no stock counterpart (DistributedConfig has "
                                              f"tp_size, pp_size, fsdp_size, dp_replicate_size)")
                else:
                    call = parents.get(id(parent)) if isinstance(parent, ast.keyword) else parent
                    if not (isinstance(call, ast.Call) and use is not call.func and (
                            _callee_name(call.func) == "from_pretrained"
                            or any(q.startswith("optimum.neuron") for q in self._qualnames(call.func)))):
                        shown = ast.unparse(parent) if parent is not None else name
                        blocked = blocked or (f"{name} is used as a value ({shown[:80]}), "
                                              f"which the DistributedConfig that replaces it may not serve")
            found[(scope, name)] = TrnAlias(scope, name, node.value.value.id, frozenset(reads), blocked)
        return found

    def _script_fields(self, plan: ArgsPlan, reachable: dict[tuple[Scope, str], str | None], built,
                       parsed_with: set[str], beside: set[str]) -> None:
        """Removed stock fields only scripts read (SCRIPT_FIELDS) move into the script dataclass parsed with the
        arguments (stock or Neuron) when every read on a parsed arguments variable reaches that dataclass's variable."""
        for name in sorted(SCRIPT_FIELDS):
            if name in self.declared:
                continue  # a project subclass of the stock arguments declares it again: the reads work
            reads = sorted({(self.scopes.get(node, ""), node.value.id) for node in ast.walk(self.tree)
                            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                            and node.attr == name} & (reachable.keys() - built))
            if not reads:
                continue
            unreachable = [key for key in reads if reachable[key] is None]
            target = next(iter(parsed_with)) if len(parsed_with) == 1 else None
            if target is None:
                plan.script_blocked[name] = ("the script parses no dataclass of its own beside the arguments" if not parsed_with
                                             else "the arguments are parsed with several script dataclasses")
            elif unreachable:
                scope, var = unreachable[0]
                plan.script_blocked[name] = f"no variable of the script dataclass reaches {var} in {scope or 'the module'}"
            elif any(name in _fields(self.dataclasses[other]) for other in beside - {target}):
                plan.script_blocked[name] = "another dataclass of the script declares it"
            else:
                plan.script_moves[name] = target

    def _neuron_fields(self, plan: ArgsPlan, reachable: dict[tuple[Scope, str], str | None], built,
                       script_classes: set[str], beside: set[str]) -> None:
        """Neuron-only fields the script READS on the parsed Neuron arguments (``training_args.zero_1`` in a log line,
        NEURON_SCRIPT_FIELDS) move into the one script dataclass parsed with them, as the script-only stock fields
        do: otherwise the stock arguments raise AttributeError there. ``script_classes`` is empty when a stock
        arguments class is parsed too (the reads may be on it). A field whose other values must stop the run
        (pipeline_parallel_size) is stopped in the dataclass's ``__post_init__``, so it moves only into a dataclass
        without one and without bases."""
        # a lazy_load_for_parallelism(...) header's arguments go with the header NM205 removes; where NM205 keeps the
        # block, its reads keep NM208's todo
        header = {id(inner) for node in ast.walk(self.tree) if isinstance(node, ast.Call)
                  and _callee_name(node.func) == "lazy_load_for_parallelism" for inner in ast.walk(node)}
        for name in sorted(NEURON_SCRIPT_FIELDS):
            if name in self.declared:
                continue
            reads = sorted({(self.scopes.get(node, ""), node.value.id) for node in ast.walk(self.tree)
                            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                            and node.attr == name and id(node) not in header} & (reachable.keys() - built))
            if not reads:
                continue
            unreachable = [key for key in reads if reachable[key] is None]
            target = next(iter(script_classes)) if len(script_classes) == 1 else None
            if target is None:
                plan.script_blocked[name] = ("the Neuron arguments are not parsed beside one dataclass of the script "
                                             "(and no stock arguments class)" if not script_classes else "the Neuron arguments are parsed with several script dataclasses")
            elif unreachable:
                scope, var = unreachable[0]
                plan.script_blocked[name] = f"no variable of the script dataclass reaches {var} in {scope or 'the module'}"
            elif any(name in _fields(self.dataclasses[other]) for other in beside - {target}):
                plan.script_blocked[name] = "another dataclass of the script declares it"
            elif NEURON_SCRIPT_FIELDS[name].stop and not _plain_dataclass(self.dataclasses[target]):
                plan.script_blocked[name] = (f"{target} has bases or a __post_init__ of its own, where a run with another "
                                             f"value must stop")
            else:
                plan.script_moves[name] = target

    def _trainer_loads(self, parsed: dict[tuple[Scope, str], str | None]) -> dict[tuple[Scope, str], tuple[str, tuple[Scope, str]]]:
        """Parsed arguments: ``trainer = NeuronTrainer(model=m, args=training_args)`` where ``training_args`` was
        parsed with a script dataclass that reaches this scope (model variable -> (script variable, args variable))."""
        return {key: (kind, args_key) for key, args_key, _ in self._sharded_models()
                if (kind := parsed.get(args_key))}

    def _trainer_loads_built(self) -> dict[tuple[Scope, str], tuple[str, tuple[Scope, str]]]:
        """Built arguments: ``args = NeuronTrainingArguments(..., tensor_parallel_size=X)`` handed to a Neuron trainer
        with ``m``: the load of ``m`` gets X when every name X reads is bound there (model variable -> (X's source,
        args variable))."""
        found = {}
        for key, args_key, load in self._sharded_models(any_loader=True):
            degree = self.built_degrees.get(args_key)
            if degree is not None and self._bound_before(degree, key[0], load.lineno):
                found[key] = (ast.unparse(degree), args_key)
                self.built_loaders[args_key] = ast.unparse(cast(ast.Attribute, cast(ast.Call, load.value).func).value)
        return found

    def _sharded_models(self, any_loader: bool = False):
        """(scope, model variable), (scope, args variable), the load: for ``NeuronTrainer(model=m, args=a)`` whose
        ``m`` comes from ONE ``from_pretrained`` in the same function (of a transformers class; with ``any_loader``
        also of a class the file builds itself, e.g. with eval), outside any ``lazy_load_for_parallelism`` block
        (NM205 handles those) and without a distributed_config / tp_plan / device_map: optimum's trainer sharded that
        model with tensor_parallel_size, so the load must now."""
        lazy = {id(inner) for node in ast.walk(self.tree) if isinstance(node, ast.With) and any(
            isinstance(item.context_expr, ast.Call) and _callee_name(item.context_expr.func) == "lazy_load_for_parallelism"
            for item in node.items) for inner in ast.walk(node)}
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and self._resolves(node.func, NEURON_TRAINERS)):
                continue
            scope = self.scopes.get(node, "")
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            args, model = keywords.get("args"), keywords.get("model")
            if not (isinstance(args, ast.Name) and isinstance(model, ast.Name)):
                continue
            sources = [n for n in ast.walk(self.tree) if isinstance(n, ast.Assign) and self.scopes.get(n, "") == scope
                       and any(isinstance(t, ast.Name) and t.id == model.id for t in n.targets)
                       and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute)
                       and n.value.func.attr == "from_pretrained" and self._transformers_loader(n.value.func.value, any_loader)]
            if len(sources) == 1 and id(sources[0]) not in lazy and not any(
                    k.arg in ("distributed_config", "tp_plan", "device_map")
                    for k in cast(ast.Call, sources[0].value).keywords) \
                    and self._only_wrapped(model.id, scope, sources[0]):  # the filter kept `= ...from_pretrained(...)`
                yield (scope, model.id), (scope, args.id), sources[0]

    def _only_wrapped(self, name: str, scope: Scope, load: ast.Assign) -> bool:
        """Every other binding of ``name`` in ``scope`` wraps the object the load created, after it:
        ``model = get_peft_model(model, ...)``, ``model = prepare_model_for_kbit_training(model)``,
        ``model = model.to(...)``; another object bound to the name (``model = torch.load(...)``) may be what the
        trainer gets, so the load is not followed."""
        for node in ast.walk(self.tree):
            if node is load or not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) \
                    or self.scopes.get(node, "") != scope:
                continue
            bound = [node.target] if isinstance(node, ast.AugAssign) else _targets(node)
            if not any(isinstance(t, ast.Name) and t.id == name for t in bound):
                continue
            value = node.value
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and node.lineno > load.lineno
                    and isinstance(value, ast.Call)):
                return False
            first = value.args[0] if value.args else None
            receiver = value.func.value if isinstance(value.func, ast.Attribute) else None
            if not any(isinstance(n, ast.Name) and n.id == name for n in (first, receiver)):
                return False
        return True

    def _transformers_loader(self, owner: ast.AST, any_loader: bool) -> bool:
        qualnames = self._qualnames(owner)
        if any(q.startswith("transformers.") for q in qualnames):
            return True
        return any_loader and not qualnames and isinstance(owner, ast.Name)  # built in the file (AutoModel = eval(...))

    def _bound_before(self, expression: ast.expr, scope: Scope, line: int) -> bool:
        """Every name ``expression`` reads is a literal's, an import, a parameter of ``scope`` or assigned before ``line``."""
        for name in {n.id for n in ast.walk(expression) if isinstance(n, ast.Name)}:
            if name in self.imports:
                continue
            function = self.functions.get(scope.split(".")[-1]) if scope else None
            if function is not None and name in {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}:
                continue
            if not any(isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno < line and self.scopes.get(n, "") in (scope, "")
                       and any(isinstance(t, ast.Name) and t.id == name for t in _targets(n)) for n in ast.walk(self.tree)):
                return False
        return True

    def _constructed(self) -> dict[tuple[Scope, str], tuple[int | None, str]]:
        """``args = NeuronTrainingArguments(...)``: the variable, the literal tensor parallel degree it was given and
        the stock class it is now."""
        found: dict[tuple[Scope, str], tuple[int | None, str]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call) and (made := next(
                        (self.factories[q] for q in sorted(self._qualnames(node.value.func)) if q in self.factories), None)):
                # arguments a project function returns (``args = sft_args(cfg)``): their degree is not known here
                found[(self.scopes.get(node, ""), node.targets[0].id)] = (None, made)
                continue
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call) and self._resolves(node.value.func, ANY_ARGS_CLASSES):
                call = node.value
                given = next((k.value for k in call.keywords if k.arg == MOVED_FIELD), None)
                splat = any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)
                if not self._resolves(call.func, NEURON_ARGS_CLASSES):
                    degree = None  # a stock class: whatever degree it had is not written here any more
                elif given is None:
                    degree = None if splat else 1  # optimum's default
                else:
                    degree = given.value if isinstance(given, ast.Constant) and type(given.value) is int else None
                target = self._args_target(call.func)
                assert target is not None  # the call resolved to one of ANY_ARGS_CLASSES
                found[(self.scopes.get(node, ""), node.targets[0].id)] = (degree, target)
                if given is not None and self._resolves(call.func, NEURON_ARGS_CLASSES) and degree != 1:
                    self.built_degrees[(self.scopes.get(node, ""), node.targets[0].id)] = given
        return found

    def _through_parameters(self, direct: dict[tuple[Scope, str], str | None],
                            targets: dict[tuple[Scope, str], str]) -> dict[tuple[Scope, str], str | None]:
        """Parameters of module-level functions that every call passes a Neuron-args variable (and, when it
        does so every time, the parameter that receives the script dataclass variable of the same parse)."""
        calls: dict[str, list[ast.Call]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
                calls.setdefault(node.func.id, []).append(node)
        found: dict[tuple[Scope, str], str | None] = {}
        for name, sites in calls.items():
            function = self.functions[name]
            params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
            bound = [_bind(call, params) for call in sites]
            for param in params:
                passed = [(self.scopes.get(call, ""), b.get(param)) for call, b in zip(sites, bound)]
                keys = [(scope, arg.id) for scope, arg in passed if isinstance(arg, ast.Name)]
                if len(keys) != len(passed) or not all(key in direct for key in keys):
                    continue
                wanted = [direct[key] for key in keys]
                script_params = {p for p in params if all(
                    isinstance(value := b.get(p), ast.Name) and value.id == w for b, w in zip(bound, wanted))
                } if all(wanted) else set()
                found[(name, param)] = sorted(script_params)[0] if len(script_params) == 1 else None
                targets[(name, param)] = targets.get(keys[0], "TrainingArguments")
        return found


def _bind(call: ast.Call, params: list[str]) -> dict[str, ast.expr]:
    bound: dict[str, ast.expr] = {}
    for param, arg in zip(params, call.args):
        if isinstance(arg, ast.Starred):
            break
        bound[param] = arg
    for keyword in call.keywords:
        if keyword.arg is not None:
            bound[keyword.arg] = keyword.value
    return bound


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    """The names an assignment binds (tuple targets unpacked)."""
    found: list[ast.expr] = []
    for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
        found.extend(target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
    return found


def _callee_name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _decorator(node: ast.AST) -> ast.AST:
    return node.func if isinstance(node, ast.Call) else node


def _plain_dataclass(node: ast.ClassDef) -> bool:
    """No bases and no ``__post_init__``: one the rule may give a ``__post_init__`` of its own."""
    return not node.bases and not node.keywords and not any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__post_init__" for s in node.body)


def _fields(node: ast.ClassDef) -> set[str]:
    return {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}


def _imports(tree: ast.Module) -> dict[str, set[str]]:
    bindings: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings.setdefault(alias.asname, set()).add(alias.name)
                else:
                    top = alias.name.split(".")[0]
                    bindings.setdefault(top, set()).add(top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bindings.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
    return bindings
