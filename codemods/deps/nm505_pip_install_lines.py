"""NM505 pip-install-neuron-stack: move ``pip install`` commands from optimum-neuron / PyTorch-XLA to TorchNeuron.

What it does:

* each requirement argument of ``pip``/``pip3``/``pip3.N``/``python -m pip install`` in shell scripts, Dockerfile
  ``RUN`` lines (``RUN <<EOF`` scripts included), YAML ``run:`` blocks, notebook ``!pip``/``%pip`` lines (through the
  notebook handler) and Python command strings (NM410) gets the NM501 decision (``codemods/deps/_plan.py``);
  options and their values (``-r file``, ``--extra-index-url URL``, ``-c``, ``--target`` ...) are skipped;
* a replacement with shell-special characters is quoted (``"torch==2.14.*"``), with the quote character the
  original word used (double quotes for a bare word);
* a file whose ``pip install`` commands install the Inf1 stack (``torch-neuron``, ``neuron-cc``,
  ``optimum[neuron]``; see NM501) is an Inf1 setup: none of its commands changes, one ``todo`` says why;
* never drop the package of a command the file still runs (read after the launch rules edited it; comments and
  ``echo`` text do not count): while ``optimum-cli`` stays (NM406 keeps ``export`` and ``serve`` with a todo), the
  optimum-neuron / ``optimum[neuronx]`` that installs it stays with a ``todo`` tied to that command, and so does
  every other pin of the file; while ``neuron_parallel_compile`` stays (NM401's todo), the XLA-era stack that
  installs it (torch-neuronx, libneuronxla) stays the same way. A notebook's ``%pip`` lines also see the
  ``optimum-cli export`` / ``serve`` of its other cells (one file); such a command in another file of the code it
  serves holds nothing (its NM406 todo says to delete it), but the replaced install is a ``todo`` naming it
  (NM501's project fact ``deps.optimum-cli``); optimum-neuron stays while a Python file or notebook of that code
  still imports ``optimum.neuron`` after the run (NM501's ``deps.optimum-neuron-code``);
* the ``pip install`` commands of one install context (a Dockerfile stage, from its ``FROM``; a workflow job; a
  shell script) install into one environment and take one decision: when one of them keeps optimum-neuron or
  torch-xla (the reasons above), the pins of the others stay too, each with a ``todo`` naming that command; so do
  the pins of a context that installs a requirements file keeping its optimum-neuron (``pip install -r
  requirements.txt``, or a file of that file's install set; NM501), and that requirements file's own pins stay
  while a command of its context keeps optimum-neuron (rt5H D2: ``RUN pip install optimum-neuron==0.0.24 && pip
  install transformers==4.43.2`` kept the first for app/main.py and moved the second to ``>=5.24``, which
  optimum-neuron 0.0.24 does not admit); another stage moves on its own;
* a command that would be left with nothing to install (it only installs packages of the XLA-era stack) is
  deleted when it is one command of an ``&&`` / ``;`` chain that goes on the same without it, with one operator
  beside it (``RUN pip install A && pip install torch-xla || true`` -> ``RUN pip install A || true``; emptied
  continuation lines go); a fallback (``A || pip install torch-xla``), ``B || C``, ``A; B || C``, pipes,
  background jobs and compound commands keep it with a ``todo`` naming the command; a command on its own gets a
  ``todo`` to delete it;
* the Python an install context declares (a workflow job's ``actions/setup-python`` ``python-version``, a scalar
  or a matrix list; a Dockerfile stage's ``FROM python:3.10-slim`` base image, a deep-learning container whose tag
  names its Python, ``...-neuronx-py310-sdk2.20.0...``, or the stage it is built on) below the Python that a
  package it installs after the run requires (``transformers>=5.24``: Python 3.11; ``REQUIRES_PYTHON`` in
  ``codemods/_tables/stock_floors_data.py``) gets a ``todo`` on that line naming the floor and the package
  (``codemods/deps/_interpreter.py``). What it installs: the requirements of its ``pip install`` lines, and those
  of the project files it installs from (``pip install -r F`` / ``-c F``, ``pip install .`` / ``-e ".[dev]"``,
  ``poetry install``: the requirements file or the pyproject.toml of the repository, as this run migrates it);
  nothing is said while they stay on the old stack. Pins are still planned per file, not per job (a CPU job that
  runs the migrated code needs the migrated stack too);
* the edits of a file are made right to left at the end, so two ``pip install`` commands of one line both change;
* conda ``environment.yml`` files: the items of their ``- pip:`` section; the environment's ``- python=3.10``
  is a declared Python as above (its pip items are what it installs), so it gets the same todo;
* the bodies of heredocs that are requirement files: written to a file named like one (``cat > requirements.txt
  <<EOF``, ``tee constraints.txt``, a Dockerfile ``COPY <<EOF requirements.txt``) or read by ``pip install -r
  /dev/stdin <<EOF``; heredocs holding shell code are left to the command rules;
* a ``transformers`` pin moved to 5.x in a file that also clones transformers at a 4.x tag (``git clone
  https://github.com/huggingface/transformers --branch v4.52.3``) to run that tag's ``examples/`` scripts stays, with
  a ``todo``: the pin and the checkout must move together. The project fact ``deps.transformers-checkout`` records
  the tag per file (a notebook's shell lines arrive as ``NAME.sh``, a ``%%bash`` cell as ``NAME.cellN.sh``);
* in such a file the stock pins that go with that transformers (accelerate, tokenizers, huggingface_hub, trl,
  peft, numpy ...) stay too, in every ``pip install`` of the file, each with a ``todo`` saying what holds it: moving
  them to the transformers-5 floors alone would leave a half-moved environment; an optimum-neuron replaced there
  brings only ``torch-neuronx`` and ``torch`` (a ``todo`` names the companions it did not add);
* when torch-neuronx is written and neither the command's own index option (``--index-url``,
  ``--extra-index-url``, ``-i``, ``--find-links``) nor a setting of the file that configures pip for every command
  after it (``ENV PIP_EXTRA_INDEX_URL=...``, ``pip config set``, a written pip.conf) names the Neuron repository
  (another command's flag does not count: each Dockerfile ``RUN`` and script command is its own pip run, rtG p7),
  the rewritten command gets
  ``--extra-index-url https://pip.repos.neuron.amazonaws.com`` right after ``install`` (how the Neuron setup guide
  installs it); a command that picks its own index (``-i`` a mirror, ``--no-index``, ``--find-links``),
  requirement files and heredocs get a ``todo`` instead.

Why:

Shell scripts, Dockerfiles and CI files often install the Neuron stack directly instead of through a
requirements file. The packages they name are the same as in requirements files, so they get the same
decisions as NM501: optimum-neuron and the PyTorch/XLA packages give way to ``torch-neuronx`` (TorchNeuron),
the matching ``torch`` and the stock transformers 5 stack.

Before::

    RUN pip install --upgrade optimum-neuron[neuronx]==0.0.25 torch-xla

After::

    RUN pip install --extra-index-url https://pip.repos.neuron.amazonaws.com --upgrade "torch-neuronx==2.14.*" \\
        "torch==2.14.*" "transformers>=5.24" "accelerate>=1.15"

Safety: needs-review. The reviewer checks the package repository, the torch line (2.13 or 2.14) and the compiler
pin, as for NM501; requirements built at run time (``pip install $PKGS``) are not seen.

References:

* https://pip.pypa.io/en/stable/cli/pip_install/
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/setup/index.html
* https://docs.docker.com/reference/dockerfile/#here-documents
* https://docs.conda.io/projects/conda/en/latest/user-guide/tasks/manage-environments.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import partial
from pathlib import PurePath

from codemods._lib.shell import CommandLine, EmbeddedCommand, Report, Tok, command_statements, cut, lex, unquote
from codemods._tables.requirements_data import NEURON_REPOSITORY, REPOSITORY_NOTE
from codemods.deps import _interpreter as interpreter
from codemods.deps import _plan as plan
from codemods.deps._base import DEP_TRIGGERS, DepsTextRule, rewrite_lines, split_requirement_line
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind, kind_from_name
from migrate.findings import Severity
from migrate.rule import RuleOptions, Safety
from migrate.textdoc import Line, TextDocument

_HEREDOC_START = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
#: where a heredoc's text goes: a redirect or tee to a file, ``COPY <<EOF dest``, or pip reading it (-r /dev/stdin)
_HEREDOC_TARGET = re.compile(r"(?:>>?|\btee(?:\s+-a)?)\s*['\"]?([^\s'\"<>|;&]+)"
                             r"|^\s*COPY\s+(?:--\S+\s+)*<<-?\s*['\"]?\w+['\"]?\s+(\S+)", re.I)
_PIP_STDIN = re.compile(r"\bpip3?\b.*\binstall\b.*(?:-r|--requirement)\s*(?:/dev/stdin|-)(?:\s|$)")


def requirement_heredocs(doc: TextDocument) -> list[list[Line]]:
    """The bodies of heredocs that are requirement files: written to a file named like one (``cat > requirements.txt
    <<EOF``, ``tee constraints.txt``, a Dockerfile ``COPY <<EOF requirements.txt``) or read by ``pip install -r
    /dev/stdin``. Heredocs holding shell code are the command rules' business."""
    bodies: list[list[Line]] = []
    lines = list(doc)
    index = 0
    while index < len(lines):
        text = lines[index].text
        match = _HEREDOC_START.search(text)
        index += 1
        if match is None or text.lstrip().startswith("#"):
            continue
        body = []
        while index < len(lines) and lines[index].text.strip() != match.group(2):
            body.append(lines[index])
            index += 1
        index += 1  # the delimiter
        target = _HEREDOC_TARGET.search(text)
        name = next((group for group in (target.groups() if target else ()) if group), "")
        if _PIP_STDIN.search(text) or (name and kind_from_name(PurePath(name)) is FileKind.REQUIREMENTS):
            bodies.append(body)
    return bodies


