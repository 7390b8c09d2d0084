"""What one Python text says about its stock objects, by simple local inference over its ``ast`` (the
user's code is never imported or run). Shared by the NM7xx checks: one parse, one walk per text.

A variable has a stock type only when every binding of it in its scope gives that type:
``x = TrainingArguments(...)``, ``a, b = HfArgumentParser((A, B)).parse_args_into_dataclasses()`` (and
``TrlParser``, ``parse_json_file``/``parse_yaml_file``/``parse_dict``), ``model = AutoModelForCausalLM.
from_pretrained(...)``, a parameter or variable annotated with a stock class, a plain alias of a typed variable
(``args = training_args``: the alias has its type), and a parameter of a module-level function that every call of the
function in the text passes a value of one stock type (``def build(targs): ...`` called only as
``build(training_args)``; typed as an annotation is, ``exact=False``: another module may call it with a subclass, so
only the Neuron-era names are sure). Anything else (a loop variable, a second assignment of another kind,
``global``, a function also called with other values, passed around or decorated) leaves it untyped: no check.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Callable, Iterator, TypeVar, cast, overload

from codemods._lib.forwarded_init import init_shape
from codemods.verify import _index
from migrate.verification import Violation

MODEL = "transformers.PreTrainedModel"
PARSERS = ("transformers.HfArgumentParser", "trl.TrlParser")
PARSE_METHODS = frozenset({
    "parse_args_into_dataclasses", "parse_json_file", "parse_yaml_file", "parse_dict", "parse_args_and_config",
})
FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
#: exceptions whose handler means "the user expects this to fail"
CATCH_ALL = frozenset({"Exception", "BaseException"})


_Node = TypeVar("_Node", bound=ast.AST)


@dataclass(eq=False)  # compared (and hashed) by identity: one per class statement
class LocalClass:
    name: str
    node: ast.ClassDef
    bases: list[ast.expr]
    names: set[str] = field(default_factory=set)  # attributes its body and methods define
    dynamic: bool = False  # __getattr__, setattr(self, ...), __dict__: attributes are not known
    defines_init: bool = False
    dataclass: bool = False


@dataclass(frozen=True)
class Type:
    """The type of a value: a stock class (indexed name), a local class deriving from one, or a parser
    holding the dataclass types it parses into."""

    stock: str | None = None
    local: LocalClass | None = None
    parses: tuple["Type | None", ...] | None = None
    #: False for an annotation: the value may be an instance of a subclass defined elsewhere, with more
    #: attributes and methods than the class
    exact: bool = True
    #: a tokenizer loaded with ``<Class>.from_pretrained``: the class name (``AutoTokenizer``, ``BertTokenizer``);
    #: its attributes are dynamic, only the methods transformers 5 removed are known (``_index.tokenizer_gone``)
    tokenizer: str | None = None


class Facts:
    def __init__(self, tree: ast.Module, outer_imports: dict[str, set[str]] | None = None) -> None:
        self.tree = tree
        self._outer_imports = outer_imports or {}  # earlier notebook cells' imports
        self.parents: dict[int, ast.AST] = {}
        self.imports: dict[str, str] = {}  # local name -> qualified, for names bound only by imports
        self.classes: dict[str, LocalClass] = {}
        #: attribute names set, probed or defaulted anywhere in the text (x.a = ..., hasattr(x, "a"),
        #: getattr(x, "a", default), setattr(x, "a", ...)): never reported
        self.exempt_attrs: set[str] = set()
        self.dynamic_names: set[str] = set()  # variables passed to setattr/vars or whose __dict__ is used
        self._by_type: dict[type, list[ast.AST]] = {}  # the checks read nodes from this one walk
        self._types: dict[tuple[int, str], Type | None] = {}
        self._binders: dict[int, dict[str, list]] = {}  # scope id -> name -> typing thunks
        self._callers: dict[str, list[ast.Call]] | None = None  # see _calls_of
        self._defs: set[str] | None = None  # see _module_defs
        self._gather()

    # ---------------------------------------------------------------------------------------- gathering

    def _gather(self) -> None:
        bindings: dict[str, set[str]] = {local: set(q) for local, q in self._outer_imports.items()}
        defined: set[str] = set()
        duplicated: set[str] = set()  # classes defined twice: which one a name means is not known
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            self._by_type.setdefault(type(node), []).append(node)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    bindings.setdefault(local, set()).add(alias.name if alias.asname else local)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        bindings.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
            elif isinstance(node, ast.ClassDef):
                defined.add(node.name)
                if node.name in self.classes:
                    duplicated.add(node.name)
                self.classes[node.name] = self._local_class(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                defined.add(node.id)
                duplicated.add(node.id)  # a class name bound again (Args = Other): not known which
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self.exempt_attrs.add(node.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                self._note_reflection(node)
            elif isinstance(node, ast.Attribute) and node.attr == "__dict__" and isinstance(node.value, ast.Name):
                self.dynamic_names.add(node.value.id)
        # a name bound by one import and nothing else resolves; two meanings (or a local def) do not
        self.imports = {local: next(iter(q)) for local, q in bindings.items() if len(q) == 1 and local not in defined}
        for name in duplicated & set(self.classes):
            del self.classes[name]

    def _note_reflection(self, node: ast.Call) -> None:
        name = cast(ast.Name, node.func).id  # called for calls of a plain name
        if name in ("hasattr", "getattr", "setattr", "delattr") and len(node.args) >= 2:
            literal = node.args[1]
            if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
                if name != "getattr" or len(node.args) >= 3 or node.keywords:
                    self.exempt_attrs.add(literal.value)
            elif name in ("setattr", "delattr") and isinstance(node.args[0], ast.Name):
                self.dynamic_names.add(node.args[0].id)
        elif name == "vars" and node.args and isinstance(node.args[0], ast.Name):
            self.dynamic_names.add(node.args[0].id)

    def _local_class(self, node: ast.ClassDef) -> LocalClass:
        local = LocalClass(node.name, node, list(node.bases))
        local.dataclass = any(_decorator_name(d) in ("dataclass", "dataclasses.dataclass") for d in node.decorator_list)
        if node.keywords:  # a metaclass can do anything
            local.dynamic = True
        for statement in node.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local.names.add(statement.name)
                if statement.name in ("__getattr__", "__getattribute__", "__setattr__"):
                    local.dynamic = True
                if statement.name == "__init__":
                    local.defines_init = True
            elif isinstance(statement, ast.ClassDef):
                local.names.add(statement.name)
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                local.names.add(statement.target.id)
            elif isinstance(statement, ast.Assign):
                for target in statement.targets:
                    local.names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
            elif not isinstance(statement, (ast.Expr, ast.Pass)):
                local.dynamic = True  # if/for/try in a class body: names we do not follow
        for inner in ast.walk(node):
            if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id == "self" \
                    and isinstance(inner.ctx, ast.Store):
                local.names.add(inner.attr)
            elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in ("setattr", "vars"):
                local.dynamic = True
            elif isinstance(inner, ast.Attribute) and inner.attr == "__dict__":
                local.dynamic = True
        return local

    @overload
    def nodes(self, node_type: type[_Node], /) -> Iterator[_Node]: ...

    @overload
    def nodes(self, *types: type[ast.AST]) -> Iterator[ast.AST]: ...

    def nodes(self, *types: type[ast.AST]) -> Iterator[ast.AST]:
        """Every node of these classes, in walk order per class."""
        for node_type in types:
            yield from self._by_type.get(node_type, ())

    # ----------------------------------------------------------------------------------------- resolving

    def qualified(self, node: ast.expr) -> str | None:
        """The stock qualified name an expression refers to (``transformers.TrainingArguments``)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.imports:
            return None
        base = self.imports[node.id]
        if _index.package_of(base) is None:
            return None
        return ".".join([base, *reversed(parts)])

    def class_type(self, node: ast.expr) -> Type | None:
        """The class an expression names, when it is a stock class or a local class deriving from one."""
        if isinstance(node, ast.Name) and node.id in self.classes:
            local = self.classes[node.id]
            return Type(local=local) if self.stock_base(local) is not None else None
        qualified = self.qualified(node)
        info = _index.class_info(qualified) if qualified is not None else None
        return Type(stock=info.qualified) if info is not None else None

    def stock_class(self, type_: Type) -> str:
        """The indexed stock class behind a type whose attributes or methods are known: its own, or the stock base
        of its local class."""
        return type_.stock or cast(str, self.stock_base(cast(LocalClass, type_.local)))

    def _base_info(self, local: LocalClass) -> _index.ClassInfo:
        """The indexed stock base of a local class a ``Type`` was made for (made only for those that have one)."""
        return _index.indexed_class(cast(str, self.stock_base(local)))

    def stock_base(self, local: LocalClass, seen: frozenset[str] = frozenset()) -> str | None:
        """The one indexed stock class a local class derives from (through local classes), else None."""
        found = set()
        for base in local.bases:
            if isinstance(base, ast.Name) and base.id in self.classes and base.id not in seen:
                inner = self.stock_base(self.classes[base.id], seen | {local.name})
                if inner is None:
                    return None
                found.add(inner)
                continue
            qualified = self.qualified(base)
            info = _index.class_info(qualified) if qualified else None
            if info is None:
                return None  # a base we know nothing of may add anything
            found.add(info.qualified)
        return found.pop() if len(found) == 1 else None

    def local_chain(self, local: LocalClass) -> Iterator[LocalClass]:
        """The local class and the local classes it derives from."""
        seen = set()
        pending = [local]
        while pending:
            current = pending.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            yield current
            pending.extend(self.classes[b.id] for b in current.bases if isinstance(b, ast.Name) and b.id in self.classes)

    def attributes(self, type_: Type) -> frozenset[str] | None:
        """Every attribute an instance of ``type_`` has; None when not known."""
        if type_.stock is not None:
            return _index.indexed_class(type_.stock).attrs
        if type_.local is None:
            return None
        names: set[str] = set()
        for local in self.local_chain(type_.local):
            if local.dynamic:
                return None
            names |= local.names
        stock = self._base_info(type_.local).attrs
        return None if stock is None else stock | names

    def init_keywords(self, type_: Type) -> frozenset[str] | None:
        """Keywords the constructor accepts; None when not known."""
        if type_.stock is not None:
            return _index.indexed_class(type_.stock).init
        if type_.local is None:
            return None
        names: set[str] = set()
        for local in self.local_chain(type_.local):
            if local.dynamic:
                return None
            if local.defines_init:
                # an __init__ that passes **kwargs unchanged to super().__init__ (of one base) hands every keyword
                # it does not name to the stock base: those are checked against it (rt6K K1)
                shape = init_shape(local.node)
                if not shape.forwards or len(local.bases) != 1 or local.dataclass:
                    return None
                names |= shape.own
                continue
            if local.dataclass:
                names |= {s.target.id for s in local.node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
        stock = self._base_info(type_.local).init
        return None if stock is None else stock | names

    # ------------------------------------------------------------------------------------------ scopes

    def scope_of(self, node: ast.AST) -> ast.AST:
        parent = self.parents.get(id(node))
        while parent is not None and not isinstance(parent, (*FUNCTION_SCOPES, ast.ClassDef, ast.Module)):
            parent = self.parents.get(id(parent))
        return parent if parent is not None else self.tree

    def type_of(self, node: ast.expr) -> Type | None:
        """The type of a variable read (a Name), looking in its scope, then the module's."""
        if not isinstance(node, ast.Name) or node.id in self.dynamic_names:
            return None
        scope = self.scope_of(node)
        if isinstance(scope, ast.ClassDef):
            return None
        if node.id not in self._bound_in(scope) and scope is not self.tree:
            outer = self.scope_of(scope)
            while isinstance(outer, ast.ClassDef):  # methods see the module, not the class body
                outer = self.scope_of(outer)
            if outer is not self.tree:
                return None  # a closure: the enclosing function's binding is not followed
            scope = self.tree
        return self._scope_type(scope, node.id)

    def _bound_in(self, scope: ast.AST) -> dict[str, list]:
        """Name -> how each binding of it in ``scope`` is typed (thunks: typing may need other names of
        the scope, so it waits until asked). One walk per scope."""
        binders = self._binders.get(id(scope))
        if binders is None:
            binders = self._binders[id(scope)] = {}
            for name, thunk in self._bindings(scope):
                binders.setdefault(name, []).append(thunk)
        return binders

    def _scope_type(self, scope: ast.AST, name: str) -> Type | None:
        key = (id(scope), name)
        if key not in self._types:
            self._types[key] = None  # a cycle (x = f(x)) stays unknown
            kinds = {thunk() for thunk in self._bound_in(scope).get(name, ())}
            self._types[key] = kinds.pop() if len(kinds) == 1 else None
        return self._types[key]

    def _bindings(self, scope: ast.AST) -> Iterator[tuple[str, Callable[[], "Type | None"]]]:
        """(name, a thunk giving the type it is bound to or None) for every binding made directly in ``scope``."""
        untyped = _untyped
        if isinstance(scope, FUNCTION_SCOPES):
            arguments = scope.args
            receiver = self._receiver_type(scope)
            for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                if receiver is not None and arg is (*arguments.posonlyargs, *arguments.args)[0]:
                    yield arg.arg, functools.partial(lambda found: found, receiver)
                elif arg.annotation is None and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield arg.arg, functools.partial(self._parameter_type, scope, arg)
                else:
                    yield arg.arg, functools.partial(self._annotation_type, arg.annotation)
            for rest in (arguments.vararg, arguments.kwarg):
                if rest is not None:
                    yield rest.arg, untyped
        typed_targets: set[int] = set()  # Name nodes an assignment below gives its type
        for node in _walk_scope(scope):
            if isinstance(node, ast.Assign):
                value_type = functools.lru_cache(maxsize=1)(functools.partial(self._value_type, node.value))
                for target in node.targets:
                    typed_targets |= {id(n) for n in ast.walk(target) if isinstance(n, ast.Name)}
                    if isinstance(target, ast.Name):
                        yield target.id, value_type
                    elif isinstance(target, (ast.Tuple, ast.List)):
                        yield from self._unpack(target, node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                typed_targets.add(id(node.target))
                yield node.target.id, functools.partial(self._annotation_type, node.annotation)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    yield name, untyped
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                if id(node) not in typed_targets:
                    yield node.id, untyped  # for, with, augmented assignment, walrus, del ...
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    yield (alias.asname or alias.name.split(".")[0]), untyped
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not scope:
                yield node.name, untyped
            elif isinstance(node, ast.ExceptHandler) and node.name:
                yield node.name, untyped

    def _unpack(self, target: ast.Tuple | ast.List, value: ast.expr) -> Iterator[tuple[str, Callable[[], "Type | None"]]]:
        elements = target.elts
        starred = any(isinstance(e, ast.Starred) for e in elements)
        parsed = functools.lru_cache(maxsize=1)(functools.partial(self._parsed_types, value))

        def element_type(index: int) -> Type | None:
            types = parsed()
            if types is None or starred or not index < len(types) <= len(elements):
                return None
            return types[index]

        for index, element in enumerate(elements):
            for name in ast.walk(element):
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                    yield name.id, functools.partial(element_type, index) if name is element else _untyped

    def _calls_of(self, name: str) -> list[ast.Call] | None:
        """The calls ``name(...)`` of the text, when every read of the name is such a call (never passed on, stored
        or called through an attribute); None otherwise."""
        if self._callers is None:
            callers: dict[str, list[ast.Call]] = {}
            callees: set[int] = set()
            for call in self.nodes(ast.Call):
                if isinstance(call.func, ast.Name):
                    callers.setdefault(call.func.id, []).append(call)
                    callees.add(id(call.func))
            other = {n.id for n in self.nodes(ast.Name) if isinstance(n.ctx, ast.Load) and id(n) not in callees}
            self._callers = {name: calls for name, calls in callers.items() if name not in other}
        return self._callers.get(name)

    def _receiver_type(self, function: ast.AST) -> Type | None:
        """The type of ``self`` in a plain method of a module-level local class deriving from a stock class
        (``def __post_init__(self)`` of ``class MyArgs(TrainingArguments)``): that class, as an annotation gives
        it (``exact=False``: the instance may be of a subclass defined elsewhere, so only Neuron-era names are
        sure). None for a static / class method, a decorated one, an annotated receiver, or any other function."""
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
            return None
        owner = self.parents.get(id(function))
        positional = (*function.args.posonlyargs, *function.args.args)
        if not (isinstance(owner, ast.ClassDef) and self.parents.get(id(owner)) is self.tree and positional
                and positional[0].annotation is None):
            return None
        local = self.classes.get(owner.name)
        if local is None or local.node is not owner or self.stock_base(local) is None:
            return None
        return Type(local=local, exact=False)

    def _parameter_type(self, function: ast.FunctionDef | ast.AsyncFunctionDef, parameter: ast.arg) -> Type | None:
        """The type of an unannotated parameter of a module-level function: the one stock type every call of the
        function in the text passes it (by position or keyword), as an annotation would give it (``exact=False``).
        None for a method, a nested or decorated function, a name bound twice, a call that leaves the parameter
        to its default or passes ``*args`` / ``**kwargs``, and values of different (or unknown) types."""
        if self.parents.get(id(function)) is not self.tree or function.decorator_list \
                or function.name in self.classes or function.name not in self._module_defs():
            return None
        calls = self._calls_of(function.name)
        if not calls:
            return None
        arguments = function.args
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        index = positional.index(parameter.arg) if parameter.arg in positional else None
        keyword = parameter.arg if parameter not in arguments.posonlyargs else None
        kinds = set()
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return None
            value = call.args[index] if index is not None and index < len(call.args) else \
                next((k.value for k in call.keywords if k.arg is not None and k.arg == keyword), None)
            if value is None:
                return None
            kinds.add(self.type_of(value) if isinstance(value, ast.Name) else self._value_type(value))
            if None in kinds or len(kinds) > 1:
                return None
        found = kinds.pop()
        return dataclasses.replace(found, exact=False) if found is not None and found.parses is None else None

    def _module_defs(self) -> set[str]:
        """Names of module-level functions bound once in the whole text (by their def and nothing else)."""
        if self._defs is None:
            bound: dict[str, int] = {}
            for node in ast.walk(self.tree):
                names = ([node.name] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                         else [node.id] if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
                         else [a.asname or a.name.split(".")[0] for a in node.names]
                         if isinstance(node, (ast.Import, ast.ImportFrom)) else list(node.names)
                         if isinstance(node, (ast.Global, ast.Nonlocal)) else [])
                for name in names:
                    bound[name] = bound.get(name, 0) + 1
            self._defs = {s.name for s in self.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and bound.get(s.name) == 1}
        return self._defs

    def _annotation_type(self, annotation: ast.expr | None) -> Type | None:
        if annotation is None:
            return None
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        class_type = self.class_type(annotation)
        return dataclasses.replace(class_type, exact=False) if class_type is not None else None

    def _value_type(self, value: ast.expr) -> Type | None:
        if isinstance(value, ast.Name):  # an alias: args = training_args
            return self.type_of(value)
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and isinstance(value.slice.value, int):
            parsed = self._parsed_types(value.value)
            index = value.slice.value
            return parsed[index] if parsed is not None and 0 <= index < len(parsed) else None
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        class_type = self.class_type(func)
        if class_type is not None:
            if class_type.stock in PARSERS:
                return Type(stock=class_type.stock, parses=self._parser_types(value))
            return class_type
        if isinstance(func, ast.Attribute) and func.attr == "from_pretrained" and _is_model_class(self.qualified(func.value)):
            return Type(stock=MODEL)
        if isinstance(func, ast.Attribute) and func.attr == "from_pretrained":
            tokenizer = _index.tokenizer_class(self.qualified(func.value))
            return Type(tokenizer=tokenizer) if tokenizer is not None else None
        return None

    def _parser_types(self, call: ast.Call) -> tuple[Type | None, ...] | None:
        argument = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "dataclass_types"), None)
        if isinstance(argument, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in argument.elts):
                return None
            return tuple(self.class_type(e) for e in argument.elts)
        return (self.class_type(argument),) if argument is not None else None

    def _parsed_types(self, value: ast.expr) -> tuple[Type | None, ...] | None:
        """The dataclass instances a parser's parse call returns, in order."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in PARSE_METHODS):
            return None
        parser = value.func.value
        parser_type = self._value_type(parser) if isinstance(parser, ast.Call) else self.type_of(parser)
        return parser_type.parses if parser_type is not None else None

    def violation(self, node: ast.expr | ast.stmt, key: tuple, message: str) -> Violation:
        statement: ast.AST | None = node
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self.parents.get(id(statement))
        end = (statement.end_lineno if statement is not None else None) or node.lineno
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            end = max(statement.lineno, statement.body[0].lineno - 1)  # a def: its header, not its body
        return Violation(node.lineno, node.col_offset, end, key, " ".join(message.split()))

    # ------------------------------------------------------------------------------------------ guards

    def guarded(self, node: ast.AST, errors: frozenset[str]) -> bool:
        """Inside a ``try`` whose handlers catch one of ``errors`` (or everything)."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, ast.Try) and child in parent.body:
                for handler in parent.handlers:
                    caught = _handler_names(handler.type)
                    if caught is None or caught & (errors | CATCH_ALL):
                        return True
            child, parent = parent, self.parents.get(id(parent))
        return False

    def version_guarded(self, node: ast.AST) -> bool:
        """Inside a branch of an ``if`` that tests versions or availability."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and _tests_versions(parent.test):
                return True
            child, parent = parent, self.parents.get(id(parent))
        return False

    def conditional(self, node: ast.AST) -> bool:
        """Under an ``if`` (other than ``if __name__ == "__main__"``): a version or availability test may
        keep it from running."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and not _is_main_test(parent.test):
                return True
            child, parent = parent, self.parents.get(id(parent))
        return False


