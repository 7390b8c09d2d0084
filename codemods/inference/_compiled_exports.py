"""Which checkpoint a compiled decoder folder of the project was compiled from (NM110, redteam-round2 D7).

A shell script of the project that runs ``optimum-cli export neuron --model <id> ... <output>`` names the source
checkpoint of the folder it writes; so does a Dockerfile, a Makefile recipe (its ``$(NAME)`` / ``${NAME}``
variables read from the defaults of its ``NAME ?= / := / = value`` lines - a ``make NAME=...`` override is not
known here -, a variable that ``+=`` appends to or ``!=`` sets from a shell unknown) and a notebook's ``!`` lines and ``%%bash`` cells (a ``!`` line IPython expands,
``$NAME`` / ``{NAME}``, is not read). The fact records, per script, each such command whose model id, output folder
and static shapes are plain words once the script's own variables are read (``MODEL_ID=${MODEL_ID:-org/name}``:
the default; any other expansion, a variable set twice, an option this reader does not know, or anything but one
output folder: the command is not recorded). NM110 rewrites ``NeuronModelForCausalLM.from_pretrained("<output>")``
to a stock load of that id only when the path it loads is that output folder, written the same way.

On the Python side the folder is read from the load's path (:func:`folder_of`): a string, or
``os.environ.get(NAME, "<folder>")`` / ``os.getenv(NAME, "<folder>")`` - the Python twin of the shell
``${NAME:-<folder>}``, read the same way (the default) - written at the load, bound once at module level, or bound
once at module level in a project module the file imports the name from (``from settings import COMPILED_DIR``:
the fact :data:`MODULE_FOLDERS`).
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import libcst as cst

from codemods._lib.cst import parse_expression, source_of
from codemods._lib.notebook_cells import code_cells, kernel_code
from codemods._tables.inference_arguments import DTYPES, SHAPE_KEYS
from codemods.inference._module_dicts import binding_counts, closest_module_value
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.rule import dotted_name

#: options of ``optimum-cli export neuron`` that take a value -> the from_pretrained keyword it maps to (or None)
VALUE_OPTIONS = {
    "--model": "model", "-m": "model", "--batch_size": "batch_size", "--sequence_length": "sequence_length",
    "--num_cores": "num_cores", "--auto_cast_type": "auto_cast_type", "--tensor_parallel_size": "num_cores",
    "--task": None, "--auto_cast": "auto_cast", "--instance_type": None, "--optlevel": None, "-O": None,
    "--compiler_workdir": None, "--cache_dir": None, "--revision": None, "--subfolder": None,
    # the static shapes of encoder / vision / audio exports (NM120): the from_pretrained keyword of the same name
    **{f"--{key}": key for key in SHAPE_KEYS if key not in ("batch_size", "sequence_length")},
}
#: options that take no value
FLAGS = frozenset({"--trust-remote-code", "--trust_remote_code", "--disable-neuron-cache", "--disable_neuron_cache",
                   "--inline-weights-neff", "--dynamic-batch-size", "--dynamic_batch_size", "-O1", "-O2", "-O3"})
INTEGER_KEYS = ("batch_size", "sequence_length", "num_cores", *(key for key in SHAPE_KEYS if key != "max_length"))
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)=(\S*)\s*(?:#.*)?$")
#: a Makefile variable: ``NAME ?= value`` / ``NAME := value`` / ``NAME = value`` (read as ``$(NAME)`` and
#: ``${NAME}``, its default: a ``make NAME=...`` override on the command line is not known here); ``NAME += more``
#: appends, ``!=`` runs a shell command: the variable is then unknown
_MAKE_ASSIGNMENT = re.compile(r"^(?:(?:export|override)\s+)?([A-Za-z_]\w*)\s*(\?=|::?=|:::=|=|\+=|!=)\s*(.*?)\s*"
                              r"(?:#.*)?$")
_EXPANSION = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}|\$\((\w+)\)|\$(\w+)")


def _variables(lines: list[str]) -> dict[str, str | None]:
    """``NAME=value`` lines of the script (None: set more than once, or to something that is no plain word); a
    Makefile's ``NAME ?= value`` / ``NAME := value`` lines (unindented) as ``$(NAME)``."""
    found: dict[str, str | None] = {}
    for line in lines:
        match = _ASSIGNMENT.match(line)
        make = _MAKE_ASSIGNMENT.match(line) if match is None else None
        if make is not None:
            name, value = f"$({make.group(1)})", make.group(3)
            try:
                words = shlex.split(value)
            except ValueError:
                words = []
            plain = make.group(2) not in ("+=", "!=") and len(words) == 1
            found[name] = (words[0] if plain else None) if name not in found else None
        elif match:
            name, value = match.group(1), match.group(2)
            try:
                words = shlex.split(value)
            except ValueError:
                words = []
            found[name] = (words[0] if len(words) == 1 else None) if name not in found else None
    return found


def _expand(word: str, variables: dict[str, str | None], depth: int = 0) -> str | None:
    """``word`` with ``$X`` / ``${X}`` / ``${X:-default}`` read from the script (the default when ``X`` is the name
    being defined or is not set there); None when something stays unknown."""
    if depth > 4:
        return None
    unknown = False

    def replace(match: re.Match) -> str:
        nonlocal unknown
        name = match.group(1) or (f"$({match.group(3)})" if match.group(3) else match.group(4))
        default = match.group(2)
        if default is not None:  # ${X:-d}: X comes from the caller's environment, d otherwise
            value = _expand(default, variables, depth + 1)
        else:  # ${X} in a Makefile is $(X)
            raw = variables.get(name) if name in variables or match.group(1) is None else variables.get(f"$({name})")
            value = _expand(raw, variables, depth + 1) if raw is not None else None
        if value is None:
            unknown = True
            return ""
        return value

    out = _EXPANSION.sub(replace, word)
    return None if unknown or "$" in out or "`" in out else out


def _notebook_shell(text: str) -> str | None:
    """A notebook's shell: its ``!command`` lines and its ``%%bash`` / ``%%sh`` cells, as one script (None when the
    text is not a notebook). IPython expands ``$NAME`` / ``{NAME}`` there from Python variables, which this reader
    does not read: such a command stays unread."""
    cells = code_cells(text) if text.lstrip().startswith("{") else None
    if cells is None:
        return None
    lines: list[str] = []
    for cell in cells:
        cell_lines = cell.splitlines()
        if cell_lines and cell_lines[0].strip() in ("%%bash", "%%sh"):
            lines += cell_lines[1:]
            continue
        shell = False
        for line in cell_lines:
            stripped = line.strip()
            if stripped.startswith("!") or (shell and lines and lines[-1].endswith("\\")):
                shell = True
                command = stripped[1:] if stripped.startswith("!") else stripped
                lines.append(command if "{" not in command and "$" not in command
                             else "# (IPython interpolation: not read)")
            else:
                shell = False
    return "\n".join(lines) + "\n"


def compiled_exports(text: str) -> tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] | None:
    """Project fact: ``(output folder, model id, ((keyword, value), ...))`` of each readable ``optimum-cli export
    neuron`` command of a shell script, a Dockerfile, a Makefile, or a notebook's ``!`` lines and shell cells."""
    shell = _notebook_shell(text)
    if shell is not None:
        text = shell
    lines = text.replace("\\\n", " ").splitlines()
    variables = _variables(lines)
    found = []
    for line in lines:
        code = line.split("#", 1)[0]
        if "optimum-cli" not in code:
            continue
        try:
            words = shlex.split(code)
        except ValueError:
            continue
        for start in range(len(words) - 2):
            if words[start].endswith("optimum-cli") and words[start + 1:start + 3] == ["export", "neuron"]:
                entry = _command(words[start + 3:], variables)
                if entry is not None:
                    found.append(entry)
    return tuple(found) or None


def _command(words: list[str], variables: dict[str, str | None]):
    options: dict[str, str] = {}
    positional: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("&&", "||", ";", "|", ">", ">>", "2>&1") or word.startswith((">", "2>")):
            break
        if word.startswith("-"):
            name, _, value = word.partition("=")
            if name in FLAGS and not value:
                index += 1
                continue
            if name not in VALUE_OPTIONS:
                return None  # an option this reader does not know may or may not take a value
            if not value:
                if index + 1 >= len(words):
                    return None
                index += 1
                value = words[index]
            key = VALUE_OPTIONS[name]
            if key is not None:
                expanded = _expand(value, variables)
                if expanded is None:
                    return None
                options[key] = expanded
        else:
            positional.append(word)
        index += 1
    if len(positional) != 1 or "model" not in options:
        return None
    output = _expand(positional[0], variables)
    if not output:
        return None
    shapes = []
    for key, value in options.items():
        if key == "model":
            continue
        if key in INTEGER_KEYS and not value.isdigit():
            return None
        shapes.append((key, value))
    return normalized(output), options["model"], tuple(shapes)


def export_kind(script: str) -> str:
    """How the project file ``script`` writes a compiled folder: a Python export or an optimum-cli command."""
    return ("a Python export (from_pretrained(..., export=True) + save_pretrained)" if script.endswith((".py", ".ipynb"))
            else "optimum-cli export neuron")


def normalized(path: str) -> str:
    return posixpath.normpath(path.strip())


COMPILED_EXPORTS = ProjectFact("inference.compiled-exports",
                               frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.NOTEBOOK}),
                               ("optimum-cli",), compiled_exports)


#: ``os.environ.get(NAME, "<folder>")`` / ``os.getenv(NAME, "<folder>")``: the folder is the default, as for the
#: shell's ``${NAME:-<folder>}``
ENV_GETTERS = frozenset({"os.environ.get", "os.getenv"})