def rewrite_heredoc_requirements(doc: TextDocument, report: Report, options: RuleOptions | None = None,
                                 path: str | None = None) -> None:
    for body in requirement_heredocs(doc):
        items = [(line, *span) for line in body for span in [split_requirement_line(line.text)] if span is not None]
        if items:
            rewrite_lines(doc, items, report, options, path)


_VALUE_OPTIONS = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f",
                  "--find-links", "--target", "-t", "--prefix", "--root", "--platform", "--python-version",
                  "--implementation", "--abi", "--trusted-host", "--cache-dir", "--src", "--upgrade-strategy",
                  "--progress-bar", "--log", "--proxy", "--retries", "--timeout", "--python", "--index",
                  "--default-index", "--only-binary", "--no-binary"}
_SPECIAL = re.compile(r"[*<>\[\];|&()\s!~$`{}?]")


def _pip_requirements(words: list[Tok]) -> list[Tok] | None:
    """The requirement words of a ``pip install`` simple command (None when it is not one)."""
    texts = [unquote(word.text) for word in words]
    for index, text in enumerate(texts):
        base = text.rsplit("/", 1)[-1]
        module_pip = text == "-m" and index + 1 < len(texts) and texts[index + 1] == "pip"
        if base in {"pip", "pip3"} or re.fullmatch(r"pip3\.\d+", base) or module_pip:
            rest_index = index + (2 if text == "-m" else 1)
            if rest_index < len(texts) and texts[rest_index] == "install":
                out, skip = [], False
                for word, value in zip(words[rest_index + 1:], texts[rest_index + 1:]):
                    if skip:
                        skip = False
                        continue
                    if value.startswith("-"):
                        skip = value in _VALUE_OPTIONS  # -e's value is the requirement itself
                        continue
                    out.append(word)
                return out
    return None


