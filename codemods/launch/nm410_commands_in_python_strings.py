"""NM410 neuron-commands-in-python-strings: the launch-layer edits, applied to command strings inside Python.

What it does:

This rule finds string literals holding launch commands and applies the same edits as the shell rules, by
running the ``edit_command`` of each rule the run selected (NM401 prefix, NM402/NM403/NM404 variables, NM406
optimum-cli, NM407 torchrun, NM408 trainer flags, NM505 pip install), so ``--ignore NM406`` leaves an
``optimum-cli`` string alone here too (and ``--select NM410`` alone has no edit to apply):

* plain and raw string literals: edited in place (quotes and prefix kept);
* f-strings: edited when every ``{...}`` survives unchanged and in order; otherwise a ``todo``; a leading
  interpolation (``f"{env_var_options} XLA_USE_BF16=1 torchrun ..."``) is read as the settings it most often holds,
  so the settings after it are edited as well;
* argv lists (``subprocess.run(["torchrun", "train.py", ...])``, ``sys.argv = [...]``, ``parse_args([...])``):
  ``NAME=value`` elements of removed variables go (``XLA_USE_BF16=1`` only where ``"--bf16", "true"`` can be
  appended for a script that parses TrainingArguments, as NM403; a variable for a script that stays on
  torch_xla stays, with a todo); trainer flags follow the shared field map (a removed flag
  takes its value element with it, ``"--torch_compile", "true"`` is appended) when the list feeds a project
  script that parses Neuron training arguments (this file itself for ``sys.argv``/``parse_args``), as NM408; a
  flag of a removed script-only field (``--overwrite_output_dir``) that the script reads but no dataclass of it
  declares stays, with NM408's todo (its parser rejects the flag; removing it would change what the script does);
  for a script that stays on optimum-neuron after this run (NM408's ``kept``), its flags and bf16 variable stay,
  with NM408's todo, in command strings and argv lists alike;
* a dict turned into argv (``HP = {"zero_1": True, ...}`` read by ``for k, v in HP.items(): cmd += [f"--{k}",
  str(v)]``, a comprehension, ``"--" + k``, ``"--{}".format(k)``) in a function (or the module) whose argv list runs
  a Neuron trainer script: each key of a field its stock training arguments reject gets NM408's words as a todo
  (``HP["zero_1"] was left as it is: ...``); the dict stays as it is (it may be read elsewhere), and a dict for any
  other script, or never turned into flags, gets nothing;
* a ``neuron_parallel_compile`` pass or ``--command clear-locks`` (NM401 decides what a pass is) that is the
  whole value of a plain ``NAME = "..."`` (or f-string) assignment is deleted together with the statements using
  NAME, when those are all ``print(...)`` statements, statements running it (``subprocess.run``/``call``/
  ``check_call``/``check_output``/``Popen(NAME, ...)``, ``os.system``/``os.popen(NAME)``, through any import
  alias) and ``if`` statements testing such a run (``if os.system(NAME) != 0:``) whose branches only print,
  pass, raise or exit; at least one must run it, all must follow it in the same block, and the block must keep a
  statement. NAME must be bound once, not ``global``, not in ``__all__`` and not used in another notebook cell.
  A pass run inline (a string or argv list that is the whole pass) goes as below. Any other pass (through
  ``shlex.split(NAME)``, with its result assigned, a variable used otherwise) keeps a todo to delete the call that
  runs it;
* a command the shell rules delete as a whole (``optimum-cli neuron cache ...``, an in-place ``optimum-cli neuron
  consolidate``, a string or argv list holding only a compile-only pass) run by a statement of its own whose result is unused
  (``subprocess.run(["optimum-cli", "neuron", "cache", "synchronize", ...], check=True)``, ``os.system("...")``,
  through any import alias, no other argument calling anything): that statement is deleted (a block left empty gets
  ``pass``; an ``if`` left with nothing and a test that only tests goes); any other call (its result assigned or
  tested) keeps a todo saying that it still runs the command and must be deleted;
* backslash-newline continuations (a notebook's triple-quoted ``f\"\"\"...\"\"\"`` command over several lines)
  are edited: Python drops them from the value and a shell reads them as line continuations, so editing the
  source as shell text edits the command; any other backslash escape in a non-raw string (or an edit that would
  write one) leaves the literal as it is, with a ``todo`` naming the steps (each by its flag or variable; when
  the only edit was ``--torch_compile true``, that step); a literal with nothing to edit gets the shell rules'
  notes as they are (a setting kept with a todo, say), never nothing;
* a command that runs a project script the torch_xla rules leave on torch_xla as a whole (one it names, or, when
  it names none, as in ``f"... {run_command}"``, one a string of the file names, such as an argparse default)
  keeps what that script still needs (its pre-compile pass, XLA variables, trainer flags), with the launchers'
  todos; settings ahead of an interpolated command (``f"XLA_USE_BF16=1 {run_command}"``) are edited too;
* strings built by concatenation or ``%``/``.format`` pieces are only edited piece by piece;
* the environment a wrapper gives the commands it runs: ``env.setdefault("X", v)`` and ``env["X"] = v`` statements
  on a name bound only to a copy of ``os.environ`` (``env = os.environ.copy()``, ``dict(os.environ)``,
  ``{**os.environ}``) get what NM404 / NM405 give ``export X=v`` in a launcher: a variable NM404 removes
  (``CUSTOM_CACHE_REPO``, ``PJRT_DEVICE`` ...) set to a string literal is deleted (``fixed``), unless the
  project's code beside this file reads it, the file runs a script left on torch_xla, the value is computed (an
  option of the script, ``sys.argv[1]``) or the statement is its block's only one (then a ``todo``); a review
  variable (``NEURON_CC_FLAGS``, ``NEURON_COMPILE_CACHE_URL``, ``NEURON_RT_*``) keeps NM405's note (for
  ``NEURON_CC_FLAGS`` the flags to drop). A file left on torch_xla as a whole keeps them all. (``os.environ[...]``
  itself is NM316's.)

Why:

Launch commands often live in Python: ``neuron_parallel_compile`` or ``optimum-cli`` commands in strings run
through ``subprocess``/``os.system``, notebook cells that build a ``torchrun`` command. Left as they are, they
keep the XLA-era settings and flags that the shell rules remove from launch scripts.

Before::

    cmd = f"XLA_USE_BF16=1 torchrun --nproc_per_node={n} train.py"
    subprocess.run(["torchrun", "train.py", "--zero_1", "true"], check=True)
    if rc == 0 and args.sync_cache:
        subprocess.run(["optimum-cli", "neuron", "cache", "synchronize"], check=True)
    COMPILE_CMD = f"neuron_parallel_compile torchrun --nproc_per_node={n} train.py --max_steps 10"
    print(f"Running command: {COMPILE_CMD}")
    if subprocess.check_call(COMPILE_CMD, shell=True):
        print("There was an error with the compilation command")

After (train.py parses NeuronTrainingArguments; the cache push and the compile-only pass are gone, with their ``if``)::

    # neuron-migrate: XLA_USE_BF16 made torch_xla hold every fp32 tensor in bf16; removed: ...
    cmd = f"torchrun --nproc_per_node={n} train.py --bf16 true --torch_compile true"
    # neuron-migrate: --zero_1: ZeRO-1 has no stock switch ...
    subprocess.run(["torchrun", "train.py", "--torch_compile", "true"], check=True)

Safety: needs-review. The notes are those of the shell rules; a string left as it is (escapes, an interpolated
value the edit would drop) says which edits to make by hand. A deleted pass trained nothing (graph extraction
only); its ``fixed`` finding names the statements that went and why.

References:

* docs/rules-launch.md (the shell rules whose edits this applies)
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/neuron-sys-tools/neuron-parallel-compile.html
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
from dataclasses import dataclass
from typing import Sequence, cast

import libcst as cst

from codemods._lib.cst import source_of, string_value
from codemods._lib.launch_targets import (
    ENV_READS,
    KEPT_ON_OPTIMUM_TODO,
    NOT_TRAINERS,
    NOTEBOOK_SCRIPTS,
    OPTIMUM_NEURON_CODE,
    PARSER_SCRIPTS,
    STAYS_ON_XLA,
    Program,
    Resolved,
    Target,
    env_readers,
    parses_training_arguments,
    program_of,
    resolve_script,
    resolver,
    stays_on_xla,
)
from codemods._lib.shell import EmbeddedCommand, assignment_name, looks_like_command
from codemods._tables import env_vars
from codemods._tables.project_markers import MARKERS
from codemods.launch._base import (
    COMPILE_ADDED,
    COMPILE_TODO,
    LEFT_ON_XLA,
    NPC,
    OFF_VALUES,
    PLAIN_RUNS,
    READ_BY_PROJECT_TODO,
    UNSEEN_TARGET_TODO,
    as_step,
    flag_mapping,
    flag_plan,
    foreign_field,
    runs_elsewhere,
    unresolved_todo,
)
from codemods.launch.nm403_xla_bf16_env import BF16_ADDED, BF16_FLAG, KEPT_TODO, STAYS_TODO
from codemods.launch.nm403_xla_bf16_env import NAMES as BF16_NAMES
from codemods.launch.nm404_xla_era_env import XlaEraEnv
from codemods.launch.nm405_review_neuron_env import cc_flags_message
from codemods.launch.nm408_trainer_flags import READ_FIELD_TODO, NeuronTrainerFlags, bare_value_bool
from codemods.xla._base import XSER_LOADS
from migrate import cstwalk
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.registry import all_rules
from migrate.rule import PythonRule, Rule, Safety
from migrate.textdoc import Line, TextDocument

STRING_TRIGGERS = ("neuron_parallel_compile", "optimum-cli", "NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE",
                   "XLA_USE_BF16", "XLA_DOWNCAST_BF16", "PJRT_DEVICE", "--nproc_per_node", "--nproc-per-node",
                   "--tensor_parallel_size", "--tensor-parallel-size", "--use_cpu", "--use-cpu")

#: the copies of os.environ whose settings NM410 reads (``_environ_copies``)
ENV_COPY_TRIGGERS = ("os.environ.copy()", "dict(os.environ)", "**os.environ")


def command_rules(selected: frozenset[str] | None) -> list[type[Rule]]:
    """The rules that can edit a command string inside Python (those defining ``edit_command``, see
    ``EmbeddedCommand``), in id order, limited to the run's selection (``selected``: rule ids; None: all)."""
    return [rule for rule in all_rules() if callable(getattr(rule, "edit_command", None))
            and (selected is None or rule.id in selected)]


