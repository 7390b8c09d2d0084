"""One requirement specifier at a time: what the optimum-neuron / PyTorch-XLA dependency stack becomes on
TorchNeuron. Shared by every dependency rule (requirements files, pyproject, setup.py, setup.cfg, ``pip install``
lines) so they all agree; the versions and package groups are in ``codemods/_tables/requirements_data.py``.

``rewrite(spec, planner)`` returns None (leave the specifier alone) or a ``Rewrite``: the specifiers that
replace it (empty = remove it), a severity and a message. A ``Planner`` is made once per file: it knows which
packages the file already names, so a package is added once and never next to an existing line for it.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from codemods._lib.notebook_cells import code_cells, kernel_code
from codemods._tables.inference_symbols import INF1_MARKERS, INF1_PATH
from codemods._tables.requirements_data import (
    BROUGHT_BY_OPTIMUM_NEURON,
    EXTRA_PACKAGES,
    INF1,
    MODULE_NAMES,
    NATIVE_TORCH_NEURONX,
    NEURON_PACKAGES,
    NEURONX_CC_SDK,
    NEURONX_CC_SPEC,
    PYTHON_WHEELS,
    STOCK_MIN,
    TORCH_LINE,
    TORCH_NEURONX_SPEC,
    TORCH_SPEC,
    TORCHVISION_FOR_TORCH,
    TORCHVISION_SPEC,
    WATCHED,
    XLA_ONLY,
)
from codemods._tables.stock_floors_data import KNOWN_GOOD, REQUIRES, REQUIRES_PYTHON, TARGET_VERSIONS
from codemods.deps import _notebooks as notebooks
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import RuleOptions


def module_of(name: str) -> str:
    """The top-level module the distribution ``name`` (canonical) installs."""
    return MODULE_NAMES.get(name, name.replace("-", "_"))


#: an import statement in a Python line or in a notebook's JSON strings
_IMPORT = re.compile(r"""(?m)(?:^|["'])[ \t]*(?:from|import)[ \t]+([A-Za-z_]\w*)""")
_WATCHED_MODULES = frozenset(module_of(name) for name in WATCHED)


def _introduced() -> dict[str, str]:
    """optimum-neuron class name -> the watched module its stock replacement lives in (``NeuronSFTTrainer`` ->
    ``trl``): the migrated code imports that module, which optimum-neuron used to bring in."""
    from codemods._tables.inference_symbols import diffusion_moves, embedding_moves
    from codemods._tables.training_symbols import TRAINING_MOVES

    found = {}
    for old, new in {**TRAINING_MOVES, **diffusion_moves(), **embedding_moves()}.items():
        if new and old.startswith("optimum.neuron") and module_of(new.split(".")[0]) in _WATCHED_MODULES:
            found[old.rsplit(".", 1)[1]] = module_of(new.split(".")[0])
    return found


#: names an optimum.neuron import binds whose stock class needs another package than transformers
INTRODUCED = _introduced()
_INTRODUCED_NAME = re.compile(r"\b(" + "|".join(sorted(INTRODUCED, key=len, reverse=True)) + r")\b")


def imported_modules(text: str) -> frozenset[str] | None:
    """Project fact: the watched modules a Python file or notebook imports (comments are not imports), and those
    the migrated code will import: an optimum-neuron class whose stock replacement lives in trl / diffusers /
    sentence-transformers (``NeuronSFTTrainer`` -> ``trl.SFTTrainer``) needs that package once optimum-neuron,
    which brought it in, is replaced."""
    found = frozenset(match.group(1) for match in _IMPORT.finditer(text)) & _WATCHED_MODULES
    if "optimum.neuron" in text or "optimum_neuron" in text:
        found |= {INTRODUCED[match.group(1)] for match in _INTRODUCED_NAME.finditer(_code_only(text))}
    return found or None


def _code_only(text: str) -> str:
    """The text without its comment lines (a note that names a class is not a use of it), a notebook's too: there a
    comment is a JSON string of a cell's source (``    "# neuron-migrate: ... processing_class= ...\\n",``), which
    read as code made a second run find calls in the notes the first one wrote. A note of the tool's own
    (``# neuron-migrate: ...``) is left out wherever it stands, trailing a line of code too, and in a notebook whose
    cell source is one JSON string up to that string's next escaped newline (rt8Q-09: a split note listed
    ``DistributedConfig`` for a notebook whose only ``DistributedConfig`` was inside an NM110 note)."""
    return "\n".join(_NOTE.sub("", line) for line in text.splitlines() if _NOT_CODE.match(line) is None)


#: a comment line, or a notebook cell's source line (a JSON string) that is one
_NOT_CODE = re.compile(r'\s*(?:"\s*)?#')
#: a note the tool writes, to the end of its line (in a notebook's JSON, to the escaped newline that ends it)
_NOTE = re.compile(r"#[ \t]*neuron-migrate:(?:[^\\\n]|\\(?!n))*")


#: the names an optimum.neuron import binds: ``import optimum.neuron [as on]``,
#: ``from optimum.neuron[.x] import A, B as C``, the names spread over lines too: in parentheses
#: (``from optimum.neuron import (\n    A,\n    B,\n)``, as black and ruff format a long import; group 1) or after
#: a backslash continuation (group 2). rtB B4: a parenthesized import was no import here, so the app/models.py that
#: NM120 kept on optimum-neuron was not among the files still importing it and requirements.txt lost the package
#: (``optimum.exporters.neuron``, the exporter's Python API, is a module of the optimum-neuron package too)
_ON_MODULE_IMPORT = re.compile(r"""(?m)(?:^|["'])[ \t]*import[ \t]+optimum\.(?:exporters\.)?neuron\b(?:\.\w+)*"""
                               r"""(?:[ \t]+as[ \t]+(\w+))?""")
_ON_FROM_IMPORT = re.compile(r"""(?m)(?:^|["'])[ \t]*from[ \t]+optimum\.(?:exporters\.)?neuron(?:\.\w+)*[ \t]+import[ \t]*"""
                             r"""(?:\(([^)]*)|(?<=\s)((?:[\w \t,]|\\\r?\n)+))""")
#: what a parenthesized name list holds besides names: a comment (in a notebook's JSON, to the escaped newline),
#: a notebook's escaped newlines and the quotes and commas between its source strings, a backslash continuation
_IMPORT_LIST_NOISE = re.compile(r'#(?:[^\\\n]|\\(?!n))*|\\n|\\\r?\n|\s*"\s*,?\s*"')


def _on_from_names(match: re.Match[str]) -> list[tuple[str, str]]:
    """The (imported name, bound name) pairs of one ``_ON_FROM_IMPORT`` match, its names on one line or many."""
    body = match.group(1) if match.group(1) is not None else match.group(2)
    pairs = []
    for part in _IMPORT_LIST_NOISE.sub(" ", body).split(","):
        words = part.split()
        if words and all(word.isidentifier() for word in words):
            pairs.append((words[0], words[-1]))  # ``A as B``: (A, B)
    return pairs


#: an eval/exec of a string literal (f-strings too; a notebook's JSON escapes its quotes)
_EVAL_LITERAL = re.compile(r"""\b(?:eval|exec)\(\s*[rRfF]{0,2}\\?(["'])(.*?)\\?\1""")


def optimum_neuron_kept(text: str) -> bool | None:
    """Project fact: the file evaluates a string that names an optimum.neuron import (``eval(f"on.Neuron{kind}")``).
    neuron-migrate keeps that import (removing it would turn the eval into a NameError; see NM102), so the
    package must stay installed until the code is ported by hand."""
    bound = {match.group(1) or "optimum" for match in _ON_MODULE_IMPORT.finditer(text)}
    for match in _ON_FROM_IMPORT.finditer(text):
        bound |= {name for _, name in _on_from_names(match)}
    if not bound:
        return None
    for match in _EVAL_LITERAL.finditer(text):
        if bound & set(re.findall(r"[A-Za-z_]\w*", match.group(2))):
            return True
    return None


#: an import of the stack a requirement file pins (torch, transformers, optimum[-neuron], torch_xla ...): code that
#: the run may move to the stock stack. Read before and after the run alike (a migrated file imports transformers or
#: torch where it imported optimum.neuron or torch_xla), so the note that names such files is the same on a second run
_STACK_IMPORT = re.compile(r"""(?m)(?:^|["'])[ \t]*(?:from|import)[ \t]+(?:optimum|transformers|torch|torch_xla|"""
                           r"""torch_neuronx|accelerate|trl|peft|diffusers|sentence_transformers|neuronx_distributed)\b""")


def uses_old_stack(text: str) -> bool | None:
    """The Python file or notebook imports the torch / Hugging Face / optimum-neuron stack: code that the run may
    move to the stock stack (transformers 5, torch 2.14), which then needs the TorchNeuron requirements."""
    return True if _STACK_IMPORT.search(text) else None


def old_stack_code(text: str) -> str | None:
    """Project fact: the text of a Python file or notebook that imports the stack (``uses_old_stack``): whether the
    run moves it onto APIs only the new stack has is read from it once migrated (``calls_new_stack``)."""
    return text if _STACK_IMPORT.search(text) else None


#: what only the migrated stack has, in code the run writes: (label, pattern, package, the first release with it).
#: torch.accelerator (torch 2.6), the ``neuron`` device and compile backend (TorchNeuron), transformers 5's
#: DistributedConfig (a trainer's ``model_init_kwargs={"distributed_config": ...}`` too), the ``processing_class=``
#: of the Trainer / trl trainers (transformers 4.46), ``from_pretrained(..., dtype=)`` (transformers 4.56, before it
#: ``torch_dtype``), generation's ``CompileConfig`` (transformers 4.47). A file whose code calls one of them does not
#: run on a pin that excludes that release (``Planner.moved``)
NEW_STACK_APIS: tuple[tuple[str, re.Pattern[str], str, str], ...] = (
    ("torch.accelerator", re.compile(r"\btorch\.accelerator\b"), "torch", "2.6"),
    ("the `neuron` device", re.compile(r"""(?<![\w-])["']neuron(?::\d+)?["']"""), "torch-neuronx", "2.14"),
    ("DistributedConfig (distributed_config)", re.compile(r"\bDistributedConfig\b|\btransformers\.distributed\b"
                                     r"""|["']?\bdistributed_config\b"""), "transformers", "5.0"),
    ("processing_class=", re.compile(r"\bprocessing_class\s*="), "transformers", "4.46"),
    ("from_pretrained(dtype=)", re.compile(r"\.from_pretrained\((?:[^()]|\([^()]*\))*?\bdtype\s*="),
     "transformers", "4.56"),
    ("CompileConfig", re.compile(r"\bCompileConfig\b"), "transformers", "4.47"),
)


def new_stack_calls(text: str) -> tuple[tuple[str, str, str], ...]:
    """What of ``NEW_STACK_APIS`` the code (comments and notes aside) calls: (label, package, first release)."""
    code = _code_only(text)
    return tuple((label, package, first) for label, pattern, package, first in NEW_STACK_APIS
                 if pattern.search(code))


def calls_new_stack(text: str) -> bool:
    """Whether the code (comments and notes aside) calls what only the migrated stack has (``NEW_STACK_APIS``)."""
    return bool(new_stack_calls(text))


def moved_to_new_stack(files: dict[str, str], options: RuleOptions | None) -> tuple[str, ...]:
    """Of ``files`` (path -> text, from ``deps.old-stack``), those whose code after this run calls what only the
    migrated stack has (``calls_new_stack`` on ``migrated_text``): the files the run moved off the old pins. Read
    on the migrated text, which a second run leaves as it is, so a note naming them reads the same then; a file the
    run leaves on APIs the old pins have (plain torch, ``torch.nn.functional.pad``) is not one (rt4D 10). None
    while a run is being simulated."""
    return tuple(moved_calls(files, options))


def moved_calls(files: dict[str, str], options: RuleOptions | None) -> dict[str, tuple[tuple[str, str, str], ...]]:
    """``moved_to_new_stack`` with what each file calls (``new_stack_calls`` on its migrated text)."""
    if options is None or _SIMULATING:
        return {}
    found = {}
    for path, text in sorted(files.items()):
        migrated = migrated_text(path, text, options)
        calls = new_stack_calls(migrated) if migrated is not None else ()
        if calls:
            found[path] = calls
    return found


_SCRIPT = re.compile(r"(?<![\w-])([A-Za-z_][\w-]*\.py)(?![\w-])")


def mentioned_scripts(text: str) -> frozenset[str] | None:
    """Project fact: the Python file names a notebook, script or Dockerfile mentions (``COPY train.py``,
    ``torchrun ../scripts/run_sft.py``): the files it installs packages for, wherever they sit. The tool's own
    ``# neuron-migrate:`` notes are no mentions (NM406's "keep this export until app/main.py is ported" made
    app/main.py one on a second run, and the pip install's note changed: rt5H D3)."""
    return frozenset(_SCRIPT.findall(_TOOL_NOTE.sub("", text))) or None


#: a note this tool wrote, to the end of its line (a notebook's cell line too: ``"# neuron-migrate: ...\n",``)
_TOOL_NOTE = re.compile(r"(?m)# neuron-migrate:.*$")


_NOTE_LINE = re.compile(r"(?m)^\s*# neuron-migrate:.*$")
#: a command run by optimum-cli / neuron_parallel_compile: the packages that install it must stay while it does
_OPTIMUM_CLI = re.compile(r"(?<![\w-])optimum-cli(?![\w-])")
_CLI_KEPT = re.compile(r"(?<![\w-])optimum-cli[\"',\s]+(export|neuron[\"',\s]+serve)\b")
_PARALLEL_COMPILE = re.compile(r"(?<![\w-])neuron_parallel_compile(?![\w-])")
_COMMENT_OR_ECHO = re.compile(r"^\s*(?:#|(?:RUN\s+)?(?:echo|printf)\b)")


def _code_lines(text: str) -> list[str]:
    """The lines of ``text`` that may run something: not comments, not ``echo``/``printf`` text."""
    return [line for line in text.splitlines() if not _COMMENT_OR_ECHO.match(line)]


def _still_running_cli(options: RuleOptions) -> dict[str, str]:
    """``deps.optimum-cli`` less the files whose every ``optimum-cli`` command NM406 replaces by the round trip's
    stock step (``RoundTrip.cli_replaced``, the counts agreeing): they no longer need optimum-neuron's CLI."""
    from codemods.inference._compiled_exports import round_trip

    cli = dict(options.project.of("deps.optimum-cli"))
    trip = round_trip(options) if cli else None
    if trip is None or not trip.cli_replaced:
        return cli
    counts = options.project.of("deps.optimum-cli-count")
    return {path: command for path, command in cli.items()
            if not (path in trip.cli_replaced and counts.get(path) == trip.cli_replaced[path])}


def kept_cli_count(text: str) -> int | None:
    """Project fact: how many ``optimum-cli export`` / ``neuron serve`` commands the file runs (a notebook: over its
    code cells); None for none. A file whose every one NM406 replaces (the compiled-folder round trip) runs none
    after the run (``ProjectDeps.of``)."""
    sources = code_cells(text)
    count = sum(len(_CLI_KEPT.findall(line)) for line in _code_lines("\n".join(sources) if sources is not None else text))
    return count or None


def kept_cli_command(text: str) -> str | None:
    """The first ``optimum-cli export ...`` / ``optimum-cli neuron serve`` that a file runs (NM406 keeps those,
    with a todo), as ``optimum-cli export``; None when it runs none."""
    for line in _code_lines(text):
        match = _CLI_KEPT.search(line)
        if match:
            return "optimum-cli " + re.sub(r"[\"',\s]+", " ", match.group(1))
    return None


def kept_cli_fact(text: str) -> str | None:
    """Project fact: the ``optimum-cli`` command (``kept_cli_command``) a shell script, Makefile, Dockerfile, CI
    workflow, Python command string or notebook (over its code cells: its ``%pip`` lines and ``%%writefile``
    requirement cells arrive one by one, but the notebook is one file) still runs after the run: NM406 / NM410 keep
    ``export`` and ``neuron serve`` with a todo (the same before and after the run: a second run decides the
    same). A notebook's own install lines keep the package for it; a line of another file that stops installing
    it gets a todo naming the command."""
    sources = code_cells(text)
    return kept_cli_command("\n".join(sources) if sources is not None else text)


def commands_needing_old_stack(text: str) -> tuple[str | None, bool]:
    """What the text itself still runs: (an ``optimum-cli`` command, or None; whether it runs
    ``neuron_parallel_compile``). Read after the launch rules edited the file: what they kept."""
    cli, parallel = None, False
    for line in _code_lines(text):
        if cli is None and (match := _OPTIMUM_CLI.search(line)):
            words = re.findall(r"[\w-]+", line[match.end():])[:2]
            cli = " ".join(["optimum-cli", *(word for word in words if not word.startswith("-"))])
        parallel = parallel or bool(_PARALLEL_COMPILE.search(line))
    return cli, parallel


def notebook_files(text: str) -> dict | None:
    """Project fact: what a notebook's ``%%writefile`` cells write (see ``codemods/deps/_notebooks.py``): for each
    Python file (name as written) the watched modules it imports, whether its optimum.neuron import is kept for
    an eval, and whether it imports the stack (``uses_old_stack``); for each other file the fingerprints of its bodies; and what makes the notebook an Inf1 flow (the
    markers the inference rules' NM101 reads, over its code cells), or None."""
    sources = code_cells(text)
    if sources is None:
        return None
    python: dict[str, tuple[tuple[str, ...], bool, bool]] = {}
    written: dict[str, tuple[str, ...]] = {}
    bodies: dict[str, str] = {}  # the written Python that uses the stack: migrated like a file on disk is
    for name, body in notebooks.written_files(sources):
        if name.endswith(".py"):
            python[name] = (tuple(sorted(imported_modules(body) or ())), bool(optimum_neuron_kept(body)),
                            bool(uses_old_stack(body)))
            if uses_old_stack(body) or xla_era_torch_neuronx(body) or uses_torch_xla(body):
                bodies[name] = body
        else:
            written[name] = (*written.get(name, ()), notebooks.fingerprint(body))
    code = _NOTE_LINE.sub("", "\n".join(sources))
    inf1 = next((label for label, pattern in INF1_MARKERS.items() if re.search(pattern, code)), None)
    if not python and not written and inf1 is None:
        return None
    return {"python": python, "written": written, "inf1": inf1, "bodies": bodies}


def optimum_neuron_code(text: str) -> str | None:
    """Project fact: the text of a Python file or notebook that imports optimum.neuron (``uses_optimum_neuron``),
    which ``still_importing`` migrates the way this run does to see whether the import survives it."""
    return text if uses_optimum_neuron(text) else None


def uses_optimum_neuron(text: str) -> bool:
    """Whether the text imports optimum.neuron on a line of code (a comment or note is no import)."""
    return bool(_ON_MODULE_IMPORT.search(text) or _ON_FROM_IMPORT.search(text))


#: an import of torch_xla on a line of code, and the Ray Train XLA backend (``ray.train.torch.xla.TorchXLAConfig``
#: imports torch_xla in each worker)
#: (neuronx_distributed counts: it imports torch_xla when imported, so code that keeps it needs the XLA-era stack)
_TORCH_XLA_IMPORT = re.compile(r"""(?m)(?:^|["'])[ \t]*(?:from|import)[ \t]+(?:torch_xla|neuronx_distributed)\b""")
_XLA_MODULES = frozenset({"torch_xla", "neuronx_distributed"})
_DIRECT_TORCH_XLA = re.compile(r"""(?m)^[ \t]*(?:from|import)[ \t]+torch_xla\b|\bTorchXLAConfig\b""")
_RAY_XLA = re.compile(r"\bray\.train\.torch\.xla\b|\bTorchXLAConfig\b")


def uses_torch_xla(text: str) -> bool:
    """Whether the text imports torch_xla (or neuronx_distributed, which imports it) on a line of code, or uses Ray
    Train's XLA backend (which imports it in each worker); a comment or note is no use, nor is an optional import (the code runs without the package): one
    guarded by ``try: ... except ImportError``, or under an availability test (``_availability_guarded``). A
    notebook or a file that does not parse is read line by line."""
    if not (_TORCH_XLA_IMPORT.search(text) or _RAY_XLA.search(_code_only(text))):
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return True
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(handler.type) for handler in node.handlers):
            guarded |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    for statement in _availability_guarded(tree):
        guarded |= {id(inner) for inner in ast.walk(statement)}
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in _XLA_MODULES for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _XLA_MODULES and not node.level:
            return True
        if isinstance(node, ast.ImportFrom) and ((node.module or "").startswith("ray.train.torch.xla")
                                                 or any(a.name == "TorchXLAConfig" for a in node.names)):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "xla" and ast.unparse(node) == "ray.train.torch.xla":
            return True
    return False