def _quote(spec: str, like: str) -> str:
    if not _SPECIAL.search(spec):
        return spec
    quote = like[0] if like[:1] in {"'", '"'} else '"'
    return f"{quote}{spec}{quote}"


_CLONE_TAG = re.compile(r"huggingface/transformers(?:\.git)?\S*\s+(?:--branch|-b)[\s=]+\\?[\"']?(v?\d+\.[\w.]+)"
                        r"|(?:--branch|-b)[\s=]+\\?[\"']?(v?\d+\.[\w.]+)\\?[\"']?\s+\S*huggingface/transformers\b")


def transformers_checkout(text: str) -> str | None:
    """The tag of a ``git clone https://github.com/huggingface/transformers --branch v4.52.3`` in a file that runs
    that checkout's example scripts (``transformers/examples/...``), or None."""
    match = _CLONE_TAG.search(text)
    if match is None or "examples/" not in text:  # a checkout whose example scripts this file does not run
        return None
    return match.group(1) or match.group(2)


def install_source(text: str) -> str:
    """Project fact: the text of a requirements file or pyproject.toml, for the workflows and Dockerfiles that
    install from it (``final_specs``)."""
    return text


INSTALL_SOURCE = ProjectFact("deps.install-source", frozenset({FileKind.REQUIREMENTS, FileKind.PYPROJECT}),
                             DEP_TRIGGERS, install_source)

#: what wakes the rule on a workflow or Dockerfile that names no package of the stack itself: the Python it
#: declares, whose install may come from a project file (``check_interpreters``)
_INTERPRETER_TRIGGERS = ("python-version", "python:3", "-py3", "python=3", "python==3")

TRANSFORMERS_CHECKOUT = ProjectFact("deps.transformers-checkout",
                                    frozenset({FileKind.SHELL, FileKind.NOTEBOOK, FileKind.DOCKERFILE, FileKind.YAML}),
                                    ("huggingface/transformers",), transformers_checkout)


def checkout_of(project: ProjectFacts, path: PurePath) -> str | None:
    """The transformers tag the file ``path`` clones (a notebook's shell lines arrive as ``NAME.sh`` or, for a
    ``%%bash`` cell, ``NAME.cellN.sh``)."""
    found = project.of(TRANSFORMERS_CHECKOUT.name)
    notebook = re.sub(r"(?:\.cell\d+)?\.sh$", ".ipynb", path.as_posix())
    return next((found[name] for name in (path.as_posix(), notebook) if name in found), None)


CHECKOUT_TODO = ("{spec} was left as it is: this file clones transformers at {tag} and runs that tag's example "
                 "scripts, which need a {major}.x transformers (they import APIs that 5.x removed); TorchNeuron needs "
                 "{new}: clone a tag of the installed 5.x release (its examples), then change this pin, in one step")


def _follows_checkout(spec: str, rewrite, tag: str | None):
    """A transformers bump to 5.x beside a 4.x examples checkout: kept with a todo (the pair must move together)."""
    major = re.match(r"v?(\d+)", tag or "")
    name = re.match(r"[A-Za-z0-9_.-]+", spec)
    if major is None or int(major.group(1)) >= 5 or name is None or name.group(0).lower() != "transformers" \
            or rewrite.keep:
        return rewrite
    new = next((s for s in rewrite.specs if s.lower().startswith("transformers")), None)
    if new is None:
        return rewrite
    message = CHECKOUT_TODO.format(spec=spec, tag=tag, major=major.group(1), new=new)
    return plan.Rewrite([], Severity.TODO, message, keep=True)


Item = tuple[CommandLine, Tok]


@dataclass
class Chain:
    """Where a simple command sits in its statement: the statement's words and operators, and the command's
    range ``items[start:end]``."""

    items: list[Item]
    start: int
    end: int

    def op(self, index: int) -> str | None:
        return self.items[index][1].text if 0 <= index < len(self.items) else None


def _pip_commands(doc: TextDocument) -> list[tuple[list[Item], list[Tok], Tok, Chain]]:
    """Each ``pip install`` simple command of the document: (its words with their lines, its requirement words,
    the ``install`` word, where it sits in its statement)."""
    commands = []
    for statement in command_statements(doc):
        items: list[Item] = []
        for cl in statement:
            toks, _ = lex(cl.line.text, cl.start, cl.end)
            items.extend((cl, tok) for tok in toks)
        groups: list[tuple[int, list[Item]]] = [(0, [])]
        for index, item in enumerate(items):
            if item[1].kind == "op":
                groups.append((index + 1, []))
            else:
                groups[-1][1].append(item)
        for start, group in groups:
            words = [tok for _, tok in group]
            requirements = _pip_requirements(words) if words else None
            if requirements:
                install = next(word for word in words if unquote(word.text) == "install")
                commands.append((group, requirements, install, Chain(items, start, start + len(group))))
    return commands