def folder_of(node: cst.BaseExpression | None, qualnames: Callable[[cst.CSTNode], frozenset[str]]) -> str | None:
    """The folder a load's path names: a string, or the string default of an environment getter (``qualnames``
    resolves the getter's name through the file's imports); None for anything else."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.Call) and len(node.args) == 2 and qualnames(node.func) & ENV_GETTERS \
            and all(arg.keyword is None and not arg.star for arg in node.args) \
            and all(isinstance(arg.value, cst.SimpleString) for arg in node.args):
        return folder_of(node.args[1].value, qualnames)
    return None


def _ast_folder(value: ast.expr, os_imported: bool, names: dict[str, str] | None = None,
                paths: frozenset[str] = frozenset()) -> str | None:
    """The folder a module-level value names: a string; the string default of ``os.environ.get(NAME, "<folder>")``
    / ``os.getenv(NAME, "<folder>")`` (``import os``); or, built of strings and of ``names`` (module-level names
    already read, bound once): ``os.path.join(...)``, ``Path(...)`` / ``pathlib.Path(...)`` (``paths``: the names
    that call pathlib's Path), ``Path(...) / "<part>"``, ``str(<one of those>)``, and an f-string of them. None for
    anything else (a value known only at run time)."""
    names = names or {}
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Name):
        return names.get(value.id)
    if isinstance(value, ast.JoinedStr):
        parts = []
        for part in value.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None \
                    and (inner := _ast_folder(part.value, os_imported, names, paths)) is not None:
                parts.append(inner)
            else:
                return None
        return "".join(parts)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div) and _is_path(value.left, paths):
        left = _ast_folder(value.left, os_imported, names, paths)
        right = _ast_folder(value.right, os_imported, names, paths)
        return posixpath.join(left, right) if left is not None and right is not None else None
    if not isinstance(value, ast.Call) or value.keywords or any(isinstance(arg, ast.Starred) for arg in value.args):
        return None
    func = dotted_name_of(value.func)
    if func in paths or func == "str" and len(value.args) == 1 or os_imported and func == "os.path.join":
        if not value.args:
            return None
        found = [_ast_folder(arg, os_imported, names, paths) for arg in value.args]
        parts = [part for part in found if part is not None]
        if len(parts) != len(found):
            return None
        return posixpath.join(*parts) if func != "str" else parts[0]
    if not (os_imported and len(value.args) == 2
            and all(isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in value.args)):
        return None
    getter = func in ("os.getenv", "os.environ.get")
    default = value.args[1]
    return default.value if getter and isinstance(default, ast.Constant) and isinstance(default.value, str) else None


def dotted_name_of(node: ast.expr) -> str:
    """``a.b.c`` of a Name / Attribute chain, "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted_name_of(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _is_path(node: ast.expr, paths: frozenset[str]) -> bool:
    """``Path(...)`` or ``Path(...) / ...``: a pathlib path (``/`` joins)."""
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        node = node.left
    return isinstance(node, ast.Call) and dotted_name_of(node.func) in paths


def _path_names(tree: ast.Module) -> frozenset[str]:
    """The module-level names that call pathlib's ``Path`` (``from pathlib import Path [as P]``, ``pathlib.Path``)."""
    found: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module == "pathlib" and not statement.level:
            found.update(alias.asname or alias.name for alias in statement.names
                         if alias.name in ("Path", "PurePath", "PosixPath", "PurePosixPath"))
        elif isinstance(statement, ast.Import):
            found.update(f"{alias.asname or alias.name}.Path" for alias in statement.names if alias.name == "pathlib")
    return frozenset(found)


def _module_names(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound once (anywhere in the file) to a folder ``_ast_folder`` reads, in file order (a name
    may be built of names bound above it)."""
    os_imported = any(isinstance(statement, ast.Import) and any(alias.name == "os" and alias.asname is None
                                                                  for alias in statement.names)
                      for statement in tree.body)
    paths = _path_names(tree)
    counts = binding_counts(tree)
    found: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and counts.get(statement.targets[0].id) == 1:
            folder = _ast_folder(statement.value, os_imported, found, paths)
            if folder is not None:
                found[statement.targets[0].id] = folder
    return found


def module_folders(text: str) -> dict[str, str] | None:
    """Project fact: module-level names of a Python file bound once (anywhere in the file) to a folder
    ``_ast_folder`` reads - a string, ``os.environ.get(NAME, "<folder>")`` / ``os.getenv(NAME, "<folder>")``
    (``import os`` at module level; the default), or ``os.path.join`` / ``Path`` / an f-string of those and of the
    file's other such names - -> the folder."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return _module_names(tree) or None


#: the scan reads every Python file that assigns something (one ``ast.parse``): a settings module need not name
#: anything Neuron
MODULE_FOLDERS = ProjectFact("inference.module-folders", frozenset({FileKind.PYTHON}), ("=",), module_folders)


def module_env_folders(text: str) -> dict[str, list[str]] | None:
    """Project fact: module-level names of a Python file bound once to ``os.environ.get(NAME, "<folder>")`` /
    ``os.getenv(NAME, "<folder>")`` (``import os``) -> ``[getter, NAME]``: the environment variable that overrides
    the folder ``MODULE_FOLDERS`` records for them (a load rewritten to its source keeps that override)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if not any(isinstance(statement, ast.Import) and any(alias.name == "os" and alias.asname is None
                                                           for alias in statement.names) for statement in tree.body):
        return None
    counts = binding_counts(tree)
    found: dict[str, list[str]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and counts.get(statement.targets[0].id) == 1 \
                and isinstance(call := statement.value, ast.Call) and not call.keywords \
                and dotted_name_of(call.func) in ENV_GETTERS and len(call.args) == 2 \
                and all(isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in call.args):
            found[statement.targets[0].id] = [dotted_name_of(call.func), str(cast(ast.Constant, call.args[0]).value)]
    return found or None


MODULE_ENV_FOLDERS = ProjectFact("inference.module-env-folders", frozenset({FileKind.PYTHON}), ("os.",),
                                 module_env_folders)


#: keywords that name the model a ``from_pretrained`` loads
MODEL_ID_KEYWORDS = ("model_id", "pretrained_model_name_or_path", "model_name_or_path")


class CompiledFolderLoads:
    """The compiled-folder loads of an inference rule (NM110, NM120): which folder a load without ``export=True``
    reads and which project export command writes it (its facts: ``COMPILED_EXPORTS``, ``MODULE_FOLDERS``)."""

    ctx: Any
    gathered: Any
    is_target_call: Callable[[cst.Call], bool]
    fixed: Callable[..., Any]
    todo: Callable[..., Any]

    def _loads_compiled(self, call: cst.Call) -> bool:
        """``X.from_pretrained(path)`` with no ``export=True`` (``export=`` absent or False, and no ``**splat`` that
        could carry it): it loads Neuron-compiled artifacts."""
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "from_pretrained"):
            return False
        if any(arg.star for arg in call.args) or not any(
                (arg.keyword is None) or arg.keyword.value in MODEL_ID_KEYWORDS for arg in call.args):
            return False
        export = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "export"),
                      None)
        return export is None or (isinstance(export, cst.Name) and export.value == "False")

    def _load_path(self, call: cst.Call) -> cst.BaseExpression:
        return next(arg.value for arg in call.args if arg.keyword is None or arg.keyword.value in MODEL_ID_KEYWORDS)

    def _folder(self, call: cst.Call) -> str | None:
        """The folder a compiled load reads, when its path can be read (``folder_of``): written at the load, bound
        once at module level, or imported from a project module that binds it once (``MODULE_FOLDERS``)."""
        return self._folder_of_path(self._load_path(call))

    def _folder_of_path(self, path: cst.BaseExpression | None) -> str | None:
        if isinstance(path, cst.Name):
            module = self.ctx.shared.get("module")
            scopes = self.ctx.memo("inference.scopes", lambda: None)
            here = scopes.values.get(id(module), {}) if scopes is not None else {}
            imported = sorted(self.ctx.qualnames(path))
            if path.value in here:
                if imported:
                    return None  # imported and bound here: which one is read varies
                found_here = folder_of(here[path.value], self.ctx.qualnames)
                if found_here is None and isinstance(module, cst.Module):  # os.path.join / Path / f-string
                    found_here = self.ctx.memo("inference.module-folders-here",
                                               lambda: module_folders(module.code) or {}).get(path.value)
                return found_here
            else:
                importer = str(self.ctx.path).replace("\\", "/")
                folders = self.ctx.options.project.of(MODULE_FOLDERS.name)
                found = [value for qualified in imported
                         if (value := closest_module_value(folders, importer, qualified)) is not None]
                return found[0][1] if len(found) == 1 else None
        return folder_of(path, self.ctx.qualnames)

    def _writers(self, folder: str) -> set[tuple[str, str, tuple[tuple[str, str], ...]]]:
        """(model id, script, shapes) of each readable ``optimum-cli export neuron`` command writing ``folder``."""
        folder = normalized(folder)
        found = {(model, script, shapes) for script, commands in self.ctx.options.project.of(COMPILED_EXPORTS.name).items()
                 for output, model, shapes in commands if output == folder}
        folders = self.ctx.options.project.of(MODULE_FOLDERS.name)
        for script, uses in self.ctx.options.project.of(COMPILED_FOLDER_USES.name).items():
            for output, model, shapes in uses.get("exports", ()):
                output = resolved_folder(output, script, folders)
                if output is not None and normalized(output) == folder:
                    found.add((model, script, shapes))
        return found

    def _recovered(self, call: cst.Call) -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
        """(the source checkpoint id, the script, its shapes) of a compiled load whose folder (``_folder``) is the
        output folder of one readable ``optimum-cli export neuron`` command of the project
        (``inference.compiled-exports``), all such commands naming the same id and shapes."""
        if not self._loads_compiled(call):
            return None
        folder = self._folder(call)
        found = self._writers(folder) if folder is not None else set()
        if len({(model, _uncast(shapes)) for model, _, shapes in found}) != 1:  # the same, in any order
            return None
        if len({tuple(sorted(shapes)) for _, _, shapes in found}) == 1:
            return min(found)
        # one checkpoint and one set of shapes, compiled with different casting (rt7L L13: a Makefile export with
        # --auto_cast matmul and a notebook's without): the source is certain, the precision is not
        # (``casting_note``)
        model, script, shapes = min(found)
        return model, script, tuple((key, value) for key, value in shapes if key not in CASTING_KEYS)

    def casting_note(self, call: cst.Call, loaded: str) -> str | None:
        """The todo for a load ``_recovered`` rewrites to its source while the exports that write its folder
        compile it with different casting: which export wrote the folder on disk is not known, so neither is the
        precision the old program ran in; ``loaded`` says what the load now uses. None when they agree."""
        folder = self._folder(call)
        found = self._writers(folder) if folder is not None else set()
        castings = {script: tuple((key, value) for key, value in sorted(shapes) if key in CASTING_KEYS)
                    for _, script, shapes in found}
        if len(set(castings.values())) < 2:
            return None
        described = "; ".join(f"{script}: " + (", ".join(f"--{key} {value}" for key, value in casting) or "no casting")
                              for script, casting in sorted(castings.items()))
        return (f"the exports that write `{folder}` compile the same checkpoint and shapes with different casting "
                f"({described}): the folder on disk held whichever ran last, so the precision the old program ran "
                f"in is not known here; this load {loaded} - pass the dtype= of the export you served "
                "(--auto_cast matmul: only matmuls were cast and the outputs stayed float32; --auto_cast all: the "
                "whole model in --auto_cast_type)")

    def writers_disagree(self, writers: set[tuple[str, str, tuple[tuple[str, str], ...]]]) -> str:
        """What the exports that write one folder disagree on: their checkpoints, or their shapes (by script)."""
        models = sorted({model for model, _, _ in writers})
        if len(models) > 1:
            return f"name different checkpoints ({', '.join(models)})"
        shapes = "; ".join(f"{script}: " + (", ".join(f"{key}={value}" for key, value in _uncast(found)) or "none")
                           for _, script, found in sorted(writers, key=lambda writer: writer[1]))
        return f"compile different shapes ({shapes})"

    def _follows_source(self, call: cst.Call) -> tuple[str, str] | None:
        """(folder, source id) for ``AutoTokenizer.from_pretrained(<path>)``-style loads (a tokenizer, processor or
        feature extractor: ``SOURCE_HINT_OWNERS``) of the compiled folder a load of this file that the rule rewrites
        to its source checkpoint reads (``_recovered``, the path its first positional argument): they follow the
        model to that id, with the same certainty (one source for the folder)."""
        from codemods.inference._base import SOURCE_HINT_OWNERS  # _base imports this module's users

        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" and call.args
                and call.args[0].keyword is None and not call.args[0].star):
            return None
        if not dotted_name(func.value).rsplit(".", 1)[-1].endswith(SOURCE_HINT_OWNERS):
            return None
        recovered: dict[str, set[str]] | None = getattr(self, "_recovered_folders", None)
        if recovered is None:
            recovered = {}
            for load in self.gathered.calls:
                if load.args and load.args[0].keyword is None and not load.args[0].star \
                        and self.is_target_call(load) and (found := self._recovered(load)) is not None:
                    folder = self._folder(load)
                    if folder is not None:
                        recovered.setdefault(normalized(folder), set()).add(found[0])
            setattr(self, "_recovered_folders", recovered)
        folder = self._folder_of_path(call.args[0].value)
        sources = recovered.get(normalized(folder), set()) if folder is not None else set()
        return (folder, next(iter(sources))) if folder is not None and len(sources) == 1 else None

    def follow_source(self, original: cst.Call, updated: cst.Call) -> cst.Call | None:
        """A tokenizer / processor / feature-extractor load of a compiled folder whose model load this rule rewrites
        to the source checkpoint (``_follows_source``), rewritten to that checkpoint and reported; None otherwise.
        The migrated project no longer writes the folder (NM406: delete the export), so the load raised once the
        export was gone (rt5H D5)."""
        follows = self._follows_source(original)
        if follows is None:
            return None
        folder, source = follows
        self.fixed(original, f"this load read the compiled folder `{folder}` too, which the migrated project no "
                   f"longer writes (its optimum-cli export is deleted or stops working with optimum-neuron): it "
                   f"reads \"{source}\", the checkpoint the model now loads (the export copied its files there)")
        first = updated.args[0]
        path, override = self.source_path(original.args[0].value, first.value, source)
        if override is not None:
            self.todo(original, override)
        return updated.with_changes(args=[first.with_changes(value=path), *updated.args[1:]])

    def source_path(self, original: cst.BaseExpression, current: cst.BaseExpression,
                    source: str) -> tuple[cst.BaseExpression, str | None]:
        """What a load whose compiled folder is recovered reads instead: the ``source`` id, and the todo to give
        with it, or None. A path an environment variable overrides (``os.environ.get(NAME, "<folder>")`` /
        ``os.getenv``, at the load or a module-level name bound once to it, here or in a project module) keeps the
        override: the getter with ``source`` as its default (rtG p4: the literal alone made the variable dead, and a
        deployment that set it silently served another model)."""
        literal = cst.SimpleString(json.dumps(source))
        getter = self._env_getter(original, current)
        if getter is None:
            return literal, None
        call, variable = getter
        first, second = call.args
        moved = call.with_changes(args=[first, second.with_changes(value=literal)])
        return moved, (f"the environment variable {variable} still overrides this path (default now \"{source}\", the "
                       f"source checkpoint): where a deployment sets {variable} (a Dockerfile ENV, a k8s env, a "
                       "launcher), it must name a stock checkpoint (a Hub id or a folder save_pretrained wrote), no "
                       "longer a Neuron-compiled folder, which the stock load cannot read")

    def _env_getter(self, original: cst.BaseExpression, current: cst.BaseExpression) -> tuple[cst.Call, str] | None:
        """``(getter call, variable)`` when the path is an environment getter with a string default: written at the
        load (``current``, as the traversal updated it), or the module-level name ``original`` bound once to one in
        this file or in the project module it is imported from (``MODULE_ENV_FOLDERS``)."""
        def read(call: cst.BaseExpression) -> tuple[cst.Call, str] | None:
            if isinstance(call, cst.Call) and len(call.args) == 2 and self.ctx.qualnames(call.func) & ENV_GETTERS \
                    and all(arg.keyword is None and not arg.star and isinstance(arg.value, cst.SimpleString)
                            for arg in call.args) and isinstance(name := cast(cst.SimpleString, call.args[0].value).evaluated_value, str):
                return call, name
            return None

        if not isinstance(original, cst.Name):
            return read(current)
        module = self.ctx.shared.get("module")
        scopes = self.ctx.memo("inference.scopes", lambda: None)
        here = scopes.values.get(id(module), {}) if scopes is not None else {}
        imported = sorted(self.ctx.qualnames(original))
        if original.value in here:
            return None if imported else read(here[original.value])
        importer = str(self.ctx.path).replace("\\", "/")
        found = [value for qualified in imported if (value := closest_module_value(
            self.ctx.options.project.of(MODULE_ENV_FOLDERS.name), importer, qualified)) is not None]
        if len(found) != 1:
            return None
        getter, variable = found[0][1]
        self.ctx.add_import("os")
        return cast(cst.Call, parse_expression(f"{getter}({json.dumps(variable)}, \"\")")), variable

    def _default_folder(self, call: cst.Call, gatherer: Any) -> str | None:
        """The folder a compiled load's path names by default only: a parameter of the enclosing function
        (``def load(path=CLS_COMPILED)``) whose default is a folder ``_folder_of_path`` reads; a caller may pass
        another one."""
        path = self._load_path(call)
        if not isinstance(path, cst.Name):
            return None
        function = next((scope for scope in reversed(gatherer.call_scopes.get(id(call), []))
                         if isinstance(scope, cst.FunctionDef)), None)
        if function is None:
            return None
        params = (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)
        param = next((p for p in params if p.name.value == path.value), None)
        return self._folder_of_path(param.default) if param is not None and param.default is not None else None

    def _certain_source(self, call: cst.Call, gatherer: Any) -> bool:
        """The path of a load without ``export=True`` is certainly a plain (source) checkpoint: the folder / Hub id
        it reads is one an ``optimum-cli export neuron`` command of the project compiles from (``--model``), or one
        this file also loads with ``export=True``."""
        folder = self._folder(call)
        if folder is None:
            return False
        target = normalized(folder)
        exports = self.ctx.options.project.of(COMPILED_EXPORTS.name)
        if any(normalized(model) == target for commands in exports.values() for _, model, _ in commands):
            return True
        for other in gatherer.calls:
            if other is call or not (isinstance(other.func, cst.Attribute) and other.func.attr.value == "from_pretrained"):
                continue
            export = next((arg.value for arg in other.args if arg.keyword is not None and arg.keyword.value == "export"),
                          None)
            if isinstance(export, cst.Name) and export.value == "True" and not any(arg.star for arg in other.args) \
                    and self._folder(other) is not None and normalized(self._folder(other) or "") == target:
                return True
        return False

    def kept_compiled_load(self, call: cst.Call, gatherer: Any, recovers: bool = True) -> str | None:
        """Why a load without ``export=True`` (``_loads_compiled``) keeps the file on optimum-neuron, or None (it is
        rewritten). optimum-neuron 0.4.5 loads only compiled artifacts there (``*.neuron`` files of the folder / Hub
        repo; a plain checkpoint raises FileNotFoundError), which stock classes cannot load (OSError: no
        model.safetensors): kept unless the source checkpoint is recovered (``_recovered``) or the path is certainly
        a source checkpoint (``_certain_source``). The reason names the missing link and the candidate source.
        ``recovers``: the rule rewrites a recovered load to its source (NM120); else (NM121) that load is kept too,
        its todo naming the source."""
        if not self._loads_compiled(call) or self._certain_source(call, gatherer):
            return None
        recovered = self._recovered(call)
        if recovered is not None and recovers:
            return None
        head = ("loads Neuron-compiled artifacts (no export=True: optimum-neuron then reads only a compiled folder or "
                "Hub repo) that stock libraries cannot load (OSError: no model.safetensors), and ")
        if recovered is not None:
            source, script, _ = recovered
            return (head + f"`{self._folder(call)}` is written by {export_kind(script)} in {script} from "
                    f'"{source}"; this rule does not rewrite such a load to its source: load "{source}" here with '
                    "export=True and the export's static shapes")
        folder = self._folder(call)
        default = self._default_folder(call, gatherer) if folder is None else None
        writers = self._writers(folder or default or "") if (folder or default) else set()
        if writers:
            sources = sorted({model for model, _, _ in writers})
            scripts = ", ".join(sorted({script for _, script, _ in writers}))
            named = " or ".join(f'"{source}"' for source in sources)
            why = (f"its path `{source_of(self._load_path(call))}` is `{default}` only by default (a caller may pass "
                   "another compiled folder)" if default is not None else
                   f"the exports that write `{folder}` {self.writers_disagree(writers)}")
            kinds = " / ".join(sorted({export_kind(script) for _, script, _ in writers}))
            uncertain = ("the checkpoint to load instead is not certain" if default is not None or len(sources) > 1
                         else "the static shapes to load it with (and pad its inputs to) are not certain")
            return (head + f"`{folder or default}` is written by {kinds} in {scripts} from {named}, "
                    f"but {why}, so {uncertain}")
        if folder is None and (export := self._same_expression_export(call, gatherer)) is not None:
            path = source_of(self._load_path(call))
            return (head + f"its path `{path}` is the folder this file's export `{export}` saves to "
                    f"(`save_pretrained({path})`), which this rule cannot prove is the same folder at run time: if "
                    "it is, load that export's checkpoint here with export=True and the export's static shapes "
                    "(the checkpoint the folder was compiled from)")
        if folder is None and (elsewhere := self.same_expression_elsewhere(call)) is not None:
            return head + elsewhere
        if folder is None:
            return (head + f"its path `{source_of(self._load_path(call))}` is no folder this rule can read (a string, or "
                    "os.environ.get(NAME, \"<folder>\") / os.getenv(NAME, \"<folder>\"), at the load or bound once at "
                    "module level here or in a project module), so the checkpoint it was compiled from cannot be "
                    "matched to an optimum-cli export neuron command of this project")
        hint = self._tokenizer_source(call, gatherer, folder)
        if (export := self._same_expression_export(call, gatherer, folder)) is not None:
            # rtD D4: this file's own export writes the folder (an encoder export + reload: not linked for its kind)
            return (head + f"`{folder}` is written by this file's export `{export}` (its save_pretrained), which this "
                    "rule does not link to this load: load that export's checkpoint here with export=True and the "
                    "export's static shapes (or use the exported model directly)")
        return (head + "the checkpoint they were compiled from was not found: no optimum-cli export neuron command "
                f"this rule can read (in a shell script, Dockerfile or Makefile of the project) writes `{folder}`, and "
                "no load of this file compiles it with export=True"
                + (f'; this file loads its tokenizer/processor from "{hint}": if that is the checkpoint it was '
                   "compiled from, load it here" if hint is not None else ""))

    def _same_expression_export(self, call: cst.Call, gatherer: Any, folder: str | None = None) -> str | None:
        """rt7N N6: a compiled load whose path is an expression (``args.export_dir``, ``cfg["compiled_dir"]``) that
        this file also passes to ``<model>.save_pretrained`` of an export (``X.from_pretrained(<id>, export=True,
        ...)`` bound to ``<model>``): that export's call, shortened, or None. ``folder``: the folder the load reads
        (a literal, a name bound to one), matched to the folder each save writes instead (rtD D4)."""
        path = "".join(source_of(self._load_path(call)).split())
        bound: dict[str, cst.Call] = {}
        for assign in gatherer.assigns:
            value = assign.value
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "to":
                value = value.func.value
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                    and value.func.attr.value in ("from_pretrained", "export")):
                continue
            export = next((arg.value for arg in value.args if arg.keyword is not None and arg.keyword.value == "export"),
                          None)
            if value.func.attr.value == "export" or (isinstance(export, cst.Name) and export.value == "True"):
                for target in assign.targets:
                    bound[dotted_name(target.target)] = value
        for other in gatherer.calls:
            func = other.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "save_pretrained" and other.args
                    and other.args[0].keyword is None):
                continue
            written = self._folder_of_path(other.args[0].value) if folder is not None else None
            if not (normalized(written) == normalized(folder) if folder is not None and written is not None
                    else folder is None and "".join(source_of(other.args[0].value).split()) == path):
                continue
            export_call = bound.get(dotted_name(func.value))
            if export_call is not None:
                text = " ".join(source_of(export_call).split())
                return text if len(text) <= 120 else text[:117] + "..."
        return None

    def same_expression_elsewhere(self, call: cst.Call) -> str | None:
        """rt7N N6 across files: the note for a compiled load whose path is an expression that the saved exports of
        other project files also save to (``cfg["compiled_dir"]`` read from one config in both), or None. Each file
        computes the expression itself, so this rule cannot prove it is one folder: the note names those exports and
        what to check, and agrees with theirs (they are held while this load is)."""
        try:  # written as the fact writes it (ast.unparse: one quote style)
            path = "".join(ast.unparse(ast.parse(source_of(self._load_path(call)).strip(), mode="eval").body).split())
        except SyntaxError:
            return None
        here = str(self.ctx.path).replace("\\", "/")
        files = sorted({other for other, uses in self.ctx.options.project.of(COMPILED_FOLDER_USES.name).items()
                        if other != here and any(expression == path for expression, _ in uses.get("expressions", ()))})
        if not files:
            return None
        shown = source_of(self._load_path(call))
        return (f"its path `{shown}` is also the folder that the saved export of {kept_compiled_names(tuple(files))} "
                f"writes (`save_pretrained({shown})` there), which this rule cannot prove is the same folder at run "
                f"time: check that both files read `{shown}` from the same source (the same config file and key, or "
                "the same argument); if they do, load that export's checkpoint here with export=True and its static "
                "shapes, then run neuron-migrate again (the export and this load are then migrated together)")

    def _tokenizer_source(self, call: cst.Call, gatherer: Any, folder: str) -> str | None:
        """The one other string a tokenizer / processor / feature-extractor load of the file reads: a candidate
        source checkpoint of the compiled folder ``folder``."""
        from codemods.inference._base import SOURCE_HINT_OWNERS  # _base imports this module's users

        found = set()
        for other in gatherer.calls:
            func = other.func
            if other is call or not (isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained"):
                continue
            owner = func.value.attr.value if isinstance(func.value, cst.Attribute) else \
                func.value.value if isinstance(func.value, cst.Name) else ""
            if not owner.endswith(SOURCE_HINT_OWNERS) or not other.args or other.args[0].keyword is not None:
                continue
            value = folder_of(other.args[0].value, self.ctx.qualnames)
            if value is not None and normalized(value) != normalized(folder):
                found.add(value)
        return found.pop() if len(found) == 1 else None


# ------------------------------------------------------------------- compiled-folder consumers kept on optimum-neuron
def compiled_family(class_name: str | None) -> str | None:
    """The kind of compiled artifact a Neuron class loads or writes: "decoder", "seq2seq", "diffusion", "sentence"
    or "encoder" (the traced task classes); None when the name says nothing (an alias of unknown origin). A folder
    one kind writes is no folder another kind's class loads (optimum-neuron checks the exported task)."""
    if class_name is None or not class_name.startswith("Neuron"):
        return None
    if "Pipeline" in class_name or "Diffusion" in class_name:
        return "diffusion"
    if "CausalLM" in class_name:
        return "decoder"
    if "Seq2Seq" in class_name or "Whisper" in class_name:
        return "seq2seq"
    if "SentenceTransformers" in class_name:
        return "sentence"
    if class_name.startswith("NeuronModelFor"):
        return "encoder"
    return None


def _compiled_load_lines(text: str, path: str) -> list[int]:
    """Lines of ``Neuron<...>.from_pretrained(path)`` calls (a class imported from optimum.neuron, or named Neuron*)
    without a literal ``export=True`` (absent - beside a ``**splat`` too -, False, or a run-time value) in a Python file or a notebook's code cells (cell-relative lines): loads of
    Neuron-compiled artifacts."""
    return [line for line, _ in _compiled_loads(text, path)]


def _compiled_loads(text: str, path: str) -> list[tuple[int, str | None]]:
    """(line, family) of each load ``_compiled_load_lines`` finds: the family of the Neuron class it calls, an alias
    followed to the class it imports (``compiled_family``; None: not known)."""
    # a notebook's cells run in one kernel: one module (an alias imported in one cell, used in another)
    kernel = kernel_code(text) if path.endswith(".ipynb") else text
    lines: list[tuple[int, str | None]] = []
    for source in [kernel] if kernel is not None else []:
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        # the names ``from optimum.neuron... import X as Y`` binds (an alias of a Neuron class)
        aliases = {alias.asname or alias.name: alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and (node.module or "").startswith("optimum.neuron") for alias in node.names}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "from_pretrained" and (node.args or node.keywords)):
                continue
            owner = node.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
            if not (name.startswith("Neuron") or (isinstance(owner, ast.Name) and name in aliases)):
                continue
            # export= absent (a ``**splat`` beside it may or may not carry it), False or not a literal (it may be
            # False): a compiled-folder load, the conservative end
            export = next((keyword.value for keyword in node.keywords if keyword.arg == "export"), None)
            if not (isinstance(export, ast.Constant) and export.value is True):
                imported = aliases.get(name) if isinstance(owner, ast.Name) else None
                lines.append((node.lineno, compiled_family(imported or name)))
    return lines


#: the files whose migration ``kept_compiled_loads`` is simulating (a file asked about again while its own
#: simulation runs - two producers loading each other's folders - is judged by its own text: no endless nesting)
_IN_PROGRESS: set[str] = set()


def kept_compiled_loads(options: Any, path: str | None, family: str | None = None) -> tuple[str, ...]:
    """The project files other than ``path`` that still load Neuron-compiled artifacts (``_compiled_load_lines``)
    with optimum-neuron after this run (rt5H D1/D3), of ``family`` when one is given (the producer's kind: a kept
    decoder load reads no diffusion export; a load of unknown kind counts for every family): the file still
    imports optimum.neuron once migrated
    (``migrated_text``, as the run migrates it) and its migrated text keeps such a load. Asked inside a simulated
    run too (the deps planner simulating a producer): the same simulation answers it, so the decision is the same in
    the run and in its simulations (else a producer held in one and migrated in the other changed on a second run).
    The text comes from the ``deps.optimum-neuron-code`` fact (``OPTIMUM_NEURON_CODE``), which the rule declares."""
    from codemods.deps._plan import migrated_text, uses_optimum_neuron

    if options is None:
        return ()
    found: list[str] = []
    # the loader files of the project's round trip load the stock checkpoint the migrated exports save (fxJ)
    trip = round_trip(options) if family in ("decoder", None) else None
    for other, text in sorted(options.project.of("deps.optimum-neuron-code").items()):
        if other == path or not _compiled_load_lines(text, other) or (trip is not None and other in trip.loaders):
            continue
        after: str | None = text
        if other not in _IN_PROGRESS:
            _IN_PROGRESS.add(other)
            try:
                after = migrated_text(other, text, options)
            finally:
                _IN_PROGRESS.discard(other)
        if after is None:
            after = text  # a file that cannot be migrated stays as it is
        elif not uses_optimum_neuron(after):
            continue
        kept = _compiled_loads(after, other)  # kept after the run (named without a line: notes move lines)
        if kept and (family is None or any(kind in (None, family) for _, kind in kept)):
            found.append(other)
    return tuple(found)


def kept_compiled_names(loads: tuple[str, ...]) -> str:
    """``a.py``, ``a.py and b.py``, ``a.py, b.py, c.py and 2 more``."""
    if len(loads) == 1:
        return loads[0]
    if len(loads) <= 3:
        return ", ".join(loads[:-1]) + f" and {loads[-1]}"
    return ", ".join(loads[:3]) + f" and {len(loads) - 3} more"


def kept_compiled_consumers_note(loads: tuple[str, ...]) -> str:
    """``app/main.py still loads Neuron-compiled folders with optimum-neuron ...`` for the todos of the producers."""
    return (f"{kept_compiled_names(loads)} still load{'s' if len(loads) == 1 else ''} Neuron-compiled folders with "
            "optimum-neuron after this run")


# --------------------------------------------- Python exports and the compiled-folder loads they feed (NM130, NM140)
def _folder_names(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound once to a folder (``_ast_folder``), and the names imported at module level from a
    project module (``from paths import COMPILED_DIR``) that the file never binds otherwise: ``IMPORTED`` + the
    qualified name (``resolved_folder`` reads it from that module's ``MODULE_FOLDERS``)."""
    found = _module_names(tree)
    counts = binding_counts(tree)
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level \
                and not statement.module.startswith(("optimum", "os", "pathlib")):
            for alias in statement.names:
                name = alias.asname or alias.name
                if alias.name != "*" and name not in found and not counts.get(name):
                    found[name] = f"{IMPORTED}{statement.module}.{alias.name}"
    return found


#: the fact's folder of a name imported from a project module: this prefix + ``module.NAME`` (no path holds it)
IMPORTED = "\x00import:"


def resolved_folder(folder: str | None, importer: str, per_file: Mapping[str, Mapping[str, str]]) -> str | None:
    """A folder of ``compiled_folder_uses`` as the project reads it: a name imported from a project module
    (``IMPORTED``) -> the folder that module binds it to (``MODULE_FOLDERS``, the closest such module to
    ``importer``), None when no project module binds it once to a folder it can read."""
    if folder is None or not folder.startswith(IMPORTED):
        return folder
    found = closest_module_value(per_file, importer, folder[len(IMPORTED):])
    return found[1] if found is not None else None


def _ast_path(value: ast.expr | None, names: dict[str, str], os_imported: bool,
              paths: frozenset[str] = frozenset()) -> str | None:
    if isinstance(value, ast.Name):
        return names.get(value.id)
    if value is None:
        return None
    if any(isinstance(node, ast.Name) and names.get(node.id, "").startswith(IMPORTED) for node in ast.walk(value)):
        return None  # built of an imported name: only the name itself is followed to its module
    return _ast_folder(value, os_imported, names, paths)


def bound_dicts(tree: ast.AST, counts: Mapping[str, int]) -> dict[str, ast.Dict]:
    """``NAME = {...}`` and ``NAME = dict(key=value, ...)`` bound once in the file: NAME -> the dict (a ``dict(...)``
    call as the literal it equals), for ``**NAME`` splats of export calls."""
    dicts: dict[str, ast.Dict] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and counts.get(node.targets[0].id) == 1):
            continue
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" \
                and not value.args and all(keyword.arg is not None for keyword in value.keywords) \
                and counts.get("dict", 0) == 0:
            value = ast.Dict(keys=[ast.Constant(keyword.arg) for keyword in value.keywords],
                             values=[keyword.value for keyword in value.keywords])
        if isinstance(value, ast.Dict):
            dicts[node.targets[0].id] = value
    return dicts


def _export_keywords(call: ast.Call, dicts: dict[str, ast.Dict]) -> dict[str, ast.expr] | None:
    """The keywords of a call, ``**NAME`` of a dict literal bound once in the file merged in; None when a splat
    cannot be read (it may carry ``export=``)."""
    keywords: dict[str, ast.expr] = {}
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    for keyword in call.keywords:
        if keyword.arg is not None:
            keywords[keyword.arg] = keyword.value
            continue
        splat = dicts.get(keyword.value.id) if isinstance(keyword.value, ast.Name) else None
        if splat is None or not all(isinstance(key, ast.Constant) and isinstance(key.value, str) for key in splat.keys):
            return None
        keywords.update((key.value, value) for key, value in zip(splat.keys, splat.values)
                        if isinstance(key, ast.Constant) and isinstance(key.value, str))
    return keywords


def compiled_folder_uses(text: str) -> dict[str, tuple] | None:
    """Project fact: the Neuron-compiled folders a Python file or notebook writes and reads with optimum-neuron.

    ``"saves"``: ``(class, folder, opaque)`` of each export (``Neuron<...>.from_pretrained(..., export=True)`` or
    ``Neuron<...>.export(...)``) whose result the file saves or pushes (``<name>.save_pretrained(<folder>)``), the
    folder None when it cannot be read (it may be any folder), ``opaque`` when a splat of the export cannot be read
    (the rule keeps such a file as it is). ``"loads"``: ``(class, folder, opaque, key)`` of each load without a
    literal ``export=True`` (``_compiled_loads``), except one of a path the file also loads with ``export=True``
    (a source checkpoint); ``key`` is the call's source without whitespace (the rule finds its own call by it).
    ``"exports"`` (when there is one): ``(folder, model id, shapes)`` of each saved decoder export whose id and
    shapes are constants (``_decoder_export``): NM110 reads the folder as an optimum-cli command's output
    (``CompiledFolderLoads._writers``). A folder named by a constant imported from a project module is
    ``IMPORTED`` + its qualified name (``resolved_folder``). ``"diffusion"``: ``(folder, shapes)`` of each saved
    diffusion export (``_diffusion_shapes``): NM140 names them at the calls of a pipeline loaded from that folder.
    ``"expressions"``: ``(expression, class)`` of each saved export whose folder is known only at run time
    (``save_pretrained(cfg["compiled_dir"])``, whitespace removed): a load of another file that reads the same
    expression names that export (``CompiledFolderLoads.same_expression_elsewhere``, rt7N N6)."""
    # a notebook's cells run in one kernel: one module, so that an export bound in one cell is linked to the
    # save_pretrained of another (rt8Q-02)
    kernel = kernel_code(text)
    saves: list[tuple[str, str | None, bool]] = []
    loads: list[tuple[str, str | None, bool, str]] = []
    expressions: list[tuple[str, str]] = []  # saved to a folder known only at run time
    decoders: list[tuple[str | None, str, tuple[tuple[str, str], ...]]] = []
    diffusion: list[tuple[str | None, tuple[tuple[str, str], ...]]] = []
    for source in [kernel if kernel is not None else text]:
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        aliases = {alias.asname or alias.name: alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and (node.module or "").startswith("optimum.neuron") for alias in node.names}
        os_imported = any(isinstance(node, ast.Import) and any(alias.name == "os" for alias in node.names)
                          for node in tree.body)
        names = _folder_names(tree)
        paths = _path_names(tree)
        counts = binding_counts(tree)
        dicts = bound_dicts(tree, counts)
        exports: list[tuple[ast.Call, str, bool]] = []
        compiled: list[tuple[ast.Call, str, bool]] = []
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("from_pretrained", "export") and (node.args or node.keywords)):
                continue
            owner = node.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
            if not (name.startswith("Neuron") or (isinstance(owner, ast.Name) and name in aliases)):
                continue
            name = aliases.get(name, name) if isinstance(owner, ast.Name) else name
            keywords = _export_keywords(node, dicts)
            # an explicit export=True beside a splat this reader cannot see into is an export all the same (the
            # splat cannot carry export= too: TypeError), opaque (rt7N N6: export_lora.py's **cfg["input_shapes"]
            # made its save unseen, and the loads of its folder elsewhere said no export writes it)
            export = (keywords or {}).get("export", next((keyword.value for keyword in node.keywords
                                                          if keyword.arg == "export"), None))
            if node.func.attr == "export" or (isinstance(export, ast.Constant) and export.value is True):
                # an export whose adapters NM140 cannot write exactly stays as it is (like an unread splat)
                exports.append((node, name, keywords is None or _adapters_held(node, name, keywords, tree)))
            elif node.func.attr == "from_pretrained":
                compiled.append((node, name, keywords is None))
        source_paths = {ast.dump(call.args[0]) for call, _, _ in exports if call.args}
        for call, name, opaque in compiled:
            path = call.args[0] if call.args else next(
                (keyword.value for keyword in call.keywords if keyword.arg in MODEL_ID_KEYWORDS), None)
            if path is not None and ast.dump(path) in source_paths:
                continue  # the file compiles this path with export=True: a source checkpoint
            segment = ast.get_source_segment(code, call) or ""
            loads.append((name, _ast_path(path, names, os_imported, paths), opaque, "".join(segment.split())))
        for call, name, opaque in exports:
            bound = {ast.unparse(node.targets[0]) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                     and len(node.targets) == 1 and _unwrapped(node.value) is call}
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in ("save_pretrained", "push_to_hub")):
                    continue
                receiver = node.func.value
                if not (_unwrapped(receiver) is call or ast.unparse(receiver) in bound):
                    continue
                where = node.args[0] if node.args else next(
                    (keyword.value for keyword in node.keywords
                     if keyword.arg in ("save_directory", "repo_id", "path")), None)
                saves.append((name, _ast_path(where, names, os_imported, paths), opaque))
                entry = _decoder_export(call, name, opaque, dicts, names) if where is not None else None
                if entry is not None:
                    decoders.append((saves[-1][1], *entry))
                sizes = _diffusion_shapes(call, name, opaque, dicts)
                if sizes is not None:
                    diffusion.append((saves[-1][1], sizes))
                if where is not None and saves[-1][1] is None:  # a folder known only at run time (rt7N N6)
                    expressions.append(("".join(ast.unparse(where).split()), name))
    if not saves and not loads:
        return None
    found: dict[str, tuple] = {"saves": tuple(saves), "loads": tuple(loads)}
    if decoders:
        found["exports"] = tuple(decoders)
    if diffusion:
        found["diffusion"] = tuple(diffusion)
    if expressions:
        found["expressions"] = tuple(expressions)
    return found