#: calls that tell whether torch_xla can be imported (transformers / accelerate helpers)
_XLA_AVAILABLE_CALLS = frozenset({"is_torch_xla_available", "is_torch_tpu_available", "is_tpu_available"})


def _availability_guarded(tree: ast.Module) -> list[ast.stmt]:
    """The statements that run only where torch_xla is installed: the body of an ``if`` whose test holds an
    availability check (``is_torch_xla_available()``, ``importlib.util.find_spec("torch_xla") is not None``, a
    flag bound to one, or a flag the ``try`` of a guarded import sets and its ``except ImportError`` clears), alone
    or joined by ``and``; the ``else`` of ``if not <check>:``."""
    flags: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(handler.type) for handler in node.handlers):
            cleared = {target.id for handler in node.handlers for statement in handler.body
                       if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
                       and statement.value.value in (False, None)
                       for target in statement.targets if isinstance(target, ast.Name)}
            flags |= {target.id for statement in node.body if isinstance(statement, ast.Assign)
                      and isinstance(statement.value, ast.Constant) and statement.value.value is True
                      for target in statement.targets if isinstance(target, ast.Name) and target.id in cleared}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_xla_check(node.value, set()):
            flags |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    found: list[ast.stmt] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = node.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _is_xla_check(test.operand, flags):
            found.extend(node.orelse)
        elif _is_xla_check(test, flags) or (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
                                            and any(_is_xla_check(value, flags) for value in test.values)):
            found.extend(node.body)
    return found


def _is_xla_check(test: ast.expr, flags: set[str]) -> bool:
    """Whether ``test`` is true only where torch_xla can be imported (see ``_availability_guarded``)."""
    if isinstance(test, ast.Name):
        return test.id in flags
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot):
        right = test.comparators[0]
        return isinstance(right, ast.Constant) and right.value is None and _is_xla_check(test.left, flags)
    if not isinstance(test, ast.Call):
        return False
    func = test.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name in _XLA_AVAILABLE_CALLS:
        return True
    return (name == "find_spec" and bool(test.args) and isinstance(test.args[0], ast.Constant)
            and isinstance(test.args[0].value, str) and test.args[0].value.split(".")[0] == "torch_xla")


def _catches_import_error(handler: ast.expr | None) -> bool:
    """An ``except`` clause that catches a failed import: bare, ``ImportError``, ``ModuleNotFoundError``,
    ``Exception`` / ``BaseException``, or a tuple holding one."""
    if handler is None:
        return True
    names = handler.elts if isinstance(handler, ast.Tuple) else [handler]
    return any(isinstance(name, ast.Name) and name.id in {"ImportError", "ModuleNotFoundError", "Exception",
                                                           "BaseException"} for name in names)


def torch_xla_code(text: str) -> str | None:
    """Project fact: the text of a Python file or notebook that uses torch_xla (``uses_torch_xla``), which
    ``still_needing_torch_xla`` migrates the way this run does to see whether the use survives it."""
    return text if uses_torch_xla(text) else None


#: (path, text) -> (the project facts and the rule selection it was decided with, the migrated text or None when
#: it could not be migrated, that selection)
_MIGRATED: dict[tuple[str, str], tuple[object, str | None, frozenset[str] | None]] = {}
_SIMULATING: list[bool] = []
#: while a file is simulated with ``migrated_text(..., kept=...)``: the project files that stay on optimum-neuron
#: after this run, decided before that simulation began (``still_importing`` answers from it there)
_KNOWN_KEPT: list[frozenset[str]] = []


def migrated_text(path: str, text: str, options: RuleOptions, kept: frozenset[str] | None = None) -> str | None:
    """``path`` migrated with the run's rules and project facts, as the engine migrates it (an import no rule could
    port stays, NM205's kept lazy-load block, a file kept on optimum-neuron as a whole); None when it cannot be
    migrated (it does not parse: the engine leaves it as it is). ``kept``: the project files that stay on
    optimum-neuron after this run (``still_importing``, decided by the caller before the simulation), which the
    simulated rules are then told (a launch file's NM401 keeps the pre-compile pass of such a script); without it
    they are told none (no nesting)."""
    if path in options.unwritten:
        return text  # the run refuses to write it (uncommitted changes): it stays as it is
    if kept is not None:
        return _migrated_knowing(path, text, options, kept)
    selected = None if options.rules is None else frozenset(options.rules)
    cached = _MIGRATED.get((path, text))
    if cached is not None and cached[0] is options.project and cached[2] == selected:  # same facts, same rules
        return cached[1]
    from migrate.filekinds import kind_from_name
    from migrate.pipeline import migrate_file_text
    from migrate.registry import all_rules

    kind = kind_from_name(PurePosixPath(path)) or FileKind.PYTHON
    rules = [rule for rule in all_rules() if options.rules is None or rule.id in options.rules]
    _SIMULATING.append(True)
    migrated: str | None
    try:
        migrated = migrate_file_text(text, kind, PurePosixPath(path), rules, options).text
    except Exception:  # noqa: BLE001 - what the engine does then: the file stays as it is
        migrated = None
    finally:
        _SIMULATING.pop()
    _MIGRATED[(path, text)] = (options.project, migrated, selected)
    return migrated


_MIGRATED_KNOWING: dict[tuple[str, str, frozenset[str]], tuple[object, str | None, frozenset[str] | None]] = {}


def _migrated_knowing(path: str, text: str, options: RuleOptions, kept: frozenset[str]) -> str | None:
    """``migrated_text`` with ``kept`` the answer of ``still_importing`` inside the simulation (cached apart)."""
    selected = None if options.rules is None else frozenset(options.rules)
    cached = _MIGRATED_KNOWING.get((path, text, kept))
    if cached is not None and cached[0] is options.project and cached[2] == selected:
        return cached[1]
    from migrate.filekinds import kind_from_name
    from migrate.pipeline import migrate_file_text
    from migrate.registry import all_rules

    kind = kind_from_name(PurePosixPath(path)) or FileKind.PYTHON
    rules = [rule for rule in all_rules() if options.rules is None or rule.id in options.rules]
    _SIMULATING.append(True)
    _KNOWN_KEPT.append(kept)
    migrated: str | None
    try:
        migrated = migrate_file_text(text, kind, PurePosixPath(path), rules, options).text
    except Exception:  # noqa: BLE001 - what the engine does then: the file stays as it is
        migrated = None
    finally:
        _SIMULATING.pop()
        _KNOWN_KEPT.pop()
    _MIGRATED_KNOWING[(path, text, kept)] = (options.project, migrated, selected)
    return migrated


def survives_run(path: str, text: str, options: RuleOptions) -> bool:
    """Whether ``path`` still imports optimum.neuron after this run (``migrated_text``). A file that cannot be
    migrated keeps its import."""
    migrated = migrated_text(path, text, options)
    return migrated is None or uses_optimum_neuron(migrated)


def still_importing(files: dict[str, str], options: RuleOptions | None) -> tuple[str, ...]:
    """Of ``files`` (path -> text, from ``deps.optimum-neuron-code``), those that still import optimum.neuron after
    this run (``survives_run``); while such a run is itself being simulated (no nesting), those of them the
    simulation was given (``migrated_text(..., kept=...)``), else none."""
    if options is None:
        return ()
    if _SIMULATING:
        return tuple(path for path in sorted(files) if path in _KNOWN_KEPT[-1]) if _KNOWN_KEPT else ()
    return tuple(path for path, text in sorted(files.items()) if survives_run(path, text, options))


def legacy_converter(text: str) -> bool:
    """Whether the (migrated) text keeps optimum.neuron only for a one-time checkpoint conversion: every name its
    optimum.neuron imports bind is a consolidator that NM206 classifies as one (``consolidate_model_parallel_
    checkpoints_to_unified_checkpoint`` ...: "run this in the OLD environment before uninstalling optimum-neuron"),
    and it imports no optimum.neuron module as a whole. Such a file runs once on the old stack, before the move; it
    cannot be ported first (the conversion needs the old packages), so it holds no dependency file on them."""
    from codemods.training.nm206_legacy_training_helpers import CONSOLIDATE

    if _ON_MODULE_IMPORT.search(text):
        return False
    bound: set[str] = set()
    for match in _ON_FROM_IMPORT.finditer(text):
        bound |= {name for name, _ in _on_from_names(match)}  # the imported name (``A as B``: A)
    return bool(bound) and bound <= set(CONSOLIDATE)


def legacy_converters(files: tuple[str, ...], code: dict[str, str], options: RuleOptions) -> tuple[str, ...]:
    """Of ``files`` (which still import optimum.neuron after this run), those that are one-time converters
    (``legacy_converter`` on ``migrated_text``)."""
    found = []
    for path in files:
        migrated = migrated_text(path, code[path], options) if path in code else None
        if migrated is not None and legacy_converter(migrated):
            found.append(path)
    return tuple(found)


#: a requirements file that declares itself the old environment (``requirements-legacy.txt``): the set that the
#: advice for one-time converters names, kept on the old stack while a converter needs it
_LEGACY_SET = re.compile(r"(?i)(?:^|[-_.])legacy(?=[-_.]|$)")
#: the name the advice gives to the requirements file of the old environment, when the folder has none
LEGACY_REQUIREMENTS = "requirements-legacy.txt"
#: the PEP 735 dependency group NM502 writes the old pins of a pyproject.toml into (installed alone, unlike an extra)
LEGACY_GROUP = "legacy-convert"


def is_legacy_set(path: str) -> bool:
    """Whether the requirements file ``path`` names itself the legacy set (``requirements-legacy.txt``)."""
    from migrate.filekinds import kind_from_name

    where = PurePosixPath(path)
    return kind_from_name(where) is FileKind.REQUIREMENTS and bool(_LEGACY_SET.search(where.stem.lower()))


def still_needing_torch_xla(files: dict[str, str], options: RuleOptions | None) -> tuple[str, ...]:
    """Of ``files`` (path -> text, from ``deps.torch-xla-code``), those that still use torch_xla after this run
    (``migrated_text``: a torch_xla call no rule could port, a Ray ``TorchXLAConfig`` left in place, a file that
    does not parse); none while a run is being simulated (no nesting)."""
    if options is None or _SIMULATING:
        return ()
    found = []
    for path, text in sorted(files.items()):
        migrated = migrated_text(path, text, options)
        if migrated is None or uses_torch_xla(migrated):
            found.append(path)
    return tuple(found)


#: torch_neuronx's own TorchNeuron API (NM330's ``TORCHNEURON_API``): a use of any other name of the package is a use
#: of the XLA-era build (trace, DataParallel, move_trace_to_device, xla_impl ...), which torch-neuronx 2.14 lacks
_TORCHNEURON_API = frozenset({"nki_op", "wrap_nki", "get_fallback_ops", "get_executed_ops", "clear_op_tracking"})
_XLA_NEURONX_WORDS = re.compile(r"\btorch_neuronx\b")
_XLA_NEURONX_ATTRIBUTE = re.compile(r"\btorch_neuronx\.([A-Za-z]\w*)")


