"""The zero_1 (ZeRO-1 sharded optimizer state) value a training script ran with, where the project shows it.

optimum-neuron's ``zero_1`` decides where the data-parallel rest of the migrated mesh goes: ZeRO-1 sharded the
optimizer state across the data-parallel ranks, and its closest stock layout is ``fsdp_size`` (FSDP2 shards
parameters and gradients as well, more than ZeRO-1 did); without it the ranks held plain replicas
(``dp_replicate_size``). The version default (``codemods/_lib/optimum_version.py``) only decides when no value is
visible. A value is visible, most direct first:

* a literal ``zero_1=True`` / ``zero_1=False`` keyword in the script;
* a ``--zero_1`` flag on a launch line of the project that runs the script (shell scripts, notebooks, Python
  strings, YAML; a line without a script passes it to the scripts its file runs: ``ARGS="--zero_1 true"``), or a
  ``"zero_1"`` hyperparameter of a SageMaker estimator whose ``entry_point`` is the script. These count where the
  script reads ``zero_1`` (its own ``--zero_1`` option, ``args.zero_1``) or parses the Neuron arguments with a
  parser (the flag reaches the dataclass);
* the ``zero_1:`` key of a YAML / JSON argument config that such a launch line passes the script (``--config
  X.yaml``, ``--config $CONFIG`` with the file's ``CONFIG=${1:-X.yaml}``, a bare ``X.json`` argument after the
  script) or that the script parses itself (``parser.parse_yaml_file("X.yaml")``), with the same standing as a
  flag (TrlParser lets the command line override a config, so a flag that disagrees leaves the value open); the
  removal note NM408 leaves in the config (``(was zero_1: true)``) counts too, so a second run reads the same value;
* the default of the script's own argparse ``--zero_1`` option, when no launch line sets it.

An argparse option declared ``type=bool`` turns every non-empty string into True: ``--zero_1 False`` is True there.

The same sources give the tensor parallel degree (``degree_one``): NM205 drops a ``lazy_load_for_parallelism``
block whose degree cannot move when every one of them is 1. A file counts as running the script when a line
launches it (a launcher word before the script, or a command word that is a same-file variable with one
top-level value starting with one: ``TORCHRUN="torchrun ..."`` ... ``$TORCHRUN train.py``), flags or none.

A flag value that is one variable of the launching file (``--tensor_parallel_size $(TP)`` in a Makefile with
``TP ?= 8``, ``${TP}``, ``$TP``) also records the one value the file assigns it (``Launch.default``); only the
checkpoint note (``note_checkpoint_need``) reads it, since a run may override the variable.

The launch values are a project fact (``migrate/facts.py``), keyed by the launching file: (script as written, or
None for the scripts the file runs, value as written, flag or hyperparameter, field). Besides zero_1 it records
the TrainingArguments fields whose defaults trl 1.x changes (``FIELDS``): NM202 names only those a parsed
``SFTConfig``'s launchers leave unset.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass
from pathlib import PurePath

from codemods._lib.notebook_cells import code_cells
from codemods.deps import _notebooks as notebooks
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind

#: the fields whose launch values are recorded: zero_1, and the TrainingArguments fields whose defaults trl 1.x
#: changes (codemods/_tables/training_defaults.py: NM202 names those the launch lines leave unset)
#: and gradient_accumulation_steps: a degree above 1 that no longer shards the model (a class with no tensor-parallel
#: plan) makes the data-parallel width WORLD_SIZE, and the note names the accumulation that keeps the global batch
#: (``batch_places`` in codemods/training/_base.py)
FIELDS = ("zero_1", "learning_rate", "logging_steps", "gradient_checkpointing", "bf16", "tensor_parallel_size",
          "gradient_accumulation_steps")
_NAMES = "|".join(name.replace("_", "[_-]") for name in FIELDS)
_FLAG = re.compile(rf"(?<![\w-])--({_NAMES})\b(?:\s*=\s*|[\"',\s]+)?(\$\(\w+\)|(?!-[-A-Za-z])[^\s\"',\]\)\\]+)?")  # $(TP): Make
# (a bare flag, ``--bf16 --zero_1``, takes no value: the next flag is not swallowed as its value)
_HYPER_KEY = re.compile(rf"""["']({'|'.join(FIELDS)})["']\s*:\s*([^,}}\n#]+)""")
_HYPER_KEYWORD = re.compile(rf"(?<![\w.])({'|'.join(FIELDS)})\s*=\s*(?!=)([^,)\n#]+)")
_ENTRY_POINT = re.compile(r"""\bentry_point\s*=\s*["']([^"']+\.py)["']""")
_SOURCE_DIR = re.compile(r"""\bsource_dir\s*=\s*(?:["']([^"']*)["']|\w)""")
_SCRIPT = re.compile(r"[\w./${}-]+\.py\b")
#: a config file a launch line hands its script: ``--config X.yaml`` (TrlParser, a script's own --config), or a
#: bare ``X.yaml`` / ``X.json`` word after the script (HfArgumentParser's ``sys.argv[1].endswith(".yaml")`` idiom)
_CONFIG_FLAG = re.compile(r"(?<![\w-])--config(?:[_-]file)?(?:\s*=\s*|[\"',\s]+)([^\s\"',\]\)\\]+)")
_CONFIG_WORD = re.compile(r"(?<![\w/.$}-])((?:\$\{?\w+\}?/?|[\w./-])+\.(?:ya?ml|json))(?![\w.])")
#: a ``zero_1`` key of a YAML / JSON argument config, or NM408's note where it removed one (``(was zero_1: true)``:
#: a second run reads what the first removed)
_CONFIG_FIELDS = FIELDS  # zero_1, tensor_parallel_size, and the fields whose defaults trl 1.x changes (NM202, rt5G D3)
_CONFIG_KEY = re.compile(rf"""^\s*["']?({'|'.join(_CONFIG_FIELDS)})["']?\s*:\s*([^,#\s{{\[][^,#\s]*)""", re.M)
_REMOVED_KEY = re.compile(r"^\s*# neuron-migrate: (zero_1|tensor_parallel_size)\b.*\(was \1: ([^\s)]+)\)\s*$", re.M)
_SCRIPT_CONFIG = re.compile(r"""\bparse_(?:yaml|json)_file\(\s*(?:os\.path\.abspath\(\s*)?["']([^"']+\.(?:ya?ml|json))["']""")
_SHELL_VAR = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)=(\S+)\s*$")
_VAR_USE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
#: a launch line (not a mere mention of a script): a launcher word before the script (``python``, ``torchrun``,
#: ``accelerate launch`` ...), or a same-file variable in the command word whose value starts with one
#: (``TORCHRUN="torchrun --nproc_per_node 2"`` ... ``$TORCHRUN train.py``)
_LAUNCHERS = ("python", "python3", "torchrun", "accelerate", "deepspeed", "neuron_parallel_compile", "mpirun", "srun")
_LAUNCHER_WORD = re.compile(r"(?<![\w./-])(?:%s)(?:\d+(?:\.\d+)?)?(?![\w./-])" % "|".join(_LAUNCHERS))
_ASSIGNED = re.compile(r"""^(?:export\s+)?([A-Za-z_]\w*)=(?:"([^"`\\]*)"|'([^']*)'|([^\s"'$`;&|]+))\s*(?:#.*)?$""")
_COMMAND_VAR = re.compile(r"^\s*(?:[A-Za-z_]\w*=\S*\s+)*\$(?:\{(\w+)\}|\((\w+)\)|(\w+))(?=\s|$)")
#: a Makefile's ``TORCHRUN = torchrun --nproc_per_node 2`` (``:=``, ``?=``), used as ``$(TORCHRUN) train.py``
_MAKE_ASSIGNED = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_]\w*)\s*(?::{1,3}=|\?=|=)\s*([^#\\]*?)\s*(?:#.*)?$")


@dataclass(frozen=True)
class Launch:
    script: str | None  # as written (an entry_point joined to its literal source_dir); None: the file's scripts
    value: str  # as written
    kind: str  # "flag" | "hyperparameter"
    field: str = "zero_1"
    #: for a value that is one variable of the launching file (``$(TP)``, ``${TP}``, ``$TP``): the one value the
    #: file gives it (``TP ?= 8``, ``TP := 8``, ``TP=${TP:-8}``), None when it is not known (``+=``, two values)
    default: str | None = None


_ONE_VARIABLE = re.compile(r"^\$(?:\((\w+)\)|\{(\w+)\}|(\w+))$")
_APPENDED = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_]\w*)\s*(?:\+|!)=")