def _untyped() -> None:
    return None


def _tests_versions(test: ast.expr) -> bool:
    """An ``if`` test about versions or availability (``transformers.__version__ >= ...``,
    ``is_torch_xla_available()``): the branch is written for another version of the stack."""
    text = ast.unparse(test).lower()
    return "version" in text or "available" in text


def _walk_scope(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a scope, not entering nested functions, classes or comprehensions (their own scopes)."""
    pending = list(ast.iter_child_nodes(scope))
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (*FUNCTION_SCOPES, ast.ClassDef)):
            pending.extend(node.decorator_list if not isinstance(node, ast.Lambda) else ())
            continue
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        pending.extend(ast.iter_child_nodes(node))


def _handler_names(node: ast.expr | None) -> frozenset[str] | None:
    if node is None:
        return None  # a bare except
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    return frozenset(item.attr if isinstance(item, ast.Attribute) else getattr(item, "id", "") for item in items)


def _is_main_test(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    return ast.unparse(node)


def _is_model_class(qualified: str | None) -> bool:
    """A transformers model class (``AutoModelForCausalLM``, ``LlamaForCausalLM``, ``BertModel``)."""
    if qualified is None or not qualified.startswith("transformers."):
        return False
    name = qualified.rsplit(".", 1)[-1]
    names = _index.exports(qualified.rsplit(".", 1)[0]) or ()
    return name in names and (name.startswith("AutoModel") or "For" in name or
                              (name.endswith("Model") and not name.startswith("TF")))


def facts_for(tree: ast.Module, shared: dict) -> Facts:
    """One ``Facts`` per text, shared by every check."""
    if "facts" not in shared:
        shared["facts"] = Facts(tree, shared.get("outer_imports"))
    return shared["facts"]