def xla_era_torch_neuronx(text: str) -> tuple[str, ...]:
    """What of the XLA-era torch_neuronx API the code (comments and notes aside) uses: ``torch_neuronx.<name>`` for
    a name beyond TorchNeuron's own (``_TORCHNEURON_API``; reached through the module, an alias or a ``from``
    import), and ``torch.jit.load`` in a file whose torch_neuronx import is no TorchNeuron use (the import that
    registers the neuron ops of a ``torch_neuronx.trace`` artifact: NM330's note there). An import inside
    ``try: ... except ImportError`` is an optional probe, no use. A notebook is read as its kernel runs it; a file
    that does not parse, line by line."""
    if not _XLA_NEURONX_WORDS.search(text):
        return ()
    code = kernel_code(text)
    try:
        tree = ast.parse(text if code is None else code)
    except (SyntaxError, ValueError):
        names = {name for name in _XLA_NEURONX_ATTRIBUTE.findall(_code_only(text)) if name not in _TORCHNEURON_API}
        return tuple(sorted(f"torch_neuronx.{name}" for name in names))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(handler.type) for handler in node.handlers):
            guarded |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    modules: set[str] = set()  # names bound to the torch_neuronx module
    imported: dict[str, str] = {}  # name bound by ``from torch_neuronx[.sub] import X`` -> the API it names
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "torch_neuronx":
                    modules.add(alias.asname or "torch_neuronx")
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == \
                "torch_neuronx":
            base = (node.module or "").split(".")[1:]
            for alias in node.names:
                if alias.name != "*":
                    imported[alias.asname or alias.name] = (base or [alias.name])[0]
    if not modules and not imported:
        return ()
    found: set[str] = set()
    used: set[str] = set()
    jit_load = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            used.add(node.value.id)
            if node.attr not in _TORCHNEURON_API and not node.attr.startswith("__"):
                found.add(f"torch_neuronx.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in imported and not isinstance(node.ctx, ast.Store):
            used.add(node.id)
            if imported[node.id] not in _TORCHNEURON_API:
                found.add(f"torch_neuronx.{imported[node.id]}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                ast.unparse(node.func).endswith("jit.load"):
            jit_load = True
    if jit_load and (found or not used):  # a side-effect import beside the load, or one for the XLA-era API
        found.add("torch.jit.load of a torch_neuronx.trace artifact")
    return tuple(sorted(found))


def xla_neuronx_code(text: str) -> str | None:
    """Project fact: the text of a Python file or notebook that uses the XLA-era torch_neuronx API
    (``xla_era_torch_neuronx``), which ``still_using_xla_neuronx`` migrates the way this run does to see whether
    the use survives it."""
    return text if xla_era_torch_neuronx(text) else None


def still_using_xla_neuronx(files: dict[str, str], options: RuleOptions | None) -> dict[str, tuple[str, ...]]:
    """Of ``files`` (path -> text, from ``deps.xla-neuronx-code``), those that still use the XLA-era torch_neuronx
    API after this run (``migrated_text``: NM330 reports those uses and leaves them), with what they use; none
    while a run is being simulated (no nesting). A file that does not parse keeps what it had."""
    if options is None or _SIMULATING:
        return {}
    found = {}
    for path, text in sorted(files.items()):
        migrated = migrated_text(path, text, options)
        uses = xla_era_torch_neuronx(text if migrated is None else migrated)
        if uses:
            found[path] = uses
    return found


#: a ``-r`` / ``-c`` include of a requirements file (``-r base.txt``, ``--constraint=constraints.txt``)
_INCLUDE = re.compile(r"(?m)^[ \t]*(?:--requirement|--constraint|-r|-c)(?:[ \t]*=[ \t]*|[ \t]+|(?=[^\s=-]))([^\s#]+)")


_TOX_SECTION = re.compile(r"^\s*\[([^\]]+)\]")
_TOX_KEY = re.compile(r"^([A-Za-z0-9_.-]+)\s*[=:][ \t]*")
#: a tox.ini: a ``[tox]`` or ``[testenv]`` / ``[testenv:NAME]`` section
_TOX_FILE = re.compile(r"(?m)^\s*\[(?:tox|testenv(?::[^\]]*)?)\]\s*$")


def tox_deps_lines(lines: list[str]) -> list[tuple[int, int]]:
    """(index, start of the value) of each line of a ``deps`` value in a tox.ini: of the ``[testenv]`` /
    ``[testenv:NAME]`` sections, and of any other section but ``[tox]`` (``[base]``, whose ``deps`` the
    environments take with ``{[base]deps}``): the key line when it holds a value, and its indented continuation
    lines; comments and blank lines are no values."""
    found: list[tuple[int, int]] = []
    section, in_deps = "", False
    for index, text in enumerate(lines):
        match = _TOX_SECTION.match(text)
        if match:
            section, in_deps = match.group(1).strip(), False
            continue
        if not text.strip() or text.lstrip().startswith(("#", ";")):
            continue
        if not text[:1].isspace():
            key = _TOX_KEY.match(text)
            in_deps = key is not None and key.group(1) == "deps" and section not in {"", "tox"}
            if key is not None and in_deps and text[key.end():].strip():
                found.append((index, key.end()))
            continue
        if in_deps:
            found.append((index, len(text) - len(text.lstrip())))
    return found


def requirement_set(text: str) -> dict | None:
    """Project fact: for a requirements file, the files it includes with ``-r`` / ``-c`` (as written, relative to
    its folder), whether one of its index options names the Neuron repository (comments and neuron-migrate
    notes are no options), and whether it names a Neuron package (``names_neuron_package``). pip reads the
    options of every file of one install together, so a file included by one that names the repository gets its
    packages from there too (``ProjectDeps.repository_shared``); a file with a Neuron package is the Neuron
    requirement set of its folder (``ProjectDeps.other_accelerator``). A file that names optimum-neuron carries
    its text too: whether it keeps the package decides its whole install set (``Planner.held_with``). ``names``:
    the packages it lists and ``requires``: the files it includes with ``-r`` (which pip installs, unlike a ``-c``
    constraints file): a package an included file already installs is not added again (``ProjectDeps.provided``)."""
    if _TOX_FILE.search(text):  # a tox.ini: its testenv deps are the requirement lines (NM506)
        lines = text.splitlines()
        text = "".join(lines[index][start:] + "\n" for index, start in tox_deps_lines(lines))
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    includes = tuple(name for name in _INCLUDE.findall(code) if "://" not in name)
    requires = tuple(name for name in _REQUIRE_INCLUDE.findall(code) if "://" not in name)
    repository = names_neuron_repository(code)
    parsed_lines = [parse(line.split(" #")[0]) for line in code.splitlines()]
    neuron = any(parsed is not None and names_neuron_package(parsed) for parsed in parsed_lines)
    names = tuple(sorted({parsed.name for parsed in parsed_lines if parsed is not None}))
    if not includes and not repository and not neuron and not names:
        return None
    found = {"includes": includes, "repository": repository, "neuron": neuron, "names": names, "requires": requires}
    if any(parsed is not None and _names_optimum_neuron(parsed)
           for parsed in (parse(line.split(" #")[0]) for line in code.splitlines())):
        found["text"] = text  # whether its optimum-neuron stays is decided from it (``Planner.held_with``)
    if neuron:
        found["neuron_text"] = text  # what the run decides for it, told beside it (``Planner.other_accelerator_todo``)
    return found


#: a ``-r`` include (``-r base.txt``, ``--requirement=base.txt``): pip installs what that file lists
_REQUIRE_INCLUDE = re.compile(r"(?m)^[ \t]*(?:--requirement|-r)(?:[ \t]*=[ \t]*|[ \t]+|(?=[^\s=-]))([^\s#]+)")


#: one ``pip install`` command (``pip``, ``pip3``, ``pip3.N``, ``python -m pip``) and the files it reads with
#: ``-r`` / ``-c`` (``pip install -r requirements.txt -c constraints.txt``)
_PIP_INSTALL = re.compile(r"\bpip(?:3(?:\.\d+)?)?\s+install\b([^\n;&|]*)")
_PIP_FILE = re.compile(r"(?:^|\s)(?:-r|--requirement|-c|--constraint)(?:[ \t]*=[ \t]*|[ \t]+)([^\s;&|#'\"\\]+)")


def pip_install_sets(text: str) -> dict | None:
    """Project fact: what the ``pip install`` commands of a script, Dockerfile, workflow or notebook install
    together, as written. ``sets``: the requirements files each command reads together (two or more: ``pip install
    -r requirements.txt -c constraints.txt``; pip resolves them in one install). ``contexts``: per install context
    that reads a requirements file (a Dockerfile stage, from its ``FROM``; a workflow job; the whole of a shell
    script, manifest or notebook), its kind (``stage``, ``job``, ``script``, ``notebook``) and, per ``pip install``
    command, (requirements files, package specifiers): every command of one context installs into one
    environment (``pip install optimum-neuron==0.0.24 && pip install -r requirements.txt``, or separate ``RUN``
    lines of one stage), so they are one install set too (``ProjectDeps.install_set``; rt5H D2). ``text``: the
    file's text when a command of such a context names a package of the Neuron stack or torch-xla (whether the
    file keeps it, decided as NM505 decides it, holds the requirements files of its context: ``Planner.held_with``).
    Commented-out commands and names holding a variable do not count."""
    sets = []
    contexts = []
    held = False
    for unit, lines in _install_contexts(text):
        commands = []
        for line in lines:
            if line.lstrip().startswith("#"):
                continue
            for match in _PIP_INSTALL.finditer(line):
                names = tuple(dict.fromkeys(name for name in _PIP_FILE.findall(match.group(1))
                                            if "$" not in name and "://" not in name and "{" not in name))
                if len(names) > 1:
                    sets.append(names)
                specs = _pip_specs(match.group(1))
                if names or specs:
                    commands.append((names, specs))
        if sum(len(names) + bool(specs) for names, specs in commands) < 2 or not any(names for names, _ in commands):
            continue
        contexts.append((unit, tuple(commands)))
        held = held or any(names_neuron_package(parsed) or parsed.name == "torch-xla"
                           for _, specs in commands for parsed in map(parse, specs) if parsed is not None)
    if not sets and not contexts:
        return None
    found: dict = {"sets": tuple(sets), "contexts": tuple(contexts)}
    if held:
        found["text"] = text
    return found


#: what a context runs that is not a Python script named by its file (``python -m pkg``, ``uvicorn app.main:app``,
#: a notebook run by papermill): its requirements file may serve any code, so it is not narrowed to the scripts
_RUNS_MODULE = re.compile(r"(?<![\w-])-m\s+(?!pip\b|torch\.distributed\.(?:run|launch)\b)[\w.]+"
                          r"|(?<![\w./-])[A-Za-z_][\w.]*:[A-Za-z_]\w*(?![\w/:.-])|\.ipynb\b"
                          r"|(?<![\w.-])(?:pytest|tox|nox|make|jupyter|papermill|uvicorn|gunicorn|streamlit|celery"
                          r"|flask|hypercorn|python[\d.]*\s+-c|python[\d.]*\s*$)(?![\w.-])", re.M)
_SHELL_SCRIPT = re.compile(r"(?<![\w-])([\w./-]*[\w-]+\.(?:sh|bash))(?![\w-])")


def install_runs(text: str) -> tuple | None:
    """Project fact: per install context (``_install_contexts``: a Dockerfile stage, a workflow job, a whole shell
    script or Makefile) whose ``pip install`` commands read a requirements file with ``-r``, (the requirements
    files as written, the Python scripts it names, the shell scripts it names, whether what it runs is only those):
    a requirements file that such contexts install before running ``train.py`` serves those scripts
    (``ProjectDeps.served_scripts``). A context that also runs a module (``python -m pkg``, ``uvicorn
    app.main:app``) or a notebook runs code it does not name: its files serve their folder as before. Comment and
    ``echo`` lines and the tool's notes do not count."""
    found = []
    for _unit, lines in _install_contexts(_TOOL_NOTE.sub("", text)):
        code = [line for line in lines if not _COMMENT_OR_ECHO.match(line)]
        names: list[str] = []
        rest = []
        for line in code:
            for match in _PIP_INSTALL.finditer(line):
                names += [name for name in _REQUIRE_FILE.findall(match.group(1))
                          if "$" not in name and "://" not in name and "{" not in name]
            rest.append(_PIP_INSTALL.sub(" ", line))
        if not names:
            continue
        body = "\n".join(rest)
        scripts = tuple(sorted(set(_SCRIPT_PATH.findall(body))))
        shells = tuple(sorted(set(_SHELL_SCRIPT.findall(body))))
        found.append((tuple(dict.fromkeys(names)), scripts, shells, not _RUNS_MODULE.search(body)))
    return tuple(found) or None


_REQUIRE_FILE = re.compile(r"(?:^|\s)(?:-r|--requirement)(?:[ \t]*=[ \t]*|[ \t]+)([^\s;&|#'\"\\]+)")
_SCRIPT_PATH = re.compile(r"(?<![\w-])([\w./-]*[A-Za-z_][\w-]*\.py)(?![\w-])")
#: the modules a Python file imports, dotted (``from utils.data import x``: utils.data)
_LOCAL_IMPORT = re.compile(r"(?m)^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))")


def local_imports(text: str) -> tuple[str, ...] | None:
    """Project fact: the names of the modules a Python file imports, each dotted part (``from utils.data import x``:
    utils, data; ``from . import helpers``: helpers), for the files a script run beside a requirements file
    imports (``ProjectDeps.served_scripts``)."""
    parts: set[str] = set()
    for match in _LOCAL_IMPORT.finditer(text):
        for dotted in re.split(r"[ \t]*,[ \t]*", match.group(1) or match.group(2) or ""):
            parts |= {part for part in dotted.split(".") if part}
        if match.group(1) is not None and match.group(1).strip(".") == "":
            tail = text[match.end():text.find("\n", match.end()) if "\n" in text[match.end():] else len(text)]
            parts |= set(re.findall(r"[A-Za-z_]\w*", tail.split("#")[0]))
    return tuple(sorted(parts)) or None


#: a Dockerfile stage's first line (``FROM image [AS name]``: a whole line, so Python's ``from x import y`` is none)
_STAGE = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*\S+(?:\s+AS\s+\S+)?\s*$", re.I)
_JOBS_KEY = re.compile(r"^jobs:\s*(?:#.*)?$")
_JOB_KEY = re.compile(r"^(\s+)[\w.-]+\s*:")


def _install_contexts(text: str) -> list[tuple[str, list[str]]]:
    """The install contexts of a file, each (kind, its logical lines, continuation lines joined): the stages of a
    Dockerfile, the jobs of a workflow, else the whole file (a shell script, a manifest; a notebook's code cells,
    one kernel)."""
    cells = code_cells(text) if text.lstrip().startswith("{") else None
    if cells is not None:
        return [("notebook", [line for cell in cells for line in cell.replace("\\\n", " ").splitlines()])]
    logical = text.replace("\\\n", " ").splitlines()
    stages = [index for index, line in enumerate(logical) if _STAGE.match(line)]
    if stages:
        return [("stage", logical[start:end]) for start, end in zip(stages, [*stages[1:], len(logical)])]
    jobs = next((index for index, line in enumerate(logical) if _JOBS_KEY.match(line)), None)
    if jobs is None:
        return [("script", logical)]
    starts, indent = [], None
    for index in range(jobs + 1, len(logical)):
        line = logical[index]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        width = len(line) - len(line.lstrip())
        if width == 0:
            break
        indent = width if indent is None else indent
        if width == indent and _JOB_KEY.match(line):
            starts.append(index)
    return [("job", logical[start:end]) for start, end in zip(starts, [*starts[1:], len(logical)])] \
        or [("script", logical)]


#: ``pip install`` options that take a value (the next word, or ``--option=value``)
_PIP_VALUE_OPTIONS = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
    "--target", "-t", "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi",
    "--trusted-host", "--cache-dir", "--src", "--upgrade-strategy", "--progress-bar", "--log", "--proxy",
    "--retries", "--timeout", "--python", "--index", "--default-index", "--only-binary", "--no-binary", "-e",
    "--editable"})