def _variable_default(value: str, variables: dict[str, str | None]) -> str | None:
    """The literal a value made of one variable reference takes from the file's one assignment of it (Make
    variables are not expanded when the launch lines are read, so ``--tensor_parallel_size $(TP)`` with
    ``TP ?= 8`` showed no degree); None when ``value`` is no such reference or the variable has no one literal."""
    use = _ONE_VARIABLE.match(value.strip("\"'"))
    if use is None:
        return None
    raw = variables.get(next(name for name in use.groups() if name))
    if raw is None:
        return None
    raw = raw.strip().strip("\"'")
    fallback = re.fullmatch(r"\$\{\w+:?-([^}]*)\}", raw)  # TP=${TP:-8}
    raw = fallback.group(1).strip("\"'") if fallback else raw
    return raw if raw and "$" not in raw and not re.search(r"[\s`;&|]", raw) else None


def _shell_value(word: str, variables: dict[str, str]) -> str | None:
    """``word`` with the file's ``NAME=value`` variables put in (``${1:-default}`` is its default); None when a
    variable is not known."""
    def value(name: str) -> str:
        raw = variables.get(name, "").strip("\"'")
        default = re.fullmatch(r"\$\{\w+:?-([^}]*)\}", raw)
        return default.group(1) if default else raw

    resolved = _VAR_USE.sub(lambda m: value(m.group(1) or m.group(2)), word.strip("\"'"))
    return resolved if resolved and "$" not in resolved and resolved.endswith((".yaml", ".yml", ".json")) else None