def _chain_cut(chain: Chain) -> tuple[int, int] | None:
    """The items to delete with a sub-command of an ``&&`` / ``;`` / ``||`` chain (the command and one operator
    beside it), or None when the chain's control flow depends on it or it is no chained simple command:
    ``A && B [; C | || C]`` -> drop ``&& B``; ``A && B && C``, ``B && C`` / ``B; C`` / ``A; B; C`` -> drop ``B &&`` / ``B;``.
    ``A || B`` (a fallback), ``B || C`` and ``A; B || C`` (what runs next depends on B), pipes, background jobs,
    subshells and compound commands are left alone."""
    ops = {item[1].text for item in chain.items if item[1].kind == "op"}
    words = {item[1].text for item in chain.items if item[1].kind == "word"}
    if not ops or not ops <= {"&&", "||", ";"} or words & {"if", "then", "while", "until", "do", "for", "case", "{"}:
        return None
    before, after = chain.op(chain.start - 1), chain.op(chain.end)
    if before == "&&" and after == "&&":  # either operator will do: the one after goes with a command on its line
        return chain.start, chain.end + 1
    if before == "&&" and after in {None, ";", "||"}:
        return chain.start - 1, chain.end
    if before in {None, ";"} and after in {"&&", ";"}:
        return chain.start, chain.end + 1
    if before == ";" and after is None:
        return chain.start - 1, chain.end
    return None


def _held_transformers(commands, tag: str | None) -> str | None:
    """What keeps the old stack when the file runs the example scripts of a transformers 4.x ``tag`` checkout
    (they need that transformers, so the stock packages installed beside it stay too), or None."""
    major = re.match(r"v?(\d+)", tag or "")
    if major is None or int(major.group(1)) >= 5:
        return None
    for _, requirements, _, _ in commands:
        for word in requirements:
            spec = unquote(word.text)
            parsed = plan.parse(spec)
            if parsed is not None and parsed.name == "transformers" and parsed.spec and not parsed.url \
                    and not plan.admits(parsed.spec, "5.24.0"):
                return f"{spec.strip()}, which this file keeps for the transformers {tag} example scripts it runs"
    # the pin is in another cell or file: the checkout alone says which transformers this environment needs
    return f"the transformers {tag} checkout whose example scripts this file runs (they need transformers {tag})"


#: options that choose where pip looks for packages
_INDEX_OPTIONS = {"-i", "--index-url", "--extra-index-url", "--no-index", "-f", "--find-links", "--index",
                  "--default-index"}
#: the documented way to reach AWS's Neuron package repository from one pip command
REPOSITORY_OPTION = f"--extra-index-url {NEURON_REPOSITORY}"


#: a line that configures pip for the commands after it: its environment variables, ``pip config``, a pip.conf
_PIP_SETTING = re.compile(r"\bPIP_(?:EXTRA_)?INDEX_URL\b|\bPIP_FIND_LINKS\b|\bpip3?\s+config\b|\bpip\.conf\b"
                          r"|^\s*(?:extra-)?index-url\s*=")