def _pip_specs(arguments: str) -> tuple[str, ...]:
    """The package specifiers that the arguments of one ``pip install`` name (``optimum-neuron==0.0.24``,
    ``"torch==2.1.*"``): options and their values (``-r F``, ``--extra-index-url URL``, ``-e PATH``), paths,
    URLs and words holding a variable are none."""
    found, skip = [], False
    for word in arguments.split():
        word = word.strip("'\"")
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in _PIP_VALUE_OPTIONS
            continue
        if not word or any(mark in word for mark in ("$", "{", "/", "://")) or word.startswith("."):
            continue
        if parse(word) is not None:
            found.append(word)
    return tuple(found)


#: a requirements file named for another accelerator: ``requirements-gpu.txt``, ``requirements_cuda.txt``,
#: ``gpu-requirements.txt``, ``requirements/cu121.txt``, ``requirements-rocm.txt``, ``requirements-cpu-only.txt``
_OTHER_ACCELERATOR = re.compile(r"(?:^|[-_.])(gpus?|cuda\d*|cu\d{2,3}|rocm\d*|cpu|mps|tpu|xpu)(?=[-_.]|$)")


def names_neuron_package(parsed: "Parsed") -> bool:
    """A package of the Neuron stack (torch-neuronx, neuronx-cc, optimum-neuron, optimum[neuronx], the Inf1
    packages ...); torch-xla alone is not one (a TPU project's runtime too)."""
    return parsed.name in NEURON_PACKAGES or _names_optimum_neuron(parsed) or is_inf1(parsed)


#: the words a file that imports optimum-neuron's modules holds (``uses_optimum_neuron``): the anchors of the facts
#: that carry such files (every declaration of ``deps.optimum-neuron-code`` must use them: the first one wins)
OPTIMUM_NEURON_ANCHORS = ("optimum.neuron", "optimum.exporters.neuron")
#: the same for files using torch_xla (``uses_torch_xla``; ``deps.torch-xla-code``)
TORCH_XLA_ANCHORS = ("torch_xla", "TorchXLAConfig", "ray.train.torch.xla", "neuronx_distributed")

FACTS: tuple[ProjectFact, ...] = (
    ProjectFact("deps.imports", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}),
                tuple(sorted(_WATCHED_MODULES | {"optimum.neuron", "optimum_neuron"})), imported_modules),
    ProjectFact("deps.optimum-neuron-kept", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}), OPTIMUM_NEURON_ANCHORS,
                optimum_neuron_kept),
    ProjectFact("deps.mentions", frozenset({FileKind.NOTEBOOK, FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML}),
                (".py",), mentioned_scripts),
    ProjectFact("deps.notebook-files", frozenset({FileKind.NOTEBOOK}),
                ("%%writefile", "neuron-cc", "neuron_cc", "optimum[neuron]", "torch.neuron", "torch_neuron", "ml.inf1"),
                notebook_files),
    ProjectFact("deps.old-stack", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}),
                ("optimum", "transformers", "torch", "accelerate", "trl", "peft", "diffusers", "sentence_transformers",
                 "neuronx_distributed"), old_stack_code),
    ProjectFact("deps.optimum-cli", frozenset({FileKind.NOTEBOOK, FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML,
                                               FileKind.PYTHON}), ("optimum-cli",), kept_cli_fact),
    ProjectFact("deps.optimum-cli-count", frozenset({FileKind.NOTEBOOK, FileKind.SHELL, FileKind.DOCKERFILE,
                                                     FileKind.YAML, FileKind.PYTHON}), ("optimum-cli",), kept_cli_count),
    ProjectFact("deps.optimum-neuron-code", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}), OPTIMUM_NEURON_ANCHORS,
                optimum_neuron_code),
    ProjectFact("deps.torch-xla-code", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}),
                TORCH_XLA_ANCHORS, torch_xla_code),
    ProjectFact("deps.xla-neuronx-code", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}), ("torch_neuronx",),
                xla_neuronx_code),
    ProjectFact("deps.requirement-set", frozenset({FileKind.REQUIREMENTS, FileKind.TOX}),
                ("-r", "-c", "--requirement", "--constraint", "pip.repos.neuron", "neuron", "torch", "transformers",
                 "accelerate", "trl", "peft", "datasets", "diffusers", "sentence"), requirement_set),
    ProjectFact("deps.install-runs", frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML}),
                ("-r", "--requirement"), install_runs),
    ProjectFact("deps.local-imports", frozenset({FileKind.PYTHON}), ("import",), local_imports),
    ProjectFact("deps.pip-install-sets", frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML,
                                                    FileKind.NOTEBOOK}),
                ("-r", "-c", "--requirement", "--constraint"), pip_install_sets),
)


@dataclass(frozen=True)
class ProjectDeps:
    """What the dependency decisions need to know about the whole project (from the scan pass's facts)."""

    neuron: bool = True  # the project targets Neuron
    imported: dict[str, tuple[str, ...]] = field(default_factory=dict)  # watched module -> files importing it
    #: files whose optimum.neuron import neuron-migrate keeps (an eval names it)
    optimum_neuron_kept: tuple[str, ...] = ()
    mentions: dict[str, frozenset[str]] = field(default_factory=dict)  # file -> the Python file names it mentions
    #: (name as written, fingerprint) of a file a notebook's ``%%writefile`` cell writes -> the notebooks writing it
    writers: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    #: notebook -> what makes it an Inf1 flow (NM101's markers, or an Inf1 file name)
    inf1_notebooks: dict[str, str] = field(default_factory=dict)
    #: file -> the optimum-cli command it runs, which NM406 / NM410 keep (``kept_cli_fact``)
    cli: dict[str, str] = field(default_factory=dict)
    #: the files that import the old stack (``uses_old_stack``): the run moves them to the stock stack
    old_stack: tuple[str, ...] = ()
    #: their texts, for the files on disk (``moved_to_new_stack``)
    stack_code: dict[str, str] = field(default_factory=dict)

    #: requirements file -> its ``-r`` / ``-c`` includes (project paths) and whether it names the Neuron repository
    requirement_sets: dict[str, tuple[tuple[str, ...], bool]] = field(default_factory=dict)
    #: the requirements files that name a Neuron package (``names_neuron_package``)
    neuron_requirements: tuple[str, ...] = ()
    #: requirements file -> the packages it lists and the files it includes with ``-r`` (project paths)
    listed: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    #: requirements file naming optimum-neuron -> its text (whether its optimum-neuron stays: ``held_with``)
    optimum_neuron_sets: dict[str, str] = field(default_factory=dict)
    #: requirements file naming a Neuron package -> its text (whether the run migrates it or holds its stack)
    neuron_sets: dict[str, str] = field(default_factory=dict)
    #: the requirements files one ``pip install`` command reads together (project paths) -> the file running it
    installed_together: tuple[tuple[tuple[str, ...], str], ...] = ()
    #: per install context (a Dockerfile stage, a workflow job, a script) that reads a requirements file: the
    #: requirements files its commands read (project paths), the file, the context's kind, and the package
    #: specifiers of each command naming some (``pip_install_sets``)
    installed_beside: tuple[tuple[tuple[str, ...], str, str, tuple[tuple[str, ...], ...]], ...] = ()
    #: the text of a file whose install context names a package of the Neuron stack or torch-xla (``held_with``)
    install_texts: dict[str, str] = field(default_factory=dict)
    #: per install context reading requirements files with ``-r``: (their project paths, the file, the Python
    #: scripts it names, the shell scripts it names, whether it runs only those: ``install_runs``)
    runs: tuple[tuple[tuple[str, ...], str, tuple[str, ...], tuple[str, ...], bool], ...] = ()
    #: Python file -> the parts of the module names it imports (``local_imports``)
    local: dict[str, tuple[str, ...]] = field(default_factory=dict)
    files: frozenset[str] = frozenset()

    #: the Python files notebooks write: notebook -> project path -> (modules, kept, imports the stack)
    written: dict[str, dict[str, tuple]] = field(default_factory=dict)
    #: the facts of the files on disk alone, before the notebooks' files join them (see ``seen_from``)
    on_disk: tuple = ()
    #: the text of each Python file a notebook writes that uses the stack (notebook -> project path -> body): what
    #: the run leaves of it is read like a file on disk (``Planner.hold_for_old_code``)
    written_code: dict[str, dict[str, str]] = field(default_factory=dict)

    def written_bodies(self, writers: tuple[str, ...]) -> dict[str, str]:
        """Project path -> body of the Python files notebooks write, as the file written by ``writers`` sees them: a
        path those notebooks write themselves is theirs (two notebooks of one folder that both write
        src/compile.py), as in ``seen_from``."""
        found: dict[str, str] = {}
        for notebook in writers:
            found.update(self.written_code.get(notebook, {}))
        for notebook, files in sorted(self.written_code.items()):
            for path, body in files.items():
                found.setdefault(path, body)
        return found

    @classmethod
    def of(cls, options: RuleOptions | None) -> "ProjectDeps":
        if options is None:
            return cls()
        imported: dict[str, set[str]] = {}
        for path, modules in options.project.of("deps.imports").items():
            for module in modules:
                imported.setdefault(module, set()).add(path)
        on_disk = (imported, set(options.project.of("deps.optimum-neuron-kept")),
                   set(options.project.of("deps.old-stack")))
        writers: dict[tuple[str, str], list[str]] = {}
        inf1: dict[str, str] = {}
        written: dict[str, dict[str, tuple]] = {}
        # the Python files a notebook writes are files of the project: dir/src/compile.py for a notebook in dir/
        written_code: dict[str, dict[str, str]] = {}
        for notebook, value in options.project.of("deps.notebook-files").items():
            for name, record in value["python"].items():
                written.setdefault(notebook, {})[notebooks.resolved(notebook, name)] = tuple(record)
            for name, body in value.get("bodies", {}).items():
                written_code.setdefault(notebook, {})[notebooks.resolved(notebook, name)] = body
            for name, prints in value["written"].items():
                for print_ in prints:
                    writers.setdefault((name, print_), []).append(notebook)
            if value["inf1"]:
                inf1[notebook] = value["inf1"]
        for path in options.project.files:
            if path.endswith(".ipynb") and re.search(INF1_PATH, path):
                inf1.setdefault(path, f"the file name {PurePosixPath(path).name}")
        sets = {path: (tuple(posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
                             for name in value["includes"]), bool(value["repository"]))
                for path, value in options.project.of("deps.requirement-set").items()}
        installs = sorted(options.project.of("deps.pip-install-sets").items())
        together = tuple((tuple(dict.fromkeys(_project_path(options.project.files, path, name) for name in names)),
                          path)
                         for path, value in installs for names in value["sets"])
        beside = tuple((tuple(dict.fromkeys(_project_path(options.project.files, path, name)
                                            for names, _ in commands for name in names)),
                        path, unit, tuple(specs for _, specs in commands if specs))
                       for path, value in installs for unit, commands in value["contexts"])
        base = cls(options.neuron_project, mentions=dict(options.project.of("deps.mentions")),
                   cli=_still_running_cli(options),
                   writers={key: tuple(sorted(set(found))) for key, found in writers.items()}, inf1_notebooks=inf1,
                   written=written, on_disk=on_disk, written_code=written_code, requirement_sets=sets,
                   neuron_requirements=tuple(sorted(path for path, value in
                                                    options.project.of("deps.requirement-set").items()
                                                    if value.get("neuron"))),
                   optimum_neuron_sets={path: value["text"] for path, value in
                                        options.project.of("deps.requirement-set").items() if "text" in value},
                   neuron_sets={path: value["neuron_text"] for path, value in
                                options.project.of("deps.requirement-set").items() if "neuron_text" in value},
                   installed_together=together, installed_beside=beside,
                   install_texts={path: value["text"] for path, value in installs if "text" in value},
                   stack_code=dict(options.project.of("deps.old-stack")),
                   runs=tuple((tuple(_project_path(options.project.files, path, name) for name in names), path,
                               scripts, shells, only)
                              for path, value in sorted(options.project.of("deps.install-runs").items())
                              for names, scripts, shells, only in value),
                   local=dict(options.project.of("deps.local-imports")), files=options.project.files,
                   listed={path: (tuple(value.get("names", ())),
                                  tuple(posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
                                        for name in value.get("requires", ())))
                           for path, value in options.project.of("deps.requirement-set").items()})
        return base.seen_from(())

    def seen_from(self, writers: tuple[str, ...]) -> "ProjectDeps":
        """The facts as a file written by the notebooks ``writers`` sees them: the files on disk and the files every
        notebook writes, where a path those notebooks write themselves is theirs (two notebooks of one folder that
        both write src/compile.py: each one's requirements go with its own)."""
        if not self.on_disk:
            return self
        imported = {module: set(paths) for module, paths in self.on_disk[0].items()}
        kept, old = set(self.on_disk[1]), set(self.on_disk[2])
        own = {path for notebook in writers for path in self.written.get(notebook, {})}
        for notebook, files in self.written.items():
            for path, (modules, keeps, uses_old) in files.items():
                if path in own and notebook not in writers:
                    continue
                for module in modules:
                    imported.setdefault(module, set()).add(path)
                if keeps:
                    kept.add(path)
                if uses_old:
                    old.add(path)
        return replace(self, imported={module: tuple(sorted(paths)) for module, paths in imported.items()},
                       optimum_neuron_kept=tuple(sorted(kept)), old_stack=tuple(sorted(old)))

    def repository_shared(self, path: str) -> bool:
        """Whether every install that reads the requirements file ``path`` names the Neuron repository in another
        file: one it includes (``-r`` / ``-c``, at any depth) does, or it is included and each file that includes
        it does so (itself, through its own includes, or through the files that include it in turn). pip reads
        the index options of all the files of one install together (rt3A 12: constraints.txt, included with
        ``-c`` by a requirements.txt whose first line is ``--extra-index-url https://pip.repos.neuron...``)."""
        return self._shared(path, frozenset())

    def _shared(self, path: str, seen: frozenset[str]) -> bool:
        if path in seen:
            return False
        reached, todo = {path}, [path]
        while todo:
            for included in self.requirement_sets.get(todo.pop(), ((), False))[0]:
                if included not in reached:
                    reached.add(included)
                    todo.append(included)
        if any(self.requirement_sets.get(name, ((), False))[1] for name in reached):
            return True
        includers = [name for name, (includes, _) in self.requirement_sets.items() if path in includes]
        return bool(includers) and all(self._shared(name, seen | {path}) for name in includers)

    def install_set(self, path: str) -> tuple[str, ...]:
        """The other requirements files pip reads in an install that reads ``path``, or that reads ``path`` in one
        of theirs: those it includes with ``-r`` / ``-c`` and those that include it, and theirs in turn (one
        install set; sorted)."""
        reached, todo = {path}, [path]
        while todo:
            current = todo.pop()
            linked = set(self.requirement_sets.get(current, ((), False))[0])
            linked |= {name for name, (includes, _) in self.requirement_sets.items() if current in includes}
            linked |= {name for names, _ in self.installed_together if current in names for name in names}
            linked |= {name for names, _, _, _ in self.installed_beside if current in names for name in names}
            for name in sorted(linked - reached):
                reached.add(name)
                todo.append(name)
        return tuple(sorted(reached - {path}))

    def provided(self, path: str) -> set[str]:
        """The packages that the files ``path`` includes with ``-r`` list, at any depth (pip installs them with it;
        rt4E 10: ``requirements/neuron.txt`` added the ``transformers>=5.24`` that its ``-r base.txt`` sets)."""
        found: set[str] = set()
        reached, todo = {path}, [path]
        while todo:
            for included in self.listed.get(todo.pop(), ((), ()))[1]:
                if included not in reached:
                    reached.add(included)
                    todo.append(included)
                    found |= set(self.listed.get(included, ((), ()))[0])
        return found

    def relation(self, path: str, other: str) -> tuple[str, str]:
        """How the requirements file ``other`` joins the install of ``path``, and why that ties them (for a todo).
        Two files that only include the same file (tox.ini and requirements/neuron.txt both ``-r
        requirements/base.txt``) are not read together: each is installed with that file, which is held with
        ``other`` (final4-E 6). Two files that separate ``pip install`` commands of one Dockerfile stage, workflow
        job or script install are not read together either, but they go into one environment (rt5H D2)."""
        together = "pip reads both in one install"
        if path in self.requirement_sets.get(other, ((), False))[0]:
            return f"{other} includes this file", together
        if other in self.requirement_sets.get(path, ((), False))[0]:
            return f"this file includes {other}", together
        command = next((where for names, where in self.installed_together if path in names and other in names), None)
        if command is not None:
            return f"a pip install command in {command} installs {other} with this file", together
        context = next(((where, unit) for names, where, unit, _ in self.installed_beside
                        if path in names and other in names), None)
        if context is not None:
            return (f"the pip install commands of one {context[1]} of {context[0]} install {other} and this file",
                    "pip installs both into one environment")
        mine, theirs = self._included_from(path), self._included_from(other)
        shared = sorted(mine & theirs)
        if other not in mine and path not in theirs and shared:
            return (f"this file and {other} both include {shared[0]}, which is held with {other}",
                    f"pip installs this file with {shared[0]}")
        return f"{other} is installed with this file through their -r / -c includes", together

    def _included_from(self, path: str) -> set[str]:
        """The requirements files ``path`` includes with ``-r`` / ``-c``, at any depth."""
        reached: set[str] = set()
        todo = [path]
        while todo:
            for included in self.requirement_sets.get(todo.pop(), ((), False))[0]:
                if included not in reached:
                    reached.add(included)
                    todo.append(included)
        return reached

    def other_accelerator(self, path: str, parsed_specs: list["Parsed"]) -> tuple[str, str] | None:
        """(the word of its name, the Neuron requirements file beside it) when the requirements file ``path`` is
        the requirement set of another accelerator: its name says so (``requirements-gpu.txt``: gpu, cuda, cuNNN,
        rocm, cpu, mps, tpu, xpu), it names no Neuron package, and a requirements file of the same folder does
        (rt3C 9: requirements-gpu.txt beside requirements-neuron.txt). None otherwise."""
        from migrate.filekinds import kind_from_name

        where = PurePosixPath(path)
        if kind_from_name(where) is not FileKind.REQUIREMENTS or any(names_neuron_package(p) for p in parsed_specs):
            return None
        word = _OTHER_ACCELERATOR.search(where.name.lower())
        siblings = [name for name in self.neuron_requirements
                    if name != path and PurePosixPath(name).parent == where.parent]
        if word is None or not siblings:
            return None
        return word.group(1), siblings[0]

    def notebooks_writing(self, path: str, text: str) -> tuple[str, ...]:
        """The notebooks whose ``%%writefile`` cell is this file (its path as the cell names it, and its text)."""
        return self.writers.get((path, notebooks.fingerprint(text)), ())

    def inf1_flow(self, path: str, writers: tuple[str, ...]) -> str | None:
        """Why the file belongs to an Inf1 flow: written by a notebook NM101 leaves as one, or a notebook's own
        shell lines (``NAME.sh``, ``NAME.cellN.sh``) in such a notebook; None otherwise."""
        for notebook in writers:
            if notebook in self.inf1_notebooks:
                return f"{notebook}, which writes it, is an Inf1 flow: {self.inf1_notebooks[notebook]}"
        if path.endswith(".sh"):
            notebook = re.sub(r"(?:\.cell\d+)?\.sh$", ".ipynb", path)
            if notebook in self.inf1_notebooks:
                return f"{notebook} is an Inf1 flow: {self.inf1_notebooks[notebook]}"
        return None

    def mentioned_by(self, path: str) -> frozenset[str]:
        """The Python file names ``path`` mentions; a notebook's shell lines and cells arrive as ``NAME.sh``,
        ``NAME.cellN.sh`` or ``NAME.cellN.txt``: the notebook's own mentions count."""
        notebook = re.sub(r"(?:\.cell\d+)?\.[^./]+$", ".ipynb", path)
        return self.mentions.get(path, frozenset()) | self.mentions.get(notebook, frozenset())

    def served_scripts(self, path: str) -> frozenset[str] | None:
        """The Python files the requirements file ``path`` installs for, when install lines say so: every install
        context whose ``pip install -r`` reads it (a Dockerfile stage, a workflow job, a shell script or Makefile:
        ``install_runs``) runs Python scripts of the project it names (``pip install -r requirements-train.txt``
        then ``torchrun train.py``) and nothing else it does not name (a module, a server, pytest, a shell script):
        those scripts and the project's Python files they import, at any depth. None when no install line reads it
        or one of them runs code it does not name: the file then serves its folder (``served_folder``)."""
        contexts = [(where, scripts, shells, only) for names, where, scripts, shells, only in self.runs
                    if path in names]
        if not contexts or any(shells or not only or not scripts for _, scripts, shells, only in contexts):
            return None
        key = (path, self.runs, self.files, tuple(sorted(self.local.items())))
        if key not in _SERVED_SCRIPTS:
            if len(_SERVED_SCRIPTS) > 256:
                _SERVED_SCRIPTS.clear()
            _SERVED_SCRIPTS[key] = self._served_scripts(path, contexts)
        return _SERVED_SCRIPTS[key]

    def _served_scripts(self, path: str, contexts: list) -> frozenset[str] | None:
        python = sorted(name for name in self.files if name.endswith(".py"))
        folder = served_folder(path)
        served: set[str] = set()
        for where, scripts, _, _ in contexts:
            for script in scripts:
                found = _project_path(self.files, where, script)
                if found not in self.files:
                    base = PurePosixPath(script).name
                    matches = [name for name in python if PurePosixPath(name).name == base and name.startswith(folder)]
                    if not matches:
                        return None  # a script that is not the project's: what it runs is not known
                    served |= set(matches)
                else:
                    served.add(found)
        modules = [(name, PurePosixPath(name)) for name in python]
        todo = sorted(served)
        while todo:
            parts = set(self.local.get(todo.pop(), ()))
            for name, module in modules:
                if name not in served and (module.stem in parts or not parts.isdisjoint(module.parent.parts)):
                    served.add(name)
                    todo.append(name)
        return frozenset(served)

    def importers(self, name: str) -> tuple[str, ...]:
        return self.imported.get(module_of(name), ())