#: the static shapes of a diffusion export that its calls must repeat
DIFFUSION_SHAPE_KEYS = ("batch_size", "height", "width", "num_images_per_prompt")


def _diffusion_shapes(call: ast.Call, name: str, opaque: bool,
                      dicts: dict[str, ast.Dict]) -> tuple[tuple[str, str], ...] | None:
    """``((key, source), ...)`` of the static shapes (``DIFFUSION_SHAPE_KEYS``) a saved diffusion export compiles
    (the source of each value: a constant, or what the script computes); None for another kind or an opaque one."""
    if opaque or compiled_family(name) != "diffusion":
        return None
    keywords = _export_keywords(call, dicts) or {}
    return tuple((key, ast.unparse(keywords[key])) for key in DIFFUSION_SHAPE_KEYS if key in keywords)


#: the keywords of a decoder export ``_decoder_export`` reads (-> the key of ``compiled_exports``' shapes)
DECODER_EXPORT_KEYS = {"batch_size": "batch_size", "sequence_length": "sequence_length", "num_cores": "num_cores",
                       "tensor_parallel_size": "num_cores", "auto_cast_type": "auto_cast_type"}


def _decoder_export(call: ast.Call, name: str, opaque: bool, dicts: dict[str, ast.Dict],
                    names: dict[str, str]) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """(model id, shapes) of a saved decoder export ``NeuronModelForCausalLM.from_pretrained(<id>, export=True,
    batch_size=<int>, sequence_length=<int>, num_cores=<int>, auto_cast_type="<type>")`` - what an optimum-cli
    command records (``compiled_exports``): the id a string (or a module-level name bound once to one), every other
    keyword one of ``DECODER_EXPORT_KEYS`` with a constant value; None for anything else (a value known only at run
    time, a keyword the stock load would need too)."""
    if opaque or compiled_family(name) != "decoder" or not isinstance(call.func, ast.Attribute) \
            or call.func.attr != "from_pretrained" or len(call.args) > 1:
        return None
    keywords = _export_keywords(call, dicts) or {}
    model = call.args[0] if call.args else next((keywords[key] for key in MODEL_ID_KEYWORDS if key in keywords), None)
    if isinstance(model, ast.Name):
        model_id = names.get(model.id)
    elif isinstance(model, ast.Constant) and isinstance(model.value, str):
        model_id = model.value
    else:
        model_id = None
    if model_id is None or model_id.startswith(IMPORTED):
        return None
    shapes: dict[str, str] = {}
    for key, value in keywords.items():
        if key == "export" or key in MODEL_ID_KEYWORDS:
            continue
        mapped = DECODER_EXPORT_KEYS.get(key)
        if mapped is None or not isinstance(value, ast.Constant) or isinstance(value.value, bool) \
                or not isinstance(value.value, int if mapped in INTEGER_KEYS else str) or mapped in shapes:
            return None
        shapes[mapped] = str(value.value)
    return model_id, tuple(shapes.items())


