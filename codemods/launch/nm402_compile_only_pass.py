"""NM402 compile-only-pass: remove ``NEURON_EXTRACT_GRAPHS_ONLY`` / ``NEURON_PARALLEL_COMPILE`` and what they marked.

What it does:

* the settings go wherever they are (``export``, ``VAR=1 cmd`` prefixes, ``unset``, Dockerfile ``ENV``, YAML
  env lists);
* a command run as ``NEURON_EXTRACT_GRAPHS_ONLY=1 cmd`` (alone on its line), and the plain commands between
  ``export NEURON_EXTRACT_GRAPHS_ONLY=1`` and ``unset NEURON_EXTRACT_GRAPHS_ONLY``, are deleted: kept, they
  would now train for real beside the real run; with such a one-line command go the comment line and the
  ``echo`` directly above it that speak only of compiling or graphs (as NM401 does for its passes);
* a multi-line ``if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then A else B fi`` keeps B (``!=`` / ``-z``: A);
* while another file of the project still runs this script as a ``neuron_parallel_compile`` pass (kept by
  NM401 with a todo, as nothing runs the script without it), its tests stay, with a todo: that pass needs them.
  Whether it still does is read on that file as this run leaves it (migrated with the run's rules): a pass this
  run deletes there (``NEURON_EXTRACT_GRAPHS_ONLY=1 neuron_parallel_compile bash train.sh``, a pass cut out of a
  ``bash -c "..."``) keeps nothing here, so the first run folds the test a second run would fold;
* a launcher that runs a script staying on torch_xla (outside the project while the launcher names the
  torch_xla / NxD stack, or a project script the torch_xla rules leave as a whole: the project fact
  ``launch.stays-on-xla``, or a project script that stays on optimum-neuron after this run) keeps every setting and test of these variables, each with a todo: that script still
  compiles through ``neuron_parallel_compile``, which sets them, and may read them itself;
* what this reading cannot follow (an ``export`` with no ``unset``, control flow inside the region, other
  tests of the variable) stays with a ``todo``;
* Python reads of these variables belong to the torch_xla rules; command strings inside Python get the same edit
  through NM410.

Why:

These variables marked the graph-extraction pass of ``neuron_parallel_compile``: a command run with one set
to ``1`` extracted and compiled its graphs on placeholder data and trained nothing. On TorchNeuron nothing sets
them (graphs compile during the real run), so a setting is dead and a command it marked would train for real.

Before::

    if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then
        MAX_STEPS=10
    else
        MAX_STEPS=-1
    fi
    export NEURON_EXTRACT_GRAPHS_ONLY=1
    torchrun train.py --max_steps 10
    unset NEURON_EXTRACT_GRAPHS_ONLY
    torchrun train.py --max_steps $MAX_STEPS

After::

    MAX_STEPS=-1
    torchrun train.py --max_steps $MAX_STEPS

Safety: needs-review. Check the todos: a region or a test the rule could not follow, the tests kept while
another file still runs this script as a pre-compile pass, and everything kept for a script that stays on
torch_xla.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/neuron-sys-tools/neuron-parallel-compile.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
"""

from __future__ import annotations

import posixpath
import re
from typing import Sequence, cast

from codemods._lib.launch_targets import NOTEBOOK_SCRIPTS, OPTIMUM_NEURON_CODE, PARSER_SCRIPTS, STAYS_ON_XLA
from codemods._lib.shell import (
    EXPORTERS,
    EmbeddedCommand,
    Report,
    command_lines,
    command_statements,
    command_word,
    drop_line,
    env_sites,
    lex,
    next_code,
    remove_env_site,
)
from codemods._tables import env_vars
from codemods.launch._base import MAX_STEPS, NPC, PLAIN_RUNS, SHORT_RUN_STEPS, TARGET_WORD, LaunchRule, runs_elsewhere
from codemods.launch.nm401_neuron_parallel_compile import COMPILE_ONLY_MARK, drop_announcements
from codemods.xla._base import XSER_LOADS
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import RuleOptions, Safety
from migrate.textdoc import TextDocument

_TRUTHY = {"1", "true", "yes", "on", "True", "TRUE"}

COMPILE_ONLY_VARS = ("NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE")
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
_VARS = "|".join(COMPILE_ONLY_VARS)
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
        for body_line in code:
            body_line.text = indent + body_line.text[level:]
        report(line, Severity.FIXED, BRANCH_FOLDED.format(name=name))
    return kept