def _without_command_indexes(doc: TextDocument, commands: list) -> str:
    """The file's lines that configure pip for every command after them, without the index options of its ``pip
    install`` commands (and their values): what names the Neuron repository for every command of the file (``ENV PIP_EXTRA_INDEX_URL=...``, ``pip config set``, a
    written pip.conf). An index option of one command does not reach another: each Dockerfile ``RUN``, notebook
    ``!pip`` line and script command is its own pip invocation (rtG p7: a second ``RUN pip install`` lost the
    repository its rewrite needs because the first RUN named it)."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for group, _, _, _ in commands:
        for index, (cl, tok) in enumerate(group):
            if unquote(tok.text).split("=")[0] not in _INDEX_OPTIONS:
                continue
            spans.setdefault(id(cl.line), []).append((tok.start, tok.end))
            if "=" not in tok.text and index + 1 < len(group):
                value_line, value = group[index + 1]
                spans.setdefault(id(value_line.line), []).append((value.start, value.end))
    texts = []
    for line in doc:
        text = line.text
        for start, end in sorted(spans.get(id(line), ()), reverse=True):
            text = text[:start] + text[end:]
        if _PIP_SETTING.search(text):  # a value that only a command's flag reads (ARG NEURON_INDEX=...) is none
            texts.append(text)
    return "\n".join(texts)


def edit_pip_install(doc: TextDocument, report: Report, options: RuleOptions | None = None,
                     checkout: str | None = None, path: str | None = None) -> None:
    """Rewrite the Neuron stack in ``pip install`` commands (shell, Dockerfile RUN, YAML run blocks, !pip).
    ``checkout``: the transformers tag the file clones for its example scripts (see ``transformers_checkout``);
    ``path``: the file's display path (which project files it installs for)."""
    full_text = doc.text()
    tag = checkout or transformers_checkout(full_text)
    commands = _pip_commands(doc)
    hold = _held_transformers(commands, tag)
    named = [{parsed.name for parsed in (plan.parse(unquote(word.text)) for word in requirements) if parsed}
             for _, requirements, _, _ in commands]
    # a file that installs the Inf1 stack in any of its commands is an Inf1 setup: none of them changes
    inf1 = plan.inf1_labels([parsed for _, requirements, _, _ in commands for parsed in
                             (plan.parse(unquote(word.text)) for word in requirements) if parsed])
    inf1_noted = False
    # every edit of the file, applied right to left at the end: two commands of one line share its positions
    edits: dict[int, list[tuple[int, int, str | None]]] = {}
    lines: dict[int, Line] = {}
    emptied: list[list[Line]] = []  # the lines of each deleted sub-command
    planners = [plan.Planner.for_specs([unquote(word.text) for word in requirements],
                                       " ".join(tok.text for _, tok in group), options, path, full_text)
                for group, requirements, _, _ in commands]
    _hold_contexts(doc, commands, planners, options, path)
    repository_elsewhere = plan.names_neuron_repository(_without_command_indexes(doc, commands))
    for index, (group, requirements, install, chain) in enumerate(commands):
        words = [tok for _, tok in group]
        owner = {id(tok): cl for cl, tok in group}
        planner = planners[index]
        planner.hold = planner.hold or hold
        planner.elsewhere = set().union(*(names for other, names in enumerate(named) if other != index))
        planner.inf1, planner.inf1_noted = inf1, inf1_noted
        if repository_elsewhere:
            planner.repository_configured = True
        plans = []
        for word in requirements:
            rewrite = plan.rewrite(unquote(word.text), planner)
            if rewrite is not None:
                plans.append((word, _follows_checkout(unquote(word.text), rewrite, tag)))
        inf1_noted = planner.inf1_noted
        if not plans:
            continue
        if all(not rewrite.specs and not rewrite.keep for _, rewrite in plans) and len(plans) == len(requirements):
            line = owner[id(words[0])].line
            packages = ", ".join(unquote(word.text) for word, _ in plans)
            span = _chain_cut(chain)
            if span is not None:  # one command of a chain that goes on without it: delete it with its operator
                _delete_items(chain.items[span[0]:span[1]], edits, lines, emptied)
                report(line, Severity.FIXED, f"removed `{_shown(words)}` from its chain: it only installs packages of "
                       f"the XLA-era stack ({packages}), which TorchNeuron does not use (while torch-xla is installed "
                       "transformers still takes its XLA branches)")
                continue
            message = f"this pip install only installs packages of the XLA-era stack ({packages}): delete the command"
            if len(chain.items) > len(group):  # in a chain that a deletion would change: say which command
                ops = " ".join(dict.fromkeys(item[1].text for item in chain.items if item[1].kind == "op"))
                message = (f"`{_shown(words)}` only installs packages of the XLA-era stack ({packages}): delete it; it "
                           f"is one command of a chain whose control flow depends on it (`{ops}`), so it was left: "
                           "delete it with its operator by hand, checking what the chain runs then")
            report(line, Severity.TODO, message)
            continue
        first_line: Line | None = None
        for word, rewrite in plans:
            cl = owner[id(word)]
            lines[id(cl.line)] = cl.line
            if rewrite.keep:
                report(cl.line, rewrite.severity, rewrite.message)
                continue
            first_line = first_line or cl.line
            new = " ".join(_quote(spec, word.text) for spec in rewrite.specs) if rewrite.specs else None
            edits.setdefault(id(cl.line), []).append((word.start, word.end, new))
            report(cl.line, rewrite.severity, rewrite.message)
        own_index = any(unquote(word.text).split("=")[0] in _INDEX_OPTIONS for word in words)
        if planner.needs_repository and not planner.repository_configured and first_line is not None and own_index:
            # the command picks its own package index (a mirror, --no-index): whether it carries the Neuron
            # packages is the owner's call
            report(first_line, Severity.TODO, REPOSITORY_NOTE)
        elif planner.needs_repository and not planner.repository_configured and first_line is not None:
            # the command is rewritten anyway: it names the repository itself, the way the Neuron setup guide does
            install_line = owner[id(install)].line
            lines[id(install_line)] = install_line
            edits.setdefault(id(install_line), []).append((install.end, install.end, " " + REPOSITORY_OPTION))
            report(install_line, Severity.FIXED, f"added {REPOSITORY_OPTION}: torch-neuronx (and neuronx-cc) are "
                   "published in AWS's Neuron package repository, not on PyPI (PyPI only has placeholders)")
    for key, line_edits in edits.items():
        line = lines[key]
        for start, end, new in sorted(line_edits, reverse=True):
            if new is None:
                cut(line, [(start, end)])
            else:
                line.text = line.text[:start] + new + line.text[end:]
    for taken in emptied:
        _drop_emptied(doc, taken)


def _hold_contexts(doc: TextDocument, commands, planners: list[plan.Planner], options: RuleOptions | None,
                   path: str | None) -> None:
    """Every ``pip install`` of one install context (a Dockerfile stage, a workflow job, a script) installs into one
    environment, so they take one decision (rt5H D2: ``RUN pip install optimum-neuron==0.0.24 && pip install
    transformers==4.43.2`` kept the optimum-neuron for app/main.py and moved the transformers pin to 5.x, which
    optimum-neuron 0.0.24 does not admit): when one command keeps the old stack as a whole (its optimum-neuron or
    torch-xla stays), the others hold their pins too; so do the commands of a context that installs a
    requirements file keeping its optimum-neuron (``pip install -r requirements.txt``, or a file of its install
    set: ``Planner.held_by_files``)."""
    contexts = _contexts(doc)
    if doc.kind is FileKind.DOCKERFILE:
        unit = "stage"
    elif doc.kind is FileKind.YAML:
        unit = "job" if any(_JOBS.match(line.text) for line in doc) else "file"
    else:
        unit = "script"
    where = {id(line): index for index, context in enumerate(contexts) for line in context}
    root = _context_root(path, doc.kind)
    for number, context in enumerate(contexts):
        members = [index for index, (group, _, _, _) in enumerate(commands) if where.get(id(group[0][0].line)) == number]
        if not members:
            continue
        holder = next((index for index in members if planners[index].hold_everything and planners[index].hold), None)
        direct: tuple[str, ...] = ()
        files: tuple[str, ...] = ()
        if options is not None and path is not None and holder is None:
            direct = tuple(name for name in dict.fromkeys(installed_files(doc, {id(line) for line in context}, root))
                           if kind_from_name(PurePath(name)) is FileKind.REQUIREMENTS)
            project = planners[members[0]].project
            files = tuple(dict.fromkeys([*direct, *(other for name in direct for other in project.install_set(name))]))
        for index in members:
            planner = planners[index]
            if planner.hold_everything:
                continue
            if holder is not None:
                shown = f"`{_shown([tok for _, tok in commands[holder][0]])}`"
                planner.hold = (f"{planners[holder].hold} ({shown} installs it in this {unit}: pip installs "
                                "both into one environment, and the TorchNeuron pins do not resolve beside the stack "
                                "kept there)")
                planner.hold_subject = f"{planners[holder].hold_subject} in {shown}"
                planner.hold_everything = True
            elif files and options is not None:
                planner.held_by_files(files, options, partial(_installed_how, unit, direct))