def _adapters_held(call: ast.Call, name: str, keywords: dict[str, ast.expr], tree: ast.AST) -> bool:
    """A diffusion export whose adapter keywords (``diffusion_adapter_plan``) keep it on optimum-neuron."""
    if compiled_family(name) != "diffusion":
        return False
    assigned = any(isinstance(node, ast.Assign) and len(node.targets) == 1 and node.value is call
                   and isinstance(node.targets[0], (ast.Name, ast.Attribute)) for node in ast.walk(tree))
    values = {key: ast_literal(value) for key, value in keywords.items()}
    return diffusion_adapter_plan(values, assigned)[1] is not None


def _unwrapped(value: ast.expr) -> ast.expr:
    """``X.from_pretrained(...).to(device)`` -> the load."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
        value = value.func.value
    return value


#: what each Python file / notebook exports and saves, and which compiled folders it loads
COMPILED_FOLDER_USES = ProjectFact("inference.compiled-folder-uses", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}),
                                   ("from_pretrained", "export("), compiled_folder_uses)


def call_key(call: cst.Call) -> str:
    """The key ``compiled_folder_uses`` records for a load: its source without whitespace."""
    return "".join(source_of(call).split())


class ProducedFolderLoads:
    """The compiled-folder loads of a rule whose export jobs migrate to stock saves the migrated load reads (NM130,
    NM140): a ``Neuron<...>.from_pretrained(<folder>)`` is rewritten only while a Python export of the project may
    write that folder (``X.from_pretrained(<id>, export=True)`` saved with ``save_pretrained``: migrated, it saves a
    stock folder). A load no such export may write (its folder and every export's folder known and different, or
    no export at all, or a folder an ``optimum-cli export neuron`` command writes) stays on optimum-neuron with a
    todo, and so then do all loads of its kind in the project: a kept load of a kind keeps the project's exports of
    that kind on optimum-neuron (``InferenceRule._kept_producer_loads``), which then still write NEFFs."""

    ctx: Any
    #: the classes whose loads this rule rewrites (the last part of their names)
    produced_classes: frozenset[str] = frozenset()
    #: "a Neuron diffusion export ..." in the todo
    export_words = "export"

    def _family_of(self, name: str) -> str | None:
        return compiled_family(name)

    def kept_unproduced_load(self, call: cst.Call, gatherer: Any) -> str | None:
        """Why this rule's load without ``export=True`` (``_loads_compiled``) keeps the file on optimum-neuron, or
        None (it is rewritten: an export of the project that stays migrated may write its folder)."""
        if not self._loads_compiled(call) or self._certain_source(call, gatherer):  # type: ignore[attr-defined]
            return None
        name = dotted_name(cast_attribute(call).value).rsplit(".", 1)[-1]
        name = next((q.rsplit(".", 1)[-1] for q in sorted(self.ctx.qualnames(cast_attribute(call).value))
                     if q.startswith("optimum.neuron")), name)
        family = self._family_of(name)
        here = str(self.ctx.path).replace("\\", "/")
        uses = dict(self.ctx.options.project.of(COMPILED_FOLDER_USES.name))
        if here not in uses:
            module = self.ctx.shared.get("module")
            own = compiled_folder_uses(module.code) if isinstance(module, cst.Module) else None
            if own is not None:
                uses[here] = own
        # a folder named by a constant imported from a project module: the folder that module binds it to
        folders = self.ctx.options.project.of(MODULE_FOLDERS.name)
        uses = {path: {"saves": tuple((cls, resolved_folder(folder, path, folders), opaque)
                                      for cls, folder, opaque in value["saves"]),
                       "loads": tuple((cls, resolved_folder(folder, path, folders), opaque, key)
                                      for cls, folder, opaque, key in value["loads"])}
                for path, value in uses.items()}
        cli = {output for commands in self.ctx.options.project.of(COMPILED_EXPORTS.name).values()
               for output, _, _ in commands}
        sources = {normalized(model) for commands in self.ctx.options.project.of(COMPILED_EXPORTS.name).values()
                   for _, model, _ in commands}
        loading = {path for path, value in uses.items() if value["loads"]}
        saves = [(path, folder) for path, value in sorted(uses.items()) for cls, folder, opaque in value["saves"]
                 if self._family_of(cls) == family and not opaque
                 # a file whose exports of this kind cannot all be read stays as it is; one that exports several
                 # kinds is held by a kept load of any kind (compiled_family) in another file
                 and not any(o for c, _, o in value["saves"] if self._family_of(c) == family)
                 and not (len({self._family_of(c) for c, _, _ in value["saves"]}) > 1 and loading - {path})]
        # the exports of this kind held on optimum-neuron as they are (an unread splat, adapters NM140 cannot write)
        held = [(path, folder) for path, value in sorted(uses.items()) for cls, folder, opaque in value["saves"]
                if self._family_of(cls) == family and opaque]
        key = call_key(call)
        own_folder = self._folder(call)  # type: ignore[attr-defined]
        reasons: list[tuple[str, str | None, str]] = []  # (path, folder, why) of each load no kept export feeds
        mine: str | None = None
        seen = False
        for path, value in sorted(uses.items()):
            for cls, folder, opaque, load_key in value["loads"]:
                kind = self._family_of(cls)
                if kind not in (None, family):
                    continue
                this = path == here and load_key == key
                seen = seen or this  # its folder as the fact reads it: the decision other files make about it
                if folder is not None and normalized(folder) in sources:
                    continue  # the --model of an export command: a source checkpoint
                why = self._unproduced(cls, folder, opaque, kind, saves, cli, held)
                if why is None:
                    continue
                if this:
                    mine = why
                else:
                    reasons.append((path, folder, why))
        if not seen and (own_folder is None or normalized(own_folder) not in sources):
            mine = self._unproduced(name, own_folder, False, family, saves, cli, held)
        head = ("loads Neuron-compiled artifacts (no export=True: optimum-neuron then reads only a folder or Hub repo "
                "of NEFFs) that stock libraries cannot load, and ")
        if mine is not None:
            return head + mine
        if not reasons:
            return None
        path, folder, why = reasons[0]
        writers = sorted({writer for writer, save in saves if save is None or own_folder is None
                          or normalized(save) == normalized(own_folder)})
        loaded = f"`{folder}`" if folder is not None else "a compiled folder"
        return (head + f"the project's {self.export_words} jobs that may write its folder "
                f"({kept_compiled_names(tuple(writers))}) stay on optimum-neuron and keep writing Neuron-compiled "
                f"folders, held there by {path}, which loads {loaded} with optimum-neuron after this run ({why}): "
                f"port that load first (its todo says how)" if writers else head + f"{path}: {why}")

    def _unproduced(self, cls: str, folder: str | None, opaque: bool, kind: str | None,
                    saves: list[tuple[str, str | None]], cli: set[str],
                    held: Sequence[tuple[str, str | None]] = ()) -> str | None:
        """Why a load of the fact stays on optimum-neuron, or None (an export of the project may write its folder)."""
        if opaque:
            return "a splat of that load cannot be read, so it stays as it is"
        if kind is None or cls.rsplit(".", 1)[-1] not in self.produced_classes:
            return f"{cls} is no class this rule rewrites, so that load stays as it is"
        if folder is not None and normalized(folder) in cli:
            writers = self._writers(folder)  # type: ignore[attr-defined]
            named = " or ".join(sorted({f'"{model}"' for model, _, _ in writers}))
            scripts = ", ".join(sorted({script for _, script, _ in writers}))
            return (f"`{folder}` is written by optimum-cli export neuron in {scripts} from {named}: load {named} here "
                    "with export=True and that command's static shapes instead")
        if any(save is None or folder is None or normalized(save) == normalized(folder) for _, save in saves):
            return None
        writers = sorted({path for path, save in held if save is None or folder is None
                          or normalized(save) == normalized(folder)})
        if writers:
            return (f"the {self.export_words} that may write "
                    f"{f'`{folder}`' if folder is not None else 'the folder it reads'} ({', '.join(writers)}) stays "
                    "on optimum-neuron as it is (its todo says why) and keeps writing Neuron-compiled artifacts: "
                    "resolve what that todo names, then run neuron-migrate again (the export and this load are then "
                    "migrated together)")
        if not saves:
            return (f"no {self.export_words} of this project (a Neuron<...>.from_pretrained(<checkpoint>, export=True) "
                    f"whose result is saved with save_pretrained) writes "
                    f"{f'`{folder}`' if folder is not None else 'the folder it reads'}")
        return (f"no {self.export_words} of this project writes `{folder}` (they save to "
                f"{', '.join(sorted({f'`{save}`' for _, save in saves}))})")


def cast_attribute(call: cst.Call) -> cst.Attribute:
    func = call.func
    assert isinstance(func, cst.Attribute)
    return func


#: the LoRA keywords of a diffusion export (optimum-neuron 0.0.20+): optimum fused the adapters into the weights
#: it compiled (``exporters/neuron/utils.py`` ``_load_lora_weights_to_pipeline``), so they are model content
LORA_KEYS = ("lora_model_ids", "lora_weight_names", "lora_adapter_names", "lora_scales")
#: the other component / adapter keywords of a diffusion export (a second UNet, ControlNets, IP-adapters): NM140
#: writes no diffusers equivalent of them, so an export that passes one stays on optimum-neuron
HELD_ADAPTER_KEYS = ("unet_id", "controlnet_ids", "ip_adapter_id", "ip_adapter_ids", "ip_adapter_subfolder",
                     "ip_adapter_subfolders", "ip_adapter_weight_name", "ip_adapter_weight_names",
                     "ip_adapter_scale", "ip_adapter_scales")
#: a keyword value that is not a Python literal (known only when the script runs)
NOT_LITERAL = object()

#: the casting options of an export: they choose the precision, not the checkpoint or the shapes
CASTING_KEYS = ("auto_cast", "auto_cast_type")


def _uncast(shapes: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """An export's static shapes without its casting options, in a stable order."""
    return tuple(sorted((key, value) for key, value in shapes if key not in CASTING_KEYS))