def edit_shell_text(text: str, rules: Sequence[type[Rule]],
                    embedded: EmbeddedCommand = EmbeddedCommand()) -> tuple[str, list[tuple[Severity, str]]]:
    """The shell edits of ``rules`` applied to one command string (as in a Python literal); the findings come back
    as (severity, message) without line information."""
    doc = TextDocument(text, FileKind.SHELL)
    found: list[tuple[Severity, str]] = []

    def report(line: Line, severity: Severity, message: str) -> None:
        found.append((severity, " ".join(message.split())))

    for rule in rules:
        rule.edit_command(doc, report, embedded)  # type: ignore[attr-defined]  # see command_rules
    return doc.text(), found


_Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement
_PLACEHOLDER = "__nm_expr_{}__"
_SCRIPT_NAME = re.compile(r"[\w./-]+\.py\b")  # a Python script a command (or a string of the file) names
ESCAPES_TODO = "this {what} holds a Neuron launch command but has escapes, so it was left as it is: edit it by hand"
#: a backslash of a literal's source that is not a backslash-newline
_OTHER_ESCAPE = re.compile(r"\\(?!\r?\n)")
_PREFIX = re.compile(r"^([rRbBuUfF]*)('''|\"\"\"|'|\")")
_LAUNCHERS = {"python", "python3", "torchrun", "accelerate", "srun", "mpirun", "env", "bash", "sh", "deepspeed"}


def _split_literal(raw: str) -> tuple[str, str, str] | None:
    match = _PREFIX.match(raw)
    if not match:
        return None
    prefix, quote = match.groups()
    return prefix, quote, raw[len(prefix) + len(quote):len(raw) - len(quote)]