def _delete_regions(doc: TextDocument, report: Report) -> set[int]:
    """A command run as ``NEURON_EXTRACT_GRAPHS_ONLY=1 cmd`` (alone on its line), and the plain commands between
    ``export NEURON_EXTRACT_GRAPHS_ONLY=1`` and ``unset NEURON_EXTRACT_GRAPHS_ONLY`` (no control flow between): they
    ran a graph-extraction pass only, so they go. Returns the ids of the lines of the settings so handled."""
    sites = [site for site in env_sites(doc) if site.name in COMPILE_ONLY_VARS and site.command is not None]
    statements = command_statements(doc)
    handled: set[int] = set()
    for site in sites:
        if site.unset or site.value is None or site.value.strip() not in _TRUTHY or site.cl.dockerfile_env \
                or site.command is None:  # (none is: sites holds commands only; said again for the type checker)
            continue
        if command_word(site.command) is not None and site.command[0].text not in EXPORTERS:
            statement = next((st for st in statements if st[0].line is site.cl.line), None)
            toks = lex(site.cl.line.text, site.cl.start, site.cl.end)[0]
            if statement is not None and len(statement) == 1 and not any(tok.kind == "op" for tok in toks):
                drop_line(doc, site.cl.line)
                report(site.cl.line, Severity.FIXED, REGION_DELETED.format(name=site.name))
                drop_announcements(doc, site.cl.line, report)  # its `# compile the graphs` / `echo "precompiling"`
                handled.add(id(site.cl.line))
            continue
        between = _region(doc, site, sites, statements)
        if between is None:
            continue
        if not between:  # its pass went already (NM401 deletes one in such a region): the settings go, no todo
            handled.add(id(site.cl.line))
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


def _region(doc: TextDocument, site, sites: list, statements: list) -> list | None:
    """The statements between ``export NAME=1`` (``site``) and the ``unset NAME`` after it at its indent, with no
    control flow between; None when there is no such region."""
    end = next((other for other in sites if other.unset and other.name == site.name
                and doc._index(other.cl.line) > doc._index(site.cl.line)), None)
    if end is None or end.cl.line.indent != site.cl.line.indent:
        return None
    between = [statement for statement in statements
               if doc._index(site.cl.line) < doc._index(statement[0].line) < doc._index(end.cl.line)]
    if any(_CONTROL.search(cl.line.text) for statement in between for cl in statement):
        return None
    return between


def compile_only_regions(doc: TextDocument) -> set[int]:
    """The ids of the first lines of the statements between ``export NEURON_EXTRACT_GRAPHS_ONLY=1`` and its
    ``unset`` that ``_delete_regions`` deletes (NM401 deletes a pass there for the same reason, rather than leave a
    todo on a line this rule then deletes)."""
    sites = [site for site in env_sites(doc) if site.name in COMPILE_ONLY_VARS and site.command is not None]
    statements = command_statements(doc)
    found: set[int] = set()
    for site in sites:
        if site.unset or site.value is None or site.value.strip() not in _TRUTHY or site.cl.dockerfile_env \
                or site.command is None or site.command[0].text not in EXPORTERS:
            continue
        found.update(id(statement[0].line) for statement in _region(doc, site, sites, statements) or ())
    return found


KEPT_FOR_XLA_TODO = ("{name} was left as it is: this file runs {script}, {why}, and that script still compiles through "
                     "neuron_parallel_compile, which sets {name} in its compile-only pass (the script may read it too); "
                     "once that script runs on TorchNeuron, keep only the real-run branch of each test of {name} and "
                     "delete its settings")


def keep_for_xla_target(doc: TextDocument, report: Report, unseen: tuple[str, str]) -> None:
    """The launcher runs a script that stays on torch_xla (``unseen``: (script, why)): every line that sets or tests
    a compile-only variable stays, with a todo."""
    for cl in list(command_lines(doc)):
        match = _READ_VAR.search(cl.line.text[cl.start:cl.end])
        if match:
            report(cl.line, Severity.TODO, KEPT_FOR_XLA_TODO.format(name=match.group(1), script=unseen[0], why=unseen[1]))
    for site in list(env_sites(doc)):
        if site.name in COMPILE_ONLY_VARS:
            report(site.cl.line, Severity.TODO, KEPT_FOR_XLA_TODO.format(name=site.name, script=unseen[0], why=unseen[1]))


def edit_compile_only(doc: TextDocument, report: Report, compiled_by: Sequence[str] = (),
                      unseen: tuple[str, str] | None = None) -> None:
    """Drop NEURON_EXTRACT_GRAPHS_ONLY / NEURON_PARALLEL_COMPILE settings, the commands they made a compile-only
    pass (between ``export ...=1`` and ``unset``) and the branches that test them, or flag what cannot be told.
    ``compiled_by``: the files that still run this one as a compile pass (its branches stay, see ``compiled_by``);
    ``unseen``: (script, why) of a launched script that stays on torch_xla (everything stays, see
    ``keep_for_xla_target``)."""
    if unseen is not None:
        keep_for_xla_target(doc, report, unseen)
        return
    kept = _fold_branches(doc, report, list(compiled_by))
    handled = _delete_regions(doc, report)
    for cl in list(command_lines(doc)):
        match = _READ_VAR.search(cl.line.text[cl.start:cl.end])
        if match and id(cl.line) not in kept:
            report(cl.line, Severity.TODO, BRANCH_TODO.format(name=match.group(1)))
    for site in list(env_sites(doc)):
        if site.name not in COMPILE_ONLY_VARS or site.cl.line.deleted:
            continue
        line = site.cl.line
        truthy = site.value is not None and site.value.strip() in _TRUTHY
        has_command = site.command is not None and command_word(site.command) is not None and not site.cl.dockerfile_env \
            and site.command[0].text not in EXPORTERS
        following = next_code(doc, line)
        remove_env_site(doc, site)
        anchor = line if not line.deleted else following
        if site.unset:
            report(line, Severity.FIXED, f"removed `unset {site.name}`: nothing sets it any more")
            continue
        # every compile-only variable has its action in the table
        report(line, Severity.FIXED, env_vars.message_for(site.name, cast(env_vars.EnvVarAction, env_vars.lookup(site.name))))
        if truthy and id(line) not in handled and (has_command or (anchor is not None and anchor is following)):
            report(anchor or line, Severity.TODO, COMPILE_PASS_TODO.format(name=site.name, value=site.value))