def _listed(value: object, kind: type | tuple[type, ...]) -> list | None | object:
    """optimum's ``LoRAAdapterArguments.__post_init__``: a single ``kind`` value -> ``[value]``; None stays None; a
    list/tuple of ``kind`` values as it is; anything else NOT_LITERAL (not a shape optimum handles)."""
    if value is None:
        return None
    if isinstance(value, kind) and not isinstance(value, bool):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(item, kind) and not isinstance(item, bool)
                                                for item in value):
        return list(value)
    return NOT_LITERAL


def diffusion_adapter_plan(values: Mapping[str, object], assigned: bool) -> tuple[list[str], str | None]:
    """What a diffusion export's adapter keywords become: ``(steps, None)`` - the statements, with ``{pipe}`` for
    the name the load is assigned to, that do exactly what optimum-neuron (0.4.5) did before compiling (no steps
    when there is no LoRA keyword) -, or ``([], why)`` when the load must stay on optimum-neuron.

    ``values``: each keyword of the export given, its literal value or :data:`NOT_LITERAL`. ``assigned``: the
    load is the whole value of a ``<name> = ...`` statement (the steps go after it, before the compilation).

    optimum (``_load_lora_weights_to_pipeline``, after ``__post_init__`` made single values lists): nothing unless
    both model ids and weight names are given; one model id: ``load_lora_weights(id, weight_name=name)`` (its
    adapter name unused) then ``fuse_lora(lora_scale=scales[0] if scales else 1.0)``; several: every id, weight
    name and adapter name zipped (a ValueError unless the three lengths agree) into ``load_lora_weights(id,
    weight_name=name, adapter_name=adapter)``, ``set_adapters(adapter_names, adapter_weights=scales)`` when scales
    are given, then ``fuse_lora()``. The steps end with ``unload_lora_weights()``: the fused weights stay, the
    adapter layers go, so a saved pipeline holds the fused weights as optimum's compiled one did."""
    held = [key for key in HELD_ADAPTER_KEYS if key in values]
    if held:
        return [], (f"{', '.join(held)}: this rule writes no diffusers equivalent of the component/adapter loading "
                    "optimum did at export (the migrated pipeline would silently run without it)")
    given = {key: values[key] for key in LORA_KEYS if key in values}
    if not given:
        return [], None
    names = ", ".join(given)
    if any(value is NOT_LITERAL for value in given.values()):
        return [], (f"{names}: a value known only when the script runs, and what optimum did with the adapters "
                    "depends on it (one model id: loaded and fused with lora_scale; several: loaded by adapter "
                    "name, weighted with set_adapters, fused; none without weight names), so the exact diffusers "
                    "steps cannot be written here")
    ids = _listed(given.get("lora_model_ids"), str)
    weights = _listed(given.get("lora_weight_names"), str)
    adapters = _listed(given.get("lora_adapter_names"), str)
    raw_scales = given.get("lora_scales")
    scales = _listed(raw_scales, float) if not isinstance(raw_scales, (list, tuple)) else \
        _listed(raw_scales, (int, float))
    if any(value is NOT_LITERAL for value in (ids, weights, adapters, scales)):
        return [], f"{names}: values of a shape optimum-neuron does not take (strings, or lists of them; scales floats)"
    if not (ids and weights):
        return [], (f"{names}: optimum-neuron loads LoRA adapters only when both lora_model_ids and "
                    "lora_weight_names are given, so this export compiled no adapter: check that is intended, pass "
                    "both (or remove the lora_* arguments), then run neuron-migrate again")
    if not assigned:
        return [], (f"{names}: the adapters must be loaded and fused right after the load and before compilation, "
                    "and this load is not the value of a `pipe = ...` statement the steps can follow")
    assert isinstance(ids, list) and isinstance(weights, list)
    if len(ids) == 1:
        scale = scales[0] if isinstance(scales, list) and scales else 1.0
        return [f"{{pipe}}.load_lora_weights({_py(ids[0])}, weight_name={_py(weights[0])})",
                f"{{pipe}}.fuse_lora(lora_scale={_py(scale)})", "{pipe}.unload_lora_weights()"], None
    if not isinstance(adapters, list) or not len(ids) == len(weights) == len(adapters):
        return [], (f"{names}: optimum-neuron raised ValueError for several model ids without a weight name and an "
                    "adapter name for each")
    steps = [f"{{pipe}}.load_lora_weights({_py(model)}, weight_name={_py(weight)}, adapter_name={_py(adapter)})"
             for model, weight, adapter in zip(ids, weights, adapters)]
    if scales:
        steps.append(f"{{pipe}}.set_adapters({_py(adapters)}, adapter_weights={_py(scales)})")
    return [*steps, "{pipe}.fuse_lora()", "{pipe}.unload_lora_weights()"], None