class CommandsInPythonStrings(PythonRule):
    """Apply the launch-layer shell edits to command strings and argv lists inside Python code."""

    id = "NM410"
    name = "neuron-commands-in-python-strings"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    triggers = STRING_TRIGGERS + ("pip install",) + ENV_COPY_TRIGGERS
    facts = (PARSER_SCRIPTS, NOTEBOOK_SCRIPTS, PLAIN_RUNS, ENV_READS, STAYS_ON_XLA, XSER_LOADS, OPTIMUM_NEURON_CODE)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.argv_lists: set[int] = set()  # lists this file's own parser reads (sys.argv = [...], parse_args([...]))
        self.command_lists: set[int] = set()  # lists run as a command (subprocess.run([...]), os.execvp(...))
        self.deleted: set[int] = set()  # statements of compile-only passes held in a variable (see _emptied)
        self.spaced: set[int] = set()  # the blocks they are in (see _spaced)
        # a training script that stays on optimum-neuron after this run is marked kept: its flags stay (as NM408's)
        self.resolve = resolver(ctx.options.project, ctx.path, ctx.options)
        folder = ctx.path.parent.as_posix()
        # the same edits as in a launcher, by the rules this run selected (--select/--ignore mean the same here)
        self.rules = command_rules(ctx.options.rules)
        self.maps_flags = NeuronTrainerFlags in self.rules  # argv lists: NM408's flag map, when NM408 is selected
        self.embedded = EmbeddedCommand(self.resolve, runs_elsewhere(ctx.options.project),
                                        env_readers(ctx.options.project, ["" if folder == "." else folder]),
                                        self._stays_on_xla)

    def _stays_on_xla(self, command: str) -> tuple[str, str] | None:
        """(script, why) of a script of the project that stays on torch_xla and that ``command`` runs: one it names,
        or, when it names none (``f"... {run_command}"``), one that a string of this file names (an argparse
        default such as ``"train_neuron.py"``): the command may well run it, so what it still needs stays."""
        project = self.ctx.options.project
        names = _SCRIPT_NAME.findall(command)
        if not names:
            module = self.ctx.shared.get("module")
            names = _SCRIPT_NAME.findall(module.code) if module is not None else []
        for name in dict.fromkeys(names):
            resolved = resolve_script(project, self.ctx.path, name)
            labels = stays_on_xla(project, resolved.path)
            if labels:
                return posixpath.basename(name), LEFT_ON_XLA.format(labels=", ".join(labels), path=resolved.path)
        return None

    # ---------------------------------------------------------------------------------- strings

    def _edit(self, original: cst.CSTNode, body: str, continued: bool = False) -> str | None:
        """The edited source text of a literal's body (None: unchanged); ``continued``: a non-raw literal whose
        backslashes are all line continuations, which the edit must leave the only escapes."""
        if not any(trigger in body for trigger in self.triggers) or not looks_like_command(body):
            return None
        new, found = edit_shell_text(body, self.rules, self.embedded)
        if new != body and not new.strip():
            self._emptied(original, found, body)
            return None
        if continued and new != body and not _only_line_continuations(new):
            self.todo(original, _escapes_todo("string", found))
            return None
        for severity, message in found:
            (self.fixed if severity is Severity.FIXED else self.todo)(original, message)
        return new if new != body else None

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.BaseExpression:
        parts = _split_literal(updated.value)
        if parts is None or "b" in parts[0].lower():
            return updated
        prefix, quote, body = parts
        if not body.strip() or len(body.split()) == 1:
            return updated  # one word: an argv element (see leave_List), not a command line
        if not any(trigger in body for trigger in self.triggers) or not looks_like_command(body):
            return updated
        escaped = "\\" in body and "r" not in prefix.lower()
        if escaped and not _only_line_continuations(body):
            new, found = edit_shell_text(body, self.rules, self.embedded)
            if new != body:
                self.todo(original, _escapes_todo("string", found))
            else:  # nothing to edit, only notes (a setting kept with a todo): they hold for the string as it is
                for _, message in found:
                    self.todo(original, message)
            return updated
        edited = self._edit(original, body, continued=escaped)
        return updated if edited is None else updated.with_changes(value=f"{prefix}{quote}{edited}{quote}")

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.BaseExpression:
        texts: list[str] = []
        expressions: list[cst.FormattedStringExpression] = []
        for part in updated.parts:
            if isinstance(part, cst.FormattedStringText):
                texts.append(part.value)
            else:  # the only other kind of part
                texts.append(_PLACEHOLDER.format(len(expressions)))
                expressions.append(cast(cst.FormattedStringExpression, part))
        body = "".join(texts)
        if not any(trigger in body for trigger in self.triggers) or not looks_like_command(body):
            return updated
        new, found = edit_shell_text(body, self.rules, self.embedded)
        sources = {_PLACEHOLDER.format(index): "{" + source_of(part.expression) + "}"
                   for index, part in enumerate(expressions)}
        found = [(severity, re.sub(r"__nm_expr_\d+__", lambda m: sources.get(m.group(0), m.group(0)), message))
                 for severity, message in found]
        escaped = "\\" in body and "r" not in updated.start.lower()
        if escaped and (not _only_line_continuations(body) or not _only_line_continuations(new)):
            if new != body:
                self.todo(original, _escapes_todo("f-string", found))
            else:  # nothing to edit, only notes: they hold for the string as it is
                for _, message in found:
                    self.todo(original, message)
            return updated
        if new == body:
            for severity, message in found:
                self.todo(original, message)
            return updated
        if not new.strip():
            self._emptied(original, found, re.sub(r"__nm_expr_\d+__", lambda m: sources.get(m.group(0), m.group(0)), body))
            return updated
        placeholders = re.findall(r"__nm_expr_(\d+)__", new)
        if placeholders != [str(index) for index in range(len(expressions))]:
            self.todo(original, "this f-string holds a Neuron launch command whose edit would drop an interpolated "
                      "value: " + "; ".join(message for _, message in found[:2]))
            return updated
        for severity, message in found:
            (self.fixed if severity is Severity.FIXED else self.todo)(original, message)
        parts: list[cst.BaseFormattedStringContent] = []
        for index, chunk in enumerate(re.split(r"__nm_expr_\d+__", new)):
            if chunk:
                parts.append(cst.FormattedStringText(chunk))
            if index < len(expressions):
                parts.append(expressions[index])
        return updated.with_changes(parts=parts)

    # ------------------------------------------------------------- a compile-only pass held in a variable

    def _emptied(self, original: cst.CSTNode, found: list[tuple[Severity, str]], body: str = "") -> None:
        """A command literal the shell edits would empty: when it is the value of ``NAME = <literal>`` and every
        use of NAME goes with it (see ``_pass_statements``), those statements are deleted; else a todo says to."""
        if self._drop_run(original, body, found):
            return
        plan = self._pass_statements(original)
        if plan is None:
            self.todo(original, _empty_command_todo(found))
            return
        assignment, uses, block = plan
        self.deleted.update(id(statement) for statement in (assignment, *(use.statement for use in uses)))
        self.spaced.add(id(block))
        self.fixed(assignment, _pass_deleted(cast(cst.Assign, assignment.body[0]), uses, found))

    def _drop_run(self, command: cst.CSTNode, text: str, found: list[tuple[Severity, str]]) -> bool:
        """Delete the statement running ``command`` (a literal or argv list the shell rules would empty; ``text``:
        its text as a shell line) when it is a statement of its own whose result is unused:
        ``subprocess.run([...], check=True)``, ``os.system("...")``, through any import alias, with no argument
        (nor element of the command) calling anything but a lookup (``env.get(...)``, ``str(n)``, ``os.path.join``). A block left empty gets ``pass``, an ``if`` left with nothing is dropped
        (the traversal does both). False, nothing changed, otherwise (its result assigned or tested, a call inside
        an expression): the caller keeps a todo."""
        stack = self.ctx.statement_stack
        line = stack[-1] if stack else None
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
            return False
        call = line.body[0].value
        if not isinstance(call, cst.Call) or not self.ctx.matches(call.func, RUN_CALLS) or any(arg.star for arg in call.args):
            return False
        ran = next((arg.value for arg in call.args if arg.keyword is None), None)
        if ran is None:
            ran = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in _COMMAND_KEYWORDS), None)
        if ran is not command or any(cstwalk.find(arg.value, _acts) for arg in call.args):
            return False
        self.deleted.add(id(line))
        block = self._block_of(line)
        if block is not None:
            self.spaced.add(id(block))
        self.fixed(line, _run_deleted(source_of(call.func), text, found))
        return True

    def _block_of(self, statement: cst.CSTNode) -> cst.CSTNode | None:
        """The module or indented block whose statements include ``statement``."""
        module = self.ctx.shared.get("module")
        stack: list[cst.CSTNode] = [module] if module is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Module, cst.IndentedBlock)) and any(each is statement for each in node.body):
                return node
            if not isinstance(node, cst.SimpleStatementLine):
                stack.extend(node.children)
        return None

    def _pass_statements(self, literal: cst.CSTNode) -> tuple[cst.SimpleStatementLine, list[_Use],
                                                               cst.CSTNode] | None:
        """(the assignment, the statements using its name, the block holding them) when ``literal`` is the whole
        value of a plain ``NAME = <literal>`` statement and the pass can go with every use of NAME: NAME is bound
        nowhere else, is not named in a string (``__all__``, ``globals()[...]``) nor in another notebook cell, and
        each use is a statement after the assignment in the same block (not inside a ``try``, a loop or a
        function): a ``print(...)``, a statement running it (``subprocess.check_call(NAME, shell=True)``,
        ``os.system(NAME)``) or an ``if`` testing such a run whose branches only print, pass, raise or exit; at
        least one runs it, and the block keeps a statement. Else None."""
        stack = self.ctx.statement_stack
        module = self.ctx.shared.get("module")
        line = stack[-1] if stack else None
        if module is None or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        assign = line.body[0]
        if not isinstance(assign, cst.Assign) or assign.value is not literal or len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        if not isinstance(target, cst.Name):
            return None
        name = target.value
        namespace = self.ctx.namespace
        word = re.compile(rf"\b{re.escape(name)}\b")
        if namespace is not None and len(word.findall(namespace.trigger_text)) > len(word.findall(self.ctx.source)):
            return None  # another cell uses it
        walked = _walk(module, name)
        if walked is None:
            return None  # the name is spelled in a string
        occurrences, order, parents = walked
        block = parents[id(line)]
        uses: dict[int, _Use] = {}
        for occurrence, ancestors in occurrences:
            if occurrence is target:
                continue
            use = next((use for index, node in enumerate(ancestors)
                        if (use := self._use(node, name, ancestors[:index])) is not None), None)
            if use is None or parents[id(use.statement)] is not block or order[id(use.statement)] < order[id(line)]:
                return None  # used otherwise, elsewhere (another block, another function) or before
            uses[id(use.statement)] = use
        if not any(use.runs for use in uses.values()):
            return None  # a string nobody runs here is not this rule's to delete
        if any(cstwalk.find(use.statement, self._holds_command) for use in uses.values()):
            return None  # a use holding a command of its own: that one is edited (or noted) where it is
        if 1 + len(uses) == len(cast(cst.Module | cst.IndentedBlock, block).body):
            return None  # the block (a function's or an if's body, or the whole file or cell) would be left empty
        return line, sorted(uses.values(), key=lambda use: order[id(use.statement)]), block

    def _holds_command(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is a string literal (or an argv list) this rule would edit or note."""
        if isinstance(node, cst.List):
            return any(trigger in value for element in node.elements
                       if (value := string_value(element.value)) is not None for trigger in self.triggers)
        if isinstance(node, cst.SimpleString):
            body = string_value(node) or ""
        elif isinstance(node, cst.FormattedString):
            body = "".join(part.value if isinstance(part, cst.FormattedStringText) else _PLACEHOLDER.format(0)
                           for part in node.parts)
        else:
            return False
        return any(trigger in body for trigger in self.triggers) and looks_like_command(body)

    def _use(self, node: cst.CSTNode, name: str, ancestors: Sequence[cst.CSTNode]) -> _Use | None:
        """``node`` as a statement that uses ``name`` in one of the ways that let it go with the pass, else None."""
        if not ancestors or not isinstance(ancestors[-1], (cst.Module, cst.IndentedBlock)):
            return None  # an elif, or a statement on the line of a compound one
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 and isinstance(node.body[0], cst.Expr):
            value = node.body[0].value
            if _is_print(value):
                return _Use(node, False, "print")
            if self._runs(value, name):
                return _Use(node, True, _shown(cast(cst.Call, value), name))
            return None
        if isinstance(node, cst.If) and self._runs(tested := _run_tested(node.test), name) and self._only_reports(node):
            return _Use(node, True, "the if on " + _shown(cast(cst.Call, tested), name))
        return None

    def _runs(self, node: cst.BaseExpression, name: str) -> bool:
        """Whether ``node`` is a call that runs the command ``name`` holds (``subprocess.run(name, ...)``,
        ``os.system(name)``, any alias the file's imports give them)."""
        if not isinstance(node, cst.Call) or not self.ctx.matches(node.func, RUN_CALLS):
            return False
        command = next((arg.value for arg in node.args if arg.keyword is None and not arg.star), None)
        if command is None:
            command = next((arg.value for arg in node.args
                            if arg.keyword is not None and arg.keyword.value in _COMMAND_KEYWORDS), None)
        return isinstance(command, cst.Name) and command.value == name

    def _only_reports(self, node: cst.If) -> bool:
        """Whether every branch of ``node`` only prints, passes, raises or exits, and no elif test calls anything."""
        branch: cst.If | cst.Else | None = node
        while branch is not None:
            if isinstance(branch, cst.If) and branch is not node and cstwalk.find(
                    branch.test, lambda n: isinstance(n, _SIDE_EFFECTS)):
                return False
            body = branch.body
            lines = body.body if isinstance(body, cst.IndentedBlock) else [body]
            for statement in lines:
                if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                    return False
                if not all(isinstance(small, (cst.Pass, cst.Raise)) or isinstance(small, cst.Expr) and (
                        _is_print(small.value) or self._exits(small.value)) for small in statement.body):
                    return False
            branch = branch.orelse if isinstance(branch, cst.If) else None
        return True

    def _exits(self, node: cst.BaseExpression) -> bool:
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Name) and node.func.value in ("exit", "quit"):
            return node.func.value not in self.ctx.imports.bindings and node.func.value not in self.ctx.imports.defined
        return self.ctx.matches(node.func, ("sys.exit",)) is not None

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        return cst.RemoveFromParent() if id(original) in self.deleted else updated

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.BaseStatement | cst.RemovalSentinel:
        return cst.RemoveFromParent() if id(original) in self.deleted else updated

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = self._spaced(original, updated.body)
        return updated if body is None else updated.with_changes(body=body)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = self._spaced(original, updated.body)
        return updated if body is None else updated.with_changes(body=body)

    def _spaced(self, original: cst.Module | cst.IndentedBlock,
                updated: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
        """The block's new statements with the blank lines that opened a run of deleted statements moved to the
        statement after it (``import os`` / blank / deleted pass / next statement: the blank line stays), unless
        that one opens with a blank line already; None when no pass was deleted here or another rule added or
        removed statements of the block."""
        if id(original) not in self.spaced:
            return None
        if len([statement for statement in original.body if id(statement) not in self.deleted]) != len(updated):
            return None
        body = list(updated)
        blanks: list[cst.EmptyLine] | None = None  # None: not in a run of deleted statements
        index = 0
        for statement in original.body:
            if id(statement) in self.deleted:
                if blanks is None:
                    lines = cast(_Statement, statement).leading_lines
                    blanks = list(itertools.takewhile(lambda line: line.comment is None, lines))
                continue
            kept = cast(_Statement, body[index])
            if blanks and not (kept.leading_lines and kept.leading_lines[0].comment is None):
                body[index] = kept.with_changes(leading_lines=[*blanks, *kept.leading_lines])
            blanks = None
            index += 1
        return body

    # ------------------------------------------------------------------------ environment copies (rt8P-08)

    def visit_Module(self, node: cst.Module) -> None:
        # a file left on torch_xla as a whole keeps the environment of what it runs (as NM316 leaves its settings)
        kept = stays_on_xla(self.ctx.options.project, self.ctx.path.as_posix())
        self.env_copies = frozenset() if kept else _environ_copies(node)
        self.argv_dicts = {} if kept or not self.maps_flags else self._argv_dicts(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        setting = _env_copy_setting(node, getattr(self, "env_copies", frozenset()))
        if setting is not None:
            self._env_copy_setting(node, *setting)

    def _env_copy_setting(self, node: cst.SimpleStatementLine, name: str, value: cst.BaseExpression) -> None:
        """``env.setdefault("X", v)`` / ``env["X"] = v`` on a dict copied from ``os.environ`` (the environment a
        wrapper gives the command it runs): what NM404 / NM405 do to ``export X=v`` in a launcher."""
        action = env_vars.lookup(name)
        if action is None or action.action == "keep" or name in BF16_NAMES:
            return
        selected = self.ctx.options.rules
        if action.action == "review":
            if selected is None or "NM405" in selected:
                literal = string_value(value) if isinstance(value, cst.SimpleString) else None
                self.todo(node, cc_flags_message(literal) if name == "NEURON_CC_FLAGS"
                          else env_vars.message_for(name, action))
            return
        if not (XlaEraEnv in self.rules and XlaEraEnv.owns_env(name)):
            return
        message = env_vars.message_for(name, action)
        readers = self.embedded.readers(name)
        unseen = self._stays_on_xla("")
        block = cast("cst.Module | cst.IndentedBlock | None", self._block_of(node))
        if readers:
            self.todo(node, READ_BY_PROJECT_TODO.format(name=name, readers=", ".join(readers),
                                                        s="s" if len(readers) == 1 else "", ))
        elif unseen is not None:
            self.todo(node, UNSEEN_TARGET_TODO.format(name=name, script=unseen[0], why=unseen[1]))
        elif action.action != "remove":
            self.todo(node, as_step(message))  # a rename: the setting and the code reading the new name move together
        elif not isinstance(value, cst.SimpleString):
            self.todo(node, f"{name} was left as it is: its value ({source_of(value)}) is computed here, maybe from "
                            f"an option of this script; {as_step(message)}")
        elif block is None or not any(statement is not node and id(statement) not in self.deleted
                                      for statement in block.body):
            self.todo(node, f"{name} was left as it is: it is the only statement of its block; {as_step(message)}")
        else:
            self.deleted.add(id(node))
            self.spaced.add(id(block))
            (self.todo if action.todo else self.fixed)(node, message)

    # ------------------------------------------------------------------- dicts turned into argv (rtA-04)

    def _argv_dicts(self, module: cst.Module) -> dict[int, tuple[str, Resolved]]:
        """id(dict display) -> (its name, the Neuron trainer script it is passed to as ``--key value`` flags): a
        ``NAME = {...}`` of the module or of a function that a loop or comprehension of that function (or of the
        module) turns into flags (``for k, v in NAME.items(): cmd += [f"--{k}", str(v)]``), where an argv list of the
        same scope runs a script of the project that parses Neuron training arguments (and does not stay on
        optimum-neuron after this run: that list gets NM408's kept todo)."""
        found: dict[int, tuple[str, Resolved]] = {}
        module_dicts = _dict_bindings(module)
        scopes: list[cst.CSTNode] = [module]
        scopes += [node for node in _scope_nodes(module, nested=True) if isinstance(node, cst.FunctionDef)]
        for scope in scopes:
            nodes = list(_scope_nodes(scope))
            turned = {name for node in nodes for name in _dict_flag_loops(node)}
            if not turned:
                continue
            resolved = next((r for node in nodes if isinstance(node, cst.List)
                             and (r := self._list_target(node)) is not None), None)
            if resolved is None:
                continue
            bindings = {**module_dicts, **(_dict_bindings(scope) if scope is not module else {})}
            for name in turned:
                if name in bindings:
                    found[id(bindings[name])] = (name, resolved)
        return found

    def _list_target(self, node: cst.List) -> Resolved | None:
        """The Neuron trainer script an argv list runs (``["torchrun", ..., "-m", "clm.train"]``), else None."""
        words = [string_value(element.value) or "" for element in node.elements]
        if not any(word.endswith(".py") or word in _LAUNCHERS for word in words):
            return None
        program = program_of(words)
        if program is None or program.kind == "program":
            return None
        resolved = self.resolve(program)
        return resolved if resolved.target is Target.NEURON and not resolved.kept else None

    def visit_Dict(self, node: cst.Dict) -> None:
        target = getattr(self, "argv_dicts", {}).get(id(node))
        if target is None:
            return
        name, resolved = target
        for element in node.elements:
            key = string_value(element.key) if isinstance(element, cst.DictElement) else None
            mapping = flag_mapping("--" + key) if key else None
            if mapping is None or key is None:
                continue
            flag = "--" + key
            read = resolved.reads(mapping.source)
            if read is not None:
                self.todo(element, READ_FIELD_TODO.format(flag=flag, script=resolved.name, read=read, field=mapping.source))
                continue
            if resolved.owns(mapping.source):
                continue
            plan = flag_plan(mapping, flag, _flag_value(element.value))
            if plan is None:
                continue
            step = as_step(plan.message)
            step = step[len(flag) + 2:] if step.startswith(flag + ": ") else step
            if plan.words and step == plan.message:
                step = f"rename the key ({step})"
            self.todo(element, DICT_FLAG_TODO.format(key=key, name=name, flag=flag, script=resolved.name, step=step))

    # ------------------------------------------------------------------------------------ argv lists

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(self._is_sys_argv(target.target) for target in node.targets) and isinstance(node.value, cst.List):
            self.argv_lists.add(id(node.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._is_sys_argv(node.target) and isinstance(node.value, cst.List):
            self.argv_lists.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name.startswith("parse_args") or name in {"run", "call", "check_call", "check_output", "Popen", "execvp", "execv"}:
            for arg in node.args:
                if isinstance(arg.value, cst.List):
                    (self.argv_lists if name.startswith("parse_args") else self.command_lists).add(id(arg.value))

    def _removes_env(self, name: str) -> bool:
        """Whether a selected rule removes the variable ``name`` (see ``owns_env``)."""
        return any(owns(name) for rule in self.rules if callable(owns := getattr(rule, "owns_env", None)))

    def _is_sys_argv(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Attribute) and node.attr.value == "argv" and "sys" in {
            *self.ctx.qualnames(node.value), getattr(node.value, "value", "")}

    def leave_List(self, original: cst.List, updated: cst.List) -> cst.BaseExpression:
        values = [string_value(element.value) for element in original.elements]
        strings = [value for value in values if value is not None]
        if not strings:
            return updated
        if strings[0].rsplit("/", 1)[-1] == "optimum-cli" and values[0] is not None:
            command = shlex.join(value for value in values if value is not None)
            new, found = edit_shell_text(command, self.rules)
            if found and not new.strip():  # the shell rules delete this command: the call running it goes, or a todo
                if not self._drop_run(original, command, found):
                    self.todo(original, _still_runs_todo(command, found))
                return updated
            for _, message in found:
                self.todo(original, message)
            return updated
        own_argv = id(original) in self.argv_lists
        argv_like = own_argv or id(original) in self.command_lists or any(
            value.endswith(".py") or value in _LAUNCHERS for value in strings)
        if NPC not in strings and not argv_like:
            return updated
        if any(value is not None and value.endswith(NPC) and " " not in value for value in values):
            # a pre-compile pass as an argv list: the call that runs it is the user's to delete (see edit_npc)
            command = shlex.join(value for value in values if value is not None)
            new, found = edit_shell_text(command, self.rules, EmbeddedCommand(self.resolve, self.embedded.runs_elsewhere))
            if found and not new.strip() and self._drop_run(original, command, found):
                return updated  # the whole list is the pass and its call a statement of its own
            for severity, message in found:
                if NPC in message:
                    self.todo(original, message.replace("deleted this", "delete the call that runs this")
                              .replace("deleted `", "delete the call that runs `"))
            return updated
        drop: set[int] = set()
        renames: dict[int, list[str]] = {}
        self.add_bf16 = False
        add_compile = argv_like and self._argv_edits(original, values, own_argv, drop, renames)
        if not drop and not renames and not add_compile:
            return updated
        elements: list[cst.BaseElement] = []
        for index, element in enumerate(updated.elements):
            if index in drop:
                continue
            if index in renames and isinstance(element.value, cst.SimpleString):
                # a SimpleString's text always starts with a prefix and a quote
                prefix, quote, _ = cast(tuple[str, str, str], _split_literal(element.value.value))
                for word in renames[index]:
                    elements.append(element.with_changes(value=cst.SimpleString(f"{prefix}{quote}{word}{quote}")))
                continue
            elements.append(element)
        if self.add_bf16:  # an XLA bf16 variable went: the script keeps training in bf16
            elements = _with_words(elements, updated.elements, BF16_FLAG.split())
        if add_compile:
            elements = _with_torch_compile(elements, updated.elements)
        if elements and updated.elements and elements[-1] is not updated.elements[-1]:
            elements[-1] = elements[-1].with_changes(comma=updated.elements[-1].comma)
        return updated.with_changes(elements=elements)

    def _carry_bf16(self, original: cst.List, name: str, resolved, arguments: list[str]) -> bool:
        """Whether the XLA bf16 variable ``name`` of an argv list can go: the list's script parses TrainingArguments,
        so ``--bf16 true`` is appended (unless it passes --bf16/--fp16 already); otherwise a todo says why it stays."""
        if not parses_training_arguments(resolved):
            why = f"{resolved.name} is not known to parse TrainingArguments, so it may not take --bf16"
            self.todo(original, KEPT_TODO.format(name=name, why=why))
            return False
        if not any(word.split("=", 1)[0] in ("--bf16", "--fp16") for word in arguments):
            self.add_bf16 = True
            self.fixed(original, BF16_ADDED.format(names=name, them="it"))
        return True

    def _argv_edits(self, original: cst.List, values: list[str | None], own_argv: bool, drop: set[int],
                    renames: dict[int, list[str]]) -> bool:
        """Environment assignments and trainer flags of an argv list; the flags only when the list feeds a script
        of the project that parses Neuron training arguments (this file for its own ``sys.argv``/``parse_args``).
        True when ``--torch_compile true`` must be added."""
        words = [value if value is not None else "" for value in values]
        program = None if own_argv else program_of(words)
        if own_argv:
            resolved, start = self.resolve(Program("script", self.ctx.path.name, -1)), 0
            if resolved.target is not Target.NEURON and words[0].endswith(".py"):  # sys.argv[0] names the program
                resolved, start = self.resolve(Program("script", words[0], 0)), 1
        elif program is None or program.kind == "program" and program.name in NOT_TRAINERS:
            return False
        else:
            resolved, start = self.resolve(program), program.start + 1
        kept_flags = False  # flags of a script that stays on optimum-neuron after this run: left, one todo
        for index, value in enumerate(values):
            if value is None or index in drop:
                continue
            name = assignment_name(value)
            if name and index < start:
                action = env_vars.lookup(name)
                if action is not None and action.action == "remove" and self._removes_env(name):
                    setting = value.split("=", 1)[1].strip().lower()
                    unseen = self._stays_on_xla(" ".join(words)) if setting not in OFF_VALUES | {""} else None
                    if unseen is not None:
                        self.todo(original, UNSEEN_TARGET_TODO.format(name=name, script=unseen[0], why=unseen[1]))
                        continue
                    if name in BF16_NAMES and setting not in OFF_VALUES | {""} and resolved.kept:
                        self.todo(original, KEPT_TODO.format(name=name, why=STAYS_TODO.format(script=resolved.name)))
                        continue
                    if name in BF16_NAMES and setting not in OFF_VALUES | {""} and not self._carry_bf16(
                            original, name, resolved, words[start:]):
                        continue
                    drop.add(index)
                    (self.todo if action.todo else self.fixed)(original, env_vars.message_for(name, action))
                continue
            if not self.maps_flags:
                continue
            if resolved.kept and index >= start:
                kept_flags = kept_flags or flag_mapping(value.partition("=")[0]) is not None
                continue
            if index < start or resolved.target is Target.OTHER and not (resolved.script is not None and resolved.script.stock):
                continue
            flag, eq, inline = value.partition("=")
            following = values[index + 1] if index + 1 < len(values) else None
            has_value = not eq and index + 1 < len(values) and not (following or "").startswith("-")
            bare = bare_value_bool(resolved, flag, bool(eq) or has_value)
            if bare is not None and bare.words:
                self.fixed(original, bare.message)
                renames[index] = bare.words
                continue
            mapping = flag_mapping(flag)
            # a removed script-only field the script reads but no dataclass of it declares: the flag stays (it
            # decides what the script does) and the parser rejects it, as NM408 says for shell launchers
            read = resolved.reads(mapping.source) if mapping is not None else None
            if read is not None and mapping is not None and (resolved.target is Target.NEURON or resolved.feeds(mapping.source)):
                shown = value if eq or not has_value or following is None else f"{value} {following}"
                self.todo(original, READ_FIELD_TODO.format(flag=shown, script=resolved.name, read=read, field=mapping.source))
                continue
            if mapping is None or resolved.owns(mapping.source) or (resolved.target is Target.OTHER and not resolved.feeds(mapping.source)):
                continue
            plan = flag_plan(mapping, flag, inline if eq else (following if has_value else None))
            if plan is None:
                continue
            if resolved.target is Target.UNKNOWN:
                if foreign_field(mapping, resolved.name):
                    continue
                shown = value if eq or not has_value or following is None else f"{value} {following}"
                self.todo(original, unresolved_todo(shown, resolved.name, mapping.source, plan.message))
                continue
            (self.fixed if plan.severity is Severity.FIXED else self.todo)(original, plan.message)
            if plan.words:
                renames[index] = plan.words if not (eq and len(plan.words) == 1) else [plan.words[0] + "=" + inline]
            else:
                drop.add(index)
            if plan.consume_value and has_value:
                drop.add(index + 1)  # the value goes with its flag, whatever expression it is
        if kept_flags or (resolved.kept and self.maps_flags and resolved.target is Target.NEURON):
            self.todo(original, KEPT_ON_OPTIMUM_TODO.format(script=resolved.name))
            return False
        if self.maps_flags and resolved.target is Target.NEURON and not any(
                (value or "").split("=", 1)[0] in ("--torch_compile", "--torch-compile") for value in values):
            self.fixed(original, COMPILE_ADDED)
            return True
        return False


DICT_FLAG_TODO = ('{name}["{key}"] was left as it is: this file passes {name} to {script} as {flag}, which its stock '
                  'training arguments reject once migrated: {step}')


def _scope_nodes(scope: cst.CSTNode, nested: bool = False):
    """The nodes under ``scope``, not those of the functions, classes and lambdas it holds (all of them: ``nested``)."""
    stack = list(reversed(scope.children))
    while stack:
        node = stack.pop()
        yield node
        if nested or not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(reversed(node.children))


def _dict_bindings(scope: cst.CSTNode) -> dict[str, cst.Dict]:
    """``NAME = {...}`` of ``scope`` (string keys only) bound once there, by name."""
    bound: dict[str, list[cst.BaseExpression]] = {}
    for node in _scope_nodes(scope):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    bound.setdefault(target.target.value, []).append(node.value)
    return {name: cast(cst.Dict, values[0]) for name, values in bound.items() if len(values) == 1
            and isinstance(values[0], cst.Dict) and all(isinstance(element, cst.DictElement)
                                                         and string_value(element.key) for element in values[0].elements)}


def _dict_flag_loops(node: cst.CSTNode) -> list[str]:
    """The dict names a ``for`` loop or a comprehension turns into ``--key`` words: it iterates ``NAME.items()``
    (``NAME``, ``NAME.keys()``) and its body builds ``f"--{key}"``, ``"--" + key`` or ``"--{}".format(key)``."""
    target: cst.BaseExpression
    if isinstance(node, cst.For):
        target, iterated, body = node.target, node.iter, cast(cst.CSTNode, node.body)
    elif isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        target, iterated, body = node.for_in.target, node.for_in.iter, cast(cst.CSTNode, node.elt)
    else:
        return []
    method = ""
    if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Attribute) and not iterated.args:
        method, iterated = iterated.func.attr.value, iterated.func.value
    if not isinstance(iterated, cst.Name) or method not in ("", "items", "keys"):
        return []
    if method == "items":
        if not isinstance(target, cst.Tuple) or not target.elements:
            return []
        target = target.elements[0].value
    if not isinstance(target, cst.Name):
        return []
    key = target.value

    def uses_key(expression: cst.CSTNode) -> bool:
        return cstwalk.find(expression, lambda n: isinstance(n, cst.Name) and n.value == key)

    def flag(n: cst.CSTNode) -> bool:
        if isinstance(n, cst.FormattedString) and len(n.parts) > 1 and isinstance(n.parts[0], cst.FormattedStringText):
            return n.parts[0].value.endswith("--") and uses_key(n.parts[1])
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Add):
            return (string_value(n.left) or "").endswith("--") and uses_key(n.right)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "format":
            return (string_value(n.func.value) or "").startswith("--{") and any(uses_key(arg) for arg in n.args)
        return False

    return [iterated.value] if cstwalk.find(body, flag) else []


def _flag_value(node: cst.BaseExpression) -> str | None:
    """The word a dict value becomes after its flag (a literal), None for a boolean (the flag alone) or an expression."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.value
    return string_value(node)


def _only_line_continuations(source: str) -> bool:
    """Whether every backslash of a non-raw literal's source text ends its line. Python drops a backslash-newline
    from the value and a shell reads it as a line continuation, so editing such a source as shell text is editing
    the command the value holds (a notebook's triple-quoted f-string command whose lines end in a backslash)."""
    return _OTHER_ESCAPE.search(source) is None


def _steps(found: list[tuple[Severity, str]]) -> str:
    """The edits a string left as it is needs, as steps. --torch_compile is left out: whether it is added depends on
    whether the script still parses Neuron arguments, which a first run changes (the note must read the same then)."""
    return "; ".join(as_step(message) for _, message in found
                     if message not in (COMPILE_ADDED, COMPILE_TODO))


def _escapes_todo(what: str, found: list[tuple[Severity, str]]) -> str:
    """The todo for a command literal the shell edits would change but whose escapes keep it as it is: the steps by
    name; when the only edit was --torch_compile (left out of the steps, see ``_steps``), that one."""
    steps = _steps(found)
    if steps:
        return ESCAPES_TODO.format(what=what) + f" ({steps})"
    return ESCAPES_TODO.format(what=what).replace("edit it by hand", COMPILE_TODO)


#: calls an argument of a deleted run may hold: they only read (``env.get("REPO")``, ``str(n)``, ``os.path.join``)
_LOOKUPS = {"str", "int", "float", "repr", "len", "get", "getenv", "join", "basename", "dirname", "abspath", "format"}


def _acts(node: cst.CSTNode) -> bool:
    """Whether ``node`` does something that deleting it would undo (a call other than a lookup, await, yield, :=)."""
    if isinstance(node, cst.Call):
        func = node.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        return name not in _LOOKUPS
    return isinstance(node, _SIDE_EFFECTS)


def _words_shown(command: str) -> str:
    """A command as a message names it: its first four words, ``...`` for the rest."""
    words = command.split()
    return " ".join(words[:4]) + (" ..." if len(words) > 4 else "")


def _reason(found: list[tuple[Severity, str]]) -> str:
    """Why the shell rules delete the command (the part of their message after ``removed `...`: ``)."""
    said = [message for _, message in found if message.startswith(("removed", "deleted", "remove"))]
    message = said[0] if said else found[0][1] if found else ""
    head, colon, why = message.partition(": ")
    return why if colon and head.startswith(("removed", "deleted", "remove")) else message


def _run_deleted(func: str, command: str, found: list[tuple[Severity, str]]) -> str:
    """The fixed message for a deleted statement that ran a command the shell rules delete."""
    return f"deleted the `{func}(...)` statement running `{_words_shown(command)}`: {_reason(found)}"


def _still_runs_todo(command: str, found: list[tuple[Severity, str]]) -> str:
    """The todo for a call left running a command the shell rules delete (rt8P-02: not "removed")."""
    return (f"this call still runs `{_words_shown(command)}`, which raises FileNotFoundError once optimum-neuron (and "
            f"its optimum-cli) is uninstalled: delete the call; {_reason(found)}")


def _empty_command_todo(found: list[tuple[Severity, str]]) -> str:
    """The todo for a command string the shell edits would empty: the call that runs it is the user's to delete."""
    reason = found[0][1] if found else ""
    reason = as_step(reason[len("deleted "):] if reason.startswith("deleted ") else reason)
    return "delete the call that runs this command (its string would become empty)" + (f": {reason}" if reason else "")


#: calls that run a command string, by qualified name (aliases resolve through the file's imports)
RUN_CALLS = frozenset({"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                       "subprocess.Popen", "os.system", "os.popen"})
_COMMAND_KEYWORDS = {"args", "command", "cmd"}  # subprocess's args=, os.system's command=, os.popen's cmd=
_SIDE_EFFECTS = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr)
_CONSTANTS = (cst.Integer, cst.Float, cst.SimpleString)


def _environ_copies(module: cst.Module) -> frozenset[str]:
    """The names bound only to a copy of ``os.environ`` (``env = os.environ.copy()``, ``dict(os.environ)``,
    ``{**os.environ}``) in this file: settings made on them reach the commands run with ``env=``."""
    bound: dict[str, bool] = {}

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    name = target.target.value
                    bound[name] = bound.get(name, True) and _is_environ_copy(node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if isinstance(node.target, cst.Name):
                bound[node.target.value] = False

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name):
                bound[node.target.value] = False

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            if isinstance(node.target, cst.Name):
                bound[node.target.value] = False

        def visit_For(self, node: cst.For) -> None:
            if isinstance(node.target, cst.Name):
                bound[node.target.value] = False

    module.visit(Visitor())
    return frozenset(name for name, only in bound.items() if only)


def _is_os_environ(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Attribute) and node.attr.value == "environ" and isinstance(node.value, cst.Name)
            and node.value.value == "os")


def _is_environ_copy(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star:
        func = node.func
        if isinstance(func, cst.Name) and func.value == "dict":
            return _is_os_environ(node.args[0].value)
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute):
        return node.func.attr.value == "copy" and _is_os_environ(node.func.value)
    if isinstance(node, cst.Dict) and len(node.elements) == 1 and isinstance(node.elements[0], cst.StarredDictElement):
        return _is_os_environ(node.elements[0].value)
    return False


def _env_copy_setting(node: cst.SimpleStatementLine, copies: frozenset[str]) -> tuple[str, cst.BaseExpression] | None:
    """(variable, value) of a statement ``env.setdefault("X", v)`` or ``env["X"] = v`` on one of ``copies``."""
    if len(node.body) != 1 or not copies:
        return None
    statement = node.body[0]
    if isinstance(statement, cst.Expr) and isinstance(call := statement.value, cst.Call):
        func = call.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "setdefault" and isinstance(func.value, cst.Name)
                and func.value.value in copies and len(call.args) == 2
                and not any(arg.keyword or arg.star for arg in call.args)
                and isinstance(key := call.args[0].value, cst.SimpleString)):
            name = string_value(key)
            return (name, call.args[1].value) if name else None
        return None
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
        if (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value in copies
                and len(target.slice) == 1 and isinstance(index := target.slice[0].slice, cst.Index)
                and isinstance(key := index.value, cst.SimpleString)):
            name = string_value(key)
            return (name, statement.value) if name else None
    return None


@dataclass(frozen=True)
class _Use:
    """A statement that uses the variable of a compile-only pass and goes with it."""

    statement: cst.SimpleStatementLine | cst.If
    runs: bool  # it runs the command (a print does not)
    shown: str  # how the fixed message names it


def _walk(module: cst.Module, name: str) -> tuple[list[tuple[cst.Name, tuple[cst.CSTNode, ...]]], dict[int, int],
                                                   dict[int, cst.CSTNode]] | None:
    """The ``Name`` nodes spelling ``name`` in ``module`` with their ancestors (outermost first), the source order
    of its statements and the parent of each, by id; None when a plain string literal's value is ``name``
    (``__all__ = ["NAME"]``, ``globals()["NAME"]``)."""
    occurrences: list[tuple[cst.Name, tuple[cst.CSTNode, ...]]] = []
    order: dict[int, int] = {}
    parents: dict[int, cst.CSTNode] = {}
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(module, ())]
    while stack:
        node, ancestors = stack.pop()
        if isinstance(node, cst.Name):
            if node.value == name:
                occurrences.append((node, ancestors))
            continue
        if isinstance(node, cst.SimpleString):
            if string_value(node) == name:
                return None
            continue
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            order[id(node)] = len(order)
            parents[id(node)] = ancestors[-1]
        inner = (*ancestors, node)
        stack.extend((child, inner) for child in reversed(node.children))
    return occurrences, order, parents


def _shown(call: cst.Call, name: str) -> str:
    """A run call as the fixed message names it: ``os.system(CMD)``, ``subprocess.check_call(CMD, ...)``."""
    return f"{source_of(call.func)}({name}{', ...' if len(call.args) > 1 else ''})"


def _is_print(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "print"


def _run_tested(test: cst.BaseExpression) -> cst.BaseExpression:
    """The call an ``if`` test checks the outcome of: ``run(...)``, ``not run(...)``, ``run(...) != 0``,
    ``run(...).returncode != 0`` (the test itself otherwise)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.Comparison) and all(
            isinstance(c.comparator, _CONSTANTS) or isinstance(c.comparator, cst.Name)
            and c.comparator.value in ("None", "True", "False") for c in test.comparisons):
        test = test.left
    if isinstance(test, cst.Attribute) and test.attr.value == "returncode":
        test = test.value
    return test


def _pass_deleted(assign: cst.Assign, uses: list[_Use], found: list[tuple[Severity, str]]) -> str:
    """The fixed message for a compile-only pass deleted with the statements that printed and ran it: what went,
    then the shell rule's reason (the one ``_empty_command_todo`` gives)."""
    name = cast(cst.Name, assign.targets[0].target).value
    prints = sum(not use.runs for use in uses)
    parts = [f"`{name} = ...`", *(["a print"] if prints == 1 else [f"{prints} prints"] if prints else []),
             *(use.shown for use in uses if use.runs)]
    what = ", ".join(parts[:-1]) + " and " + parts[-1]
    reason = found[0][1] if found else "deleted"
    head, colon, why = reason.partition(": ")
    if head == "deleted":
        return f"deleted {what}{colon}{why}"
    if head.startswith("remove "):  # `remove `optimum-cli neuron cache ...``: done now
        head = "deleted " + head[len("remove "):]
    if head.startswith("deleted "):
        return f"{head} with {what}{colon}{why}"
    return f"deleted {what}: {reason}"


def _with_torch_compile(elements: list[cst.BaseElement], originals: Sequence[cst.BaseElement]) -> list[cst.BaseElement]:
    """``elements`` followed by ``"--torch_compile", "true"`` in the list's quote style."""
    return _with_words(elements, originals, ["--torch_compile", "true"])


def _with_words(elements: list[cst.BaseElement], originals: Sequence[cst.BaseElement],
                words: list[str]) -> list[cst.BaseElement]:
    """``elements`` followed by string elements ``words`` in the list's quote style."""
    quote = next((e.value.value[-1] for e in originals if isinstance(e, cst.Element) and isinstance(e.value, cst.SimpleString)), '"')
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if elements:
        elements = [*elements[:-1], elements[-1].with_changes(comma=comma)]
    added = [cst.Element(cst.SimpleString(f"{quote}{word}{quote}"), comma=comma) for word in words]
    return [*elements, *added[:-1], added[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
