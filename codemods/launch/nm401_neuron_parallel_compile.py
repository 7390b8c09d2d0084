"""NM401 drop-neuron-parallel-compile: delete ``neuron_parallel_compile`` pre-compile passes.

What it does:

* A pass whose command the file also runs without the prefix (the same script or ``$CMD``), or that another
  file of the project runs (a ``compile.sh`` beside ``train.sh``, another notebook cell; a project fact
  gathered in the scan pass; in a notebook, ``!neuron_parallel_compile {cmd}`` where another cell runs ``!{cmd}``
  and ``cmd`` is assigned once), or a short ``--max_steps N`` run, or one marked compile-only
  (``NEURON_EXTRACT_GRAPHS_ONLY=1 neuron_parallel_compile ...``, or between ``export NEURON_EXTRACT_GRAPHS_ONLY=1``
  and its ``unset``: what NM402 reads; a todo kept here would outlive the line NM402 deletes): the command is deleted (``srun``,
  ``sbatch --wrap "..."`` and ``if ...; then ...; fi`` one-liners included; an emptied block gets ``:``, and
  a multi-line ``if [ "${COMPILE:-0}" = 1 ]; then ... fi`` left with only that ``:``, whose test only compares
  values (no ``$(...)``, redirection or pipe), is deleted whole; one left with ``echo`` lines gets a todo).
* A pass that is the only command of an ``if``/``elif`` branch whose alternative (``else``/``elif``) runs the real
  run (``if [ "$PRECOMPILE" = 1 ]; then neuron_parallel_compile $LAUNCH ...; else $LAUNCH ...; fi``): the branch
  gets ``echo "no ahead-of-time compile pass on TorchNeuron ..." >&2`` (and ``exit 0`` where the block ends the
  script), so the compile mode says why it does nothing instead of exiting 0 in silence; the message names the
  branch as the alternative of the real run, not a step before it.
* In a Makefile, a target left with no command (its only recipe line was the pass; the same for NM402's
  compile-only pass and any launch rule's deletion, ``codemods/_lib/shell/make.py``) is deleted with its
  ``.PHONY`` entry when nothing in the Makefile depends on it (a prerequisite, a ``$(MAKE) name``) and no other
  file of the project runs ``make name`` (a CI step, a script, a Dockerfile ``RUN``, a ``["make", "name"]`` argv),
  else keeps an ``@echo`` line saying why it does nothing now: left empty, ``make precompile`` would succeed
  without a word; deleted, such a caller would stop with "No rule to make target". The echo is code the tool
  writes, so it names no legacy tool or variable (``NM401 deleted its ahead-of-time compile pass ...``; a rule
  whose finding names one says "removed its commands"): NM901 would flag it on every run.
* ``neuron_parallel_compile --command clear-locks``: deleted (TorchNeuron has no compile-cache locks).
* A launcher whose Python scripts are all outside the project and that names the torch_xla / NxD stack
  (``pip install neuronx_distributed``), or that runs a script of the project the torch_xla rules leave on
  torch_xla as a whole (it keeps XLA FSDP, xser, NxD ...; the project fact ``launch.stays-on-xla``), or one that
  stays on optimum-neuron after this run (its class rewrite withdrawn, kept as a whole): the pass
  stays, with a todo (that script was not migrated and still compiles this way). A ``-m pkg.train`` after
  ``torchrun``, ``python -m torch.distributed.run``, ``accelerate launch`` or ``deepspeed --module`` names its
  script as ``python -m`` does (``src/`` layouts included). A pass whose script the tool cannot place
  (``$SCRIPT``, a wrapper, a module or path it cannot find) while some project script stays on the old stack
  after this run stays too, with a todo: it may pre-compile that script.
* Otherwise (the tool cannot tell whether the line was the project's only run): the line stays, with a todo.
* The script or ``$CMD`` a command runs is never the value of a launcher option: ``torchrun --nproc_per_node
  $NPROC train.py`` runs train.py, whatever the value's form (``$NPROC``, ``{nproc}``, ``$(nproc)``). An option
  written without ``=`` takes the next word, unless it is a flag that takes none (``--standalone``, ``--multi_gpu``
  ...: ``codemods/_lib/shell/launcher_options.py``); a pass is named and judged by its script, not by that value.
* A pass inside a quoted word that holds more than the pass (``bash -c "neuron_parallel_compile torchrun ... &&
  torchrun ..."``, ``ssh host "..."``, ``sbatch --wrap="..."``), or on a line that opens or closes a quoted string
  of other lines (``ssh host "...`` over two lines, a compose ``command: >`` holding ``bash -c "...``), is not a
  line to delete: the real run and the closing quote are in the same string. Where the word follows ``-c``,
  ``--wrap`` or ``ssh host``, closes on its line and holds no quote, backslash, backtick or ``$`` (its text is
  the code the shell reads), and the pass is followed by ``&&`` or ``;``, only the pass and that separator are cut
  out of the string (when the rest runs the same script, or the real run is found as above); otherwise the line
  stays with a todo saying what to delete inside the quotes.
* In a file launching several scripts, a pass is judged and worded by its own command's script: a pass of a
  migrated script is deleted as in a file of its own even when another command of the file runs a script that
  stays on the old stack (whose pass stays, named by that script); a pass whose script the tool cannot place
  keeps the file's kept script.
* In YAML, a pass that is the whole command of its key (``command: neuron_parallel_compile ...``, a ``command: >``
  block holding only it) stays with a todo: deleting it would empty the key, and the container would run its
  image's default command. A pass deleted from the end of a block scalar's ``a && b &&`` chain takes the ``&&``
  before it (``bash -c`` would fail on a command ending in ``&&``).
* ``PREFIX=neuron_parallel_compile``, ``CMD="neuron_parallel_compile torchrun ..."``, Dockerfile exec-form
  arrays and YAML argument lists: the word goes, with a todo (the command now trains for real).
* ``LAUNCHER=neuron_parallel_compile`` set only in an ``if`` branch on a compile switch (``if [ "$1" = compile ]``,
  ``$COMPILE``), read by one shared ``$LAUNCHER torchrun ...`` line that is also the real run: the branch ends
  the script instead (``echo "no ahead-of-time compile pass ..."; exit 0``), where it is at the top level, sets
  only plain variables and the script runs nothing else after it (outside ``if`` blocks on the compile switch);
  dropping the word alone would make the compile mode train for real. Otherwise the word goes with a todo that
  names the branch to end or remove (never the shared line).
* A pass deleted as a short ``--max_steps N`` run is named for what it was: the compile-only pass itself.
* With a deleted pass go the top-level ``export NAME=value`` lines above it of Neuron / XLA settings (the env
  table's, not a ``keep`` one such as ``MALLOC_ARENA_MAX``) that no command left after them can read: only
  ``rm``/``echo``/``mkdir`` ... follow, none expanding ``$NAME``. A notebook ``%%bash`` cell is its own shell, so
  those exports reached nothing but the pass, as does a YAML literal block a shell runs (a CI ``run: |`` step,
  the script after ``bash -c``: the exports at the block's indent); a script another file sources, or one where a
  later command may read them (the real run, another program), keeps them, with the decisions NM403/NM405 make.
  A block left with no command gets ``:`` (an empty ``run:`` step is no script).
* With a deleted pass go the comment line directly above it (``# 1) graph extraction + parallel compilation``)
  and the ``echo "== $TASK: precompiling graphs =="`` right before it, at its indent, when they speak of
  compiling or graphs and of nothing else (training, evaluation, "then"...); a comment inside a longer comment
  block, an echo that writes to a file, or any other line stays.
* ``echo``/``printf`` text, comments and prose are left alone; other ``--command`` values get a todo.
* The same edit is made on command strings inside Python by NM410 (as a todo: the call is the user's to delete).

Why:

``neuron_parallel_compile <cmd>`` ran ``<cmd>`` in graph-extraction mode (on placeholder data, training
nothing) and compiled the graphs in parallel before the real run. TorchNeuron compiles each graph on first call
and caches the NEFFs (``TORCH_NEURONX_NEFF_CACHE_DIR``), so a pass is obsolete; dropping only the prefix would
turn it into a second training run beside the real one.

Before::

    neuron_parallel_compile --num_parallel 8 torchrun --nproc_per_node 2 train.py \\
        --output_dir out
    torchrun --nproc_per_node 2 train.py \\
        --output_dir out

After::

    torchrun --nproc_per_node 2 train.py \\
        --output_dir out

Safety: needs-review. A kept line or an edited variable carries a todo: check that the command left is the real
run, and delete a kept pre-compile step once its script runs on TorchNeuron.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/neuron-sys-tools/neuron-parallel-compile.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/rules-launch.md (the project facts: which scripts a launcher runs)
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import PurePath
from typing import Callable

from codemods._lib.launch_targets import NOTEBOOK_SCRIPTS, OPTIMUM_NEURON_CODE, PARSER_SCRIPTS, STAYS_ON_XLA
from codemods._lib.shell import (
    COMMAND_WORDS,
    RESERVED,
    CommandLine,
    EmbeddedCommand,
    Report,
    Tok,
    assignment_name,
    command_statements,
    command_word,
    cut,
    drop_line,
    env_sites,
    keep_script,
    launched_scripts,
    lex,
    remove_env_site,
    remove_words,
    shell_script_doc,
    simple_commands,
    unquote,
    words_of,
    yaml_value_lines,
)
from codemods._lib.shell.launcher_options import option_values
from codemods._tables import env_vars
from codemods.launch._base import MAX_STEPS, NPC, PLAIN_RUNS, SHORT_RUN_STEPS, LaunchRule, runs_elsewhere
from codemods.xla._base import XSER_LOADS
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import NOTE_PREFIX, Line, TextDocument, yaml_shell_blocks

_NPC_WORD = re.compile(
    r"(?<![\w./-])(?:\S*/)?neuron_parallel_compile(?:\s+--num[_-]parallel(?:=|\s+)\S+|\s+--command(?:=|\s+)compile)*(?:\s+|(?=[\"'`;)&|]|$))"
)
_NPC_EXEC = re.compile(
    r"([\"'])(?:\S*/)?neuron_parallel_compile\1\s*,\s*(?:([\"'])--num[_-]parallel\2\s*,\s*([\"'])?\d+\3?\s*,\s*)?"
)
def _wraps_command(rest: str) -> bool:
    """Whether the text after a ``neuron_parallel_compile`` word starts with something that runs (not prose)."""
    if rest.strip() in {"", "\\"} or rest.lstrip()[:1] in {"\"", "'", ";", ")", "`", "&", "|"}:
        return True
    words = words_of(rest)
    if not words:
        return False
    first = unquote(words[0]).rsplit("/", 1)[-1]
    return first in COMMAND_WORDS or first.startswith(("$", ".")) or first.endswith((".sh", ".py")) \
        or INTERPOLATION.fullmatch(first) is not None \
        or bool(assignment_name(first)) or first in {"uv", "conda", "make", "ssh", "sudo", "singularity", "apptainer"}


#: IPython's ``{cmd}`` in a notebook ``!`` line: the command a Python variable holds
INTERPOLATION = re.compile(r"\{[A-Za-z_]\w*\}")
_NOTEBOOK_CELL = re.compile(r"(.*)\.cell\d+\.sh")


def notebook_runs(project, path) -> Callable[[str], bool]:
    """``runs("{cmd}")``: whether another ``!{cmd}`` line of the notebook a cell's ``!`` line comes from (its
    rules see ``nb.cellN.sh``) runs that variable's command without neuron_parallel_compile; any other name:
    ``runs_elsewhere``."""
    elsewhere = runs_elsewhere(project)
    cell = _NOTEBOOK_CELL.fullmatch(PurePath(path).as_posix())
    own = project.of(PLAIN_RUNS.name).get(cell.group(1) + ".ipynb", frozenset()) if cell is not None else frozenset()
    return lambda name: name in own if INTERPOLATION.fullmatch(name) else elsewhere(name)


#: ``NEURON_EXTRACT_GRAPHS_ONLY=1 neuron_parallel_compile ...`` (or an ``export`` of it before the pass on its line):
#: the setting NM402 reads as the mark of a compile-only pass, which it deletes; the pass is deleted here for the same
#: reason (kept with a todo, the note would outlive the line NM402 deletes, and the scripts the pass ran would count
#: as still wrapped: rtE p2)
COMPILE_ONLY_MARK = re.compile(r"(?:^|[\s;&|(])(?:export\s+)?(NEURON_EXTRACT_GRAPHS_ONLY|NEURON_PARALLEL_COMPILE)"
                                r"=([\"']?)(1|true|yes|on|True|TRUE)\2(?=\s)")


_NPC_OTHER_OPTION = re.compile(r"neuron_parallel_compile\s+--(?!num[_-]parallel|command(?:=|\s+)compile)")


COMPILE_PASS_DELETED = ("deleted this neuron_parallel_compile pass: it ran {target} only to extract and compile its graphs "
                        "(on placeholder data, training nothing) before {why}; TorchNeuron compiles during the real run "
                        "and caches the NEFFs (TORCH_NEURONX_NEFF_CACHE_DIR)")
NPC_PASS_TODO = ("neuron_parallel_compile ran this command only to extract and compile its graphs (it trained "
                     "nothing) and does not exist on TorchNeuron, which compiles during the real run: delete this "
                     "pre-compile step{where}; if it was meant to train, drop the neuron_parallel_compile prefix instead")
NPC_UNSEEN_TODO = ("neuron_parallel_compile was left as it is: it pre-compiles {script}, {why}, and that script still "
                   "compiles this way; once that script runs on TorchNeuron, delete this pre-compile step (and the "
                   "switch that selects it)")
NPC_UNRESOLVED_TODO = ("neuron_parallel_compile was left as it is: the tool cannot tell which script {runs} runs, and "
                       "{script} of this project, {why}, still compiles this way; if this pass pre-compiles a script "
                       "that runs on TorchNeuron after this run, delete this pre-compile step (and the switch that "
                       "selects it), else keep it until that script is migrated")
CLEAR_LOCKS_DELETED = ("deleted `neuron_parallel_compile --command clear-locks`: it cleared stale locks of the torch_xla "
                       "compile cache, which TorchNeuron does not have")
VARIABLE_TODO = ("dropped neuron_parallel_compile from this variable: the command it builds now trains for real; if it "
                 "was the pre-compile pass of a run, delete the line that runs it")

_CLEAR_LOCKS = re.compile(r"neuron_parallel_compile\s+--command(?:=|\s+)clear-locks\b")


def _statement_code(statement: list[CommandLine]) -> str:
    """A statement's command text on one line: each continued line's closing backslash goes (joined as it was,
    ``\\ run.py`` would lex as one word with an escaped space, `` run.py``, and match no script name)."""
    parts = [cl.line.text[cl.start:cl.end] for cl in statement]
    return " ".join(part.rstrip()[:-1] if index < len(parts) - 1 and part.rstrip().endswith("\\") else part
                    for index, part in enumerate(parts))


def _run_target(code: str) -> str | None:
    """The script (``x.py``/``x.sh``) or command variable (``$CMD``) a command line runs. The value of a launcher
    option (``--nproc_per_node $NPROC``, ``{nproc}``, ``$(nproc)``) is none: see ``launcher_options``."""
    values = [unquote(word) for word in words_of(code)]
    consumed = option_values(values)
    for index, value in enumerate(values):
        if value.endswith((".py", ".sh", ".sbatch", ".slurm")):
            return value
        if index not in consumed and (re.fullmatch(r"\$\{?\w+\}?", value) or INTERPOLATION.fullmatch(value)):
            return value
    return None


def edit_npc(doc: TextDocument, report: Report, runs_elsewhere: Callable[[str], bool] = lambda name: False,
             unseen: tuple[str, str] | None = None,
             old_stack: Callable[[str], tuple[str, str] | None] = lambda code: None,
             own_unseen: Callable[[str, tuple[str, str] | None], tuple[str, str] | None] = lambda code, unseen: unseen
             ) -> None:
    """``neuron_parallel_compile <cmd>`` ran ``<cmd>`` in graph-extraction mode only. A pass whose command the
    file (or, through ``runs_elsewhere(file name)``, another launcher of the project) also runs without it, or a
    short ``--max_steps`` run, is deleted; when the tool cannot tell, the line stays with a todo.
    ``--command clear-locks`` is deleted; the prefix is dropped from variables that build commands. A pass whose
    script cannot be placed while a project script stays on the old stack (``old_stack(command)``: (script, why))
    stays, with a todo. ``own_unseen(command, unseen)``: ``unseen`` (the file's kept script) for this pass's own
    command: the script it runs when that one stays on the old stack, None when it runs project scripts that do
    not, ``unseen`` when the tool cannot place what it runs."""
    from codemods.launch.nm402_compile_only_pass import compile_only_regions  # NM402 imports this module

    statements = command_statements(doc)
    marked_region = compile_only_regions(doc)
    plain = set()
    for statement in statements:
        code = _statement_code(statement)
        if NPC not in code and (target := _run_target(code)):
            plain.add(target)
    for statement in statements:
        code = _statement_code(statement)
        if NPC not in code:
            continue
        first = statement[0]
        if _CLEAR_LOCKS.search(code):
            if _delete_npc_command(doc, statement):
                report(first.line, Severity.FIXED, CLEAR_LOCKS_DELETED)
            else:
                report(first.line, Severity.TODO, CLEAR_LOCKS_DELETED.replace("deleted", "delete", 1))
            continue
        if _NPC_OTHER_OPTION.search(code):
            report(first.line, Severity.TODO, "neuron_parallel_compile with options other than --num_parallel: TorchNeuron "
                   "compiles on first call, so drop this pre-compile step and keep the command it wrapped")
            continue
        if first.exec_form or first.yaml_item or not _runs_npc(statement):
            branch = _launcher_branch(doc, statement) if doc.kind is FileKind.SHELL and len(statement) == 1 else None
            if branch is not None and branch.certain:
                _end_compile_branch(doc, branch, report)
            else:
                _drop_npc_words(doc, statement, report, branch)
            continue
        target = _run_target(code.split(NPC, 1)[1])
        steps = MAX_STEPS.search(code.split(NPC, 1)[1])
        quoted = _quoted_pass(statement)
        why = None
        if quoted is not None and quoted.cut is not None and target is not None and quoted.rest_target == target:
            why = f"the real run of {target} after it in the same quoted command"
        elif target is not None and target in plain:
            why = f"the real run of {target} in this file"
        elif target is not None and INTERPOLATION.fullmatch(target) and runs_elsewhere(target):
            why = f"the real run `!{target}` in another cell of this notebook"
        elif target is not None and runs_elsewhere(posixpath.basename(target)):
            why = f"the real run of {target} elsewhere in the project"
        elif steps is not None and 0 < int(steps.group(1)) <= SHORT_RUN_STEPS:
            why = f"a real run (this short --max_steps {steps.group(1)} pass is the compile-only pass itself)"
        elif (marked := COMPILE_ONLY_MARK.search(code.split(NPC, 1)[0])) is not None:
            why = (f"a real run ({marked.group(1)}={marked.group(3)} marks it as the compile-only pass itself, as "
                   "NM402 reads it)")
        elif id(first.line) in marked_region:
            why = ("a real run (the `export ...=1` / `unset` of a compile-only variable around it mark it as the "
                   "compile-only pass itself, as NM402 reads them)")
        if (kept_script := own_unseen(code, unseen)) is not None:  # it still compiles this way, whatever this pass was
            report(first.line, Severity.TODO, NPC_UNSEEN_TODO.format(script=kept_script[0], why=kept_script[1]))
        elif why is not None and (kept := old_stack(code.split(NPC, 1)[1])) is not None:
            report(first.line, Severity.TODO, NPC_UNRESOLVED_TODO.format(
                runs=f"`{target}`" if target else "the command it wraps", script=kept[0], why=kept[1]))
        elif quoted is not None:
            if why is not None and quoted.cut is not None:
                cut(quoted.line, [quoted.cut])
                report(first.line, Severity.FIXED, COMPILE_PASS_DELETED.format(target=target or "its command", why=why)
                       + QUOTED_CUT_NOTE)
            else:
                report(first.line, Severity.TODO, NPC_QUOTED_TODO.format(where=f" (it came before {why})" if why else ""))
        elif why is not None and _whole_yaml_value(doc, statement):
            report(first.line, Severity.TODO, YAML_WHOLE_VALUE_TODO.format(target=target or "its command"))
        elif why is not None and _delete_npc_command(doc, statement):
            test = _explain_alternative(doc, first.line)
            if test is not None:
                report(first.line, Severity.FIXED, COMPILE_ALTERNATIVE_DELETED.format(
                    target=target or "its command", test=test))
                continue
            report(first.line, Severity.FIXED, COMPILE_PASS_DELETED.format(target=target or "its command", why=why))
            drop_announcements(doc, first.line, report)
            _note_print_only_block(doc, first.line, report)
        else:
            report(first.line, Severity.TODO, NPC_PASS_TODO.format(where=f" (it came before {why})" if why else ""))


NPC_QUOTED_TODO = ("this neuron_parallel_compile pass is inside a quoted command (`bash -c \"...\"`, `ssh host \"...\"`, "
                   "a string that goes on after it or onto other lines){where}: it ran its command only to extract "
                   "and compile its graphs (training nothing), and TorchNeuron compiles during the real run; inside the "
                   "quotes, delete `neuron_parallel_compile <cmd>` and the `&&` (or `;`) after it, keeping the rest of "
                   "the string and its closing quote (the real run may be there); the tool left the line as it is")
QUOTED_CUT_NOTE = " (only the pass and its `&&` were cut out of the quoted string; the rest of it stays)"
#: the quoted word a shell runs: after ``-c`` (``bash -c``, ``sh -lc``), ``--wrap``, or as ``ssh host``'s command
_SHELL_STRING_FLAG = re.compile(r"-[a-z]*c|--wrap")


class _QuotedPass:
    """A pass inside a quoted word, or on a line whose quotes do not close on it. ``cut``: the span of
    ``line.text`` (the pass and the ``&&``/``;`` after it, inside the quotes) that can be removed with certainty,
    else None; ``rest_target``: the script the quoted string runs once the pass is cut out."""

    def __init__(self, line: Line, cut: tuple[int, int] | None = None, rest_target: str | None = None) -> None:
        self.line, self.cut, self.rest_target = line, cut, rest_target


def _quotes_close(code: str) -> bool:
    """Whether every quote opened in ``code`` (a line's shell text, a final ``\\`` continuation aside) closes."""
    code = code.rstrip()
    if code.endswith("\\") and not code.endswith("\\\\"):
        code = code[:-1]
    try:
        shlex.split(code, comments=True)
    except ValueError:
        return False
    return True


def _quoted_pass(statement: list[CommandLine]) -> _QuotedPass | None:
    """None when the pass is a whole command of the shell text (its quotes, if any, hold the pass alone:
    ``sbatch --wrap "neuron_parallel_compile torchrun train.py"``); else where it sits. The cut is certain only
    for a quoted word a shell runs (``bash -c``, ``ssh host``, ``--wrap``) that closes on its line and holds no
    quote, backslash, backtick or ``$`` (its text is then the code that shell reads), where the pass is a simple
    command followed by ``&&`` or ``;``."""
    unbalanced = next((cl for cl in statement if not _quotes_close(cl.line.text[cl.start:cl.end])), None)
    for cl, command, _ in _npc_commands(statement):
        at = next(index for index, tok in enumerate(command) if NPC in tok.text)
        tok = command[at]
        quote = next((i for i, c in enumerate(tok.text[:tok.text.index(NPC)]) if c in "\"'"), None)
        if quote is None:
            continue
        inner_start = tok.start + quote + 1
        text = cl.line.text
        closes = tok.text[-1:] == tok.text[quote] and len(tok.text) > quote + 1 and unbalanced is None
        content = text[inner_start:tok.end - 1] if closes else ""
        prefix = tok.text[:quote]
        shell_run = (prefix == "--wrap=" or not prefix and at > 0 and (_SHELL_STRING_FLAG.fullmatch(command[at - 1].text)
                     or getattr(command_word(command), "text", None) == "ssh"))
        if not closes or not shell_run or any(c in content for c in "\"'`\\$"):
            return _QuotedPass(cl.line)
        inner, _ = lex(content)
        commands = simple_commands(inner)
        if len(commands) <= 1 and not any(t.kind == "op" for t in inner):
            return None  # the quotes hold the pass alone: the statement is the pass
        own = next((c for c in commands if any(NPC in t.text for t in c)), None)
        if own is None or not own[0].text.endswith(NPC) or own is commands[-1]:
            return _QuotedPass(cl.line)
        separator = inner[inner.index(own[-1]) + 1]
        if separator.kind != "op" or separator.text not in {"&&", ";"}:
            return _QuotedPass(cl.line)
        rest = content[:own[0].start] + content[separator.end:].lstrip(" \t")
        span = (inner_start + own[0].start, inner_start + separator.end)
        if not _quotes_close(text[cl.start:span[0]] + text[span[1]:cl.end]):
            return _QuotedPass(cl.line)
        return _QuotedPass(cl.line, span, _run_target(rest))
    if unbalanced is not None:
        return _QuotedPass(unbalanced.line)  # the pass's line(s) open or close a quoted string of other lines
    return None


YAML_WHOLE_VALUE_TODO = ("this neuron_parallel_compile pass is the whole command of this YAML entry: it ran {target} "
                         "only to extract and compile its graphs (training nothing), and TorchNeuron compiles during "
                         "the real run; deleting the command here would leave the key empty (a container then runs its "
                         "image's default command): delete this job/service/step, or make it the real run")


def _whole_yaml_value(doc: TextDocument, statement: list[CommandLine]) -> bool:
    """Whether the pass is all the code of the YAML value it is in (``command: >`` holding only it, or
    ``command: neuron_parallel_compile ...``): deleting it would empty the key."""
    if doc.kind is not FileKind.YAML:
        return False
    value = yaml_value_lines(doc, statement[0].line)
    if value is None:
        return False
    mine = {id(cl.line) for cl in statement}
    return all(id(line) in mine for line in value) and len(_npc_commands(statement)) == 1 \
        and all(len(simple_commands(lex(cl.line.text, cl.start, cl.end)[0])) <= 1 for cl in statement)


COMPILE_ALTERNATIVE_DELETED = ("deleted this neuron_parallel_compile pass: it ran {target} only to extract and compile "
                               "its graphs (on placeholder data, training nothing), in the branch `{test}` chosen "
                               "instead of the real run of the other branch; TorchNeuron has no ahead-of-time compile "
                               "pass (graphs compile during the real run and are cached in "
                               "TORCH_NEURONX_NEFF_CACHE_DIR), so that branch now only says so (echo to stderr) and "
                               "exits 0 when nothing follows the block; the real run is unchanged")
ALTERNATIVE_ECHO = ('echo "no ahead-of-time compile pass on TorchNeuron: graphs compile on first use, in the real run"'
                    " >&2")
_ONE_LINE_BRANCH = re.compile(r"^(?P<head>\s*(?:if|elif)\s+(?P<test>.+?)\s*;\s*then)\s+:;(?P<rest>\s*(?:else|elif)\b.*)$")


def _explain_alternative(doc: TextDocument, line: Line) -> str | None:
    """A pass deleted from an ``if``/``elif`` branch that an ``else``/``elif`` alternative follows (``if [ "$PRECOMPILE"
    = 1 ]; then neuron_parallel_compile $LAUNCH ...; else $LAUNCH ...; fi``) left ``:`` there: the compile mode would
    exit 0 without a word. The ``:`` becomes an echo saying why nothing runs, and ``exit 0`` where nothing follows
    the block (what the mode did after its pass). Returns the branch's test, or None (not such a branch)."""
    if doc.kind is not FileKind.SHELL or line.deleted:
        return None
    one = _ONE_LINE_BRANCH.match(line.text)
    if one is not None:
        line.text = f"{one.group('head')} {ALTERNATIVE_ECHO};{one.group('rest')}"
        return one.group("test")
    if line.text.strip() != ":":
        return None
    code = [candidate for candidate in doc.lines if not candidate.deleted and candidate.text.strip()
            and not candidate.text.lstrip().startswith("#")]
    at = code.index(line)
    opener = code[at - 1] if at > 0 else None
    match = _BRANCH_OPEN.match(opener.text.strip()) if opener is not None else None
    if opener is None or match is None or len(opener.indent) >= len(line.indent) or at + 1 >= len(code):
        return None
    following = code[at + 1]
    if following.indent != opener.indent or not re.match(r"(?:else|elif)\b", following.text.strip()):
        return None
    closer = next((candidate for candidate in code[at + 1:] if candidate.indent == opener.indent
                   and candidate.text.strip() == "fi"), None)
    line.text = line.indent + ALTERNATIVE_ECHO
    if closer is not None and code[-1] is closer and opener.indent == "":
        doc.insert_after(line, [line.indent + "exit 0"])
    return match.group(1)


EXPORT_UNREAD_DELETED = ("removed `{text}` with the neuron_parallel_compile pass below it: it was set for that pass, "
                         "and no command left after it in this {scope} reads it")
#: commands that read no Neuron / XLA variable (the shell's own expansions are looked at apart: `echo $X` reads X)
_NON_READERS = frozenset({"rm", "mkdir", "rmdir", "cd", "echo", "printf", "cp", "mv", "ls", "cat", "touch", "true",
                          "false", ":", "sleep", "pwd", "set", "unset", "export", "wait", "date", "chmod", "ln", "tee",
                          "du", "df", "exit"})


def drop_unread_exports(doc: TextDocument, report: Report, deleted: list[Line], cell: bool, block: str | None = None) -> None:
    """After a pass was deleted, a top-level ``export NAME=value`` above it of a variable the env table knows (a
    Neuron / XLA setting: not a ``keep`` one such as MALLOC_ARENA_MAX) that no command left after it can read
    (only ``rm``/``echo``/``mkdir`` ... follow, none expanding ``$NAME``) goes too: in a notebook cell, a shell of
    its own, it reached nothing but the deleted pass; in a script, nothing after it runs. Kept, it gets a todo
    about a run that is no longer there (NM403: "no command here runs a training script"). ``block``: the indent
    of the YAML literal block (a CI ``run: |`` step, a ``bash -c`` script) ``doc`` holds the lines of, a shell of
    its own too."""
    statements = command_statements(doc)
    order = {id(line): index for index, line in enumerate(doc.lines)}
    first_deleted = min(order[id(line)] for line in deleted)
    sites = [site for site in env_sites(doc) if site.command and site.command[0].text == "export"
             and site.value is not None and site.cl.line.indent == (block or "") and order[id(site.cl.line)] < first_deleted
             and (action := env_vars.lookup(site.name)) is not None and action.action != "keep"]
    scope = "cell (a %%bash cell is its own shell: nothing outside it sees the variable)" if cell else "script"
    if block is not None:
        scope = "block (a shell runs it apart from the file's other blocks: nothing outside it sees the variable)"
    for site in reversed(sites):
        at = order[id(site.cl.line)]
        later = [statement for statement in statements if order[id(statement[0].line)] > at]
        if site.command is None or any(_reads(statement, site.name) for statement in later):
            continue
        text = site.cl.line.text[site.command[0].start:site.command[-1].end].strip()
        line = site.cl.line
        remove_env_site(doc, site)
        report(line, Severity.FIXED, EXPORT_UNREAD_DELETED.format(text=text, scope=scope))


def _reads(statement: list[CommandLine], name: str) -> bool:
    """Whether the statement may read the variable ``name``: it expands it, or runs a program other than a few
    shell utilities that read no Neuron / XLA setting."""
    code = " ".join(cl.line.text[cl.start:cl.end] for cl in statement)
    if re.search(r"\$\{?" + re.escape(name) + r"\b", code):
        return True
    toks, _ = lex(code)
    for command in simple_commands(toks):
        while command and command[0].text in RESERVED:
            command = command[1:]
        word = command_word(command) if command else None
        if word is not None and unquote(word.text).rsplit("/", 1)[-1] not in _NON_READERS:
            return True
    return False


ANNOUNCEMENT_DELETED = ("deleted `{text}` with the pre-compile pass below it: it only {what} that pass")
_ABOUT_COMPILE = re.compile(r"compil|graph", re.I)
_ABOUT_MORE = re.compile(r"\b(?:train\w*|then|eval\w*|real|infer\w*|serv\w*|test\w*|fine-?tun\w*)\b|\b2[.)]", re.I)
_ECHO = re.compile(r"""^(?:echo|printf)\s+(?:-\w+\s+)*(?:"[^"`$]*(?:\$\{?\w+\}?[^"`$]*)*"|'[^']*'|[^;&|<>`"'$]+)$""")


def drop_announcements(doc: TextDocument, head: Line, report: Report) -> None:
    """A comment line (``# 1) graph extraction + parallel compilation on a few steps``) or an ``echo`` statement
    (``echo "== $TASK: precompiling graphs =="``) directly above the deleted pass, at its indent, that speaks of
    compiling or graphs and of nothing else the script does (training, evaluation, then ...), goes with it: kept,
    it announces a step that no longer runs. A comment inside a longer comment block stays."""
    if doc.kind is not FileKind.SHELL:
        return
    index = doc._index(head)
    seen: set[str] = set()
    above = [line for line in doc.lines[:index] if not line.deleted]
    removed = []
    while above and len(seen) < 2:
        line = above.pop()
        code = line.text.strip()
        if line.indent != head.indent or not _ABOUT_COMPILE.search(code) or _ABOUT_MORE.search(code) \
                or NOTE_PREFIX in code:
            break
        if code.startswith("#") and "comment" not in seen:
            if above and above[-1].text.lstrip().startswith("#"):
                break  # part of a comment block, which may describe more
            seen.add("comment")
            doc.delete(line)
        elif _ECHO.match(code) and "echo" not in seen:
            seen.add("echo")
            drop_line(doc, line)
        else:
            break
        removed.append((line, code))
    for line, code in removed:
        report(line, Severity.FIXED, ANNOUNCEMENT_DELETED.format(
            text=code, what="described" if code.startswith("#") else "announced"))
    if removed:
        before = next((line for line in reversed(doc.lines[:index]) if not line.deleted), None)
        following = doc.next_live(head) if head.deleted else None
        opens = before is not None and re.search(r"(?:\bdo|\bthen|\{)\s*$", before.text) is not None
        if before is not None and following is not None and (not before.text.strip() or opens) \
                and not following.text.strip():
            doc.delete(following)  # no blank line left behind at the top of a loop body either


PRINT_ONLY_BLOCK_TODO = ("this block only prints now (the neuron_parallel_compile pass it ran was deleted): delete it{also}")
EMPTIED_BLOCK_DELETED = ("deleted `{test} ... fi`: the neuron_parallel_compile pass was its only command, so it did "
                         "nothing now (its test only compares values)")
_SIDE_EFFECTS = re.compile(r"\$\(|`|[^|]\|[^|]|>|<(?![=])|\b(?:read|shift|eval|source)\b")
_IF_THEN = re.compile(r"^(\s*)if\b.*\bthen\s*(#.*)?$")
_PRINTS = re.compile(r"^\s*(?:echo|printf|:)(?:\s|;|$)")


def _note_print_only_block(doc: TextDocument, removed: Line, report: Report) -> None:
    """A multi-line ``if ...; then`` whose body is left with ``echo`` lines only (``echo "Starting
    pre-compilation..."``) gets a todo naming the variables its test reads, which nothing else may use."""
    if doc.kind is not FileKind.SHELL:
        return
    index = doc._index(removed)
    opener = next((line for line in reversed(doc.lines[:index]) if not line.deleted and line.text.strip()
                   and len(line.indent) < len(removed.indent)), None)
    match = _IF_THEN.match(opener.text) if opener is not None else None
    if match is None or opener is None:
        return
    body = []
    for line in doc.lines[doc._index(opener) + 1:]:
        if line.deleted or not line.text.strip() or line.text.lstrip().startswith("#"):
            continue
        if line.indent == match.group(1):
            if line.text.strip() != "fi":
                return  # else/elif: the block does more than print
            break
        body.append(line)
    if body and all(line.text.strip() == ":" for line in body) and not _SIDE_EFFECTS.search(opener.text):
        closer = next(line for line in doc.lines[doc._index(body[-1]) + 1:] if not line.deleted
                      and line.indent == match.group(1) and line.text.strip() == "fi")
        for line in doc.lines[doc._index(opener):doc._index(closer) + 1]:
            doc.delete(line)
        before = next((line for line in reversed(doc.lines[:doc._index(opener)]) if not line.deleted), None)
        following = doc.next_live(closer)
        if before is not None and following is not None and not before.text.strip() and not following.text.strip():
            doc.delete(following)  # the block stood between blank lines: one blank line stays
        report(opener, Severity.FIXED, EMPTIED_BLOCK_DELETED.format(test=opener.text.strip()))
        return
    if body and all(_PRINTS.match(line.text) for line in body) and any(line.text.strip() != ":" for line in body):
        names = sorted(set(re.findall(r"\$\{?([A-Za-z_]\w*)", opener.text)))
        also = f" and, if nothing else reads it, {', '.join(names)}" if names else ""
        report(opener, Severity.TODO, PRINT_ONLY_BLOCK_TODO.format(also=also))


def _npc_commands(statement: list[CommandLine]) -> list[tuple[CommandLine, list[Tok], list[Tok]]]:
    """(line, simple command, all tokens of the line) for the simple commands that run neuron_parallel_compile
    (as their program, after ``srun``/``sudo``..., or in a quoted ``--wrap``/``bash -c`` argument)."""
    found = []
    for cl in statement:
        toks, _ = lex(cl.line.text, cl.start, cl.end)
        for command in simple_commands(toks):
            while command and command[0].text in RESERVED:
                command = command[1:]  # `then npc cmd`: the command starts after the keyword
            word = command_word(command) if command else None
            if word is None or word.text in {"echo", "printf"} or assignment_name(command[0].text) and len(command) == 1:
                continue
            if any(NPC in tok.text for tok in command):
                found.append((cl, command, toks))
    return found


def _runs_npc(statement: list[CommandLine]) -> bool:
    """Whether the statement runs neuron_parallel_compile as a command (not in an assignment, echo text or prose)."""
    for cl, command, _ in _npc_commands(statement):
        word = next(tok for tok in command if NPC in tok.text)
        if assignment_name(word.text):
            continue  # PREFIX=neuron_parallel_compile, CMD="neuron_parallel_compile torchrun ..."
        code = cl.line.text[word.start:command[-1].end]
        match = _NPC_WORD.search(code)
        if match is not None and _wraps_command(code[match.end():] or "\\"):
            return True
    return False


def _delete_npc_command(doc: TextDocument, statement: list[CommandLine]) -> bool:
    """Delete the simple command running neuron_parallel_compile: the whole statement when it is the only
    command, else (on one line) the command and an adjacent ``&&``/``;``. False when it cannot be cut out."""
    commands = _npc_commands(statement)
    if len(commands) != 1:
        return False
    cl, command, toks = commands[0]
    alone = all(len(simple_commands(lex(c.line.text, c.start, c.end)[0])) <= 1 and
                not any(tok.kind == "op" for tok in lex(c.line.text, c.start, c.end)[0]) for c in statement)
    if alone and cl.start == statement[0].start:
        for later in reversed(statement[1:]):
            doc.delete(later.line)
        head = statement[0].line
        head.text = head.text[:statement[0].start] + head.text[statement[0].start:statement[0].end].rstrip().rstrip("\\").rstrip()
        drop_line(doc, head)
        following = doc.next_live(head) if head.deleted else None
        before = next((line for line in reversed(doc.lines[:doc._index(head)]) if not line.deleted), None)
        if following is not None and before is not None and not following.text.strip() and not before.text.strip():
            doc.delete(following)  # the pass stood between blank lines: one blank line stays
        return True
    if len(statement) != 1 and (cl is not statement[0] or command[-1] is toks[-1]):
        return False  # only `npc cmd && \` on a statement's first line can be cut out of a continued statement
    if len(statement) == 1:
        remove_words(doc, cl, command, command, toks)
        return True
    separator = toks[toks.index(command[-1]) + 1]
    if separator.kind != "op" or separator.text not in {"&&", ";"}:
        return False
    line = cl.line
    cut(line, [(command[0].start, separator.end)])
    if not line.text[cl.start:].strip(" \t\\"):  # nothing left on the line: the next one starts the statement
        keyword = line.text[:cl.start]
        doc.delete(line)
        second = statement[1].line
        second.text = (keyword.rstrip() + " " if keyword.strip() else second.indent) + second.text.lstrip()
    return True


def _drop_npc_words(doc: TextDocument, statement: list[CommandLine], report: Report,
                    branch: "_Branch | None" = None) -> None:
    """Assignments (``PREFIX=neuron_parallel_compile``, ``CMD="neuron_parallel_compile torchrun ..."``), exec-form
    arrays and YAML argument lists: the neuron_parallel_compile word goes, the command stays."""
    for cl in statement:
        line = cl.line
        code = line.text[cl.start:cl.end]
        if NPC not in code:
            continue
        toks, _ = lex(line.text, cl.start, cl.end)
        quiet = [(command[0].start - cl.start, command[-1].end - cl.start) for command in simple_commands(toks)
                 if (word := command_word(command)) is not None and word.text in {"echo", "printf"}]
        if cl.exec_form:
            new_code = _NPC_EXEC.sub("", code)
        elif cl.yaml_item and code.strip().strip("\"'") == NPC:
            drop_line(doc, line)
            report(line, Severity.TODO, "dropped the neuron_parallel_compile argument: " + VARIABLE_TODO.split(": ", 1)[1])
            continue
        else:
            new_code = _NPC_WORD.sub(
                lambda m: m.group(0) if any(a <= m.start() < b for a, b in quiet) or not _wraps_command(code[m.end():]) else "",
                code)
        if new_code == code:
            continue
        line.text = line.text[:cl.start] + new_code + line.text[cl.end:]
        todo = VARIABLE_TODO if not cl.exec_form else VARIABLE_TODO.replace("this variable", "this command")
        if branch is not None and not cl.exec_form:
            todo = BRANCH_TODO.format(test=branch.test, line=branch.opener.origin or "above", var=branch.var,
                                      run=branch.run_text)
        report(line, Severity.TODO, todo)
        if not line.text[cl.start:].strip(" \t\\"):
            drop_line(doc, line)


BRANCH_TODO = ("dropped neuron_parallel_compile from this variable, which only the branch `{test}` (line {line}) "
               "sets: in that branch the shared command `{run}` now trains for real instead of only compiling; make "
               "that branch end the script before it (echo \"no ahead-of-time compile pass on TorchNeuron: graphs "
               "compile on first use\"; exit 0) or remove the branch; keep the command, it is also the real run")
COMPILE_BRANCH_ENDED = ("this branch set {var}=neuron_parallel_compile so that the shared command `{run}` below ran only "
                        "a graph-extraction pass (training nothing); TorchNeuron has no ahead-of-time compile pass "
                        "(graphs compile on first use and are cached in TORCH_NEURONX_NEFF_CACHE_DIR), so the branch "
                        "now ends the script before that command (was: {was}); the real run is unchanged")
END_BRANCH = 'echo "no ahead-of-time compile pass on TorchNeuron: graphs compile on first use"'
_NPC_ASSIGN = re.compile(
    r"^\s*([A-Za-z_]\w*)=([\"']?)(?:\S*/)?neuron_parallel_compile(?:\s+--num[_-]parallel(?:=|\s+)\d+)?\2\s*$")
_BRANCH_OPEN = re.compile(r"^(?:if|elif)\s+(.+?)\s*;?\s*then\s*(#.*)?$")
_ONE_LINE_IF = re.compile(r"^if\s+(?P<test>.+?)\s*;\s*then\s+(?P<body>[^#]*?)\s*;?\s*fi\s*(#.*)?$")
_PLAIN_ASSIGN = re.compile(r"^[A-Za-z_]\w*=(?:[\w./:+,@%-]*|\$\{?\w+(?::?-[\w./-]*)?\}?|\"[^\"$`\\]*\"|'[^']*')$")
_RUNS_SOMETHING = re.compile(r"\b(?:torchrun|python3?|accelerate|srun|sbatch|mpirun|deepspeed|bash|sh|exec|source)\b"
                             r"|\.(?:py|sh)\b|^\s*\.\s|\$\{?\w+\}?\s+\S")


class _Branch:
    """An ``if``/``elif`` branch that alone sets ``var`` to neuron_parallel_compile, and the one command that runs
    ``$var``. ``certain``: the branch is a compile mode (its test names compile), at the top level of the script,
    sets only plain variables, and after it the script runs nothing but that command (other than inside ``if``
    blocks on the same compile switch): ending the script there does what the mode did, minus the compile pass."""

    def __init__(self, opener: Line, test: str, var: str, body: list[Line], one_line: bool, run: Line | None,
                 certain: bool) -> None:
        self.opener, self.test, self.var, self.body, self.one_line = opener, test, var, body, one_line
        self.run, self.certain = run, certain
        self.run_text = "$" + var + " ..." if run is None else " ".join(run.text.strip().rstrip("\\").split()[:4]) + " ..."


def _launcher_branch(doc: TextDocument, statement: list[CommandLine]) -> _Branch | None:
    """The branch of ``VAR=neuron_parallel_compile`` when it is set inside an ``if``/``elif`` branch (one that
    the shared ``$VAR cmd`` line runs in every mode), else None."""
    line = statement[0].line
    lines = [candidate for candidate in doc if candidate.text.strip() and not candidate.text.lstrip().startswith("#")]
    index = lines.index(line)
    one = _ONE_LINE_IF.match(line.text)
    if one is not None:
        parts = [part.strip() for part in one.group("body").split(";")]
        npc = [part for part in parts if _NPC_ASSIGN.match(part)]
        if len(npc) != 1:
            return None
        var = _NPC_ASSIGN.match(npc[0]).group(1)  # type: ignore[union-attr]
        opener, test, body, after = line, one.group("test"), [line], index + 1
        plain = all(part is npc[0] or _PLAIN_ASSIGN.match(part) for part in parts)
    else:
        match = _NPC_ASSIGN.match(line.text)
        if match is None:
            return None
        var = match.group(1)
        opener_at = next((at for at in range(index - 1, -1, -1) if len(lines[at].indent) < len(line.indent)), None)
        if opener_at is None or not (branch := _BRANCH_OPEN.match(lines[opener_at].text.strip())):
            return None
        opener, test = lines[opener_at], branch.group(1)
        depth = opener.indent
        end = next((at for at in range(index + 1, len(lines)) if len(lines[at].indent) <= len(depth)), None)
        if end is None:
            return None
        body = lines[opener_at + 1:end]
        plain = opener.text.startswith("if") and all(
            candidate is line or (len(candidate.indent) > len(depth) and _PLAIN_ASSIGN.match(candidate.text.strip()))
            for candidate in body)
        closer = end
        while closer < len(lines) and not (lines[closer].indent == depth and lines[closer].text.strip() == "fi"):
            closer += 1
        after = closer + 1
    uses = [candidate for candidate in lines if re.search(r"\$\{?" + var + r"\b", candidate.text)]
    run = uses[0] if len(uses) == 1 else None
    certain = plain and opener.indent == "" and "compile" in test.lower() and run is not None \
        and lines.index(run) >= after and re.match(r"\$\{?" + var + r"\}?\s+\S", run.text) is not None \
        and _runs_nothing_else(doc, lines[after:], run)
    return _Branch(opener, test, var, body, one is not None, run, certain)


def _runs_nothing_else(doc: TextDocument, lines: list[Line], run: Line) -> bool:
    """Whether the top-level code after the branch runs no command but ``run`` (its continuation lines included),
    other than inside ``if`` blocks whose test names compile (the mode's own steps, or the other mode's)."""
    skip = None
    for candidate in lines:
        if doc.statement_start(candidate) is run:
            continue
        if skip is not None:
            if candidate.indent == "" and candidate.text.strip().startswith("fi"):
                skip = None
            continue
        if candidate.indent == "" and (opener := _BRANCH_OPEN.match(candidate.text.strip())) \
                and candidate.text.startswith("if") and "compile" in opener.group(1).lower():
            skip = candidate
            continue
        if _RUNS_SOMETHING.search(candidate.text):
            return False
    return skip is None


def _end_compile_branch(doc: TextDocument, branch: _Branch, report: Report) -> None:
    """Make the compile branch end the script: its assignments give way to an echo and ``exit 0``."""
    run = branch.run_text
    if branch.one_line:
        line = branch.opener
        was = line.text.strip()
        head = line.text[:line.text.index("then") + len("then")]
        line.text = f"{head} {END_BRANCH}; exit 0; fi"
        report(line, Severity.FIXED, COMPILE_BRANCH_ENDED.format(var=branch.var, run=run, was=f"`{was}`"))
        return
    code = [candidate for candidate in branch.body]
    was = "; ".join(candidate.text.strip() for candidate in code)
    indent = code[0].indent
    first = code[0]
    first.text = indent + END_BRANCH
    for candidate in code[1:]:
        doc.delete(candidate)
    doc.insert_after(first, [indent + "exit 0"])
    report(first, Severity.FIXED, COMPILE_BRANCH_ENDED.format(var=branch.var, run=run, was=f"`{was}`"))


class DropNeuronParallelCompile(LaunchRule):
    """Delete neuron_parallel_compile pre-compile passes; keep (with a todo) what the tool cannot tell."""

    id = "NM401"
    name = "drop-neuron-parallel-compile"
    safety = Safety.NEEDS_REVIEW
    triggers = ("neuron_parallel_compile",)
    facts = (PLAIN_RUNS, PARSER_SCRIPTS, NOTEBOOK_SCRIPTS, STAYS_ON_XLA, XSER_LOADS, OPTIMUM_NEURON_CODE)

    def apply(self, doc: TextDocument) -> None:
        reported = len(self.ctx.findings)
        edit_npc(doc, self.report, notebook_runs(self.ctx.options.project, self.ctx.path), self.unseen_target(doc),
                 self.old_stack_script, self.pass_unseen)
        deleted = [line for rule, severity, line, _, message in self.ctx.findings[reported:]
                   if rule == self.id and severity is Severity.FIXED and message.startswith("deleted this")]
        cell = _NOTEBOOK_CELL.fullmatch(PurePath(self.ctx.path).as_posix()) is not None
        sourced = not cell and runs_elsewhere(self.ctx.options.project)(PurePath(self.ctx.path).name)
        if deleted and doc.kind is FileKind.SHELL and not sourced:
            drop_unread_exports(doc, self.report, deleted, cell)
        elif deleted and doc.kind is FileKind.YAML:
            # a literal block a shell runs (CI `run: |`, `bash -c` args) is a script of its own, as a %%bash cell is
            for _, live in yaml_shell_blocks(list(doc)):
                # the block's lines, the deleted ones included: up to the next line the document still holds
                end = doc.next_live(live[-1])
                body = doc.lines[doc._index(live[0]):doc._index(end) if end is not None else len(doc.lines)]
                if mine := [line for line in deleted if line in body]:
                    script = shell_script_doc(doc, body)
                    indent = next(line.indent for line in body if line.text.strip())
                    drop_unread_exports(script, self.report, mine, False, indent)
                    keep_script(script, indent, [line for line in body if line in live or line in mine])

    def make_echo_reason(self, said: str) -> str | None:
        """The @echo of a Make target left empty names no ``neuron_parallel_compile`` (the sweep would flag it)."""
        if said.startswith(COMPILE_PASS_DELETED.split(":", 1)[0]) or said.startswith(COMPILE_ALTERNATIVE_DELETED.split(":", 1)[0]):
            return "deleted its ahead-of-time compile pass: graphs compile on first use, in the real run"
        if said.startswith(CLEAR_LOCKS_DELETED.split(":", 1)[0]):
            return "deleted its compile-cache lock cleanup: TorchNeuron has no such locks"
        return None

    def pass_unseen(self, code: str, unseen: tuple[str, str] | None) -> tuple[str, str] | None:
        """The kept script (script, why) a pass of a file with a kept script (``unseen``) is about: its own command's
        (``code``) when that one stays on the old stack, None when every script it runs is a project file that does
        not (a file launching two scripts: the pass of the migrated one goes as in a file of its own), else
        ``unseen`` (the tool cannot place what it runs: it may be the kept one)."""
        if unseen is None:
            return None
        command = TextDocument(code, FileKind.SHELL)
        if (own := self.unseen_target(command)) is not None:
            return own
        scripts, _ = launched_scripts(command, self.ctx.options.project, self.ctx.path)
        return None if scripts and all(script.path for script in scripts) else unseen

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_npc(doc, report, embedded.runs_elsewhere, embedded.unseen(doc.text()))