def _installed_how(unit: str, direct: tuple[str, ...], name: str) -> tuple[str, str]:
    """How a context that installs the requirements files ``direct`` installs ``name``, and why that ties them."""
    how = f"this {unit} installs {name}" if name in direct else \
        f"this {unit} installs {_files_of(direct)}, which {name} is installed with"
    return how, "pip installs both into one environment"


def _files_of(names: tuple[str, ...]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _shown(words: list[Tok]) -> str:
    text = " ".join(word.text for word in words)
    return text if len(text) <= 80 else text[:77] + "..."


def _delete_items(items: list[Item], edits: dict[int, list[tuple[int, int, str | None]]], lines: dict[int, Line],
                  emptied: list[list[Line]]) -> None:
    """Delete ``items`` (consecutive words and operators of one statement, maybe over several lines): one cut per
    line; the lines they leave empty are dropped afterwards (``_drop_emptied``)."""
    spans: dict[int, list[int]] = {}
    order: list[Line] = []
    for cl, tok in items:
        if id(cl.line) not in spans:
            spans[id(cl.line)] = [tok.start, tok.end]
            order.append(cl.line)
        spans[id(cl.line)][1] = tok.end
    for line in order:
        start, end = spans[id(line)]
        lines[id(line)] = line
        if line.text[end:].lstrip(" \t").startswith(";"):  # `A && B; C` -> `A; C`: the blanks before go
            start = len(line.text[:start].rstrip(" \t"))
            edits.setdefault(id(line), []).append((start, end, ""))
            continue
        edits.setdefault(id(line), []).append((start, end, None))
    emptied.append(order)


def _drop_emptied(doc: TextDocument, taken: list[Line]) -> None:
    """Lines a deleted sub-command left with no code (blank, or only a ``\\`` continuation) go; when the statement
    then ends on the line before, which continued into the dropped one, that backslash goes too."""
    for line in taken:
        alive = list(doc)
        if line.text.strip() not in {"", "\\"} or line not in alive or alive.index(line) == 0:
            continue
        previous = alive[alive.index(line) - 1]
        was_last = not line.text.rstrip().endswith("\\")
        doc.delete(line)
        if was_last and previous.text.rstrip().endswith("\\"):
            previous.text = previous.text.rstrip()[:-1].rstrip()


_JOBS = re.compile(r"^jobs:\s*(?:#.*)?$")
_KEY = re.compile(r"^(\s*)[\w.-]+\s*:")
_PYTHON_VERSION = re.compile(r"^\s*(?:-\s+)?python-version\s*:\s*(.*?)\s*(?:#.*)?$")
#: a conda environment file's interpreter: ``- python=3.10`` (conda's ``=`` is a prefix match), ``- python==3.10.14``
_CONDA_PYTHON = re.compile(r"^\s*-\s*[\"']?python\s*={1,2}\s*(3\.\d+(?:\.\d+)?)(?:\.\*|\*)?[\"']?\s*(?:#.*)?$")
_CONDA_PIP = re.compile(r"^\s*-\s*pip:\s*(#.*)?$")


def conda_pip_items(doc: TextDocument) -> list[tuple[Line, int, int]]:
    """(line, start, end) of each requirement item under a conda ``- pip:`` section of ``doc``."""
    items, pip_indent = [], None
    for line in doc:
        text = line.text
        indent = len(text) - len(text.lstrip())
        if _CONDA_PIP.match(text):
            pip_indent = indent
            continue
        if pip_indent is None or not text.strip() or text.lstrip().startswith("#"):
            continue
        if indent <= pip_indent:
            pip_indent = None
            continue
        match = re.match(r"^(\s*-\s+)", text)
        if match:
            span = split_requirement_line(text[match.end():])
            if span is not None:
                items.append((line, match.end() + span[0], match.end() + span[1]))
    return items
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.I)
_PYTHON_IMAGE = re.compile(r"^(?:\S*/)?python:(3\.\d+(?:\.\d+)?)(?![\d.]*\d)", re.I)
#: the Python of an image whose tag names it (an AWS / Hugging Face deep-learning container:
#: ``pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04``)
_PY_TAG = re.compile(r":(?:[^\s:/]*[-_.])?py3(\d{1,2})(?=[-_.]|$)", re.I)