def _py(value: object) -> str:
    """A literal as Python source, strings in double quotes (the project's style)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_py(item) for item in value) + "]"
    return repr(value)


def ast_literal(value: ast.expr) -> object:
    """The Python value of a literal expression, or :data:`NOT_LITERAL`."""
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_LITERAL


# ------------------------------------------- decoder optimum-cli exports in the round trip (fxL)
#: what a decoder ``optimum-cli export neuron`` may say for NM406 to replace it by a stock step (options taking a
#: value; the migration map's section 2.12): the model, the task, the shapes, the casting, the degree, and the
#: drop-list (compiler settings with no stock meaning); any other option: the command stays as it is
CLI_STEP_VALUES = frozenset({"--model", "-m", "--task", "--batch_size", "--sequence_length", "--auto_cast",
                             "--auto_cast_type", "--torch_dtype", "--num_cores", "--tensor_parallel_size",
                             "--instance_type", "--compiler_workdir", "--atol", "--library_name", "--optlevel"})
#: the options of the drop-list that take no value
CLI_STEP_FLAGS = frozenset({"--inline_weights_neff", "--disable_weights_neff_inline", "--disable_neuron_cache",
                            "--dynamic_batch_size", "-O1", "-O2", "-O3", "--disable_validation",
                            "--disable_fast_relayout", "--disable_fallback"})
#: the tasks of a decoder export
DECODER_TASKS = frozenset({"text-generation", "text-generation-with-past"})
#: shapes no decoder export takes (an encoder, seq2seq, vision, audio or diffusion export)
OTHER_SHAPES = frozenset(f"--{key}" for key in SHAPE_KEYS if key not in ("batch_size", "sequence_length")) | {
    "--num_beams", "--text_batch_size", "--image_batch_size", "--unet", "--controlnet_ids"}
CLI_EXPORT_PATTERN = re.compile(r"(?<![\w-])optimum-cli\s+export\s+neuronx?\b")
_CLI_TASK = re.compile(r"""--task[\s"',=]+([A-Za-z][\w-]*)""")


def _option_name(word: str) -> str:
    """``--auto-cast-type`` as ``--auto_cast_type``: one spelling of an option's name (``-O1`` as it is)."""
    return "--" + word[2:].replace("-", "_") if word.startswith("--") else word


class CliExport:
    """One ``optimum-cli export neuron`` command read from its words (as written: quotes and expansions kept).

    ``family``: "decoder" (``--task text-generation``, or ``--num_cores``), "other" (another ``--task``, a library
    other than transformers, a shape no decoder takes), "" (not known from the command: the loads of its folder say);
    ``replaceable``: NM406 can write the stock step for it (a model and one output word, ``--sequence_length``, only
    options of ``CLI_STEP_VALUES`` / ``CLI_STEP_FLAGS``, a dtype it knows or a word read at run time); ``end``: how
    many words the command has (a redirection after it is not part of it)."""

    def __init__(self, words: list[str]) -> None:
        self.model: str | None = None
        self.output: str | None = None
        self.options: dict[str, str] = {}
        self.unknown: list[str] = []
        positional: list[str] = []
        index = 0
        while index < len(words):
            word = words[index]
            bare = unquote_word(word)
            if bare.startswith((">", "<", "2>", "&>", "1>")):
                break
            if bare.startswith("-") and len(bare) > 1:
                name, equals, value = bare.partition("=")
                name = _option_name(name)
                if name in CLI_STEP_FLAGS and not equals:
                    index += 1
                    continue
                if name not in CLI_STEP_VALUES and name not in VALUE_OPTIONS and name not in OTHER_SHAPES:
                    self.unknown.append(bare)  # it may or may not take a value: nothing after it is read
                    index = len(words)
                    break
                if not equals:
                    if index + 1 >= len(words):
                        self.unknown.append(bare)
                        break
                    index += 1
                    value = words[index]
                else:
                    value = word.split("=", 1)[1]
                if name not in CLI_STEP_VALUES:
                    self.unknown.append(name)
                self.options["--model" if name == "-m" else name] = value
            else:
                positional.append(word)
            index += 1
        self.end = index
        self.model = self.options.get("--model")
        self.output = positional[0] if len(positional) == 1 else None
        self.positional = positional

    def value(self, name: str) -> str | None:
        """The option's value without its quotes, or None."""
        value = self.options.get(name)
        return unquote_word(value) if value is not None else None

    @property
    def family(self) -> str:
        task = self.value("--task")
        if task is not None:
            return "" if _expansion(task) else "decoder" if task in DECODER_TASKS else "other"
        library = self.value("--library_name")
        if library is not None and library != "transformers":
            return "" if _expansion(library) else "other"
        if any(name in OTHER_SHAPES for name in self.options):
            return "other"
        return "decoder" if "--num_cores" in self.options else ""

    @property
    def dtype(self) -> str | None:
        """The dtype word (``--torch_dtype`` first, as NM110 reads the Python export), quotes kept."""
        return self.options.get("--torch_dtype", self.options.get("--auto_cast_type"))

    @property
    def degree(self) -> str | None:
        return self.options.get("--num_cores", self.options.get("--tensor_parallel_size"))

    def why_kept(self) -> str | None:
        """Why NM406 cannot write the stock step for this decoder export (None: it can)."""
        if self.unknown:
            return f"it passes {', '.join(dict.fromkeys(self.unknown))}, which the stock step has no meaning for"
        if self.model is None or self.output is None:
            return "its model (--model) and its one output folder are not both plain words of the command"
        if "--sequence_length" not in self.options:
            return "it gives no --sequence_length (the static cache the loads need)"
        dtype = self.dtype
        if dtype is not None and not _expansion(unquote_word(dtype)) and unquote_word(dtype).lower() not in DTYPES:
            return f"its dtype {unquote_word(dtype)} has no torch dtype this rule knows"
        return None


def unquote_word(word: str) -> str:
    from codemods._lib.shell.lexer import unquote

    return unquote(word)


def _expansion(word: str) -> bool:
    """A word whose value comes at run time (a shell or make variable, IPython's ``{name}``, a substitution)."""
    return any(mark in word for mark in ("$", "`", "{"))