#: (requirements file, install contexts, project files, their imports) -> ``ProjectDeps.served_scripts`` (a planner is built per
#: file and per include, so each file's answer is worked out once per run)
_SERVED_SCRIPTS: dict[tuple, frozenset[str] | None] = {}


#: folders that hold a project's dependency files rather than its code (``requirements/neuron.txt``,
#: ``envs/environment.yml``): a file there installs for the code of the folder above
DEPS_FOLDERS = frozenset({"requirements", "requirement", "reqs", "deps", "dependencies", "constraints", "env",
                          "envs", "environment", "environments", "conda", "pip"})


def served_folder(path: str) -> str:
    """The folder (as a prefix: ``""`` for the whole project, else ``"dir/"``) whose code the dependency file
    ``path`` installs for: its own folder and below (one sample of a samples repository); for a file in a
    ``requirements/`` (or other ``DEPS_FOLDERS``) folder, the folder above it (the project, for one at the root:
    rt4E's ``requirements/neuron.txt`` served no code at all, so the optimum-neuron that ``src/train.py`` still
    imports was removed); at the root, the whole project. A CI workflow (``.github/workflows/ci.yml``) runs in a
    checkout of its repository: it serves the folder above ``.github/`` (rt5H D2: a workflow's ``pip install
    optimum-neuron`` was replaced although the repository's app/main.py still imported optimum.neuron)."""
    if "/.github/" in f"/{path}":
        root = f"/{path}".rsplit("/.github/", 1)[0].lstrip("/")
        return root + "/" if root else ""
    folder = PurePosixPath(path).parent
    while folder.name.lower() in DEPS_FOLDERS:
        folder = folder.parent
    return "" if folder.as_posix() in {".", ""} else folder.as_posix() + "/"


def _project_path(files: frozenset[str], where: str, name: str) -> str:
    """The project path of a requirements file that a command in ``where`` names: from that file's folder (a
    notebook's, a script's, a Dockerfile's build context), else from the project root when only that one exists."""
    beside = posixpath.normpath(posixpath.join(posixpath.dirname(where), name))
    rooted = posixpath.normpath(name.lstrip("/")) if not name.startswith("/") else beside
    return rooted if beside not in files and rooted in files else beside


_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Parsed:
    name: str  # canonical
    raw_name: str
    extras: list[str]
    spec: str  # the version part ("==1.2", ">=1,<2", "" or "@ url")
    marker: str  # "; python_version>='3.8'" as written, or ""
    url: bool = False


def parse(text: str) -> Parsed | None:
    """A PEP 508 specifier (or a VCS/URL line naming optimum-neuron); None when it is something else."""
    text = text.strip()
    if not text or text.startswith(("-", "#")) and "optimum-neuron" not in text:
        return None
    if re.match(r"^(-e\s+)?(git\+|https?://|file:)", text):
        if "optimum-neuron" in text or "optimum_neuron" in text:
            extras_match = re.search(r"optimum[-_]neuron\[([^\]]*)\]", text)
            extras_text = extras_match.group(1) if extras_match else ""
            return Parsed("optimum-neuron", "optimum-neuron", _split_extras(extras_text), "", "",
                          url=True)
        return None
    if text.startswith("-"):
        return None
    match = _NAME.match(text)
    if not match:
        return None
    rest = text[match.end():].strip()
    marker = ""
    if ";" in rest and "://" not in rest.split(";")[0] or rest.startswith(";"):
        before, _, marker_text = rest.partition(";")
        gap = before[len(before.rstrip()):]
        marker = gap + ";" + marker_text  # as written, spacing included
        rest = before.strip()
    extras = _split_extras(match.group(2)[1:-1]) if match.group(2) else []
    return Parsed(canonical(match.group(1)), match.group(1), extras, rest, marker, url=rest.startswith("@"))


def _split_extras(text: str) -> list[str]:
    return [canonical(part.strip()) for part in text.split(",") if part.strip()]  # PEP 508 allows "a, b"


def admits(spec: str, version: str) -> bool:
    """Whether the version specifier ``spec`` allows ``version`` (True for no specifier)."""
    spec = spec.strip()
    if not spec:
        return True
    try:
        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, ValueError):
        return True  # something we do not understand: leave it alone


@dataclass
class Rewrite:
    specs: list[str]  # replacement specifiers (empty = remove)
    severity: Severity
    message: str
    keep: bool = False  # leave the original specifier in place (a todo about it)


#: an index option (``--index-url``, ``--extra-index-url``, ``-i``, ``--find-links``/``-f``) that names a Neuron
#: repository, or the Neuron repository's address itself
_NEURON_INDEX = re.compile(r"(?:index-url|--index|(?<!\S)-i|(?<!\S)-f|--find-links)[\s=]*\S*neuron"
                           r"|pip\.repos\.neuron\.amazonaws\.com", re.I)


def names_neuron_repository(text: str) -> bool:
    return bool(_NEURON_INDEX.search(text))