def _contexts(doc: TextDocument) -> list[list[Line]]:
    """The install contexts of a workflow (one per job under ``jobs:``; the whole file otherwise) or a Dockerfile
    (one per stage, from its ``FROM``)."""
    lines = list(doc)
    starts: list[int] = []
    if doc.kind is FileKind.DOCKERFILE:
        starts = [index for index, line in enumerate(lines) if _FROM.match(line.text)]
    else:
        jobs = next((index for index, line in enumerate(lines) if _JOBS.match(line.text)), None)
        if jobs is not None:
            indent = None
            for index in range(jobs + 1, len(lines)):
                text = lines[index].text
                if not text.strip() or text.lstrip().startswith("#"):
                    continue
                width = len(text) - len(text.lstrip())
                if width == 0:
                    break
                indent = width if indent is None else indent
                if width == indent and _KEY.match(text):
                    starts.append(index)
    if not starts:
        return [lines]
    return [lines[start:end] for start, end in zip(starts, [*starts[1:], len(lines)])]


def _declared_pythons(context: list[Line], kind: FileKind, images: dict[str, str]) -> list[tuple[Line, str]]:
    """(line, version as written) of each literal Python the context declares: ``python-version`` values (a
    scalar, a flow list or a block list of a matrix), a ``python:3.10`` base image (or the stage it builds on)."""
    found: list[tuple[Line, str]] = []
    if kind is FileKind.DOCKERFILE:
        match = _FROM.match(context[0].text)
        if match:
            image = _PYTHON_IMAGE.match(match.group(1))
            tag = _PY_TAG.search(match.group(1))
            version = (image.group(1) if image else f"3.{tag.group(1)}" if tag
                       else images.get(match.group(1).lower()))  # FROM an earlier stage
            if version:
                found.append((context[0], version))
                if match.group(2):
                    images[match.group(2).lower()] = version
        return found
    for index, line in enumerate(context):
        conda = _CONDA_PYTHON.match(line.text)
        if conda:  # a conda environment's `- python=3.10` (the pip section's packages install into it)
            found.append((line, conda.group(1)))
            continue
        match = _PYTHON_VERSION.match(line.text)
        if not match:
            continue
        value = match.group(1)
        values = value.strip("[]").split(",") if value.startswith("[") else [value] if value else []
        if not value:  # a block list below the key
            width = len(line.text) - len(line.text.lstrip())
            for item in context[index + 1:]:
                if not item.text.strip():
                    continue
                if len(item.text) - len(item.text.lstrip()) <= width or not item.text.lstrip().startswith("-"):
                    break
                values.append(item.text.lstrip()[1:].split("#")[0])
        found.extend((line, text.strip().strip("'\"")) for text in values if text.strip())
    return found


def _pip_install_words(words: list[str]) -> list[str] | None:
    """The words after ``install`` of a ``pip install`` / ``python -m pip install`` simple command, or None."""
    for index, text in enumerate(words):
        base = text.rsplit("/", 1)[-1]
        module_pip = text == "-m" and index + 1 < len(words) and words[index + 1] == "pip"
        if base in {"pip", "pip3"} or re.fullmatch(r"pip3\.\d+", base) or module_pip:
            rest = index + (2 if text == "-m" else 1)
            return words[rest + 1:] if rest < len(words) and words[rest] == "install" else None
    return None


def installed_files(doc: TextDocument, members: set[int], root: str) -> list[str]:
    """The project files (display paths) that the commands on the lines ``members`` install from: ``pip install
    -r F`` / ``-c F`` (relative to ``root``), ``pip install .`` / ``-e .`` / ``".[dev]"`` and ``poetry install``
    (``root``/pyproject.toml)."""
    found: list[str] = []
    for statement in command_statements(doc):
        if id(statement[0].line) not in members:
            continue
        words: list[str] = []
        toks = [tok for cl in statement for tok in lex(cl.line.text, cl.start, cl.end)[0]]
        for tok in [*toks, Tok("op", 0, 0, ";")]:
            if tok.kind == "word":
                words.append(unquote(tok.text))
                continue
            rest = _pip_install_words(words)
            names: list[str] = []
            if rest is not None:
                for index, word in enumerate(rest):
                    option = re.fullmatch(r"(-r|--requirement|-c|--constraint)(?:=(.+))?", word)
                    if option and option.group(2):
                        names.append(option.group(2))
                    elif option and index + 1 < len(rest):
                        names.append(rest[index + 1])
                    elif re.fullmatch(r"\.(?:/)?(?:\[[\w,.-]*\])?", word):
                        names.append("pyproject.toml")
            elif words[:2] == ["poetry", "install"]:
                names.append("pyproject.toml")
            found += [posixpath.normpath(posixpath.join(root, name)) for name in names if "$" not in name]
            words = []
    return found


_FINAL_SPECS: dict[tuple, tuple] = {}


def final_specs(path: str, options: RuleOptions | None) -> list[str]:
    """The requirements the project file ``path`` (a requirements file or pyproject.toml, its text from the
    ``deps.install-source`` fact) holds after this run: the file migrated with the run's rules and facts, as the
    engine migrates it (a file this run leaves alone keeps its own). Empty when it is no such file of the run."""
    if options is None:
        return []
    text = options.project.of(INSTALL_SOURCE.name).get(path)
    kind = kind_from_name(PurePath(path))
    if text is None or kind not in {FileKind.REQUIREMENTS, FileKind.PYPROJECT}:
        return []
    selected = None if options.rules is None else frozenset(options.rules)
    key = (path, text, selected)
    cached = _FINAL_SPECS.get(key)
    if cached is not None and cached[0] is options.project:
        return list(cached[1])
    from migrate.pipeline import migrate_file_text
    from migrate.registry import all_rules

    rules = [rule for rule in all_rules() if options.rules is None or rule.id in options.rules]
    try:
        migrated = migrate_file_text(text, kind, PurePath(path), rules, options).text
    except Exception:  # noqa: BLE001 - what the engine does then: the file stays as it is
        migrated = text
    specs = _pyproject_specs(migrated) if kind is FileKind.PYPROJECT else [
        line[span[0]:span[1]] for line in migrated.splitlines()
        if (span := split_requirement_line(line)) is not None]
    _FINAL_SPECS[key] = (options.project, tuple(specs))
    return specs