#: the stock step's Python, one line with no ``$``, braces, double quotes or backslashes (valid inside double
#: quotes of a shell script, a Dockerfile RUN, a Makefile recipe and a notebook ``!`` line, where IPython expands
#: ``$name`` and ``{expr}``): argv 1 is the model, argv 2 the folder
def stock_step(export: CliExport) -> str:
    """``python -c "..." MODEL OUT [SEQ] [DTYPE]``: load the model (its dtype), set the static cache, save the
    checkpoint and the tokenizer into the folder the export wrote (optimum's export saved the tokenizer too)."""
    assert export.model is not None and export.output is not None
    argv = [export.model, export.output]
    sequence = export.options["--sequence_length"]
    if _expansion(sequence) or not unquote_word(sequence).isdigit():
        argv.append(sequence)
        max_cache_len = f"int(sys.argv[{len(argv)}])"  # sys.argv[0] is "-c"
    else:
        max_cache_len = unquote_word(sequence)
    load = "sys.argv[1]"
    dtype = export.dtype
    if dtype is not None:
        if _expansion(dtype):
            argv.append(dtype)
            table = ", ".join(f"{name}={value}" for name, value in DTYPES.items())
            load += f", dtype=dict({table}).get(sys.argv[{len(argv)}], 'auto')"
        else:
            load += f", dtype={DTYPES[unquote_word(dtype).lower()]}"
    code = (f"import sys{', torch' if dtype is not None else ''}; "
            "from transformers import AutoModelForCausalLM, AutoTokenizer; "
            f"model = AutoModelForCausalLM.from_pretrained({load}); "
            f"model.generation_config.update(cache_implementation='static', max_cache_len={max_cache_len}); "
            "model.save_pretrained(sys.argv[2]); "
            "AutoTokenizer.from_pretrained(sys.argv[1]).save_pretrained(sys.argv[2])")
    return f'python -c "{code}" ' + " ".join(argv)


def cli_commands(toks: list) -> list[tuple[list, int, CliExport]]:
    """``(the simple command's tokens, index of its optimum-cli word, the export)`` of each simple command of
    ``toks`` (the lexer's) that runs ``optimum-cli export neuron`` itself (after ``NAME=value`` settings,
    reserved words, a Dockerfile ``RUN``; a Makefile recipe's ``@``/``-``/``+``)."""
    from codemods._lib.shell.lexer import RESERVED, assignment_name, simple_commands

    found = []
    for command in simple_commands(toks):
        index = 0
        while index < len(command) and (command[index].text in RESERVED or assignment_name(command[index].text)
                                        or (index == 0 and command[index].text.upper() == "RUN")):
            index += 1
        if index + 3 > len(command):
            continue
        program = command[index].text.lstrip("@-+") if index == 0 else command[index].text
        if program.rsplit("/", 1)[-1] == "optimum-cli" and [tok.text for tok in command[index + 1:index + 3]] \
                in (["export", "neuron"], ["export", "neuronx"]):
            words = [tok.text for tok in command[index + 3:]]
            found.append((command, index, CliExport(words)))
    return found


def _notebook_lines(text: str) -> list[str] | None:
    """A notebook's shell lines: its ``!`` lines (the ``!`` removed) and the lines of its ``%%bash`` / ``%%sh``
    cells (None when the text is not a notebook)."""
    cells = code_cells(text) if text.lstrip().startswith("{") else None
    if cells is None:
        return None
    lines: list[str] = []
    for cell in cells:
        cell_lines = cell.splitlines()
        if cell_lines and cell_lines[0].strip() in ("%%bash", "%%sh"):
            lines += cell_lines[1:]
            continue
        for line in cell_lines:
            stripped = line.strip()
            if stripped.startswith("!"):
                lines.append(stripped.lstrip("!"))
            elif lines and lines[-1].endswith("\\") and stripped:
                lines.append(stripped)
    return lines


def cli_exports(text: str) -> dict[str, Any] | None:
    """Project fact: every ``optimum-cli export neuron`` of a shell script, Makefile, Dockerfile or notebook (``!``
    lines, shell cells), as ``{"exports": ((family, replaceable, folder, degree, shapes), ...), "text": <the
    file's text>}``: ``family`` as ``CliExport.family``; ``replaceable``: NM406 can write the stock step for it (a
    decoder, ``CliExport.why_kept`` None, run as a command of its own: the one mention on its line); ``folder``:
    the output folder once the file's own variables are read (``compiled_exports``' reading), None when it is not
    known; ``degree``: the tensor-parallel degree as written (with its value when read), None when absent;
    ``shapes``: ``((key, value), ...)`` as ``compiled_exports`` records them, None when one is known only at run
    time. A mention this reader cannot read as a command (inside a string or a substitution, prose) is an entry
    of unknown family. ``text`` is kept only when some export is replaceable (the round trip migrates the file to
    check it)."""
    from codemods._lib.shell.lexer import lex

    if not CLI_EXPORT_PATTERN.search(text):
        return None
    notebook = _notebook_lines(text)
    lines = ("\n".join(notebook) if notebook is not None else text).replace("\\\n", " ").splitlines()
    variables = _variables(lines)
    entries: list[tuple[str, bool, str | None, str | None, tuple[tuple[str, str], ...] | None]] = []
    for line in lines:
        toks, end = lex(line)
        mentions = len(CLI_EXPORT_PATTERN.findall(line[:end]))
        if not mentions:
            continue
        commands = cli_commands(toks)
        for _, _, export in commands:
            family = export.family
            replaceable = family == "decoder" and export.why_kept() is None and mentions == len(commands) == 1
            folder = _expand(unquote_word(export.output), variables) if export.output is not None else None
            if notebook is not None and _expansion(export.output or ""):
                folder = None  # IPython expands it from the kernel's variables
            shown = None
            if export.degree is not None:
                bare = unquote_word(export.degree)
                value = _expand(bare, variables) if notebook is None else None
                shown = f"{bare} ({value})" if _expansion(bare) and value is not None else bare
            shapes: list[tuple[str, str]] | None = []
            for name, raw in export.options.items():
                key = "auto_cast_type" if name == "--torch_dtype" else VALUE_OPTIONS.get(name)
                if key is None or key == "model" or shapes is None:
                    continue
                value = _expand(unquote_word(raw), variables)
                shapes = None if value is None or (notebook is not None and _expansion(raw)) else \
                    [*shapes, (key, value)]
            entries.append((family, replaceable, normalized(folder) if folder else None, shown,
                            tuple(shapes) if shapes is not None else None))
        for _ in range(mentions - len(commands)):  # inside a string, a substitution, prose: not read
            entries.append(("", False, None, None, None))
    if not entries:
        return None
    found: dict[str, Any] = {"exports": tuple(entries)}
    if any(entry[1] for entry in entries):
        found["text"] = text
    return found


def cli_export_mentions(text: str) -> dict[str, Any] | None:
    """Project fact: the ``optimum-cli export neuron`` commands of a Python file (a command string or an argv list
    for subprocess: its string constants, an f-string's literal parts, a list/tuple of strings joined; comments and
    docstrings left out) or a YAML job (comments left out), which NM406 never replaces by a stock step:
    ``{"exports": ((family, False, None, None, None), ...)}``, the family read from a literal ``--task`` after it
    ("" when there is none)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    if tree is None:  # YAML
        commands = [line.split(" #", 1)[0] for line in text.splitlines() if not line.lstrip().startswith("#")]
    else:
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)} | {
            id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
        commands = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                commands.append(node.value)
            elif isinstance(node, ast.JoinedStr):
                commands.append("".join(str(part.value) if isinstance(part, ast.Constant) else "{}"
                                        for part in node.values if isinstance(part, (ast.Constant, ast.FormattedValue))))
            elif isinstance(node, (ast.List, ast.Tuple)) and node.elts:
                commands.append(" ".join(element.value if isinstance(element, ast.Constant)
                                         and isinstance(element.value, str) else "{}" for element in node.elts))
    entries = []
    for command in commands:
        for match in CLI_EXPORT_PATTERN.finditer(command):
            task = _CLI_TASK.search(command, match.end())
            family = "" if task is None else "decoder" if task.group(1) in DECODER_TASKS else "other"
            entries.append((family, False, None, None, None))
    return {"exports": tuple(entries)} if entries else None


CLI_EXPORTS = ProjectFact("inference.cli-exports", frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.NOTEBOOK}),
                          ("optimum-cli",), cli_exports)
CLI_EXPORT_MENTIONS = ProjectFact("inference.cli-export-mentions", frozenset({FileKind.PYTHON, FileKind.YAML}),
                                  ("optimum-cli",), cli_export_mentions)


# ------------------------------------------------------------------ the compiled-folder round trip of NM110 (fxJ)
class RoundTrip:
    """A project whose decoder compiled folders are written only by Python exporters NM110 rewrites and read only by
    loads whose path is known at run time (``args.model_dir``): the exporters, migrated, save a stock checkpoint
    that carries its dtype and static cache, and those loads become stock loads of it (:func:`round_trip`).

    ``loaders``: the files of the round-trip loads; ``keys``: (file, call key) of each; ``exporters``: the files of
    the saved decoder exports; ``shapes``: the constant shapes every export gives alike (for reads of the compiled
    config; empty when they differ or one is known only at run time); ``degrees``: the tensor-parallel degree of
    each export as written, with its file (``"compile.py: 2"``, ``"export.py: args.num_cores"``), none when absent;
    ``cli_exporters``: the files whose decoder ``optimum-cli export neuron`` commands NM406 replaces by a stock step
    writing the same folder (``stock_step``; fxL); ``cli_replaced``: those of them all of whose exports are replaced,
    with how many (the dependency layer's ``deps.optimum-cli-count`` must agree before it calls the file free of
    optimum-cli)."""

    def __init__(self, loaders: tuple[str, ...], keys: frozenset[tuple[str, str]], exporters: tuple[str, ...],
                 shapes: tuple[tuple[str, str], ...], degrees: tuple[str, ...],
                 cli_exporters: tuple[str, ...] = (), cli_replaced: Mapping[str, int] | None = None) -> None:
        self.loaders, self.keys, self.exporters, self.shapes, self.degrees = loaders, keys, exporters, shapes, degrees
        self.cli_exporters = cli_exporters
        self.cli_replaced = dict(cli_replaced or {})

    def exporter_names(self) -> str:
        return kept_compiled_names(tuple(sorted({*self.exporters, *self.cli_exporters})))

    def loader_names(self) -> str:
        return kept_compiled_names(self.loaders)


#: id(project facts) -> (the facts, the decided round trip or None); the facts object is kept so its id is not reused
_ROUND_TRIPS: dict[int, tuple[Any, RoundTrip | None]] = {}
#: the candidate being checked (its simulated runs read it as decided)
_CANDIDATE: list[RoundTrip] = []


def _argparse_default(tree: ast.AST, name: str) -> tuple[bool, str | None]:
    """(found, default) of ``add_argument("--name", default="x")`` in the file (``dest=`` or the first long flag)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        flags = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
        dest = keywords.get("dest")
        long_flags = [flag for flag in flags if flag.startswith("--")]
        named = dest.value if isinstance(dest, ast.Constant) else (long_flags[0][2:] if long_flags else
                                                                   flags[0] if flags else "")
        if str(named).replace("-", "_") != name:
            continue
        default = keywords.get("default")
        return True, default.value if isinstance(default, ast.Constant) and isinstance(default.value, str) else None
    return False, None


def _path_default(tree: ast.AST, path: ast.expr, depth: int = 0) -> tuple[bool, str | None]:
    """(known, default) of a run-time path: ``args.X`` read from its argparse default, a function parameter from
    its default or from what a caller of the file passes it. ``known`` False: no default is read (the path may be
    anything)."""
    if isinstance(path, ast.Attribute) and isinstance(path.value, ast.Name):
        return _argparse_default(tree, path.attr)
    if isinstance(path, ast.Name) and depth < 3:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params = [*node.args.posonlyargs, *node.args.args]
                defaults = [None] * (len(params) - len(node.args.defaults)) + list(node.args.defaults)
                pairs = [*zip(params, defaults), *zip(node.args.kwonlyargs, node.args.kw_defaults)]
                for index, (param, default) in enumerate(pairs):
                    if param.arg != path.id:
                        continue
                    if isinstance(default, ast.Constant) and isinstance(default.value, str):
                        return True, default.value
                    # the value its callers in the file pass (``load(args.model_dir)``): read the same way
                    for call in ast.walk(tree):
                        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                                and call.func.id == node.name):
                            continue
                        given = call.args[index] if index < len(params) and index < len(call.args) else next(
                            (keyword.value for keyword in call.keywords if keyword.arg == param.arg), None)
                        if given is not None:
                            literal = given.value if isinstance(given, ast.Constant) else None
                            found = (True, literal) if isinstance(literal, str) else _path_default(tree, given, depth + 1)
                            if found[0] and found[1] is not None:
                                return found
    return False, None


