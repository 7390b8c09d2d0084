"""TEMPORARY: the launch rule bodies, on their way into their rule modules (codemods/launch/)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Callable

from codemods._lib.launch_targets import NOT_TRAINERS, STOCK_REMOVED, Program, Target, program_of
from codemods._lib.shell.commands import (_next_code, COMMAND_WORDS, CommandLine, Report, Resolve, command_lines,
                                          command_statements, cut, drop_line, env_sites, launched_scripts,
                                          remove_env_site, remove_words, unresolved)
from codemods._lib.shell.lexer import (EXPORTERS, RESERVED, Tok, assignment_name, command_word, exec_words, lex,
                                       simple_commands, unquote, words_of)
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.textdoc import Line, TextDocument

NPC = "neuron_parallel_compile"

# -------------------------------------------------------------------------- neuron_parallel_compile

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
        or bool(assignment_name(first)) or first in {"uv", "conda", "make", "ssh", "sudo", "singularity", "apptainer"}


_NPC_OTHER_OPTION = re.compile(r"neuron_parallel_compile\s+--(?!num[_-]parallel|command(?:=|\s+)compile)")


COMPILE_PASS_DELETED = ("deleted this neuron_parallel_compile pass: it ran {target} only to extract and compile its graphs "
                        "(on placeholder data, training nothing) before {why}; TorchNeuron compiles during the real run "
                        "and caches the NEFFs (TORCH_NEURONX_NEFF_CACHE_DIR)")
NPC_PASS_TODO = ("neuron_parallel_compile ran this command only to extract and compile its graphs (it trained "
                     "nothing) and does not exist on TorchNeuron, which compiles during the real run: delete this "
                     "pre-compile step{where}; if it was meant to train, drop the neuron_parallel_compile prefix instead")
NPC_UNSEEN_TODO = ("neuron_parallel_compile was left as it is: it pre-compiles {script}, which is not in this project (so "
                   "it was not migrated) and is a torch_xla / NxD script ({why}) that still compiles this way; once that "
                   "script runs on TorchNeuron, delete this pre-compile step (and the switch that selects it)")
CLEAR_LOCKS_DELETED = ("deleted `neuron_parallel_compile --command clear-locks`: it cleared stale locks of the torch_xla "
                       "compile cache, which TorchNeuron does not have")
VARIABLE_TODO = ("dropped neuron_parallel_compile from this variable: the command it builds now trains for real; if it "
                 "was the pre-compile pass of a run, delete the line that runs it")
SHORT_RUN_STEPS = 100  # a wrapped run with --max_steps at most this is the graph-extraction recipe's short pass

_CLEAR_LOCKS = re.compile(r"neuron_parallel_compile\s+--command(?:=|\s+)clear-locks\b")
_MAX_STEPS = re.compile(r"--max[_-]steps(?:=|\s+)[\"']?(\d+)\b")




def _run_target(code: str) -> str | None:
    """The script (``x.py``/``x.sh``) or command variable (``$CMD``) a command line runs."""
    for word in words_of(code):
        value = unquote(word)
        if value.endswith((".py", ".sh", ".sbatch", ".slurm")) or re.fullmatch(r"\$\{?\w+\}?", value):
            return value
    return None


_TARGET_WORD = re.compile(r"[\w./${}-]+\.(?:py|sh|sbatch|slurm)\b")


def plain_run_targets(text: str) -> frozenset[str]:
    """File names of the scripts a launch file runs without neuron_parallel_compile (a cheap, generous read:
    it is only used to recognise a neuron_parallel_compile pass, which is safe to delete in any case)."""
    names = set()
    for line in text.splitlines():
        code = line.split("#", 1)[0]
        if NPC in code or "%%writefile" in line:  # a notebook cell that writes the script does not run it
            continue
        names.update(posixpath.basename(match) for match in _TARGET_WORD.findall(code))
    return frozenset(names)


PLAIN_RUNS = ProjectFact("launch.plain-runs", frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML, FileKind.PYTHON,
                                                    FileKind.NOTEBOOK}), (".py", ".sh", ".sbatch", ".slurm"), plain_run_targets)


def npc_wrapped_targets(text: str) -> frozenset[str] | None:
    """File names of the scripts a file runs under neuron_parallel_compile in a pass NM401 keeps unless the script is
    run plainly elsewhere (short ``--max_steps`` passes are deleted anyway, so they are left out)."""
    names = set()
    for line in text.splitlines():
        code = line.split("#", 1)[0]
        if NPC not in code or re.match(r"\s*(?:echo|printf|print\s*\()", code):
            continue
        rest = code.split(NPC, 1)[1]
        steps = _MAX_STEPS.search(rest)
        if steps is not None and 0 < int(steps.group(1)) <= SHORT_RUN_STEPS:
            continue
        match = _TARGET_WORD.search(rest)
        if match:
            names.add(posixpath.basename(match.group(0)))
    return frozenset(names) or None


NPC_WRAPPED = ProjectFact("launch.npc-wrapped", PLAIN_RUNS.kinds, (NPC,), npc_wrapped_targets)


def compiled_by(project: ProjectFacts, path: str) -> list[str]:
    """The other files of the project that still run the script ``path`` as a neuron_parallel_compile pass that
    NM401 keeps (with a todo): nothing runs that script without the wrapper."""
    name = posixpath.basename(path)
    if runs_elsewhere(project)(name):
        return []
    return sorted(other for other, names in project.of(NPC_WRAPPED.name).items() if name in names and other != path)


def runs_elsewhere(project: ProjectFacts) -> Callable[[str], bool]:
    """``runs(file name)``: whether a file of the project (a launcher, a notebook's other cell) mentions that script
    on a line without neuron_parallel_compile."""
    runs = project.of(PLAIN_RUNS.name)
    return lambda name: any(name in names for names in runs.values())


def edit_npc(doc: TextDocument, report: Report, runs_elsewhere: Callable[[str], bool] = lambda name: False,
             unseen: tuple[str, str] | None = None) -> None:
    """``neuron_parallel_compile <cmd>`` ran ``<cmd>`` in graph-extraction mode only. A pass whose command the
    file (or, through ``runs_elsewhere(file name)``, another launcher of the project) also runs without it, or a
    short ``--max_steps`` run, is deleted; when the tool cannot tell, the line stays with a todo.
    ``--command clear-locks`` is deleted; the prefix is dropped from variables that build commands."""
    statements = command_statements(doc)
    plain = set()
    for statement in statements:
        code = " ".join(cl.line.text[cl.start:cl.end] for cl in statement)
        if NPC not in code and (target := _run_target(code)):
            plain.add(target)
    for statement in statements:
        code = " ".join(cl.line.text[cl.start:cl.end] for cl in statement)
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
            _drop_npc_words(doc, statement, report)
            continue
        target = _run_target(code.split(NPC, 1)[1])
        steps = _MAX_STEPS.search(code.split(NPC, 1)[1])
        why = None
        if target is not None and target in plain:
            why = f"the real run of {target} in this file"
        elif target is not None and runs_elsewhere(posixpath.basename(target)):
            why = f"the real run of {target} elsewhere in the project"
        elif steps is not None and 0 < int(steps.group(1)) <= SHORT_RUN_STEPS:
            why = f"the real run (a short --max_steps {steps.group(1)} pass)"
        if why is not None and unseen is not None:
            report(first.line, Severity.TODO, NPC_UNSEEN_TODO.format(script=unseen[0], why=unseen[1]))
        elif why is not None and _delete_npc_command(doc, statement):
            report(first.line, Severity.FIXED, COMPILE_PASS_DELETED.format(target=target or "its command", why=why))
            _note_print_only_block(doc, first.line, report)
        else:
            report(first.line, Severity.TODO, NPC_PASS_TODO.format(where=f" (it came before {why})" if why else ""))


PRINT_ONLY_BLOCK_TODO = ("this block only prints now (the neuron_parallel_compile pass it ran was deleted): delete it{also}")
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
    if match is None:
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
    if body and all(_PRINTS.match(line.text) for line in body):
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
    following = toks[toks.index(command[-1]) + 1]
    if following.kind != "op" or following.text not in {"&&", ";"}:
        return False
    line = cl.line
    cut(line, [(command[0].start, following.end)])
    if not line.text[cl.start:].strip(" \t\\"):  # nothing left on the line: the next one starts the statement
        keyword = line.text[:cl.start]
        doc.delete(line)
        second = statement[1].line
        second.text = (keyword.rstrip() + " " if keyword.strip() else second.indent) + second.text.lstrip()
    return True


def _drop_npc_words(doc: TextDocument, statement: list[CommandLine], report: Report) -> None:
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
        report(line, Severity.TODO, VARIABLE_TODO if not cl.exec_form else VARIABLE_TODO.replace("this variable", "this command"))
        if not line.text[cl.start:].strip(" \t\\"):
            drop_line(doc, line)


# ---------------------------------------------------------------------------------- environment

_TRUTHY = {"1", "true", "yes", "on", "True", "TRUE"}



READ_BY_PROJECT_TODO = ("{name} was left as it is: {readers} still read{s} it, so removing it here would change what that "
                        "code does (TorchNeuron itself ignores it); port those reads, then remove this setting")
UNSEEN_TARGET_TODO = ("{name} was left as it is: this file runs {script}, which is not in this project (so it was not "
                      "migrated) and is a torch_xla / NxD script ({why}) that may still need it; remove this setting once "
                      "that script runs on TorchNeuron")


def edit_env(doc: TextDocument, report: Report, names: Callable[[str], bool],
             readers: Callable[[str], list[str]] = lambda name: [], unseen: tuple[str, str] | None = None) -> None:
    """Apply the shared env-var table to every variable for which ``names(var)`` is true. A variable the project's
    Python still reads (``readers(var)``), or set for a torch_xla/NxD script outside the project (``unseen``:
    (script, why)), is not removed: it gets a todo."""
    from codemods._tables import env_vars

    for site in list(env_sites(doc)):
        if site.cl.line.deleted or not names(site.name):
            continue
        action = env_vars.lookup(site.name)
        if action is None or action.action == "keep":
            continue
        message = env_vars.message_for(site.name, action)
        line = site.cl.line
        if action.action == "review":
            if site.unset:
                continue
            report(line, Severity.TODO, message)
            continue
        switched_on = site.value is None or site.value.strip().lower() not in _FALSE | {""}
        if not site.unset and switched_on and (files := readers(site.name)):
            shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            report(line, Severity.TODO, READ_BY_PROJECT_TODO.format(name=site.name, readers=shown,
                                                                    s="s" if len(files) == 1 else ""))
            continue
        if not site.unset and unseen is not None:
            report(line, Severity.TODO, UNSEEN_TARGET_TODO.format(name=site.name, script=unseen[0], why=unseen[1]))
            continue
        if action.action == "replace" and action.replacement and site.word is not None:
            word = site.word
            offset = word.text.find(site.name)
            line.text = line.text[:word.start + offset] + action.replacement + line.text[word.start + offset + len(site.name):]
            report(line, Severity.TODO if action.todo else Severity.FIXED, message)
            continue
        if action.action in {"remove", "replace"}:
            severity = Severity.TODO if action.todo else Severity.FIXED
            if action.action == "remove" and site.value is not None and site.value.strip().lower() in _FALSE | {""}:
                severity, message = Severity.FIXED, f"{site.name}={site.value} switched nothing on; removed"
            if site.unset:
                severity, message = Severity.FIXED, f"removed `unset {site.name}`: the variable is no longer set"
            remove_env_site(doc, site)
            report(line, severity, message)  # a deleted line keeps its number; its note goes to the next line


# ------------------------------------------------------------------------- launched scripts outside the project



def unseen_xla_target(doc: TextDocument, project: ProjectFacts, origin) -> tuple[str, str] | None:
    """(script, why) when every Python script this launcher runs is outside the project and the launcher names the
    torch_xla / NxD stack (installs neuronx_distributed, say): the tool could not migrate that script, so launcher
    settings it reads must stay. None when no project is known or some launched script is the project's."""
    if not project.files:
        return None
    scripts, sign = launched_scripts(doc, project, origin)
    if not scripts or sign is None or any(script.target is not Target.UNKNOWN for script in scripts):
        return None
    return posixpath.basename(scripts[0].name), f"this launcher names {sign.group(0)}"


# ---------------------------------------------------------------------------------- helpers


# ------------------------------------------------------------------------ pre-compile pass (NM402)

_COMPILE_ONLY_VARS = ("NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE")
_READ_VAR = re.compile(r"\$\{?(NEURON_EXTRACT_GRAPHS_ONLY|NEURON_PARALLEL_COMPILE)\b")

COMPILE_PASS_TODO = (
    "{name}={value} made this a graph-extraction (pre-compile) pass; on TorchNeuron it would train for real: "
    "delete the command (or keep it as a short warm-up run)"
)
BRANCH_TODO = (
    "{name} is never set on TorchNeuron: this test is always false; keep only the real-run branch and delete the "
    "pre-compile-only one"
)


BRANCH_FOLDED = "{name} is never set on TorchNeuron: kept only the real-run branch of this test"
REGION_DELETED = ("deleted: this command ran under {name}=1, a graph-extraction (pre-compile) pass that trained "
                  "nothing; TorchNeuron compiles during the real run")
_VARS = "|".join(_COMPILE_ONLY_VARS)
_BRANCH_TEST = re.compile(
    rf"""^(\s*)if\s+\[\[?\s+(?:"?\$\{{?({_VARS})\}}?"?\s*(==?|!=)\s*["']?(?:1|true)["']?|(!\s+)?(-[nz])\s+"?\$\{{?({_VARS})\}}?"?)"""
    r"\s*\]\]?\s*;\s*then\s*(#.*)?$")
_CONTROL = re.compile(r"^\s*(if|fi|for|while|until|done|case|esac|function)\b|\(\)\s*\{")


BRANCH_KEPT_TODO = ("{name} is never set on TorchNeuron, but {files} still run{s} this script as a neuron_parallel_compile "
                    "pass (kept there with a todo), where this test picks the short compile-only settings: delete that "
                    "pass first, then keep only the real-run branch of this test")


def _fold_branches(doc: TextDocument, report: Report, compiled_by: list[str]) -> set[int]:
    """``if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then A; else B; fi`` written over lines: the test is always
    false on TorchNeuron, so B stays (one level less indented) and the rest goes; ``!=`` / ``-z`` keep A. Not while
    another file still runs this script as a compile pass (``compiled_by``): that pass needs the branch. Returns
    the ids of the tests so kept."""
    kept: set[int] = set()
    if doc.kind is not FileKind.SHELL:
        return kept
    lines = [line for line in doc if not line.deleted]
    for index, line in enumerate(lines):
        match = _BRANCH_TEST.match(line.text)
        if not match or line.deleted:
            continue
        indent, name = match.group(1), match.group(2) or match.group(6)
        if compiled_by:
            report(line, Severity.TODO, BRANCH_KEPT_TODO.format(name=name, files=", ".join(compiled_by),
                                                                s="s" if len(compiled_by) == 1 else ""))
            kept.add(id(line))
            continue
        else_at = fi_at = None
        for later in range(index + 1, len(lines)):
            text = lines[later].text
            if not text.strip():
                continue
            own = len(text) - len(text.lstrip())
            if own < len(indent) or own == len(indent) and text.strip() not in {"else", "fi"}:
                break  # a block this simple reading cannot follow (elif, a dedent, code at the test's level)
            if own == len(indent):
                if text.strip() == "else" and else_at is None:
                    else_at = later
                    continue
                if text.strip() == "fi":
                    fi_at = later
                break
        if fi_at is None:
            continue
        true_body = lines[index + 1:else_at if else_at is not None else fi_at]
        false_body = lines[else_at + 1:fi_at] if else_at is not None else []
        always_true = match.group(3) == "!=" or (match.group(5) == "-z") != bool(match.group(4))  # `! -z` is `-n`
        taken = true_body if always_true else false_body
        for dropped in lines[index:fi_at + 1]:
            if dropped not in taken:
                doc.delete(dropped)
        code = [kept for kept in taken if kept.text.strip()]
        level = min((len(kept.text) - len(kept.text.lstrip()) for kept in code), default=len(indent))
        for kept in code:
            kept.text = indent + kept.text[level:]
        report(line, Severity.FIXED, BRANCH_FOLDED.format(name=name))
    return kept


def _delete_regions(doc: TextDocument, report: Report) -> set[int]:
    """A command run as ``NEURON_EXTRACT_GRAPHS_ONLY=1 cmd`` (alone on its line), and the plain commands between
    ``export NEURON_EXTRACT_GRAPHS_ONLY=1`` and ``unset NEURON_EXTRACT_GRAPHS_ONLY`` (no control flow between): they
    ran a graph-extraction pass only, so they go. Returns the ids of the lines of the settings so handled."""
    sites = [site for site in env_sites(doc) if site.name in _COMPILE_ONLY_VARS and site.command is not None]
    statements = command_statements(doc)
    handled: set[int] = set()
    for site in sites:
        if site.unset or site.value is None or site.value.strip() not in _TRUTHY or site.cl.dockerfile_env:
            continue
        if command_word(site.command) is not None and site.command[0].text not in EXPORTERS:
            statement = next((st for st in statements if st[0].line is site.cl.line), None)
            toks = lex(site.cl.line.text, site.cl.start, site.cl.end)[0]
            if statement is not None and len(statement) == 1 and not any(tok.kind == "op" for tok in toks):
                drop_line(doc, site.cl.line)
                report(site.cl.line, Severity.FIXED, REGION_DELETED.format(name=site.name))
                handled.add(id(site.cl.line))
            continue
        end = next((other for other in sites if other.unset and other.name == site.name
                    and doc._index(other.cl.line) > doc._index(site.cl.line)), None)
        if end is None or end.cl.line.indent != site.cl.line.indent:
            continue
        between = [statement for statement in statements
                   if doc._index(site.cl.line) < doc._index(statement[0].line) < doc._index(end.cl.line)]
        if not between or any(_CONTROL.search(cl.line.text) for statement in between for cl in statement):
            continue
        for statement in between:
            toks = [tok for cl in statement for tok in lex(cl.line.text, cl.start, cl.end)[0]]
            if command_word([tok for tok in toks if tok.kind == "word"]) is None:
                continue
            for cl in reversed(statement):
                doc.delete(cl.line)
            report(statement[0].line, Severity.FIXED, REGION_DELETED.format(name=site.name))
            handled.add(id(site.cl.line))
    return handled


def edit_compile_only(doc: TextDocument, report: Report, compiled_by: list[str] = ()) -> None:
    """Drop NEURON_EXTRACT_GRAPHS_ONLY / NEURON_PARALLEL_COMPILE settings, the commands they made a compile-only
    pass (between ``export ...=1`` and ``unset``) and the branches that test them, or flag what cannot be told.
    ``compiled_by``: the files that still run this one as a compile pass (its branches stay, see ``compiled_by``)."""
    kept = _fold_branches(doc, report, list(compiled_by))
    handled = _delete_regions(doc, report)
    for cl in list(command_lines(doc)):
        match = _READ_VAR.search(cl.line.text[cl.start:cl.end])
        if match and id(cl.line) not in kept:
            report(cl.line, Severity.TODO, BRANCH_TODO.format(name=match.group(1)))
    for site in list(env_sites(doc)):
        if site.name not in _COMPILE_ONLY_VARS or site.cl.line.deleted:
            continue
        line = site.cl.line
        truthy = site.value is not None and site.value.strip() in _TRUTHY
        has_command = site.command is not None and command_word(site.command) is not None and not site.cl.dockerfile_env \
            and site.command[0].text not in EXPORTERS
        following = _next_code(doc, line)
        remove_env_site(doc, site)
        anchor = line if not line.deleted else following
        if site.unset:
            report(line, Severity.FIXED, f"removed `unset {site.name}`: nothing sets it any more")
            continue
        from codemods._tables import env_vars

        report(line, Severity.FIXED, env_vars.message_for(site.name, env_vars.lookup(site.name)))
        if truthy and id(line) not in handled and (has_command or (anchor is not None and anchor is following)):
            report(anchor or line, Severity.TODO, COMPILE_PASS_TODO.format(name=site.name, value=site.value))


# ------------------------------------------------------------------------------ optimum-cli (NM406)

_OPTIMUM_CLI = re.compile(r"(?<![\w-])optimum-cli\s+(export\s+neuronx?|neuron\s+(cache|consolidate|serve)|env)\b")


def _option(words: list[str], *names: str) -> str | None:
    for index, word in enumerate(words):
        for name in names:
            if word == name and index + 1 < len(words):
                return words[index + 1]
            if word.startswith(name + "="):
                return word[len(name) + 1:]
    return None


def _positionals(words: list[str], skip: int) -> list[str]:
    out, index = [], skip
    while index < len(words):
        word = words[index]
        if word.startswith("-"):
            index += 1 if "=" in word or word in _FLAG_ONLY else 2
            continue
        out.append(word)
        index += 1
    return out


_FLAG_ONLY = {"--disable-validation", "--inline-weights-neff", "--disable-weights-neff-inline", "--disable_neuron_cache",
              "--dynamic-batch-size", "--trust-remote-code", "--output_attentions", "--output_hidden_states", "-O1", "-O2",
              "-O3", "--disable-fast-relayout", "--disable-fallback", "--public", "--allow_non_cached_model",
              "--allow-non-cached-model"}


def export_todo(words: list[str]) -> str:
    """The todo for ``optimum-cli export neuron`` (words: the argv after ``optimum-cli``)."""
    model = _option(words, "-m", "--model") or "<model id>"
    positional = _positionals(words, 2)
    output = positional[-1] if positional else None
    shapes = [f"{flag}={value}" for flag in ("--batch_size", "--sequence_length", "--height", "--width", "--num_images_per_prompt")
              if (value := _option(words, flag)) is not None]
    dtype = _option(words, "--auto_cast_type", "--torch_dtype")
    cores = _option(words, "--num_cores", "--tensor_parallel_size")
    steps = [f"delete this export: TorchNeuron compiles on first call, there is nothing to pre-compile; load {model} "
             f"with from_pretrained (optionally torch.compile(backend=\"neuron\"))"]
    if output:
        steps.append(f"point later uses of {output} at {model}")
    if shapes:
        steps.append(f"keep {' '.join(shapes)} as fixed input padding/batch size")
    if dtype:
        steps.append(f"--auto_cast_type/--torch_dtype {dtype} -> dtype= at load")
    if cores:
        steps.append(f"{cores} cores -> DistributedConfig(tp_size={cores}) under torchrun")
    return "; ".join(steps)




def edit_optimum_cli(doc: TextDocument, report: Report) -> None:
    all_lines = list(command_lines(doc))
    for position, cl in enumerate(all_lines):
        line = cl.line
        code = line.text[cl.start:cl.end]
        for later in all_lines[position + 1:]:  # the command's continuation lines carry more flags
            if not later.continued or not code.rstrip().endswith("\\"):
                break
            code = code.rstrip()[:-1] + " " + later.line.text[later.start:later.end]
        if cl.exec_form:
            words = exec_words(code)
            if words and words[0].endswith("optimum-cli") and _OPTIMUM_CLI.search(" ".join(words)):
                report(line, Severity.TODO, export_todo(words[1:]) if words[1:2] == ["export"] else
                       "optimum-cli Neuron command: see `neuron-migrate --explain NM406` for what replaces it")
            continue
        match = _OPTIMUM_CLI.search(code)
        if not match:
            continue
        words = [unquote(word) for word in words_of(code[match.start():])]
        words = words[1:] if words and words[0].endswith("optimum-cli") else words
        verb = match.group(1).split()
        if verb[0] == "export":
            report(line, Severity.TODO, export_todo(words))
        elif verb[0] == "env":
            start = cl.start + match.start()
            line.text = line.text[:start] + "transformers env" + line.text[start + len(match.group(0)):]
            report(line, Severity.FIXED, "`optimum-cli env` -> `transformers env`")
        elif verb[1] == "cache":
            toks, _ = lex(line.text, cl.start, cl.end)
            commands = simple_commands(toks)
            standalone = len(commands) == 1 and not cl.continued and not line.text.rstrip().endswith("\\") \
                and doc.kind in (FileKind.SHELL,) and code.strip().startswith("optimum-cli")
            if standalone:
                drop_line(doc, line)
                report(line, Severity.FIXED, "removed `optimum-cli neuron cache ...`: there is no Hub compile cache on "
                       "TorchNeuron (NEFFs are cached locally in TORCH_NEURONX_NEFF_CACHE_DIR)")
            else:
                report(line, Severity.TODO, "delete `optimum-cli neuron cache ...`: there is no Hub compile cache on "
                       "TorchNeuron (NEFFs are cached locally in TORCH_NEURONX_NEFF_CACHE_DIR)")
        elif verb[1] == "consolidate":
            report(line, Severity.TODO, "delete `optimum-cli neuron consolidate`: stock save_pretrained already writes "
                   "a consolidated checkpoint; convert checkpoints saved by optimum-neuron once, on the old stack, "
                   "before uninstalling it")
        else:  # serve
            model = _option(words, "-m", "--model") or "<model id>"
            flags = [f"--tensor-parallel-size {v}" for v in [_option(words, "--tensor_parallel_size", "--tensor-parallel-size")] if v]
            flags += [f"--max-num-seqs {v}" for v in [_option(words, "--batch_size", "--batch-size")] if v]
            flags += [f"--max-model-len {v}" for v in [_option(words, "--sequence_length", "--sequence-length")] if v]
            flags += [f"--port {v}" for v in [_option(words, "--port")] if v]
            report(line, Severity.TODO, f"replace with `vllm serve {' '.join([model, *flags])}` with the vLLM-Neuron "
                   "plugin installed (optimum-neuron's vLLM platform is gone)")


# ---------------------------------------------------------------------------------- torchrun (NM407)

_TORCHRUN = re.compile(r"(?<![\w-])(torchrun|torch\.distributed\.(?:run|launch))\b")
_NPROC = re.compile(r"--nproc[_-]per[_-]node(?:=|\s+)[\"']?([^\s\"']+)")
_XLA_LAUNCH = re.compile(r"torch_xla\.distributed\.xla_dist|\bxla_spawn\b|torch_xla\.distributed\.xla_multiprocessing")
TRN1_CORES = {"32"}


def edit_torchrun(doc: TextDocument, report: Report, trn1: bool = False) -> None:
    """torchrun stays; flag --nproc_per_node values that came from a trn1 recipe and torch_xla launchers."""
    for cl in list(command_lines(doc)):
        line = cl.line
        code = line.text[cl.start:cl.end]
        if _XLA_LAUNCH.search(code):
            report(line, Severity.TODO, "torch_xla launcher: start the script with `torchrun --nproc_per_node <NeuronCores>` "
                   "instead (one process per logical NeuronCore)")
            continue
        match = _NPROC.search(code)
        if not match:
            continue
        value = match.group(1)
        if value in TRN1_CORES or (trn1 and value.isdigit()):
            report(line, Severity.TODO, f"--nproc_per_node {value} looks like a trn1 NeuronCore count; TorchNeuron runs on "
                   "Trn2/Trn3 with one process per logical NeuronCore (trn2.48xlarge: 64): set it to the product of "
                   "your DistributedConfig dims")


def mentions_trn1(text: str) -> bool:
    return bool(re.search(r"\btrn1\b|\btrn1[.n]|\binf2\.", text))


# --------------------------------------------------------------------------- trainer flags (NM408)


def training_args():
    from codemods._tables.training_args import TRAINING_ARGS

    return TRAINING_ARGS


_FLAG = re.compile(r"^--([A-Za-z][\w-]*)(=.*)?$")


def flag_mapping(flag: str):
    """The FieldMapping of a ``--flag`` word (underscores or dashes), or None."""
    match = _FLAG.match(flag)
    if not match:
        return None
    table = training_args()
    name = match.group(1)
    return table.get(name) or table.get(name.replace("-", "_"))


_TRUE = {"true", "1", "yes", "y", "on"}
_FALSE = {"false", "0", "no", "n", "off"}


@dataclass
class FlagPlan:
    words: list[str] | None  # replacement words for the flag (None: keep the flag; []: remove it)
    consume_value: bool  # the value word after the flag goes too (or is replaced)
    severity: Severity
    message: str


def flag_plan(mapping, flag: str, value: str | None) -> FlagPlan | None:
    """What to do with ``flag`` (``--name``) and the word after it (``value``, unquoted, or None) per the
    shared field map. Fields with no stock counterpart are removed, because HfArgumentParser rejects
    unknown flags (map T35); the message keeps the old value when a human must carry it somewhere."""
    from codemods._tables.training_args import FieldAction

    if mapping is None or mapping.action is FieldAction.KEEP:
        return None
    message = mapping.message or f"{flag}: {mapping.action.value}"
    lowered = (value or "").lower()
    if mapping.action is FieldAction.RENAME and mapping.target:
        if mapping.value is None:
            return FlagPlan(["--" + mapping.target], False, Severity.FIXED, message)
        if value is not None and lowered in _FALSE:
            return FlagPlan([], True, Severity.FIXED, f"{flag} {value}: the option was off; removed")
        import ast

        literal = ast.literal_eval(mapping.value)
        words = [literal] if isinstance(literal, str) else [str(item) for item in literal]
        return FlagPlan(["--" + mapping.target, *words], value is not None and lowered in _TRUE, Severity.FIXED, message)
    if mapping.action is FieldAction.DROP:
        return FlagPlan([], value is not None, Severity.FIXED, message)
    if value is not None:
        message = f"{message} (was {flag} {value})"
    return FlagPlan([], value is not None, Severity.TODO, message)


COMPILE_FLAG = "--torch_compile true"
COMPILE_ADDED = ("--torch_compile true added: TorchNeuron's Hugging Face recipe trains with torch_compile (the Trainer "
                 "picks the neuron backend)")
COMPILE_TODO = ("add --torch_compile true to this command: TorchNeuron's Hugging Face recipe trains with torch_compile "
                "(the Trainer picks the neuron backend)")
UNRESOLVED_TODO = ("{flag} was left as it is: {name} is not a script of this project that parses optimum-neuron "
                   "training arguments (HfArgumentParser/TrlParser over NeuronTrainingArguments, NeuronSFTConfig ...), "
                   "so the flag may be its own; if it is an optimum-neuron trainer script: {message}")


STOCK_UNRESOLVED_TODO = ("{flag} was left as it is: {name} is not a script of this project, so whether it parses "
                         "transformers' TrainingArguments is not known; if it does (HfArgumentParser raises on a flag no "
                         "field declares): {message}")


#: the shell edits report what they did ("...; removed", "deleted ...", "--x added"); where the string is left as it
#: is, the same message must say what to do instead
_DONE = [
    (re.compile(r"\((?:removed|deleted)\)"), "(remove it)"),
    (re.compile(r"(?<=[:;] )(?:removed|deleted)(?=$|[:;,.])"), "remove it"),
    (re.compile(r"^removed(?= [`'\"-])"), "remove"),  # "removed `unset X`", not "removed in transformers 5"
    (re.compile(r"^deleted\b"), "delete"),
    (re.compile(r"^dropped\b"), "drop"),
    (re.compile(r"^(\S+(?: \S+)?) added\b"), r"add \1"),
]


def as_step(message: str) -> str:
    """A report of an edit made, reworded as the step to take when the edit was not made."""
    for pattern, step in _DONE:
        message = pattern.sub(step, message)
    return message


def unresolved_todo(flag: str, name: str, field_name: str, message: str) -> str:
    """The todo for a mapped flag on a command whose script is not in the project."""
    template = STOCK_UNRESOLVED_TODO if field_name in STOCK_REMOVED else UNRESOLVED_TODO
    return template.format(flag=flag, name=name, message=as_step(message))  # the flag stays: say what to do




def flag_statements(doc: TextDocument) -> list[list[CommandLine]]:
    """Command lines grouped by statement; a YAML list's items (one argument each) form one statement."""
    statements: list[list[CommandLine]] = []
    for cl in command_lines(doc):
        last = statements[-1][-1] if statements else None
        same_list = doc.kind is FileKind.YAML and cl.yaml_item and last is not None and last.yaml_item \
            and last.line.indent == cl.line.indent
        if (cl.continued or same_list) and statements:
            statements[-1].append(cl)
        else:
            statements.append([cl])
    return statements


def edit_flags(doc: TextDocument, report: Report, resolve: Resolve = unresolved) -> None:
    """Neuron trainer ``--flags`` on command lines, mapped through the shared training-arguments table, for the
    commands that run a script of the project parsing Neuron training arguments (``resolve``); on commands
    whose program cannot be resolved the flags stay, with a todo; other programs' flags are theirs. A YAML
    ``args:`` list right after a ``command:`` (a Kubernetes container) goes to that command's script."""
    statements = flag_statements(doc)
    for position, statement in enumerate(statements):
        joined = " ".join(cl.line.text[cl.start:cl.end] for cl in statement)
        if "--" not in joined:
            continue
        container = None
        if doc.kind is FileKind.YAML and statement[0].yaml_item:
            for earlier in reversed(statements[max(0, position - 2):position]):
                words = [unquote(word) for cl in earlier for word in words_of(cl.line.text[cl.start:cl.end])]
                container = program_of(words) if words else None
                if container is not None and container.kind != "program":
                    break
                container = None
        # a `command:` whose arguments follow in an `args:` list: the list gets --torch_compile, not the command
        args_follow = doc.kind is FileKind.YAML and statement[0].exec_form and any(
            later[0].yaml_item for later in statements[position + 1:position + 3])
        items: list[tuple[CommandLine, Tok]] = []
        for cl in statement:
            toks, _ = lex(cl.line.text, cl.start, cl.end)
            items.extend((cl, tok) for tok in toks)
        command: list[tuple[CommandLine, Tok]] = []
        for item in items + [(statement[-1], Tok("op", 0, 0, ";"))]:
            if item[1].kind == "op":
                if command:
                    _edit_command_flags(doc, report, resolve, command, container, not args_follow)
                command = []
            else:
                command.append(item)


USE_CPU_TODO = ("{flag}: the stock Trainer then trains on the CPU, not on the Neuron device; remove it unless a CPU "
                "run is meant")


def _flag_use_cpu(report: Report, arguments: list[tuple[CommandLine, Tok]]) -> None:
    """``--use_cpu True`` is a stock field, so no mapping touches it; on TorchNeuron it moves training off the device."""
    for index, (cl, tok) in enumerate(arguments):
        flag, eq, inline = unquote(tok.text).partition("=")
        if flag.replace("-", "_") != "__use_cpu":
            continue
        following = arguments[index + 1][1].text if index + 1 < len(arguments) else None
        value = inline if eq else (unquote(following) if following is not None and not following.startswith("-") else "true")
        if value.lower() in _TRUE:
            report(cl.line, Severity.TODO, USE_CPU_TODO.format(flag=f"{flag} {value}" if not eq else unquote(tok.text)))


def _edit_command_flags(doc: TextDocument, report: Report, resolve: Resolve, command: list[tuple[CommandLine, Tok]],
                        container: Program | None = None, compile_here: bool = True) -> None:
    program = program_of([unquote(tok.text) for _, tok in command])
    if program is not None and program.start < 0 and container is not None:  # `args:` of a `command:`
        program = Program(container.kind, container.name, -1)
    if program is None or program.kind == "program" and program.name in NOT_TRAINERS:
        return
    resolved = resolve(program)
    if resolved.target is Target.OTHER and not (resolved.script is not None and resolved.script.stock):
        return
    arguments = command[program.start + 1:]
    _flag_use_cpu(report, arguments)
    plans = []
    for index, (cl, tok) in enumerate(arguments):
        if not tok.text.startswith("--"):
            continue
        flag, eq, inline = unquote(tok.text).partition("=")
        value_item = None
        if not eq and index + 1 < len(arguments) and not arguments[index + 1][1].text.startswith("-"):
            value_item = arguments[index + 1]
        value = inline if eq else (unquote(value_item[1].text) if value_item else None)
        mapping = flag_mapping(flag)
        if mapping is None or resolved.owns(mapping.source) or (resolved.target is Target.OTHER and not resolved.feeds(mapping.source)):
            continue
        plan = flag_plan(mapping, flag, value)
        if plan is not None:
            plans.append((cl, tok, eq, value_item, plan, mapping))
    if resolved.target is Target.UNKNOWN:
        for cl, tok, _, value_item, plan, mapping in plans:
            shown = f"{unquote(tok.text)} {unquote(value_item[1].text)}" if value_item and "=" not in tok.text else unquote(tok.text)
            report(cl.line, Severity.TODO, unresolved_todo(shown, resolved.name, mapping.source, plan.message))
        return
    edits: dict[int, list[tuple[int, int, str | None]]] = {}  # id(line) -> (start, end, replacement or None=cut)
    owners: dict[int, CommandLine] = {}
    for cl, tok, eq, value_item, plan, _ in plans:
        owners[id(cl.line)] = cl
        if plan.words:
            if eq and not plan.consume_value and len(plan.words) == 1:
                new = plan.words[0] + "=" + tok.text.split("=", 1)[1]
            else:
                new = " ".join(_shell_quote(word) for word in plan.words)
            edits.setdefault(id(cl.line), []).append((tok.start, tok.end, new))
        else:
            edits.setdefault(id(cl.line), []).append((tok.start, tok.end, None))
        if plan.consume_value and value_item is not None and not eq:
            owners[id(value_item[0].line)] = value_item[0]
            edits.setdefault(id(value_item[0].line), []).append((value_item[1].start, value_item[1].end, None))
        report(cl.line, plan.severity, plan.message)
    if compile_here and resolved.target is Target.NEURON:  # a stock script only loses its removed flags
        _set_torch_compile(doc, report, command, arguments, edits, owners)
    for key, line_edits in edits.items():
        cl = owners[key]
        for start, end, new in sorted(line_edits, key=lambda edit: edit[:2], reverse=True):
            if new is None:
                cut(cl.line, [(start, end)])
            else:
                cl.line.text = cl.line.text[:start] + new + cl.line.text[end:]
        if not cl.line.text[cl.start:].strip(" \t\\"):
            drop_line(doc, cl.line)


_REDIRECTION = re.compile(r"^\d*(?:[<>]|&>)")


def _set_torch_compile(doc: TextDocument, report: Report, command: list[tuple[CommandLine, Tok]], arguments: list[tuple[CommandLine, Tok]],
                       edits: dict[int, list[tuple[int, int, str | None]]], owners: dict[int, CommandLine]) -> None:
    """A command that feeds Neuron training arguments trains with ``--torch_compile true`` (issue 15, class 8)."""
    if any(unquote(tok.text).split("=", 1)[0] in ("--torch_compile", "--torch-compile") for _, tok in arguments):
        return
    words = [tok.text for _, tok in command]
    last_index = len(command) - 1
    for index, word in enumerate(words):  # redirections (`> log`, `2>&1`) come after the arguments
        if _REDIRECTION.match(word):
            last_index = min(last_index, index - 1)
    cl, last = command[max(last_index, 0)]
    if cl.yaml_item:  # one argument per list item: two more items
        item = cl.line.text[:cl.line.text.index("-") + 1]
        doc.insert_after(cl.line, [f"{item} --torch_compile", f'{item} "true"'])
        report(command[0][0].line, Severity.FIXED, COMPILE_ADDED)
        return
    if cl.exec_form:
        report(command[0][0].line, Severity.TODO, COMPILE_TODO)
        return
    owners[id(cl.line)] = cl
    edits.setdefault(id(cl.line), []).append((last.end, last.end, " " + COMPILE_FLAG))
    report(command[0][0].line, Severity.FIXED, COMPILE_ADDED)


def _shell_quote(word: str) -> str:
    return word if re.fullmatch(r"[\w@%+=:,./-]+", word) else "'" + word.replace("'", "'\\''") + "'"


# ------------------------------------------------------------------------- deployment glue (NM409/NM411)

_DEPLOY = [
    (re.compile(r"(?:huggingface-)?pytorch-(?:training|inference)-neuronx?\b[\w.:-]*"), "a Neuron (PyTorch/XLA-era) deep-learning container"),
    (re.compile(r"\b(?:tgi|text-generation-inference)[-_]?neuronx?\b[\w.:-]*|\bneuronx-tgi\b[\w.:-]*|huggingface-neuronx\b"), "a TGI-neuronx serving image"),
    (re.compile(r"--entrypoint[= ]optimum-cli\b"), "a container started through optimum-cli"),
    (re.compile(r"\bHF_NUM_CORES\b|\bHF_AUTO_CAST_TYPE\b"), "TGI-neuronx compile settings"),
    (re.compile(r"\bml\.(?:inf1|inf2|trn1n?)\.\w+"), "an instance type without TorchNeuron support (Trn2/Trn3 only)"),
]
DEPLOY_TODO = ("deployment glue: {what} ({hit}); TorchNeuron runs on Trn2/Trn3 and serves through the vLLM-Neuron "
               "plugin or a TorchNeuron container: replace the image/instance and its settings by hand")


def deployment_hits(text: str) -> list[tuple[str, str]]:
    """(what, matched text) for every XLA-era Neuron deployment reference in ``text``."""
    hits = []
    for pattern, what in _DEPLOY:
        match = pattern.search(text)
        if match:
            hits.append((what, match.group(0)))
    return hits


def edit_deployment(doc: TextDocument, report: Report) -> None:
    for line in list(doc):
        stripped = line.text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        for what, hit in deployment_hits(line.text):
            report(line, Severity.TODO, DEPLOY_TODO.format(what=what, hit=hit))


# ------------------------------------------------------------------------ command strings (NM410)

STRING_TRIGGERS = ("neuron_parallel_compile", "optimum-cli", "NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE",
                   "XLA_USE_BF16", "XLA_DOWNCAST_BF16", "PJRT_DEVICE", "--nproc_per_node", "--nproc-per-node",
                   "--tensor_parallel_size", "--tensor-parallel-size", "--use_cpu", "--use-cpu")


def edit_shell_text(text: str, resolve: Resolve = unresolved, runs: Callable[[str], bool] = lambda name: False,
                    readers: Callable[[str], list[str]] = lambda name: []) -> tuple[str, list[tuple[Severity, str]]]:
    """Every launch-layer shell edit applied to one command string (as in a Python literal); the findings
    come back as (severity, message) without line information. ``resolve``: see ``edit_flags``; ``runs``: see
    ``edit_npc``; ``readers``: see ``edit_env``."""
    from codemods._tables import env_vars

    doc = TextDocument(text, FileKind.SHELL)
    found: list[tuple[Severity, str]] = []

    def report(line: Line, severity: Severity, message: str) -> None:
        found.append((severity, " ".join(message.split())))

    def removable(name: str) -> bool:
        action = env_vars.lookup(name)
        return name not in _COMPILE_ONLY_VARS and action is not None and action.action in {"remove", "replace"}

    edit_npc(doc, report, runs)
    edit_compile_only(doc, report)
    edit_env(doc, report, removable, readers)
    edit_optimum_cli(doc, report)
    edit_torchrun(doc, report)
    edit_flags(doc, report, resolve)
    try:
        from codemods.deps.nm505_pip_install_lines import edit_pip_install
    except ImportError:  # pragma: no cover
        pass
    else:
        edit_pip_install(doc, report)
    return doc.text(), found


