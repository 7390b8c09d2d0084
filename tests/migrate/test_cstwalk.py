"""The engine's traversal (``migrate.cstwalk``) and positions (``migrate.positions``) against libcst's own.

Both replace libcst machinery for speed, so each is held to libcst's result on real code: the golden
inputs and a slice of the installed transformers package (large, varied modern Python)."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from importlib.metadata import version
from pathlib import Path

import libcst as cst
import pytest
import transformers
from libcst.metadata import MetadataWrapper, PositionProvider

from migrate import cstwalk, positions

FIXTURES = Path(__file__).parents[1] / "fixtures"
TRANSFORMERS = Path(transformers.__file__).parent


def _sources() -> list[tuple[str, str]]:
    paths = sorted(FIXTURES.glob("*/*/before/**/*.py"))
    paths += sorted((TRANSFORMERS / "models" / "llama").glob("*.py"))
    paths += [TRANSFORMERS / name for name in ("trainer_pt_utils.py", "training_args.py", "modeling_utils.py")]
    return [(str(path), path.read_text(encoding="utf-8")) for path in paths]


SOURCES = _sources()
CORPUS = [(path, cst.parse_module(source)) for path, source in SOURCES]


def _all_nodes(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _all_nodes(child)


def _plan_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    children = []
    for name, kind in cstwalk._plan(type(node)):
        value = getattr(node, name)
        if kind in (cstwalk.SEQUENCE, cstwalk.BODY) or (kind == cstwalk.EITHER and isinstance(value, (tuple, list))):
            children.extend(value)
        elif isinstance(value, cst.CSTNode):
            children.append(value)
    return children


def test_the_plan_lists_every_child_in_libcst_order():
    checked = 0
    for _, module in CORPUS:
        for node in _all_nodes(module):
            assert [id(c) for c in _plan_children(node)] == [id(c) for c in node.children], type(node).__name__
            checked += 1
    assert checked > 50_000


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def visit_Name(self, node):
        self.events.append(("Name", id(node)))

    def visit_Call(self, node):
        self.events.append(("Call", id(node)))

    def leave_Call(self, node):
        self.events.append(("/Call", id(node)))

    def visit_Comment(self, node):  # a leaf class: entered only because a callback asks for it
        self.events.append(("Comment", id(node)))

    def visit_FunctionDef(self, node):
        self.events.append(("FunctionDef", id(node)))
        return not node.name.value.startswith("_")  # False skips the body, as in libcst


def test_visit_calls_the_same_callbacks_in_the_same_order_as_libcst():
    for path, module in CORPUS:
        theirs, ours = _Recorder(), _Recorder()
        module.visit(theirs)
        cstwalk.visit(module, ours)
        assert ours.events == theirs.events, path


class _Rewriter(cst.CSTTransformer):
    """Exercises every way a transformer changes a tree: replace, remove from a sequence, from an
    optional and a sentinel field, flatten into a body, and empty a statement line."""

    def __init__(self) -> None:
        self.calls = 0

    def leave_Name(self, original, updated):
        self.calls += 1
        return updated.with_changes(value=updated.value.upper()) if len(updated.value) == 1 else updated

    def leave_Arg(self, original, updated):
        if updated.keyword is not None and updated.keyword.value.startswith("r"):
            return cst.RemoveFromParent()
        return updated

    def leave_Annotation(self, original, updated):  # optional field: Param.annotation
        return cst.RemoveFromParent()

    def leave_Comma(self, original, updated):  # sentinel field on elements, sequence items elsewhere
        return cst.RemoveFromParent() if isinstance(original.whitespace_after, cst.ParenthesizedWhitespace) else updated

    def leave_Expr(self, original, updated):
        if isinstance(updated.value, cst.SimpleString):
            return cst.RemoveFromParent()  # docstrings go: their lines empty, the body drops them
        return updated

    def leave_Import(self, original, updated):
        return cst.FlattenSentinel([updated, updated])

    def leave_Pass(self, original, updated):
        return cst.RemoveFromParent()


def test_transform_gives_libcst_s_result():
    for path, module in CORPUS:
        theirs, ours = _Rewriter(), _Rewriter()
        try:
            expected = module.visit(theirs).code
        except Exception as error:  # the rewriter can make a tree libcst refuses; then both must refuse
            with pytest.raises(type(error)):
                cstwalk.transform(module, ours)
            continue
        assert cstwalk.transform(module, ours).code == expected, path
        assert ours.calls == theirs.calls


def test_an_unchanged_tree_is_returned_as_it_is():
    class Nothing(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            return updated

    for _, module in CORPUS:
        assert cstwalk.transform(module, Nothing()) is module


def test_skipped_subtrees_are_not_entered():
    module = cst.parse_module("import os\nx = os.path.join(a, b)\ndef f():\n    import sys\n")
    seen = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node):
            seen.append(node.value)

    cstwalk.visit(module, Names(), skip=(cst.BaseExpression,))
    assert seen == []  # every Name is inside an expression or an import alias's name... expressions
    cstwalk.visit(module, Names())
    assert seen == ["os", "x", "os", "path", "join", "a", "b", "f", "sys"]


def test_find_stops_at_the_first_match():
    module = cst.parse_module("a = f(1)\nb = g(2)\n")
    tested = []

    def is_call(node):
        tested.append(type(node).__name__)
        return isinstance(node, cst.Call)

    assert cstwalk.find(module, is_call)
    assert tested == ["Module", "SimpleStatementLine", "Assign", "AssignTarget", "Name", "Call"]  # parents first
    assert not cstwalk.find(module, lambda node: isinstance(node, cst.Lambda))


def test_removing_a_required_child_is_refused_like_libcst():
    class DropValue(cst.CSTTransformer):
        def leave_Integer(self, original, updated):
            return cst.RemoveFromParent()

    module = cst.parse_module("x = 1\n")
    with pytest.raises(TypeError):
        module.visit(DropValue())
    with pytest.raises(TypeError):
        cstwalk.transform(module, DropValue())


def test_positions_equal_libcst_position_provider_for_every_node():
    checked = 0
    for path, module in CORPUS:
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = list(_all_nodes(module))
        found = positions.starts(module, nodes)
        for node in nodes:
            start = expected[node].start
            assert found[id(node)] == (start.line, start.column), (path, type(node).__name__)
            checked += 1
    assert checked > 50_000


def test_positions_by_statement_equal_position_provider_for_every_node():
    checked = 0
    for (path, source), (_, module) in zip(SOURCES, CORPUS):
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        groups = {statement: list(_all_nodes(statement)) for statement in module.body}
        found = positions.starts_by_statement(module, source, groups)
        assert found is not None, path
        for nodes in groups.values():
            for node in nodes:
                start = expected[node].start
                assert found[id(node)] == (start.line, start.column), (path, type(node).__name__)
                checked += 1
    assert checked > 50_000


TRICKY = [
    "@decorator\n@other(\n    1)\ndef f():\n    pass\n\n\nasync def g():\n    pass\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\ntry:\n    x\nexcept E:\n    y\nfinally:\n    z\nw = 1\n",
    "match = 1\nmatch command:\n    case 1:\n        pass\nprint(match)\n",
    "a = 1; b = 2\ns = '''\ndef not_code():\n'''\ncall(\nx,\n)\ny = 1 + \\\n2\nclass C: pass\n",
    "x = 'a#b'  # comment\n# def commented():\nz = \"\"\"\\\"\"\"\"\nt = f\"{x!r}\"\n",
    "a = 1\r\nif a:\r\n    b = 2\r\nc = 3",
    "a = 1\rb = (\r2)\rc = 3\r",
    "\fdef after_form_feed():\n    pass\nx = 1\n",
]


@pytest.mark.parametrize("source", TRICKY)
def test_module_level_lines_from_the_scan_equal_libcst_s(source):
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = positions._scanned_lines(module, source)
    assert lines == {id(statement): expected[statement].start.line for statement in module.body}


def test_module_level_lines_from_the_scan_equal_the_standard_parser_s_on_real_code():
    for path, source in SOURCES:
        module = cst.parse_module(source)
        assert positions._scanned_lines(module, source) == positions._parsed_lines(module, source), path


def test_a_scan_that_disagrees_with_the_tree_gives_way():
    source = "def f():\n    pass\n"
    module = cst.parse_module(source)
    assert positions._scanned_lines(module, "class f:\n    pass\n") is None  # keyword check
    assert positions._scanned_lines(module, "x = 1\ny = 2\n") is None  # count and kind
    assert positions._statement_lines(module, source) == {id(module.body[0]): 1}


def test_positions_by_statement_where_the_standard_parser_cannot_place_statements():
    module = cst.parse_module("a = 1\rb = 2\r")  # lone carriage returns: ast and libcst may count lines apart
    assert positions._parsed_lines(module, "a = 1\rb = 2\r") is None
    assert positions.starts_by_statement(module, "a = 1\rb = 2\r", {module.body[1]: [module.body[1]]}) == {
        id(module.body[1]): (2, 0)}  # the scan counts line breaks as libcst does
    newer = "type Alias = int\n"  # PEP 695: libcst parses it, this Python's ast may not
    module = cst.parse_module(newer)
    found = positions.starts_by_statement(module, newer, {module.body[0]: [module.body[0]]})
    assert found is None or found[id(module.body[0])] == (1, 0)


def test_positions_of_a_few_nodes_and_of_nodes_not_in_the_tree():
    module = cst.parse_module("import os\n\n\n# a comment\ndef f(\n    a,\n):\n    return os.sep\n")
    function = module.body[1]
    returned = function.body.body[0].body[0].value
    stranger = cst.Name("elsewhere")
    found = positions.starts(module, [function, returned, function.body, stranger])
    assert found[id(function)] == (5, 0)
    assert found[id(returned)] == (8, 11)
    assert found[id(function.body)] == (8, 4)  # an indented block starts at its first statement
    assert id(stranger) not in found


@pytest.mark.slow
def test_module_level_lines_from_the_scan_equal_the_standard_parser_s_on_every_stdlib_and_transformers_file():
    """The exhaustive version of the check above (about 1,700 files, a minute): no file declined."""
    import sysconfig

    paths = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")) + sorted(TRANSFORMERS.rglob("*.py"))[:1500]
    checked = 0
    for path in paths:
        try:
            source = path.read_text(encoding="utf-8")
            module = cst.parse_module(source)
        except (UnicodeDecodeError, cst.ParserSyntaxError):
            continue
        scanned = positions._scanned_lines(module, source)
        assert scanned is not None, path
        parsed = positions._parsed_lines(module, source)
        assert parsed is None or scanned == parsed, path
        checked += 1
    assert checked > 1_500


# --- the libcst internals cstwalk reads (pyproject.toml bounds libcst to the versions these tests passed on) ---

LIBCST = f"libcst {version('libcst')}"
CHANGED = f"{LIBCST} changed an internal that migrate/cstwalk.py reads; adapt cstwalk, then raise the bound in pyproject.toml"


def _holds_a_node(annotation: object) -> bool:
    if isinstance(annotation, type):
        return issubclass(annotation, cst.CSTNode)
    return any(_holds_a_node(arg) for arg in typing.get_args(annotation))


def _node_classes() -> list[type]:
    return [value for value in vars(cst).values()
            if isinstance(value, type) and issubclass(value, cst.CSTNode) and dataclasses.is_dataclass(value)
            and not inspect.isabstract(value)]


def test_libcst_still_has_the_visit_helpers_whose_names_the_plan_reads():
    from libcst._nodes import internal

    missing = [name for name in cstwalk._KINDS if not callable(getattr(internal, name, None))]
    assert not missing, f"{CHANGED}: libcst._nodes.internal no longer has {missing}"
    assert callable(getattr(cst.CSTNode, "_is_removable", None)), f"{CHANGED}: CSTNode._is_removable is gone"


def test_the_plan_read_from_libcst_s_source_names_every_child_field_of_every_node_class():
    """cstwalk reads each class's ``_visit_and_replace_children`` source: one constructor call with
    ``field=visit_<kind>(...)`` keywords. Every dataclass field that can hold a node must be in that plan."""
    wrong = {}
    for node_class in _node_classes():
        try:
            planned = {name for name, _ in cstwalk._plan(node_class)}
        except (OSError, TypeError, SyntaxError) as error:  # no source to read, or not one constructor call
            wrong[node_class.__name__] = f"source of _visit_and_replace_children unreadable: {error}"
            continue
        hints = typing.get_type_hints(node_class)
        children = {field.name for field in dataclasses.fields(node_class) if _holds_a_node(hints[field.name])}
        if planned != children:
            wrong[node_class.__name__] = f"plan {sorted(planned)} but child fields {sorted(children)}"
    assert len(_node_classes()) > 150, f"{CHANGED}: libcst exports only {len(_node_classes())} node classes"
    assert not wrong, f"{CHANGED}: {wrong}"


def test_the_leaf_classes_still_come_from_libcst_s_whitespace_and_operator_modules():
    expected = {cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.Comment, cst.EmptyLine, cst.Newline,
                cst.TrailingWhitespace, cst.Comma, cst.Dot, cst.AssignEqual, cst.Colon, cst.Add, cst.Equal}
    assert expected <= cstwalk.LEAF_CLASSES, f"{CHANGED}: libcst._nodes.op / .whitespace moved {expected - cstwalk.LEAF_CLASSES}"