def _decoder_calls(text: str) -> tuple[ast.Module, list[tuple[ast.Call, dict | None, list[ast.expr]]],
                                       list[tuple[ast.Call, str | None, ast.expr | None]]] | None:
    """The parsed file (a notebook: its kernel), its saved Neuron exports (call, keywords or None when a splat
    cannot be read, the save targets) and its Neuron loads without a literal export=True (call, family, path)."""
    kernel = kernel_code(text)
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in (kernel if kernel is not None else text).splitlines())
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    aliases = {alias.asname or alias.name: alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and (node.module or "").startswith("optimum.neuron") for alias in node.names}
    counts = binding_counts(tree)
    dicts = bound_dicts(tree, counts)
    exports: list[tuple[ast.Call, dict | None, list[ast.expr]]] = []
    loads: list[tuple[ast.Call, str | None, ast.expr | None]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("from_pretrained", "export") and (node.args or node.keywords)):
            continue
        owner = node.func.value
        name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
        if not (name.startswith("Neuron") or (isinstance(owner, ast.Name) and name in aliases)):
            continue
        family = compiled_family(aliases.get(name, name) if isinstance(owner, ast.Name) else name)
        keywords = _export_keywords(node, dicts)
        export = (keywords or {}).get("export", next((k.value for k in node.keywords if k.arg == "export"), None))
        if node.func.attr == "export" or (isinstance(export, ast.Constant) and export.value is True):
            bound = {ast.unparse(a.targets[0]) for a in ast.walk(tree) if isinstance(a, ast.Assign)
                     and len(a.targets) == 1 and _unwrapped(a.value) is node}
            saves = [save.args[0] if save.args else save.func.value for save in ast.walk(tree)
                     if isinstance(save, ast.Call) and isinstance(save.func, ast.Attribute)
                     and save.func.attr in ("save_pretrained", "push_to_hub")
                     and (_unwrapped(save.func.value) is node or ast.unparse(save.func.value) in bound)]
            if saves:
                exports.append((node, keywords if family == "decoder" else None, saves))
        elif node.func.attr == "from_pretrained":
            path = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg in MODEL_ID_KEYWORDS), None)
            loads.append((node, family, path))
    return tree, exports, loads


def _round_trip_candidate(options: Any) -> RoundTrip | None:
    """The round trip the project's facts allow (conditions 1-4 of NM110's docstring), before its files are
    simulated: None when a condition fails."""
    project = options.project
    folders = project.of(MODULE_FOLDERS.name)
    uses = project.of(COMPILED_FOLDER_USES.name)
    codes = project.of("deps.optimum-neuron-code")
    exporters: list[str] = []
    outputs: set[str] = set()
    shapes: set[tuple[tuple[str, str], ...]] = set()
    constant = True
    degrees: list[str] = []
    loaders: dict[str, list[str]] = {}
    # the optimum-cli exports (fxL): a decoder one NM406 replaces by a stock step is an exporter like a Python one;
    # another kind's export writes no folder a decoder load reads; any other one keeps the project as it is
    cli_exporters: list[str] = []
    cli = project.of(CLI_EXPORTS.name)
    if any(commands and (path not in cli or (options.rules is not None and "NM406" not in options.rules))
           for path, commands in project.of(COMPILED_EXPORTS.name).items()):
        return None  # NM406 does not run (its fact was not gathered): the export stays and writes NEFFs
    other_cli: set[str] = set()  # files with an export of another kind (kept: they still run optimum-cli)
    for path, value in sorted({**project.of(CLI_EXPORT_MENTIONS.name), **project.of(CLI_EXPORTS.name)}.items()):
        for entry in value["exports"]:
            kind = cli_family(entry, uses, folders)
            if kind == "other":
                other_cli.add(path)
                continue
            if kind != "decoder" or not entry[1]:
                return None  # of unknown kind, or a decoder export NM406 cannot replace: it keeps its folder
            cli_exporters.append(path)
            outputs.add(entry[2] if entry[2] is not None else "\x00unknown")
            if entry[3] is not None:
                degrees.append(f"{path}: {entry[3]}")
            if entry[4] is None:
                constant = False
            else:
                shapes.add(_uncast(entry[4]))
    for path, text in sorted(codes.items()):
        parsed = _decoder_calls(text)
        if parsed is None:
            continue
        tree, exports, loads = parsed
        fact = uses.get(path, {})
        for call, keywords, saves in exports:
            family = compiled_family(aliases_name(call, tree))
            if family != "decoder":
                if family is None:
                    return None
                continue
            if keywords is None:
                return None  # an unread splat: NM110 keeps that export
            exporters.append(path)
            for save in saves:
                folder = _ast_path(save, _folder_names(tree), _os_imported(tree), _path_names(tree))
                if folder is None:
                    known, folder = _path_default(tree, save)
                    if not known or folder is None:
                        outputs.add("\x00unknown")
                        continue
                outputs.add(normalized(resolved_folder(folder, path, folders) or folder))
            degree = next((keywords[key] for key in ("num_cores", "tensor_parallel_size", "tp_degree")
                           if key in keywords), None)
            if degree is not None:
                degrees.append(f"{path}: {ast.unparse(degree)}")
        recorded = fact.get("exports", ())
        if len(recorded) != sum(1 for call, keywords, _ in exports if keywords is not None):
            constant = False
        shapes.update(_uncast(entry[2]) for entry in recorded)
        keys = {entry[3]: entry for entry in fact.get("loads", ())}
        for call, family, load_path in loads:
            if family is None:
                return None  # a load of unknown kind: it may read a decoder folder
            if family != "decoder":
                continue
            segment = "".join((ast.get_source_segment(_kernel_or_text(text), call) or "").split())
            entry = keys.get(segment)
            if entry is None:
                continue  # a load of a path the file also exports (a source checkpoint)
            _, folder, opaque, key = entry
            if opaque or load_path is None:
                return None
            if folder is not None:
                readable = resolved_folder(folder, path, folders)
                if readable is not None and _recovered_folder(project, normalized(readable)):
                    continue  # NM110 loads the one checkpoint the folder is compiled from instead (fxL)
                return None  # a readable folder no export writes (a Hub compiled repo), or several exports disagree
            known, default = _path_default(tree, load_path)
            if known and default is not None and normalized(default) not in outputs:
                loaders.setdefault(path, []).append("\x00default:" + normalized(default))
            loaders.setdefault(path, []).append(key)
    if not (exporters or cli_exporters) or not loaders:
        return None
    for path, keys_of in loaders.items():  # a default no export writes (checked once every output is known)
        if any(key.startswith("\x00default:") and key[len("\x00default:"):] not in outputs for key in keys_of):
            return None
    agreed = next(iter(shapes)) if constant and len(shapes) == 1 else ()
    return RoundTrip(tuple(sorted(loaders)), frozenset((path, key) for path, keys_of in loaders.items()
                                                       for key in keys_of if not key.startswith("\x00")),
                     tuple(sorted(set(exporters))), agreed, tuple(dict.fromkeys(degrees)),
                     tuple(sorted(set(cli_exporters))),
                     {path: len(cli[path]["exports"]) for path in set(cli_exporters) - other_cli if path in cli})


def cli_family(entry: tuple, uses: Mapping[str, Any], folders: Mapping[str, Mapping[str, str]]) -> str:
    """The kind of an ``optimum-cli export neuron`` entry (``cli_exports``): its own (``CliExport.family``), or,
    when the command does not say, that of the Neuron classes of the project that load its folder by name (one
    kind: "decoder" or "other"); "" when neither says."""
    family, _, folder = entry[0], entry[1], entry[2]
    if family or folder is None:
        return family
    kinds = {compiled_family(cls) for path, value in uses.items() for cls, loaded, _, _ in value.get("loads", ())
             if (readable := resolved_folder(loaded, path, folders)) is not None and normalized(readable) == folder}
    if len(kinds) != 1 or None in kinds:
        return ""
    return "decoder" if kinds == {"decoder"} else "other"


def _recovered_folder(project: Any, folder: str) -> bool:
    """A folder the project's exports write from one checkpoint with one set of shapes (its optimum-cli commands,
    ``compiled_exports``, and its saved Python decoder exports with constant arguments): NM110 rewrites a load of it
    to that checkpoint (``CompiledFolderLoads._recovered``)."""
    writers = {(model, _uncast(shapes)) for commands in project.of(COMPILED_EXPORTS.name).values()
               for output, model, shapes in commands if output == folder}
    module_folders = project.of(MODULE_FOLDERS.name)
    for script, uses in project.of(COMPILED_FOLDER_USES.name).items():
        for output, model, shapes in uses.get("exports", ()):
            output = resolved_folder(output, script, module_folders)
            if output is not None and normalized(output) == folder:
                writers.add((model, _uncast(shapes)))
    return len(writers) == 1


def aliases_name(call: ast.Call, tree: ast.AST) -> str:
    """The Neuron class an ast call's owner names (an alias of ``from optimum.neuron import X as Y`` followed)."""
    owner = cast_ast_owner(call)
    if isinstance(owner, ast.Name):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("optimum.neuron"):
                for alias in node.names:
                    if (alias.asname or alias.name) == owner.id:
                        return alias.name
        return owner.id
    return owner.attr if isinstance(owner, ast.Attribute) else ""


def cast_ast_owner(call: ast.Call) -> ast.expr:
    return call.func.value if isinstance(call.func, ast.Attribute) else call.func


def _os_imported(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Import) and any(alias.name == "os" for alias in node.names) for node in tree.body)


def _kernel_or_text(text: str) -> str:
    kernel = kernel_code(text)
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in (kernel if kernel is not None else text).splitlines())


def round_trip(options: Any) -> RoundTrip | None:
    """The project's compiled-folder round trip, decided once per run (all or none): the candidate of the facts
    (:func:`_round_trip_candidate`), kept when every exporter file, migrated with it, rewrites its decoder exports,
    and every loader file, migrated with it, no longer imports optimum.neuron (nothing else keeps it: a compiled
    read left, another kept load). While the candidate is checked, its simulated runs read it as decided."""
    if options is None:
        return None
    if _CANDIDATE:
        return _CANDIDATE[-1]
    project = options.project
    memo = _ROUND_TRIPS.get(id(project))
    if memo is not None and memo[0] is project:
        return memo[1]
    if len(_ROUND_TRIPS) > 64:  # one entry per run (and per test project): keep the facts of the latest only
        _ROUND_TRIPS.clear()
    _ROUND_TRIPS[id(project)] = (project, None)  # a question asked while deciding (outside the candidate): none
    candidate = _round_trip_candidate(options)
    decided = candidate if candidate is not None and _holds(candidate, options) else None
    _ROUND_TRIPS[id(project)] = (project, decided)
    return decided


def _holds(candidate: RoundTrip, options: Any) -> bool:
    from pathlib import PurePosixPath

    from codemods.deps._plan import _SIMULATING, uses_optimum_neuron
    from migrate.filekinds import kind_from_content, kind_from_name
    from migrate.pipeline import migrate_file_text
    from migrate.registry import all_rules

    codes = options.project.of("deps.optimum-neuron-code")
    shell = {path: value.get("text") for path, value in options.project.of(CLI_EXPORTS.name).items()}
    rules = [rule for rule in all_rules() if options.rules is None or rule.id in options.rules]
    if not any(rule.id == "NM110" for rule in rules) or (
            candidate.cli_exporters and not any(rule.id == "NM406" for rule in rules)):
        return False
    uses = options.project.of(COMPILED_FOLDER_USES.name)
    folders = options.project.of(MODULE_FOLDERS.name)
    _CANDIDATE.append(candidate)
    _SIMULATING.append(True)
    try:
        for path in sorted({*candidate.loaders, *candidate.exporters, *candidate.cli_exporters}):
            text = codes.get(path) or shell.get(path)
            if text is None or path in options.unwritten:  # a file the run does not write keeps its NEFF side
                return False
            kind = kind_from_name(PurePosixPath(path)) or kind_from_content(text.encode("utf-8", "replace")[:128]) \
                or FileKind.PYTHON
            try:
                after = migrate_file_text(text, kind, PurePosixPath(path), rules, options).text
            except Exception:  # noqa: BLE001 - the engine leaves such a file as it is
                return False
            if path in candidate.loaders and uses_optimum_neuron(after):
                return False
            if path in candidate.cli_exporters:  # NM406 replaced every decoder export of the file (fxL)
                left = cli_exports(after)
                if left is not None and any(cli_family(entry, uses, folders) != "other" for entry in left["exports"]):
                    return False
            if path not in codes:
                continue
            parsed = _decoder_calls(after)
            if parsed is None or any(compiled_family(aliases_name(call, parsed[0])) == "decoder"
                                     for call, _, _ in parsed[1]):
                return False  # an export NM110 keeps for a reason of its own
    finally:
        _SIMULATING.pop()
        _CANDIDATE.pop()
    return True