@dataclass
class Planner:
    """Per-file state: names already present, names added so far, whether a Neuron repository is configured."""

    present: set[str] = field(default_factory=set)
    added: set[str] = field(default_factory=set)
    repository_configured: bool = False
    needs_repository: bool = False
    #: the file names a Neuron package, or the project targets Neuron: only then are torch-xla and the stock
    #: pins touched (a TPU project's torch-xla stays)
    neuron: bool = True
    project: ProjectDeps = field(default_factory=ProjectDeps)
    #: the old stack is kept on purpose (a ``transformers==4.52.3`` the file needs for that tag's example scripts):
    #: what keeps it, for the todo on each stock pin that goes with it; None when the stack moves to transformers 5
    hold: str | None = None
    #: the old stack stays as a whole (optimum-neuron itself is kept): the Neuron packages beside it stay too
    hold_everything: bool = False
    #: packages that other install commands of the same file name (a notebook's other ``%pip`` cells)
    elsewhere: set[str] = field(default_factory=set)
    #: packages that the files this one includes with ``-r`` list (``ProjectDeps.provided``): never added here
    included: set[str] = field(default_factory=set)
    #: the file being migrated (display path) and its text: which other files of the project it installs for
    path: str | None = None
    file_text: str = ""
    #: the files near this one whose optimum.neuron import neuron-migrate keeps (see ``optimum_neuron_kept``)
    kept_optimum_neuron: tuple[str, ...] = ()
    #: the files near this one that still import optimum.neuron after this run (``still_importing``), the eval
    #: keeps above aside
    importing_optimum_neuron: tuple[str, ...] = ()
    #: of those, the one-time converters (``legacy_converter``), when every one of them is one: they run on the old
    #: stack before it is uninstalled and hold nothing; the file moves, and its old pins go to the legacy set
    #: (``legacy_pins``: a ``requirements-legacy.txt``, NM502's ``[dependency-groups] legacy-convert``)
    legacy_converters: tuple[str, ...] = ()
    #: the file is that legacy set itself (``is_legacy_set``), for such converters: it is left as it is
    legacy_set: bool = False
    #: where the old pins went (NM502 wrote the dependency group): said in the optimum-neuron line's todo
    legacy_written: str | None = None
    #: the files near this one that still use torch_xla after this run (``still_needing_torch_xla``), when the file
    #: names torch-xla
    importing_torch_xla: tuple[str, ...] = ()
    #: the files near this one that still use the XLA-era torch_neuronx API after this run, with what they use
    #: (``still_using_xla_neuronx``), when the file pins an XLA-era torch-neuronx
    xla_neuronx: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: the Inf1 packages the file installs (``neuron-cc``, ``optimum[neuron]``): an Inf1 requirement set, left as
    #: it is; ``inf1_noted``: its one todo was written
    inf1: list[str] = field(default_factory=list)
    inf1_noted: bool = False
    #: the file is in an Inf1 flow without naming an Inf1 package: why (see ``ProjectDeps.inf1_flow``)
    inf1_flow: str | None = None
    #: the notebooks that write this file with a ``%%writefile`` cell (the cell's path is relative to theirs)
    writers: tuple[str, ...] = ()
    #: an optimum-cli command that this file, or code it installs for, still runs: where and what
    #: (``this file runs `optimum-cli export```); optimum-neuron must stay while it does
    cli: str | None = None
    cli_users: tuple[str, ...] = ()  # the other files that run it
    #: the files of the code it installs for that still run optimum-cli (NM406's todo there: delete or replace the
    #: command): they hold nothing, but a line that stops installing optimum-cli says so
    cli_elsewhere: str | None = None
    #: what the held stack moves together with (the todo on each pin the hold keeps)
    hold_subject: str = "optimum-neuron"
    #: (hold, hold_subject) when the code the file installs for stays on the old stack and none of it moves
    #: (``hold_for_old_code``): taken by ``rewrite`` unless a more precise hold (an install set's, a Dockerfile
    #: stage's) was decided after ``for_specs``
    old_code_hold: tuple[str, str] | None = None
    #: the file is the requirement set of another accelerator (``ProjectDeps.other_accelerator``), left as it is;
    #: ``other_accelerator``: the todo on
    #: the first line the plan would have changed (None: the file is left alone, nothing said); ``other_noted``:
    #: it was written
    other_set: bool = False
    other_accelerator: str | None = None
    other_noted: bool = False
    #: the run's options (which files the run moves: ``moved``)
    options: RuleOptions | None = None
    #: the file's requirement specifiers, as written (the pins a split-off file would take: ``split_pins``)
    specs: tuple[str, ...] = ()

    @classmethod
    def for_specs(cls, specs: list[str], text: str = "", options: RuleOptions | None = None,
                  path: str | None = None, file_text: str | None = None,
                  follow_includes: bool = True) -> "Planner":
        """``text``: where an index option may name the Neuron repository; ``path``/``file_text``: the file, so
        that only the project files it serves count (see ``near``); ``follow_includes``: a requirements file
        holds the old stack when a file of its install set does (``held_with``)."""
        parsed_specs = [parsed for parsed in (parse(spec) for spec in specs) if parsed]
        present = {parsed.name for parsed in parsed_specs}
        project = ProjectDeps.of(options)
        planner = cls(present=present, repository_configured=names_neuron_repository(text),
                      neuron=project.neuron or bool(present & NEURON_PACKAGES), project=project, path=path,
                      file_text=_NOTE_LINE.sub("", text if file_text is None else file_text),  # notes name files
                      options=options, specs=tuple(spec.strip() for spec in specs))
        planner.inf1 = inf1_labels(parsed_specs)
        if path is not None and not planner.repository_configured:
            planner.repository_configured = project.repository_shared(path)
        if path is not None:
            planner.included = project.provided(path)
        other = project.other_accelerator(path, parsed_specs) if path is not None else None
        if path is not None:
            planner.writers = project.notebooks_writing(path, planner.file_text)
            planner.inf1_flow = project.inf1_flow(path, planner.writers)
            project = planner.project = project.seen_from(planner.writers)
        planner.kept_optimum_neuron = planner.near(project.optimum_neuron_kept)
        names_on = any(_names_optimum_neuron(parsed) for parsed in parsed_specs)
        # who still runs optimum-cli after this run: this text or the notebook it is a part of (its %pip lines
        # arrive as NAME.sh, a %%writefile cell by its written name) hold the package; a script / Dockerfile /
        # workflow / notebook of the code it installs for (``near``) does not (redteam-round2 D5: NM406's todo
        # there says to delete or replace the command, and holding the old stack for it would keep the migrated
        # Python beside it off the new one), but the line that stops installing optimum-cli says so (a todo)
        own_cli, parallel = commands_needing_old_stack(planner.file_text)
        notebook = re.sub(r"(?:\.cell\d+)?\.sh$", ".ipynb", path) if path and path.endswith(".sh") else None
        if own_cli:
            planner.cli = f"this file runs `{own_cli}`"
        else:
            users = tuple(dict.fromkeys(name for name in (notebook, *planner.writers) if name in project.cli))
            if users:
                planner.cli_users = users
                planner.cli = (f"{_files(users)} run{'s' if len(users) == 1 else ''} "
                               f"`{project.cli[users[0]]}`")
        if planner.cli is None:
            served = planner.near(tuple(sorted(name for name in project.cli if name not in {path, notebook})))
            if served:
                planner.cli_elsewhere = (f"{_files(served)} still run{'s' if len(served) == 1 else ''} "
                                         f"`{project.cli[served[0]]}`")
        if names_on and not planner.kept_optimum_neuron and options is not None:
            code = {name: text for name, text in options.project.of("deps.optimum-neuron-code").items()
                    if name != path}
            planner.importing_optimum_neuron = still_importing(
                {name: code[name] for name in planner.near(tuple(code))}, options)
            converters = legacy_converters(planner.importing_optimum_neuron, code, options)
            if converters and converters == planner.importing_optimum_neuron:
                # one-time converters only: run on the old stack before the move, they cannot be ported first
                planner.importing_optimum_neuron = ()
                planner.legacy_converters = converters
                planner.legacy_set = path is not None and is_legacy_set(path)
        if options is not None and any(parsed.name == "torch-xla" for parsed in parsed_specs):
            code = {name: text for name, text in options.project.of("deps.torch-xla-code").items() if name != path}
            planner.importing_torch_xla = still_needing_torch_xla(
                {name: code[name] for name in planner.near(tuple(code))}, options)
        if options is not None and any(_xla_era_neuronx_pin(parsed) for parsed in parsed_specs):
            code = {name: text for name, text in options.project.of("deps.xla-neuronx-code").items() if name != path}
            planner.xla_neuronx = tuple(still_using_xla_neuronx(
                {name: code[name] for name in planner.near(tuple(code))}, options).items())
        if planner.kept_optimum_neuron and names_on:
            planner.hold = f"optimum-neuron, kept for the eval(...) in {_files(planner.kept_optimum_neuron)}"
            planner.hold_everything = True
        elif planner.importing_optimum_neuron:
            planner.hold = (f"optimum-neuron, kept because {_files(planner.importing_optimum_neuron)} still "
                            f"import{'s' if len(planner.importing_optimum_neuron) == 1 else ''} optimum.neuron")
            planner.hold_everything = True
        elif planner.cli and names_on:
            planner.hold = f"optimum-neuron, kept because {planner.cli}"
            planner.hold_everything = True
        elif planner.importing_torch_xla:
            # torch-xla X.Y needs torch X.Y: the code that still imports it keeps the XLA-era stack as a whole
            planner.hold = (f"torch-xla, kept because {_files(planner.importing_torch_xla)} still "
                            f"use{'s' if len(planner.importing_torch_xla) == 1 else ''} torch_xla")
            planner.hold_subject = "torch-xla"
            planner.hold_everything = True
        elif planner.xla_neuronx:
            # the XLA-era torch-neuronx X.Y needs torch X.Y, and the stock stack beside it stays with that torch
            users = tuple(name for name, _ in planner.xla_neuronx)
            planner.hold = (f"torch-neuronx, kept because {_files(users)} still use{'s' if len(users) == 1 else ''} "
                            "the XLA-era torch_neuronx API (see the torch-neuronx line)")
            planner.hold_subject = "torch-neuronx"
            planner.hold_everything = True
        elif parallel and any(parsed.name in NEURON_PACKAGES or parsed.name in {"torch-xla", "optimum"}
                              for parsed in parsed_specs):
            # neuron_parallel_compile comes with the XLA-era torch-neuronx / libneuronxla: the stack stays with it
            planner.hold = ("the XLA-era stack, kept because this file still runs neuron_parallel_compile, which the "
                            "XLA-era torch-neuronx / libneuronxla install (without them: `neuron_parallel_compile: command not "
                            "found`)")
            planner.hold_subject = "that command (drop neuron_parallel_compile as its todo says)"
            planner.hold_everything = True
        if not planner.hold_everything and follow_includes and path is not None and options is not None \
                and other is None and not planner.inf1 and not planner.inf1_flow:
            planner.held_with(options)
        if not planner.hold_everything and path is not None and options is not None and other is None \
                and not planner.inf1 and not planner.inf1_flow:
            planner.hold_for_old_code(options)
        if other is not None:
            planner.other_set = True
            planner.other_accelerator = planner.other_accelerator_todo(parsed_specs, *other)
        return planner

    def hold_for_old_code(self, options: RuleOptions) -> None:
        """A file that names no package of the old stack still serves code of it (rtD D3: a SageMaker
        ``code/requirements.txt`` with ``transformers==4.36.2`` beside the ``code/inference.py`` a notebook writes,
        which stays on ``torch.jit.load`` of a ``torch_neuronx.trace`` artifact; the Deep Learning Container brings
        torch-neuronx and its torch): when the code it installs for that uses the stack still runs on the old one
        after this run (the XLA-era torch_neuronx API, torch_xla, optimum.neuron: no rule could port it) and none of
        it moves to what only the new stack has (``Planner.moved``), its pins stay: moved alone to transformers 5
        they would serve nothing the run migrated and break the code that stays (transformers 5 needs a newer torch
        than the container's). Files a notebook writes count like files on disk."""
        written = self.project.written_bodies(self.writers)
        xla_neuronx = {**written, **options.project.of("deps.xla-neuronx-code")}
        torch_xla = {**{name: text for name, text in written.items() if uses_torch_xla(text)},
                     **options.project.of("deps.torch-xla-code")}
        optimum = {**{name: text for name, text in written.items() if uses_optimum_neuron(text)},
                   **options.project.of("deps.optimum-neuron-code")}

        def served(files: dict[str, str]) -> dict[str, str]:
            return {name: files[name] for name in self.near(tuple(files)) if name != self.path}

        staying: dict[str, str] = {}
        for name, api in still_using_xla_neuronx(served(xla_neuronx), options).items():
            staying[name] = f"the XLA-era torch_neuronx API ({', '.join(api)})"
        for name in still_needing_torch_xla(served(torch_xla), options):
            staying.setdefault(name, "torch_xla" if _DIRECT_TORCH_XLA.search(torch_xla[name])
                               else "neuronx_distributed, which runs on torch_xla")
        # optimum.neuron holds only a file that names optimum-neuron (a stock pin beside code whose optimum-neuron is
        # installed elsewhere moves, as before); the file's own branch above read the files on disk, this adds the
        # files notebooks write
        names_on = any(_names_optimum_neuron(parsed) for parsed in map(parse, self.specs) if parsed is not None)
        importing = still_importing(served(optimum), options) if names_on else ()
        converters = legacy_converters(importing, optimum, options)  # they run on the old stack once, before the move
        for name in importing:
            if name not in converters:
                staying.setdefault(name, "optimum.neuron")
        if not staying or self.moved() or moved_calls(served(written), options):
            return
        names = tuple(sorted(staying))
        one = len(names) == 1
        uses = f"it uses {staying[names[0]]}" if one else "; ".join(f"{name}: {staying[name]}" for name in names[:3])
        self.old_code_hold = (
            f"the old stack that {_files(names)} still run{'s' if one else ''} on after this run ({uses}; no rule "
            "could port that: see the todo there), and nothing this file installs for moves to the new stack",
            f"{'that file' if one else 'those files'}, once ported")

    def held_with(self, options: RuleOptions) -> None:
        """One install set takes one decision (rt3A glue-trn: requirements.txt keeps optimum-neuron[neuronx]==0.0.25
        for run_glue.py, and the constraints.txt it includes with ``-c`` moved to torch 2.14 / transformers 5: pip
        reads both and cannot resolve them). When a requirements file of this file's install set
        (``ProjectDeps.install_set``: the files it includes with ``-r`` / ``-c``, those that include it, those the
        ``pip install`` commands of one Dockerfile stage / workflow job / script install with it, and theirs in
        turn) keeps its optimum-neuron, decided the way that file's own migration decides it (from facts that read
        the same before and after the run), this file holds the old stack too; so does a ``pip install`` command of
        such a context that keeps the package it names, decided as NM505 decides it (rt5H D2: ``RUN pip install
        optimum-neuron==0.0.24 && pip install -r requirements.txt`` for an app/main.py that still imports
        optimum.neuron: requirements.txt's ``transformers==4.43.2`` was moved to ``>=5.24``, which optimum-neuron
        0.0.24's ``transformers==4.41.1`` does not admit). A file whose optimum-neuron line is migrated holds
        nothing: the set moves together, as before."""
        assert self.path is not None
        members = self.project.install_set(self.path)
        if self.held_by_files(members, options, lambda name: self.project.relation(self.path or "", name)):
            return
        reached = {self.path, *members}
        for names, where, unit, commands in self.project.installed_beside:
            text = self.project.install_texts.get(where)
            if text is None or not reached & set(names):
                continue
            for specs in commands:
                other = Planner.for_specs(list(specs), " ".join(specs), options, where, text, follow_includes=False)
                if not (other.hold_everything and other.hold):
                    continue
                command = f"`pip install {' '.join(specs)}`"
                installed = "this file" if self.path in names else \
                    f"{_files(tuple(sorted(reached & set(names))))}, of this file's install set,"
                self.hold = (f"{where}'s {other.hold} ({where} installs {installed} in the same {unit} as {command}: "
                             "pip installs both into one environment, and the TorchNeuron pins do not resolve beside "
                             "the stack kept there)")
                self.hold_subject = f"the {command} of {where}"
                self.hold_everything = True
                return

    def held_by_files(self, names: tuple[str, ...], options: RuleOptions,
                      relation: Callable[[str], tuple[str, str]]) -> bool:
        """Hold the old stack when a requirements file of ``names`` keeps its optimum-neuron, decided the way that
        file's own migration decides it; ``relation``: how that file joins this install, and why that ties them
        (for the todo). Whether it held."""
        for name in names:
            text = self.project.optimum_neuron_sets.get(name)
            if text is None:
                continue
            specs = [line.split(" #")[0] for line in text.splitlines()]
            other = Planner.for_specs(specs, text, options, name, follow_includes=False)
            if other.hold_everything and other.hold:
                how, why = relation(name)
                self.hold = (f"{name}'s {other.hold} ({how}: {why}, and the TorchNeuron pins do not resolve "
                             "beside the stack kept there)")
                self.hold_subject = f"the optimum-neuron line of {name}"
                self.hold_everything = True
                return True
        return False

    def other_accelerator_todo(self, parsed_specs: list[Parsed], word: str, sibling: str) -> str | None:
        """The todo of another accelerator's requirement set, or None when nothing asks for one: no pin the plan
        would change, or no code it installs for that the run moves onto APIs only the migrated stack has
        (``moved``: read on the migrated code, the same on a second run)."""
        changed = [f"{parsed.raw_name}{parsed.spec}" for parsed in parsed_specs
                   if _rewrite(parsed, replace(self, added=set(self.added))) is not None]
        code = self.moved() if changed else ()
        if not code:
            return None
        return (f"the lines of this file were left as they are: it is the requirement set of another accelerator "
                f"(its name says `{word}`, it names no Neuron package, and {sibling} beside it is the Neuron one, "
                f"{self._sibling_decision(sibling)}), so the TorchNeuron stack does not go here. It also installs for "
                f"{_files(code)}, which this run rewrote to calls only the new stack has (torch.accelerator, new in "
                f"torch 2.6; the `neuron` device): check that {', '.join(changed)} still install what that code "
                f"calls, and raise only the floors it needs")

    def _sibling_decision(self, sibling: str) -> str:
        """What this run does with the Neuron requirements file ``sibling`` (decided as its own migration decides
        it): it migrates it, or holds it on the old stack (final4-E 2: mixed-device-clf's requirements-neuron.txt,
        held for torch-xla, was said to be migrated)."""
        text = self.project.neuron_sets.get(sibling)
        if text is not None:
            specs = [line.split(" #")[0] for line in _NOTE_LINE.sub("", text).splitlines()]
            held = Planner.for_specs(specs, text, self.options, sibling)
            if held.hold_everything and held.hold:
                return f"which this run leaves on the old stack ({held.hold})"
        return "which this run migrates"

    def moved(self, exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The files this file installs for (``near``) that the run moves onto APIs only the migrated stack has
        (``moved_to_new_stack``), ``exclude`` and this file aside."""
        return tuple(self.moved_needs(exclude))

    def moved_needs(self, exclude: tuple[str, ...] = ()) -> dict[str, tuple[tuple[str, str, str], ...]]:
        """``moved`` with what each of those files calls that this file's pins exclude (``new_stack_calls``): a call
        whose package the file pins to a range that admits its first release is no conflict (``torch>=2.6`` and
        ``torch.accelerator``); a package the file does not pin comes with the stack it keeps (optimum-neuron
        0.0.x installs transformers 4.x), so it counts."""
        code = self.project.stack_code
        names = tuple(name for name in self.near(tuple(code)) if name not in exclude and name != self.path)
        pins = {parsed.name: parsed for parsed in map(parse, self.specs) if parsed is not None}
        found = {}
        for name, calls in moved_calls({name: code[name] for name in names}, self.options).items():
            needs = tuple(call for call in calls if call[1] not in pins or pins[call[1]].url
                          or not admits(pins[call[1]].spec, call[2] + ".0"))
            if needs:
                found[name] = needs
        return found

    def split_pins(self) -> list[str]:
        """The pins a requirements file split off from this one for the files the run moved would take: this file's
        lines as the plan moves them when nothing holds the old stack (optimum-neuron -> the TorchNeuron stack and
        the packages it brought in that the code imports, torch-xla removed, stock pins at the tested floors)."""
        free = replace(self, added=set(), hold=None, hold_everything=False, kept_optimum_neuron=(),
                       importing_optimum_neuron=(), importing_torch_xla=(), xla_neuronx=(), old_code_hold=None,
                       cli=None, cli_users=(),
                       cli_elsewhere=None, inf1=[], inf1_flow=None, other_set=False)
        pins: list[str] = []
        for spec in self.specs:
            parsed = parse(spec)
            if parsed is None:
                continue
            if parsed.name in XLA_ONLY:
                continue  # kept here for the code that stays (an NxD import): the moved files run without it
            found = _rewrite(parsed, free)
            chosen = [spec] if found is None or found.keep else found.specs
            pins += [pin for pin in chosen if pin not in pins]
        return pins

    def legacy_pins(self) -> list[str]:
        """The file's specifiers, as written, that the plan changes or removes (optimum-neuron, the XLA-era
        torch-neuronx, the stock pins beside it): the old environment a one-time converter runs in, which the file
        no longer installs."""
        free = replace(self, added=set(), legacy_converters=(), legacy_set=False)
        pins = []
        for spec in self.specs:
            parsed = parse(spec)
            found = _rewrite(parsed, free) if parsed is not None else None
            if found is not None and not found.keep and spec not in pins:
                pins.append(spec)
        return pins

    def near(self, files: tuple[str, ...]) -> tuple[str, ...]:
        """The ``files`` this file installs for: those under the folder whose code it installs
        (``served_folder``: its own folder and below, a SageMaker ``source_dir`` or one sample of a samples
        repository; the folder above a ``requirements/`` folder; the project for a file at its root) and those it
        names (a notebook that runs ``../scripts/run_sft.py``). A repository of independent samples must not give
        one sample's requirements another sample's imports. Every dependency rule (NM501-NM506) asks this."""
        if self.path is None:
            return files
        # a file a notebook writes sits where the notebook runs (dir/src/requirements.txt); the notebook's own
        # mentions are not its mentions (entry_point="compile.py" names the compile.py of its source_dir, which the
        # folder covers, not every compile.py of the project)
        if self.writers:
            prefixes = []
            for path in (notebooks.resolved(notebook, self.path) for notebook in self.writers):
                folder = PurePosixPath(path).parent.as_posix()
                prefixes.append("" if folder in {".", ""} else folder + "/")
        else:
            prefixes = [served_folder(self.path)]
        mentioned = self.project.mentioned_by(self.path) if not self.writers else frozenset()
        # a requirements file that install lines read before running named scripts serves those scripts and what
        # they import (``ProjectDeps.served_scripts``), not every Python file of its folder
        scripts = self.project.served_scripts(self.path) if not self.writers else None

        def in_folder(name: str) -> bool:
            if scripts is not None and name.endswith((".py", ".ipynb")):
                return name in scripts
            return name.startswith(tuple(prefixes))

        return tuple(name for name in files if in_folder(name)
                     or PurePosixPath(name).name in mentioned
                     or re.search(rf"(?<![\w.-]){re.escape(PurePosixPath(name).name)}(?![\w-])", self.file_text))

    def stack(self) -> set[str]:
        """The stock packages the file will install: the TorchNeuron core and the ones it names or had added."""
        return {"transformers", "accelerate"} | ((self.present | self.added) & set(STOCK_MIN))

    def new(self, name: str, spec: str) -> list[str]:
        """``spec`` unless the file already names ``name`` (its own line is rewritten), a file it includes with
        ``-r`` does (that line is rewritten there), or it was added."""
        if name in self.present or name in self.added or name in self.included:
            return []
        self.added.add(name)
        return [spec]


def is_inf1(parsed: Parsed) -> bool:
    """An Inf1 package: torch-neuron, neuron-cc, tensorflow-neuron, or the ``[neuron]`` extra of optimum /
    optimum-neuron (which installs torch-neuron and neuron-cc)."""
    return parsed.name in INF1 or (parsed.name in {"optimum", "optimum-neuron"} and "neuron" in parsed.extras)


def inf1_labels(parsed_specs: list[Parsed]) -> list[str]:
    """The Inf1 packages among ``parsed_specs``, as written (``optimum[neuron]``), once each."""
    labels: list[str] = []
    for parsed in parsed_specs:
        label = f"{parsed.raw_name}[{','.join(parsed.extras)}]" if parsed.extras else parsed.raw_name
        if is_inf1(parsed) and label not in labels:
            labels.append(label)
    return labels


def inf1_todo(labels: list[str], flow: str | None = None) -> str:
    """The one todo of an Inf1 requirement set: its Inf1 packages (``labels``), or the Inf1 flow it belongs to."""
    port = (f"a Trn2/Trn3 port needs a requirements file of its own ({TORCH_NEURONX_SPEC}, {TORCH_SPEC}, "
            f"{stock_spec('transformers')}, {stock_spec('accelerate')}, from AWS's Neuron package repository)")
    if not labels:
        return (f"an Inf1 requirement set ({flow}): the inference rules leave that code on the Inf1 stack, which "
                "has no TorchNeuron path (TorchNeuron runs on Trn2/Trn3), so its lines were left as they are: "
                f"keep them for the Inf1 deployment; {port}")
    return (f"an Inf1 requirement set ({', '.join(labels)}): Inf1 has no TorchNeuron path (TorchNeuron runs on "
            "Trn2/Trn3), and the Inf1 and TorchNeuron stacks do not go in one environment (torch-neuron, which "
            f"optimum[neuron] installs, pins torch 1.13; TorchNeuron needs torch {TORCH_LINE} and transformers 5), so "
            f"its lines were left as they are: keep them for the Inf1 deployment; {port}")


def stock_spec(name: str) -> str:
    return f"{name}>={STOCK_MIN[name]}" if name in STOCK_MIN else name


def rewrite(text: str, planner: Planner) -> Rewrite | None:
    parsed = parse(text)
    if parsed is None:
        return None
    if planner.inf1 or planner.inf1_flow:
        # an Inf1 requirement set: no line changes, one todo on its first Inf1 package (in an Inf1 flow that names
        # none, on the first line that would have changed)
        if planner.inf1_noted:
            return None
        if not (is_inf1(parsed) if planner.inf1 else
                _rewrite(parsed, replace(planner, added=set(planner.added))) is not None):
            return None
        planner.inf1_noted = True
        return Rewrite([], Severity.TODO, inf1_todo(planner.inf1, planner.inf1_flow), keep=True)
    if planner.other_set:
        # another accelerator's requirement set: no line changes; one todo on the first line the plan would have
        # changed, when the code it installs for may have moved (``Planner.other_accelerator_todo``)
        if planner.other_noted or planner.other_accelerator is None or \
                _rewrite(parsed, replace(planner, added=set(planner.added))) is None:
            return None
        planner.other_noted = True
        return Rewrite([], Severity.TODO, planner.other_accelerator, keep=True)
    if planner.legacy_set:
        # the old environment of one-time converters: left as it is, one note on its optimum-neuron line
        if not _names_optimum_neuron(parsed):
            return None
        return Rewrite([], Severity.TODO, f"{text.strip()} was left as it is: this file is the old environment of "
                       f"{_files(planner.legacy_converters)}, the one-time checkpoint conversion NM206 notes there: "
                       "run it in an environment built from this file before uninstalling optimum-neuron, then "
                       "delete this file", keep=True)
    if not planner.hold_everything and planner.old_code_hold is not None:
        planner.hold, planner.hold_subject = planner.old_code_hold
        planner.hold_everything = True
    found = _rewrite(parsed, planner)
    if planner.hold_everything and found is not None and not found.keep:
        return Rewrite([], Severity.TODO, f"{text.strip()} was left as it is: it goes with {planner.hold}; move it "
                       f"together with {planner.hold_subject} ({found.message.removesuffix(' (removed)')})",
                       keep=True)
    if planner.hold and found is not None and not found.keep and _is_stock(parsed.name) \
            and parsed.name != "transformers":  # the held pin itself gets its own todo from the caller
        # a stock pin moved to the transformers-5 floors beside a transformers 4.x that stays: a half-moved
        # environment that pip cannot resolve or that breaks the old code; the pins move together
        return Rewrite([], Severity.TODO, f"{text.strip()} was left as it is: it goes with {planner.hold}; move it "
                       f"together with transformers ({found.message.removesuffix(' (removed)')})", keep=True)
    return found


def names_optimum_neuron(parsed: Parsed) -> bool:
    """optimum-neuron, or optimum with a neuron extra."""
    return _names_optimum_neuron(parsed)


def _names_optimum_neuron(parsed: Parsed) -> bool:
    return parsed.name == "optimum-neuron" or (parsed.name == "optimum" and "neuronx" in parsed.extras)


def _is_stock(name: str) -> bool:
    """A package of the stock Hugging Face stack or one it pins (not a Neuron/XLA package, not torch)."""
    return name in STOCK_MIN or name in KNOWN_GOOD or name in BROUGHT_BY_OPTIMUM_NEURON


def _rewrite(parsed: Parsed, planner: Planner) -> Rewrite | None:
    name = parsed.name
    if not planner.neuron and name not in NEURON_PACKAGES and name != "optimum":
        return None  # torch-xla / stock pins of a project that does not target Neuron (a TPU project)
    if name == "optimum-neuron" or (name == "optimum" and {"neuron", "neuronx"} & set(parsed.extras)):
        return _optimum_neuron(parsed, planner)
    if name == "optimum" and planner.cli:
        return None  # optimum installs optimum-cli, which the file (or code it serves) still runs
    if name == "optimum" and "optimum-neuron" in planner.present:
        return Rewrite([], Severity.TODO, "optimum was a dependency of optimum-neuron: remove it unless the project "
                       "uses optimum itself", keep=True)
    if name == "torch-xla" and planner.importing_torch_xla:
        users = planner.importing_torch_xla
        one = len(users) == 1
        return Rewrite([], Severity.TODO, f"{parsed.raw_name} was left as it is: after this run {_files(users)} still "
                       f"use{'s' if one else ''} torch_xla (no rule could port that use: see the todo there; without "
                       f"the package: `ModuleNotFoundError: No module named 'torch_xla'`): port "
                       f"{'it' if one else 'them'} first, then remove this line "
                       f"({XLA_ONLY[name].removesuffix(' (removed)')}){_also_served(planner, users)}", keep=True)
    if name in XLA_ONLY:
        importers = planner.project.importers(name) if name in WATCHED else ()
        if importers:  # never drop a package the code still imports: the import would fail
            return Rewrite([], Severity.TODO, f"{parsed.raw_name} is still imported by {_files(importers)}: remove it "
                           f"once that code is ported ({XLA_ONLY[name].removesuffix(' (removed)')})", keep=True)
        return Rewrite([], Severity.FIXED, XLA_ONLY[name])
    if name == "torch-neuronx" and planner.xla_neuronx and _xla_era_neuronx_pin(parsed):
        users = tuple(path for path, _ in planner.xla_neuronx)
        one = len(users) == 1
        return Rewrite([], Severity.TODO, f"{parsed.raw_name}{parsed.spec} was left as it is: after this run "
                       f"{_files(users)} still use{'s' if one else ''} the XLA-era torch_neuronx API "
                       f"({_xla_uses(planner.xla_neuronx)}; no rule could port that use: see the todo there), which "
                       f"the TorchNeuron build ({TORCH_NEURONX_SPEC}) does not have (a torch_neuronx.trace artifact "
                       f"does not load there either): "
                       f"port {'it' if one else 'them'} first, then replace this line with {TORCH_NEURONX_SPEC} "
                       f"(and torch with {TORCH_SPEC}){_also_served(planner, users)}", keep=True)
    if name in INF1:
        return Rewrite([], Severity.TODO, f"{parsed.raw_name} is the Inf1 stack, which has no TorchNeuron path "
                       "(Trn2/Trn3 only): keep it only for Inf1 deployments, remove it for the TorchNeuron port",
                       keep=True)
    if name == "torch-neuronx":
        if parsed.url or any(admits(parsed.spec, version) for version in NATIVE_TORCH_NEURONX):
            return None
        planner.needs_repository = True
        return Rewrite([TORCH_NEURONX_SPEC + parsed.marker], Severity.FIXED,
                       f"torch-neuronx{parsed.spec} is an XLA-era build -> {TORCH_NEURONX_SPEC} (TorchNeuron; same "
                       f"package name, native backend)")
    if name == "neuronx-cc":
        if parsed.url or admits(parsed.spec, NEURONX_CC_SDK):
            return None
        return Rewrite([NEURONX_CC_SPEC + parsed.marker], Severity.TODO,
                       f"neuronx-cc{parsed.spec} -> {NEURONX_CC_SPEC}: match the compiler of your Neuron SDK "
                       f"({NEURONX_CC_SDK} in SDK 2.33)")
    if name == "torch":
        if parsed.url or admits(parsed.spec, f"{TORCH_LINE}.0"):
            return None
        return Rewrite([TORCH_SPEC + parsed.marker], Severity.FIXED,
                       f"torch{parsed.spec} -> {TORCH_SPEC}: torch-neuronx {TORCH_LINE}.* needs the same torch "
                       f"{TORCH_LINE}")
    if name in {"torchvision", "torchaudio"}:
        if parsed.url or not parsed.spec or parsed.spec.startswith(">"):
            return None
        if name == "torchvision":
            line = TORCHVISION_FOR_TORCH[TORCH_LINE]
            if admits(parsed.spec, f"{line}.0"):
                return None
            # pip cannot install an old torchvision beside torch-neuronx's torch: each release requires one torch
            return Rewrite([TORCHVISION_SPEC + parsed.marker], Severity.FIXED,
                           f"{parsed.raw_name}{parsed.spec} was built for the old torch (each torchvision release "
                           f"requires one torch line) -> {TORCHVISION_SPEC}, the release for torch {TORCH_LINE}")
        return Rewrite([], Severity.TODO, f"{parsed.raw_name}{parsed.spec} was pinned for the old torch: pin the "
                       f"release that matches torch {TORCH_LINE}", keep=True)
    if name in STOCK_MIN:
        if parsed.url or admits(parsed.spec, STOCK_MIN[name] + ".0") or admits(parsed.spec, STOCK_MIN[name]):
            return None
        extras = f"[{','.join(parsed.extras)}]" if parsed.extras else ""
        new = f"{parsed.raw_name}{extras}>={STOCK_MIN[name]}{parsed.marker}"
        # the pin is the project's own (optimum-neuron's requirements are in its metadata, not in this file): say
        # only what is known, that it excludes the tested release, and whether optimum-neuron is installed beside it
        beside = " (pinned beside optimum-neuron)" if planner.present & {"optimum-neuron", "optimum"} else ""
        return Rewrite([new], Severity.FIXED, f"{parsed.raw_name}{parsed.spec}{beside} excludes {name} "
                       f"{STOCK_MIN[name]}, the version the TorchNeuron port is tested with -> >={STOCK_MIN[name]}")
    if name in KNOWN_GOOD and not parsed.url and parsed.spec:
        return _floor(parsed, planner)
    return None


def combine(specifiers: list[SpecifierSet]) -> SpecifierSet:
    """One specifier set for all of them (the usual operators): the highest lower bound, the lowest upper bound,
    every exclusion and exact or compatible pin."""
    lower: Specifier | None = None
    upper: Specifier | None = None
    others: set[str] = set()
    for spec in (spec for group in specifiers for spec in group):
        version = Version(spec.version.replace(".*", ""))
        if spec.operator in {">=", ">"}:
            if lower is None or version > Version(lower.version) or (
                    version == Version(lower.version) and spec.operator == ">"):
                lower = spec
        elif spec.operator in {"<", "<="}:
            if upper is None or version < Version(upper.version) or (
                    version == Version(upper.version) and spec.operator == "<"):
                upper = spec
        else:
            others.add(str(spec))
    return SpecifierSet(",".join([str(spec) for spec in (lower, upper) if spec is not None] + sorted(others)))


def _floor(parsed: Parsed, planner: Planner) -> Rewrite | None:
    """A pin the stock stack cannot be installed beside (``huggingface_hub==0.24`` next to transformers 5) is
    replaced by what the stack requires; a todo when the project's code imports the package and the bump
    crosses a major version (its own calls may need porting)."""
    requirers = sorted(target for target in planner.stack() if parsed.name in REQUIRES.get(target, {}))
    python, python_by, wheels_from = _python_floor(parsed.name, planner.stack())
    if not requirers and not wheels_from:
        return None
    wanted = combine([SpecifierSet(REQUIRES[target][parsed.name]) for target in requirers]
                     + ([SpecifierSet(f">={wheels_from}")] if wheels_from else []))
    try:
        pin = SpecifierSet(parsed.spec)
        bounds = {Version(s.version.replace(".*", "")) for s in [*pin, *wanted]}
        candidates = {Version(KNOWN_GOOD[parsed.name])} | bounds
    except (InvalidSpecifier, InvalidVersion):
        return None  # something we do not understand: leave it alone
    if any(pin.contains(version, prereleases=True) and wanted.contains(version, prereleases=True)
           for version in candidates):
        return None
    extras = f"[{','.join(parsed.extras)}]" if parsed.extras else ""
    new = f"{parsed.raw_name}{extras}{_ordered(wanted)}{parsed.marker}"
    reasons = []
    needs = combine([SpecifierSet(REQUIRES[target][parsed.name]) for target in requirers])
    points = candidates | {Version(s.version.replace(".*", "")) for s in needs}
    if requirers and not any(pin.contains(v, prereleases=True) and needs.contains(v, prereleases=True)
                             for v in points):
        by = ", ".join(f"{target} {TARGET_VERSIONS[target]}" for target in requirers)
        reasons.append(f"{by} require{'s' if len(requirers) == 1 else ''} {parsed.name}{_ordered(needs)}")
    if wheels_from and not any(pin.contains(v, prereleases=True) for v in candidates if v >= Version(wheels_from)):
        reasons.append(f"{python_by} {TARGET_VERSIONS[python_by]} needs Python>={python}, and {parsed.name} "
                       f"publishes wheels for Python {python} from {wheels_from} on")
    if not reasons:  # each alone would do; together they leave nothing
        reasons.append(f"it needs {parsed.name}{_ordered(wanted)}")
    message = (f"{parsed.raw_name}{parsed.spec} cannot be installed beside the migrated stack ({'; '.join(reasons)})"
               f" -> {_ordered(wanted)}")
    importers = planner.project.importers(parsed.name)
    old_majors = {s.version.split(".")[0] for s in pin if s.operator in {"==", "~=", "<=", "<", "==="}}
    lowest = min((Version(s.version) for s in wanted if s.operator in {">=", ">"}), default=None)
    if importers and lowest is not None and old_majors and str(lowest.major) not in old_majors:
        return Rewrite([new], Severity.TODO, f"{message}; the project imports {module_of(parsed.name)} "
                       f"({_files(importers)}): check those calls against its {lowest.major}.x release notes")
    return Rewrite([new], Severity.FIXED, message)


def _python_floor(name: str, stack: set[str]) -> tuple[str, str, str | None]:
    """(the lowest Python the stack runs on, the package that needs it, the first ``name`` release with wheels
    for that Python or None when no table says)."""
    floors = [(Version(re.sub(r"^>=\s*", "", spec).split(",")[0]), target)
              for target, spec in REQUIRES_PYTHON.items() if target in stack and spec.startswith(">=")]
    if not floors:
        return "", "", None
    version, target = max(floors)
    python = f"{version.major}.{version.minor}"
    return python, target, PYTHON_WHEELS.get(name, {}).get(python)


def _ordered(specifiers: SpecifierSet) -> str:
    """``>=1.32.0,<3.0``: lower bounds first, the way people write ranges (SpecifierSet sorts them as text)."""
    rank = {">=": 0, ">": 0, "~=": 0, "==": 0, "===": 0, "<": 1, "<=": 1, "!=": 2}
    return ",".join(str(s) for s in sorted(specifiers, key=lambda s: (rank.get(s.operator, 3), str(s))))


def _files(paths: tuple[str, ...]) -> str:
    shown = ", ".join(paths[:3])
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _also_served(planner: Planner, kept: tuple[str, ...]) -> str:
    """When the old stack stays for some files (optimum-neuron, or torch-xla: its line names them), the other files
    it installs for that this run moved onto calls only the migrated stack has and that this file's pins exclude
    (``Planner.moved_needs``): no pin serves both, so the note says which file needs what, which files keep the old
    stack here, and how to split the file (the pins the moved files' own requirements file takes:
    ``Planner.split_pins``). Files the run left on APIs the old pins have are not named (rt4D 10: collator.py, plain
    torch, was sent to split requirements)."""
    needs = planner.moved_needs(kept + planner.cli_users)
    if not needs:
        return ""
    others = tuple(needs)
    one = len(others) == 1
    calls = "; ".join(f"{name}: " + ", ".join(f"{label} needs {package}>={first}" for label, package, first in found)
                      for name, found in needs.items())
    holders = _files(kept) if kept else (planner.cli or "the code it keeps")
    unknown = ""
    if planner.path is not None and not planner.writers and planner.project.served_scripts(planner.path) is None:
        # no install line ties this file to scripts: it counts for the Python files of its folder (``near``)
        unknown = (f" (no `pip install -r {PurePosixPath(planner.path).name}` in a launcher, Dockerfile or "
                   "workflow of the project runs only named scripts after it, so it counts for every Python file of "
                   "its folder)")
    split = planner.split_pins()
    pins = ", ".join(pin.split(";")[0] for pin in split)
    if any(pin.startswith("torch-neuronx") for pin in split):
        pins += ", with --extra-index-url https://pip.repos.neuron.amazonaws.com"
    return (f"; it also installs for {_files(others)}, which this run rewrote to calls only the new stack has "
            f"({calls}), so {'that file does' if one else 'those files do'} not run on the stack kept here, which "
            f"{holders} need{'s' if kept and len(kept) == 1 else ''}: no pin of one file serves both{unknown}. "
            f"Split it: give {_files(others)} a requirements file of {'its' if one else 'their'} own ({pins}) and install that one "
            f"where {'it runs' if one else 'they run'}, keep this one for {holders}; or port the kept code first")


def _xla_era_neuronx_pin(parsed: Parsed) -> bool:
    """A torch-neuronx pin of the XLA-era build: one the plan moves to TorchNeuron's (no URL, no native version)."""
    return parsed.name == "torch-neuronx" and not parsed.url and \
        not any(admits(parsed.spec, version) for version in NATIVE_TORCH_NEURONX)