def npc_wrapped_targets(text: str) -> frozenset[str] | None:
    """File names of the scripts a file runs under neuron_parallel_compile in a pass NM401 keeps unless the script is
    run plainly elsewhere (short ``--max_steps`` passes and ``NEURON_EXTRACT_GRAPHS_ONLY=1`` ones are deleted anyway,
    so they are left out)."""
    names = set()
    for line in text.splitlines():
        code = line.split("#", 1)[0]
        if NPC not in code or re.match(r"\s*(?:echo|printf|print\s*\()", code):
            continue
        rest = code.split(NPC, 1)[1]
        steps = MAX_STEPS.search(rest)
        if steps is not None and 0 < int(steps.group(1)) <= SHORT_RUN_STEPS or COMPILE_ONLY_MARK.search(code.split(NPC, 1)[0]):
            continue
        match = TARGET_WORD.search(rest)
        if match:
            names.add(posixpath.basename(match.group(0)))
    return frozenset(names) or None


NPC_WRAPPED = ProjectFact("launch.npc-wrapped", PLAIN_RUNS.kinds, (NPC,), npc_wrapped_targets)
#: the text of each file ``NPC_WRAPPED`` names scripts of: ``compiled_by`` reads what this run leaves of it
NPC_WRAPPER_TEXTS = ProjectFact("launch.npc-wrapper-texts", PLAIN_RUNS.kinds, (NPC,),
                                lambda text: text if npc_wrapped_targets(text) else None)


def compiled_by(project: ProjectFacts, path: str, options: RuleOptions | None = None) -> list[str]:
    """The other files of the project that still run the script ``path`` as a neuron_parallel_compile pass that
    NM401 keeps (with a todo): nothing runs that script without the wrapper. Decided on what this run leaves of
    those files (``options``: the run's; each is migrated as the engine migrates it, ``migrated_text``), so that
    a pass this run deletes there (NM401 cutting it out of a ``bash -c "..."``, NM402 a ``VAR=1`` pass) keeps no
    test here: a second run would fold it, and the note would name a pass that is gone. Inside such a simulation
    (no nesting), or without ``options``, the files as they are."""
    from codemods.deps._plan import _SIMULATING, migrated_text, still_importing

    name = posixpath.basename(path)
    if runs_elsewhere(project)(name):
        return []
    found = sorted(other for other, names in project.of(NPC_WRAPPED.name).items() if name in names and other != path)
    if options is None or _SIMULATING or not found:
        return found
    texts = project.of(NPC_WRAPPER_TEXTS.name)
    kept = frozenset(still_importing(dict(project.of(OPTIMUM_NEURON_CODE.name)), options))
    left = []
    for other in found:
        text = texts.get(other)
        migrated = migrated_text(other, text, options, kept) if text is not None else None
        if migrated is None or name in (npc_wrapped_targets(migrated) or ()):
            left.append(other)
    return left


class CompileOnlyPass(LaunchRule):
    """Remove NEURON_EXTRACT_GRAPHS_ONLY / NEURON_PARALLEL_COMPILE, the compile-only runs they marked and the branches that test them."""

    id = "NM402"
    name = "compile-only-pass"
    safety = Safety.NEEDS_REVIEW
    triggers = ("NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE")
    facts = (PLAIN_RUNS, NPC_WRAPPED, NPC_WRAPPER_TEXTS, PARSER_SCRIPTS, NOTEBOOK_SCRIPTS, STAYS_ON_XLA, XSER_LOADS, OPTIMUM_NEURON_CODE)

    def apply(self, doc: TextDocument) -> None:
        edit_compile_only(doc, self.report, compiled_by(self.ctx.options.project, self.ctx.path.as_posix(), self.ctx.options),
                          self.unseen_target(doc))

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_compile_only(doc, report, (), embedded.unseen(doc.text()))

    def make_echo_reason(self, said: str) -> str | None:
        """The @echo of a Make target left empty names no compile-only variable (the sweep would flag it)."""
        if said.startswith(REGION_DELETED.split(":", 1)[0]):
            return "deleted its compile-only pass: graphs compile on first use, in the real run"
        return None

    @staticmethod
    def owns_env(name: str) -> bool:
        """Whether ``name`` is one of the variables this rule removes (NM410 asks, for ``NAME=value`` argv elements)."""
        return name in COMPILE_ONLY_VARS