def _configs(line: str, variables: dict[str, str]) -> list[str]:
    """The config files (as written, variables put in) a launch line passes to its script."""
    script = _SCRIPT.search(line)
    if script is None:
        return []
    rest = line[script.end():]
    words = [m.group(1) for m in _CONFIG_FLAG.finditer(rest)]
    if not words:
        words = [m.group(1) for m in _CONFIG_WORD.finditer(rest)]
    return [value for word in words if (value := _shell_value(word, variables)) is not None]


def _launch_parts(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The parts of a file that launch things, and the files a notebook writes ((name, fingerprint)): a notebook's
    code cells but those that write a file (the script itself, whose own ``zero_1=args.zero_1`` is no launch
    value); any other file as a whole."""
    sources = code_cells(text) if text.lstrip().startswith("{") else None
    if sources is None:
        return [text], []
    written = [(name, notebooks.fingerprint(body)) for name, body in notebooks.written_files(sources)]
    return [source for source in sources if not source.lstrip().startswith("%%writefile")], written


def _launches(line: str, launchers: dict[str, str | None]) -> bool:
    """Whether ``line`` (which names a script) runs it: a launcher word before the script, or a command word that is
    a same-file variable whose one value starts with a launcher (a value assigned in a block or two different ways is
    not known: the line then counts only by its own words)."""
    before = line[:_SCRIPT.search(line).start()]  # type: ignore[union-attr]
    if re.match(r"^\s*(?:echo|printf)\b", line):
        return False
    if _LAUNCHER_WORD.search(before):
        return True
    command = _COMMAND_VAR.match(line)
    value = launchers.get(next(name for name in command.groups() if name)) if command is not None else None
    return value is not None and _LAUNCHER_WORD.match(value.lstrip()) is not None


def _collect(text: str) -> dict[str, tuple] | None:
    found: list[Launch] = []
    runs: list[str] = []  # every script a line of the file names: those a line with no script of its own feeds
    parts, written = _launch_parts(text)
    joined = "\n".join(parts).replace("\\\n", " ")  # a notebook's dict and its estimator may be in two cells
    variables: dict[str, str] = {}
    launchers: dict[str, str | None] = {}  # NAME -> its value where every assignment of the file gives the same one
    launched = False  # a line of the file launches a script (a record even without a flag or a config)
    for line in joined.splitlines():
        if line.lstrip().startswith("#"):
            continue
        if (assigned := _SHELL_VAR.match(line)) is not None:
            variables[assigned.group(1)] = assigned.group(2)
        if (appended := _APPENDED.match(line)) is not None:
            launchers[appended.group(1)] = None  # TP += 2, TP != cmd: no one value
        elif (quoted := _ASSIGNED.match(line)) is not None or (quoted := _MAKE_ASSIGNED.match(line)) is not None:
            text = next(group for group in quoted.groups()[1:] if group is not None)
            launchers[quoted.group(1)] = text if launchers.get(quoted.group(1), text) == text else None
        elif (other := re.match(r"^\W*(?:export\s+)?([A-Za-z_]\w*)=", line)) is not None:
            launchers[other.group(1)] = None  # set in a block (indented), or from an expansion: not known
        scripts = _SCRIPT.findall(line)
        runs.extend(scripts)
        if scripts and not launched:
            launched = _launches(line, launchers)
        found.extend(Launch(script, config, "config", "config")
                     for config in _configs(line, variables) for script in scripts or [None])
        for match in _FLAG.finditer(line):
            value = match.group(2)
            value = "true" if value is None or value.startswith("-") else value  # a bare flag is True
            name = match.group(1).replace("-", "_")
            found.extend(Launch(script, value, "flag", name) for script in scripts or [None])
    # a Makefile's $(TP) may be assigned below its use (Make expands recursively): resolve with the whole file read
    found = [Launch(launch.script, launch.value, launch.kind, launch.field, _variable_default(launch.value, launchers))
             if launch.kind == "flag" else launch for launch in found]
    entries = _ENTRY_POINT.findall(joined)
    if entries:
        dirs = {m.group(1) for m in _SOURCE_DIR.finditer(joined)}
        folder = next(iter(dirs)) if len(dirs) == 1 else None  # one literal source_dir holds the entry point
        values = [(m.group(1), m.group(2).strip()) for m in _HYPER_KEY.finditer(joined)]
        values += [(m.group(1), m.group(2).strip()) for m in _HYPER_KEYWORD.finditer(joined)]
        for entry in entries:
            script = posixpath.join(folder, entry) if folder else entry
            found.extend(Launch(script, value, "hyperparameter", name) for name, value in values)
    if not found and not written and not launched:
        return None
    return {"launches": tuple(dict.fromkeys(found)), "written": tuple(written), "runs": tuple(dict.fromkeys(runs))}


ZERO_1_LAUNCHES = ProjectFact(
    "training.zero-1-launches",
    frozenset({FileKind.SHELL, FileKind.NOTEBOOK, FileKind.PYTHON, FileKind.YAML, FileKind.DOCKERFILE}),
    ("zero_1", "zero-1", "%%writefile", "--config", ".yaml", ".yml", ".json", "learning_rate", "learning-rate", "logging_steps", "logging-steps",
     "gradient_checkpointing", "gradient-checkpointing", "bf16", "tensor_parallel_size", "tensor-parallel-size",
     "gradient_accumulation_steps", "gradient-accumulation-steps", *_LAUNCHERS),
    _collect,
)



def _collect_config(text: str) -> dict[str, tuple[str, ...]] | None:
    """field -> the values (as written) a YAML / JSON argument config sets for ``zero_1`` / ``tensor_parallel_size``
    and the fields whose defaults trl 1.x changes (``FIELDS``; a key whose value opens a mapping or list is not
    one), or that NM408 removed from it."""
    found: dict[str, list[str]] = {}
    for pattern in (_CONFIG_KEY, _REMOVED_KEY):
        for match in pattern.finditer(text):
            found.setdefault(match.group(1), []).append(match.group(2))
    return {name: tuple(dict.fromkeys(values)) for name, values in found.items()} or None


config_fields = _collect_config  # the same reading for a launch rule that holds the config's text


#: config file -> its zero_1 / tensor_parallel_size values: a launch line's ``--config X.yaml`` or the script's
#: ``parse_yaml_file("X.yaml")`` gives them to the script
ZERO_1_CONFIGS = ProjectFact("training.zero-1-configs", frozenset({FileKind.YAML, FileKind.JSON}), _CONFIG_FIELDS,
                             _collect_config)

_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0"}


def truth(value: str) -> bool | None:
    """HfArgumentParser's reading of a boolean flag's value (``string_to_bool``); None when not a literal."""
    text = value.strip().strip("\"'").lower()
    return True if text in _TRUE else False if text in _FALSE else None


def script_paths(project: ProjectFacts, path: PurePath, source: str) -> list[str]:
    """The project paths of the script the rules see at ``path``: the file itself, or for a notebook's
    ``%%writefile NAME`` cell (whose path is NAME) the file each notebook with that cell (same name and text)
    writes."""
    shown = PurePath(path).as_posix()
    if shown in project.files:
        return [shown]
    mark = notebooks.fingerprint(source)
    found = [notebooks.resolved(notebook, name) for notebook, value in sorted(project.of(ZERO_1_LAUNCHES.name).items())
             for name, body in value["written"] if name == shown and body == mark]
    return found or [shown]


def _launched(project: ProjectFacts, origin: str, launch: Launch, script: str, written: set[str]) -> bool:
    """Whether ``launch.script`` written in the file ``origin`` runs the project file ``script``."""
    assert launch.script is not None
    word = re.sub(r"^.*\$(?:\{[^}]*\}|\w+)/?", "", launch.script)
    if not word or "$" in word:
        return False
    folder = posixpath.dirname(origin)
    while True:  # relative to the launcher's folder or one above it (the working directory is not known)
        if posixpath.normpath(posixpath.join(folder, word)) == script:
            return True
        if folder in ("", "/"):
            break
        folder = posixpath.dirname(folder)
    tail = posixpath.normpath(word).lstrip("./")
    ends = [path for path in project.files | written if ("/" + path).endswith("/" + tail)]
    return ends == [script]


def launch_values(project: ProjectFacts, paths: list[str], field: str = "zero_1",
                  variables: bool = False) -> list[tuple[str, str]]:
    """(value as written, where) of every ``field`` (one of ``FIELDS``) the project's launch lines and
    hyperparameters give the script at one of ``paths``. With ``variables``, a value that is one variable of its
    file (``$(TP)``) is the value the file assigns it (``TP ?= 8``; a run may still override it, so only for
    notes, never for a decision that holds the other values out)."""
    records = project.of(ZERO_1_LAUNCHES.name)
    written = {notebooks.resolved(notebook, name) for notebook, value in records.items() for name, _ in value["written"]}
    found = []
    for origin, value in sorted(records.items()):
        launches = value["launches"]
        runs = [Launch(script, "", "flag") for script in value["runs"]]
        for launch in launches:
            if launch.field != field:
                continue
            targets = [launch] if launch.script is not None else runs
            if any(_launched(project, origin, target, script, written) for target in targets for script in paths):
                shown = (f"--{field} {launch.value} on a launch line of {origin}" if launch.kind == "flag"
                         else f'the "{field}": {launch.value} hyperparameter in {origin}')
                if variables and launch.default is not None:
                    found.append((launch.default, f"{shown} (where {launch.value} is {launch.default})"))
                    continue
                found.append((launch.value, shown))
    return list(dict.fromkeys(found))


def config_values(project: ProjectFacts, paths: list[str], source: str, field: str = "zero_1") -> list[tuple[str, str]]:
    """(value as written, where) of every ``field`` key (``zero_1``, ``tensor_parallel_size``) of a config file the project's launch lines pass to the
    script at one of ``paths`` (``--config X.yaml``, a bare ``X.yaml`` argument), or the script ``source`` parses
    itself (``parser.parse_yaml_file("X.yaml")``)."""
    configs = project.of(ZERO_1_CONFIGS.name)
    if not configs:
        return []
    records = project.of(ZERO_1_LAUNCHES.name)
    written = {notebooks.resolved(notebook, name) for notebook, value in records.items() for name, _ in value["written"]}
    passed: list[tuple[str, str]] = []  # (file the path is written in, config path as written)
    for origin, value in sorted(records.items()):
        runs = [Launch(script, "", "flag") for script in value["runs"]]
        for launch in value["launches"]:
            if launch.kind != "config":
                continue
            targets = [launch] if launch.script is not None else runs
            if any(_launched(project, origin, target, script, written) for target in targets for script in paths):
                passed.append((origin, launch.value))
    passed += [(path, match.group(1)) for path in paths[:1] for match in _SCRIPT_CONFIG.finditer(_code(source))]
    found: list[tuple[str, str]] = []
    for origin, config in passed:
        for path, fields in sorted(configs.items()):
            if _launched(project, origin, Launch(config, "", "config"), path, set()):
                found.extend((given, f"{field}: {given} in {path}, the config {origin} passes")
                             for given in fields.get(field, ()))
    return list(dict.fromkeys(found))


_LAZY_CALL = re.compile(r"lazy_load_for_parallelism\([^()]*\)")
_OWN_DEGREE = re.compile(r"(?<!\.)\btensor_parallel_size\b|\.tensor_parallel_size\s*(?:=(?!=)|[-+*/]=)")


def _argv_name(name: ast.expr, scope: ast.AST) -> bool:
    """Whether the attribute name ``name`` of a ``setattr`` in ``scope`` is a string constant other than
    tensor_parallel_size, or derives from ``sys.argv`` alone (``for k, v in zip(rest[::2], rest[1::2]):
    setattr(args, k.lstrip("-"), ...)`` with ``rest = sys.argv[1:idx]``): the command line, whose
    ``--tensor_parallel_size`` flags the launch lines show, as a parser's would."""
    if isinstance(name, ast.Constant):
        return isinstance(name.value, str) and name.value != "tensor_parallel_size"
    sources: dict[str, list[ast.expr]] = {}
    for node in ast.walk(scope):
        pairs = ([(target, node.value) for target in node.targets] if isinstance(node, ast.Assign)
                 else [(node.target, node.iter)] if isinstance(node, (ast.For, ast.comprehension)) else [])
        for target, value in pairs:
            for bound in ast.walk(target):
                if isinstance(bound, ast.Name):
                    sources.setdefault(bound.id, []).append(value)
    seen: set[str] = set()

    def derived(expr: ast.expr) -> bool:
        calls = {id(node.func) for node in ast.walk(expr) if isinstance(node, ast.Call)}
        argv = {id(node.value) for node in ast.walk(expr) if isinstance(node, ast.Attribute) and node.attr == "argv"
                and isinstance(node.value, ast.Name) and node.value.id == "sys"}
        for node in ast.walk(expr):
            if not isinstance(node, ast.Name) or id(node) in calls or id(node) in argv or node.id in seen:
                continue
            seen.add(node.id)
            if node.id not in sources or not all(derived(value) for value in sources[node.id]):
                return False
        return bool(argv) or any(isinstance(node, ast.Name) and node.id in seen for node in ast.walk(expr))

    return derived(name)


def _sets_degree(code: str) -> bool:
    """Whether a ``setattr`` of the script may set the degree: any whose name is not a constant or the command line."""
    if "setattr(" not in code:
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return True
    scopes = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            if len(node.args) < 2 or node.keywords:
                return True
            scope = next((scope for scope in reversed(scopes) if any(inner is node for inner in ast.walk(scope))), tree)
            if not _argv_name(node.args[1], scope):
                return True
    return False


def degree_one(source: str, path: PurePath, project: ProjectFacts) -> tuple[str, ...] | None:
    """Where the project shows the script's tensor parallel degree, when every source is 1: the script names no
    degree of its own (only reads ``args.tensor_parallel_size``: the Neuron arguments' default is 1), at least one
    launch line of the project runs it, and every ``--tensor_parallel_size`` those lines (or a file of arguments
    that runs no script) and every ``tensor_parallel_size:`` key of the configs they pass give is 1. None otherwise."""
    if _OWN_DEGREE.search(_LAZY_CALL.sub("", _code(source))) or _sets_degree(source):
        return None
    paths = script_paths(project, path, source)
    records = project.of(ZERO_1_LAUNCHES.name)
    written = {notebooks.resolved(notebook, name) for notebook, value in records.items() for name, _ in value["written"]}
    launchers = sorted(origin for origin, value in records.items() if any(
        _launched(project, origin, Launch(run, "", "flag"), script, written) for run in value["runs"] for script in paths))
    if not launchers:
        return None
    stray = [launch.value for value in records.values() if not value["runs"] for launch in value["launches"]
             if launch.field == "tensor_parallel_size" and launch.script is None]
    given = [*launch_values(project, paths, "tensor_parallel_size"),
             *config_values(project, paths, source, "tensor_parallel_size")]
    if any(value.strip("\"'") != "1" for value in [*stray, *(value for value, _ in given)]):
        return None
    return tuple(dict.fromkeys([*(where for _, where in given),
                                *(f"{origin} runs it without --tensor_parallel_size" for origin in launchers
                                  if not any(origin in where for _, where in given))]))


_ARGPARSE = re.compile(r"""add_argument\(\s*["']--zero[_-]1["']([^)]*)\)""")
_LITERAL = re.compile(r"(?<![\w.\"'])zero_1\s*=\s*(True|False)\b")
_READS = re.compile(r"\bzero_1\b")
_PARSED = re.compile(r"\b(?:HfArgumentParser|NeuronHfArgumentParser|TrainiumHfArgumentParser|TrlParser)\s*\(")


@dataclass(frozen=True)
class Zero1:
    """What the script shows of zero_1: ``value`` True / False when every visible source agrees, None when none is
    visible or they disagree (``sources`` then says what was seen)."""

    value: bool | None
    sources: tuple[str, ...] = ()
    values: tuple[str, ...] = ()  # the values as written (True/False for literal keywords)

    @property
    def visible(self) -> bool:
        return bool(self.sources)


def _code(source: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in source.splitlines())


def mesh_key_for(zero_1: Zero1, line) -> str:
    """The DistributedConfig key for the data-parallel rest of a script's mesh: its zero_1 (``zero_1_of``) True ->
    ``fsdp_size`` (the closest to ZeRO-1), False -> ``dp_replicate_size``; where none is visible or they disagree,
    the project's optimum-neuron line (``line``, ``codemods/_lib/optimum_version.py``). The one decision behind the
    mesh every rule names: NM202 / NM205 / NM208 in the script (``codemods/training/_base.py``, ``mesh_key``), NM408
    on its launch lines and configs (which see the script's launchers and configs, not its text)."""
    from codemods._lib.optimum_version import data_parallel_key

    if zero_1.value is not None:
        return "fsdp_size" if zero_1.value else "dp_replicate_size"
    return data_parallel_key(line)


def zero_1_of(source: str, path: PurePath, project: ProjectFacts, parsed: bool = False) -> Zero1:
    """The zero_1 the script ``source`` at ``path`` ran with, as far as the script and its launchers show it.
    ``parsed``: the script is known to parse its arguments with a parser (a launch rule that has the project fact
    but not the text: ``source`` is then empty)."""
    code = _code(source)
    literals = sorted(set(_LITERAL.findall(code)))
    if literals:
        return Zero1(literals[0] == "True" if len(literals) == 1 else None,
                     tuple(f"zero_1={value} in this file" for value in literals), tuple(literals))
    option = _ARGPARSE.search(code)
    typed_bool = option is not None and re.search(r"\btype\s*=\s*bool\b", option.group(1)) is not None
    if parsed or _READS.search(code) or _PARSED.search(code):
        values: list[tuple[bool | None, str, str]] = []
        paths = script_paths(project, path, source)
        for given, where in [*launch_values(project, paths), *config_values(project, paths, source)]:
            value = truth(given)
            if typed_bool and given.strip("\"'") and value is not True:
                value = True  # argparse's type=bool: bool("False") is True
                where += " (the script's --zero_1 is type=bool, which makes any non-empty value True)"
            values.append((value, where, given))
        if values:
            seen = {value for value, _, _ in values}
            return Zero1(seen.pop() if len(seen) == 1 else None, tuple(where for _, where, _ in values),
                         tuple("True" if value else given for value, _, given in values))
    if option is not None:
        rest = option.group(1)
        default = re.search(r"\bdefault\s*=\s*([^,\s)]+)", rest)
        action = re.search(r"""\baction\s*=\s*["'](store_true|store_false)["']""", rest)
        written = default.group(1) if default else None
        if written is None and action is not None:
            written = "False" if action.group(1) == "store_true" else "True"
        if written is not None:
            value = truth(written)
            return Zero1(value, (f"the default {written} of the script's own --zero_1 option",), (written,))
    return Zero1(None)