def _xla_uses(found: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    """``a.py: torch_neuronx.trace; b.py: torch_neuronx.DataParallel, ...`` (three files at most)."""
    shown = "; ".join(f"{path}: {', '.join(uses)}" for path, uses in found[:3])
    return shown + (f"; and {len(found) - 3} more" if len(found) > 3 else "")


def _optimum_neuron(parsed: Parsed, planner: Planner) -> Rewrite:
    label = f"{parsed.raw_name}[{','.join(parsed.extras)}]" if parsed.extras else parsed.raw_name
    if "neuron" in parsed.extras and parsed.name in {"optimum", "optimum-neuron"}:
        return Rewrite([], Severity.TODO, f"{label} is the Inf1 (torch-neuron) stack, which has no TorchNeuron path "
                       "(Trn2/Trn3 only): remove it for the TorchNeuron port, keep it only for Inf1", keep=True)
    if planner.kept_optimum_neuron:
        kept = planner.kept_optimum_neuron
        return Rewrite([], Severity.TODO, f"{label} was left as it is: neuron-migrate keeps the optimum.neuron "
                       f"import of {_files(kept)} (an eval(...) there names it; removing the import would raise "
                       "NameError); replace the eval with a stock class, then replace this line with the TorchNeuron "
                       f"stack ({TORCH_NEURONX_SPEC}, {TORCH_SPEC}, {stock_spec('transformers')}, "
                       f"{stock_spec('accelerate')}){_also_served(planner, kept)}", keep=True)
    if planner.importing_optimum_neuron:
        kept = planner.importing_optimum_neuron
        one = len(kept) == 1
        return Rewrite([], Severity.TODO, f"{label} was left as it is: after this run {_files(kept)} still "
                       f"import{'s' if one else ''} optimum.neuron (no rule could port that use: see the todo "
                       f"there; without the package: `ModuleNotFoundError: No module named 'optimum'`): port "
                       f"{'it' if one else 'them'} first, then replace this line with the TorchNeuron stack "
                       f"({TORCH_NEURONX_SPEC}, {TORCH_SPEC}, {stock_spec('transformers')}, "
                       f"{stock_spec('accelerate')}){_also_served(planner, kept)}", keep=True)
    if planner.cli:
        return Rewrite([], Severity.TODO, f"{label} was left as it is: {planner.cli}, which optimum / "
                       "optimum-neuron install (without them: `optimum-cli: command not found`): remove that command "
                       "first (its NM406 todo says what replaces it), then replace this line with the TorchNeuron stack "
                       f"({TORCH_NEURONX_SPEC}, {TORCH_SPEC}, {stock_spec('transformers')}, "
                       f"{stock_spec('accelerate')}){_also_served(planner, ())}", keep=True)
    planner.needs_repository = True
    marker = parsed.marker
    specs = planner.new("torch-neuronx", TORCH_NEURONX_SPEC) + planner.new("torch", TORCH_SPEC)
    specs += planner.new("transformers", stock_spec("transformers"))
    specs += planner.new("accelerate", stock_spec("accelerate"))
    notes = []
    for extra in parsed.extras:
        for package in EXTRA_PACKAGES.get(extra, []):
            specs += planner.new(package, stock_spec(package))
    # optimum-neuron brought trl, peft ... in with it (through its own requirements or an extra the line does not
    # name): a package the project's code imports must now be installed by this line, or the import fails
    imported = [package for package in BROUGHT_BY_OPTIMUM_NEURON if planner.near(planner.project.importers(package))]
    brought = [package for package in imported
               if package not in planner.elsewhere and planner.new(package, stock_spec(package))]
    specs += [stock_spec(package) for package in brought]
    if brought:
        notes.append(f"added {', '.join(brought)}: optimum-neuron brought "
                     f"{'them' if len(brought) > 1 else 'it'} in, and the project imports "
                     + "; ".join(f"{module_of(package)} ({_files(planner.near(planner.project.importers(package)))})"
                                 for package in brought))
    for extra in parsed.extras:
        if extra == "vllm":
            notes.append("[vllm]: install the vLLM-Neuron plugin (vllm-project/vllm-neuron) instead, from source or a "
                         "Neuron DLAMI/DLC")
    specs = [spec + marker for spec in specs]
    held = [spec for spec in specs if not spec.startswith(("torch-neuronx", "torch="))] if planner.hold else []
    if held:  # the stock stack stays on the old transformers: adding its 5.x companions would half-move it
        specs = [spec for spec in specs if spec not in held]
        notes.append(f"{', '.join(s.split(';')[0] for s in held)} not added: the stock stack goes with "
                     f"{planner.hold}; add them when transformers moves to 5.x")
    if planner.legacy_converters:
        notes.append(_legacy_note(planner))
    if planner.cli_elsewhere:
        notes.append(f"{planner.cli_elsewhere}, which optimum-neuron installed and this line no longer does: delete "
                     "or replace that command as its NM406 todo says (left, it fails with `optimum-cli: command not "
                     "found`)")
    message = f"{label} -> the TorchNeuron stack ({', '.join(s.split(';')[0] for s in specs) or 'already listed'})"
    severity = Severity.FIXED
    if notes:
        message += "; " + "; ".join(notes)
    if "vllm" in parsed.extras or held or planner.cli_elsewhere or planner.legacy_converters:
        severity = Severity.TODO
    return Rewrite(specs, severity, message)


def legacy_group_note(spec: str, options: RuleOptions | None, path: str) -> str:
    """The todo on the optimum-neuron item of a pyproject's ``legacy-convert`` dependency group: the one-time
    converters near ``path`` that still import optimum.neuron after this run (read from the facts, the same on every
    run), to run in an environment of that group alone, then the group goes."""
    planner = Planner.for_specs([], "", options, path)
    code = dict(options.project.of("deps.optimum-neuron-code")) if options is not None else {}
    converters = legacy_converters(still_importing({name: code[name] for name in planner.near(tuple(code))},
                                                   options), code, options) if options is not None else ()
    group = f"[dependency-groups] {LEGACY_GROUP}"
    if not converters:
        return (f"{spec.strip()}: {group} is the old environment of a one-time checkpoint conversion, and no file "
                "of the project imports optimum.neuron only for one any more: delete this group once the old "
                "checkpoints are converted")
    one = len(converters) == 1
    return (f"{spec.strip()} is kept on purpose: {group} is the old environment of {_files(converters)}, the "
            f"one-time checkpoint conversion NM206 notes there. Install this group alone, in an environment of its "
            f"own (`pip install --group {LEGACY_GROUP}`, pip>=25.1, with --extra-index-url "
            f"https://pip.repos.neuron.amazonaws.com; not an extra: pip installs an extra with the dependencies "
            f"above, whose pins conflict), run {'it' if one else 'them'} there before uninstalling optimum-neuron, "
            "then delete this group")


def _legacy_note(planner: Planner) -> str:
    """What the optimum-neuron line says when only one-time converters still import optimum.neuron: they do not
    hold the file, and where their old environment's pins are (NM502's dependency group) or go (a legacy
    requirements file: the one beside this file, or ``requirements-legacy.txt``, which the user creates)."""
    converters = planner.legacy_converters
    one = len(converters) == 1
    head = (f"{_files(converters)} still import{'s' if one else ''} optimum.neuron, but only for the one-time "
            f"checkpoint conversion NM206 notes there, which runs in the OLD environment before optimum-neuron is "
            f"uninstalled (it cannot be ported first), so {'it does' if one else 'they do'} not hold this file on the "
            "old stack")
    pins = ", ".join(planner.legacy_pins())
    index = (", with --extra-index-url https://pip.repos.neuron.amazonaws.com"
             if any(pin.startswith(("torch-neuronx", "neuronx", "optimum")) for pin in planner.legacy_pins()) else "")
    if planner.legacy_written:
        return f"{head}; its old pins ({pins}) moved to {planner.legacy_written}"
    folder = PurePosixPath(planner.path).parent if planner.path else PurePosixPath(".")
    existing = sorted(name for name in planner.project.files
                      if PurePosixPath(name).parent == folder and is_legacy_set(name))
    legacy = existing[0] if existing else (folder / LEGACY_REQUIREMENTS).as_posix()
    where = (f"keep them in {legacy}" if existing else
             f"create {legacy} beside this file holding them, with a first comment saying that it is the old "
             f"environment of {_files(converters)}")
    return (f"{head}: its old pins ({pins}) are no longer installed here: {where}; run {_files(converters)} in an "
            f"environment built from it (`pip install -r {legacy}`{index}) before installing this one")