def _pyproject_specs(text: str) -> list[str]:
    """The PEP 621 and Poetry dependencies of a pyproject.toml (Poetry constraints as PEP 440)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        toml = tomlkit.parse(text).unwrap()
    except TOMLKitError:
        return []
    project = toml.get("project", {})
    specs = [item for item in project.get("dependencies", []) if isinstance(item, str)]
    for table in (project.get("optional-dependencies", {}), toml.get("dependency-groups", {})):
        specs += [item for value in table.values() if isinstance(value, list) for item in value
                  if isinstance(item, str)]
    poetry = toml.get("tool", {}).get("poetry", {})
    tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {}),
              *(group.get("dependencies", {}) for group in poetry.get("group", {}).values())]
    for table in tables:
        for name, value in table.items():
            version = value.get("version") if isinstance(value, dict) else value
            converted = interpreter.poetry_to_pep440(version) if isinstance(version, str) else None
            if name.lower() != "python" and converted is not None:
                specs.append(f"{name}{converted}")
    return specs


def _context_root(path: str | None, kind: FileKind) -> str:
    """Where a context's relative install paths start: a workflow's repository (the folder above ``.github/``),
    a Dockerfile's own folder (its usual build context)."""
    if path is None:
        return ""
    if kind is FileKind.YAML and "/.github/" in f"/{path}":
        return f"/{path}".rsplit("/.github/", 1)[0].lstrip("/")
    return posixpath.dirname(path)


def check_interpreters(doc: TextDocument, report: Report, options: RuleOptions | None = None,
                       path: str | None = None) -> None:
    """A workflow job or Dockerfile stage whose ``pip install`` lines install (after the run) a package that needs
    a newer Python than the one it declares gets a todo on that declaration (redteam-round2 D3: a CPU job on
    ``python-version: "3.10"`` bumped to ``transformers>=5.24``, which requires Python 3.11); so does one that
    installs a project file the run moves there (``pip install -r requirements.txt``, ``poetry install``,
    ``pip install -e .``: ``final_specs``; rt3B 3)."""
    commands = _pip_commands(doc)
    images: dict[str, str] = {}
    root = _context_root(path, doc.kind)
    for context in _contexts(doc):
        members = {id(line) for line in context}
        specs = [unquote(word.text) for group, requirements, _, _ in commands if id(group[0][0].line) in members
                 for word in requirements]
        specs += [spec for name in dict.fromkeys(installed_files(doc, members, root))
                  for spec in final_specs(name, options)]
        if doc.kind is FileKind.DOCKERFILE:
            specs += [line.text[span[0]:span[1]] for body in requirement_heredocs(doc) for line in body
                      if id(line) in members and (span := split_requirement_line(line.text)) is not None]
        conda = [] if doc.kind is FileKind.DOCKERFILE else [
            line.text[start:end] for line, start, end in conda_pip_items(doc) if id(line) in members]
        specs += conda
        declared = _declared_pythons(context, doc.kind, images)
        found = interpreter.stack_floor(specs)
        if found is None:
            continue
        where = "this stage" if doc.kind is FileKind.DOCKERFILE else "this conda environment" if conda else "this job"
        for line, version in declared:
            if interpreter.exact_below(version, found[0]):
                report(line, Severity.TODO, interpreter.exact_todo(version, where, found))


class PipInstallNeuronStack(DepsTextRule):
    """Rewrite the Neuron stack in pip install command lines."""

    id = "NM505"
    name = "pip-install-neuron-stack"
    safety = Safety.NEEDS_REVIEW
    kinds = frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML})
    triggers = (*DEP_TRIGGERS, *_INTERPRETER_TRIGGERS)
    facts = (*DepsTextRule.facts, TRANSFORMERS_CHECKOUT, INSTALL_SOURCE)

    def apply(self, doc: TextDocument) -> None:
        if not any(trigger in doc.text() for trigger in DEP_TRIGGERS):  # woken by the Python it declares alone
            if doc.kind in {FileKind.YAML, FileKind.DOCKERFILE}:
                check_interpreters(doc, self.report, self.ctx.options, self.ctx.path.as_posix())
            return
        # requirement heredocs first: whether the file names the Neuron repository is read from its own text, not
        # from the --extra-index-url this rule adds to a pip command (a ``pip install -r`` of the heredoc lacks it)
        if doc.kind in {FileKind.SHELL, FileKind.DOCKERFILE}:
            rewrite_heredoc_requirements(doc, self.report, self.ctx.options, self.ctx.path.as_posix())
        edit_pip_install(doc, self.report, self.ctx.options, checkout_of(self.ctx.options.project, self.ctx.path),
                         self.ctx.path.as_posix())
        if doc.kind is FileKind.YAML:
            self._conda_pip_section(doc)
        if doc.kind in {FileKind.YAML, FileKind.DOCKERFILE}:
            check_interpreters(doc, self.report, self.ctx.options, self.ctx.path.as_posix())

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_pip_install(doc, report)

    def _conda_pip_section(self, doc: TextDocument) -> None:
        """conda ``environment.yml``: the requirement items under ``- pip:``."""
        items = conda_pip_items(doc)
        if items:
            rewrite_lines(doc, items, self.report, self.ctx.options, self.ctx.path.as_posix())
