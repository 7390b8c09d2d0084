"""NM413 accelerate-xla-config: an accelerate config with ``distributed_type: XLA`` launches through torchrun.

What it does:

An accelerate config file is a YAML or JSON file, wherever it is, whose top level has ``distributed_type`` and at
least one of ``compute_environment``, ``num_processes``, ``mixed_precision``, ``machine_rank`` (what ``accelerate
config`` writes, ``configs/*.yaml`` passed to ``accelerate launch --config_file``). In one whose
``distributed_type`` is ``XLA`` (or ``TPU``, its name before accelerate 0.21; quoted or not, in accelerate's own
spelling: the enum takes no other case):

* ``distributed_type`` becomes ``MULTI_NEURON``, or ``NO`` when ``num_processes`` is 1 (what ``accelerate config``
  writes for one device), ``fixed``;
* the keys only the TPU launchers read (``tpu_name``, ``tpu_zone``, ``tpu_use_cluster``, ``tpu_use_sudo``,
  ``tpu_vm``, ``tpu_env``, ``commands``, ``command_file``) are removed, with their block of list items, ``fixed``;
* ``downcast_bf16`` is removed: off (``'no'``, ``false``) it is ``fixed``; on (``'yes'``, ``true``) the run was bf16
  everywhere (``XLA_DOWNCAST_BF16``), so a ``todo`` says to load the model with ``dtype=torch.bfloat16``
  (``mixed_precision: bf16`` is autocast over fp32 weights);
* ``num_processes`` gets NM407's ``todo`` when it looks like a trn1 NeuronCore count (32 per machine, or any count
  in a file that names trn1/inf2 instances); a ``MULTI_NEURON`` config gets the same todo, so a second run
  reports what the first did.

The file keeps its layout and comments: lines are edited as text (a JSON member that does not stand on its own
line gets a todo instead). Configs of other types (``MULTI_GPU``, ``FSDP``, ``DEEPSPEED`` ...) and YAML files whose
``distributed_type`` is nested (not an accelerate config) are left as they are. Where a script that ``accelerate
launch`` runs in this project stays on torch_xla as a whole (XLA FSDP, xser, NxD: see NM318), the config stays on
``XLA`` with a todo: that script still needs the XLA launcher. So it does where such a script stays on optimum-neuron
after this run (it still imports optimum.neuron once migrated: ``kept_on_optimum``, the fact NM401-NM405 keep a
launcher's settings on and NM501 holds the requirements on): it still runs on torch_xla, with the accelerate pinned
beside optimum-neuron, which may not know ``MULTI_NEURON`` (accelerate 0.29.2 raises ``ValueError: 'MULTI_NEURON'
is not a valid DistributedType`` at config load); the todo says to move the config with the script.

Why:

accelerate 1.15's ``accelerate launch`` reads ``distributed_type: XLA`` as ``--tpu`` and starts the TPU launcher,
which imports ``torch_xla``: on TorchNeuron the command dies with ``ModuleNotFoundError`` before the script runs.
``MULTI_NEURON`` is launched like ``MULTI_GPU``, through torchrun with one process per NeuronCore, and the script's
``Accelerator`` picks the ``neuron`` device and backend. ``downcast_bf16`` and the ``tpu_*`` keys only ever fed the
TPU launchers (``XLA_DOWNCAST_BF16`` / ``XLA_USE_BF16``, gcloud pods, ``accelerate tpu-config``).

Before::

    compute_environment: LOCAL_MACHINE
    distributed_type: XLA
    downcast_bf16: 'no'
    mixed_precision: bf16
    num_processes: 32
    tpu_env: []
    tpu_use_cluster: false

After::

    compute_environment: LOCAL_MACHINE
    distributed_type: MULTI_NEURON
    mixed_precision: bf16
    # neuron-migrate: num_processes: 32 looks like a trn1 NeuronCore count; ...
    num_processes: 32

Safety: needs-review. The launch runs as it is; a reviewer checks ``num_processes`` (the todo) and, where ``downcast_bf16`` was on, the model's dtype.

References:

* https://huggingface.co/docs/accelerate/main/en/package_reference/cli#accelerate-launch
* https://huggingface.co/docs/accelerate/main/en/package_reference/utilities#accelerate.DistributedType
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/guides/torch-distributed.html
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass

from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE, STAYS_ON_XLA, kept_on_optimum, stays_on_xla
from codemods._tables.project_markers import MARKERS
from codemods.launch._base import MESH_WORDS, OFF_VALUES, LaunchRule, as_step, count_advice
from codemods.launch.nm407_torchrun_nproc import TRN1_CORES, mentions_trn1
from codemods.xla._base import XSER_LOADS
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import Line, TextDocument

#: the other keys, one of which makes a top-level ``distributed_type`` an accelerate config
CONFIG_KEYS = frozenset({"compute_environment", "num_processes", "mixed_precision", "machine_rank"})
#: accelerate's spellings of the torch_xla type (``DistributedType("XLA")``; ``TPU`` before accelerate 0.21)
XLA_TYPES = frozenset({"XLA", "TPU"})
NEURON_TYPE = "MULTI_NEURON"
#: ClusterConfig fields only the TPU launchers (``tpu_launcher``/``tpu_pod_launcher``, ``accelerate tpu-config``) read
TPU_KEYS = ("tpu_name", "tpu_zone", "tpu_use_cluster", "tpu_use_sudo", "tpu_vm", "tpu_env", "commands", "command_file")

TYPE_FIXED = ("distributed_type: {old} -> {new}: accelerate launch runs an XLA config through its TPU launcher, which "
              "imports torch_xla; {why}")
MULTI_WHY = ("MULTI_NEURON launches through torchrun with one process per NeuronCore, and Accelerator picks the neuron "
             "device and backend")
SINGLE_WHY = ("with num_processes: 1 the script runs as one process on the Neuron device (what `accelerate config` "
              "writes for one device)")
TPU_KEY_FIXED = "{key} removed: only accelerate's TPU launchers read it"
DOWNCAST_OFF = "downcast_bf16: {value} removed: a TPU-launcher setting, and it was off"
DOWNCAST_ON = ("downcast_bf16: {value} removed: it asked accelerate's TPU launcher for XLA_DOWNCAST_BF16 (float "
               "tensors as bf16 everywhere), which TorchNeuron does not read, and mixed_precision: bf16 is autocast "
               "over fp32 weights: to keep bf16 weights, load the model with dtype=torch.bfloat16")
NPROC_TODO = ("num_processes: {value} looks like a trn1 NeuronCore count; TorchNeuron runs on Trn2/Trn3 with one "
              "process per logical NeuronCore (trn2.48xlarge: 64): set it to {advice} (accelerate counts processes "
              "over all num_machines)")
KEPT_TODO = ("distributed_type: {old} was left as it is: accelerate launch runs {script} here, which neuron-migrate "
             "left on torch_xla as a whole (it keeps {labels}), and that script needs the XLA launcher; once it runs on "
             "TorchNeuron, set distributed_type: MULTI_NEURON (NO for one process) and remove {keys}")
KEPT_OPTIMUM_TODO = ("distributed_type: {old} was left as it is: accelerate launch runs {script} here, which stays on "
                     "optimum-neuron after this run (see its findings), so it still runs on the old stack: the XLA "
                     "launcher, and the accelerate pinned beside optimum-neuron, which may not know MULTI_NEURON "
                     "(accelerate 0.29.2's DistributedType has none: loading the config raises ValueError); once that "
                     "script is ported and the requirements move to the TorchNeuron stack, set distributed_type: "
                     "MULTI_NEURON (NO for one process) and remove {keys}, or run neuron-migrate again")
MEMBER_TODO = "{key} was left as it is: its JSON member does not stand on a line of its own; edit it by hand: {message}"

_YAML_KEY = re.compile(r"^([\"']?)([A-Za-z_][\w-]*)\1(\s*:)(?:(\s*)(.*?))?\s*$")
_JSON_MEMBER = re.compile(r"^(\s*)\"([A-Za-z_][\w-]*)\"(\s*:\s*)(.*?)(,?)\s*$")


# ----------------------------------------------------------------------- scripts accelerate launch runs

_LAUNCH = re.compile(r"\baccelerate\s+launch\b|\baccelerate[.]commands[.]launch\b")
_SCRIPT = re.compile(r"[\w./${}()-]+\.py\b")


def accelerate_scripts(text: str) -> frozenset[str] | None:
    """File names of the Python scripts a file starts with ``accelerate launch`` (continued lines joined)."""
    joined = re.sub(r"\\\r?\n", " ", text)
    names = {posixpath.basename(script) for line in joined.splitlines() if (match := _LAUNCH.search(line))
             for script in _SCRIPT.findall(line[match.end():].split("#", 1)[0])}
    return frozenset(names) or None


ACCELERATE_SCRIPTS = ProjectFact(
    "launch.accelerate-scripts",
    frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML, FileKind.PYTHON, FileKind.NOTEBOOK, FileKind.DOCS}),
    ("accelerate launch", "accelerate.commands.launch"), accelerate_scripts)


def kept_script(project: ProjectFacts, options=None) -> tuple[str, str, tuple[str, ...]] | None:
    """(path, why, labels) of a project script that ``accelerate launch`` runs and that stays on the old stack after
    this run: on torch_xla as a whole (why "xla", ``stays_on_xla``'s labels), or on optimum-neuron (why "optimum":
    it still imports optimum.neuron once migrated the way the run migrates it, ``kept_on_optimum``, the fact the
    other launch rules NM401-NM405 and the requirements rules hold their settings on). ``options``: the run's."""
    launched = {name for names in project.of(ACCELERATE_SCRIPTS.name).values() for name in names}
    for path in sorted(project.of(STAYS_ON_XLA.name)):
        if posixpath.basename(path) in launched and (labels := stays_on_xla(project, path)):
            return path, "xla", labels
    for path in sorted(project.of(OPTIMUM_NEURON_CODE.name)):
        if path.endswith(".py") and posixpath.basename(path) in launched and kept_on_optimum(options, path):
            return path, "optimum", ()
    return None


# ------------------------------------------------------------------------------ the config's members


@dataclass
class Member:
    """A top-level key of the config: its line(s) and its value as text (None: a block or a member sharing lines)."""

    key: str
    lines: list[Line]
    value: str | None
    start: int  # column of the value in lines[0]
    end: int  # column after the value
    comma: bool = False  # JSON: a comma follows it


def yaml_members(doc: TextDocument) -> dict[str, Member]:
    """Top-level keys of a YAML file (column 0), each with its block of more-indented lines and list items (blank
    and comment lines inside the block belong to it too)."""
    members: dict[str, Member] = {}
    current: Member | None = None
    pending: list[Line] = []  # blank and column-0 comment lines after a member: its own if its block goes on
    for line in doc:
        text = line.text
        if current is not None and (not text.strip() or text.startswith("#")):
            pending.append(line)
            continue
        if current is not None and (text[0] in " \t" or text.startswith("- ") or text == "-"):
            current.lines.extend([*pending, line])
            current.value = None
            pending = []
            continue
        current, pending = None, []
        match = _YAML_KEY.match(text)
        if not match or text.startswith(("#", "-", "%")):
            continue
        raw = match.group(5) or ""
        value = re.sub(r"(?:^|\s+)#.*$", "", raw)
        start = match.start(5) if match.group(5) is not None else len(text)
        current = Member(match.group(2), [line], value, start, start + len(value))
        members.setdefault(current.key, current)
    return members


def _depths(text: str) -> list[int]:
    """The JSON nesting depth at the start of each line (strings skipped)."""
    depths, depth, in_string, escaped = [0], 0, False, False
    for char in text:
        if char == "\n":
            depths.append(depth)
        elif in_string:
            escaped, in_string = (False, in_string) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return depths


def json_members(doc: TextDocument) -> tuple[dict, dict[str, Member]]:
    """(the top-level object, the members that stand on lines of their own) of a JSON object file."""
    try:
        data = json.loads(doc.text())
    except ValueError:
        return {}, {}
    if not isinstance(data, dict):
        return {}, {}
    lines = list(doc)
    depths = [*_depths("\n".join(line.text for line in lines)), 0]
    members: dict[str, Member] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        match = _JSON_MEMBER.match(line.text)
        index += 1
        if not match or depths[index - 1] != 1:
            continue
        member = Member(match.group(2), [line], match.group(4), match.start(4), match.end(4), bool(match.group(5)))
        if depths[index] != 1:  # an object or list over several lines: its lines belong to it
            member.value = None
            while index < len(lines) and depths[index] != 1:
                member.lines.append(lines[index])
                index += 1
            if member.lines[-1] is not line:
                member.comma = member.lines[-1].text.rstrip().endswith(",")
        else:
            try:
                json.loads(member.value or "")
            except ValueError:
                continue  # more than one member on the line
        members.setdefault(member.key, member)
    return data, members


def scalar(member: Member, kind: FileKind) -> str | None:
    """The member's value as a string (quotes removed), or None where it is not a scalar."""
    if member.value is None:
        return None
    if kind is FileKind.JSON:
        value = json.loads(member.value)
        return value if isinstance(value, str) else json.dumps(value)
    text = member.value.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


# ------------------------------------------------------------------------------------------ the rule


class AccelerateXlaConfig(LaunchRule):
    """Move an accelerate config off distributed_type XLA (MULTI_NEURON / NO) and drop its TPU-launcher keys."""

    id = "NM413"
    name = "accelerate-xla-config"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"  # a TPU project's accelerate config stays as it is
    markers = MARKERS
    kinds = frozenset({FileKind.YAML, FileKind.JSON})
    triggers = ("distributed_type",)
    facts = (ACCELERATE_SCRIPTS, STAYS_ON_XLA, XSER_LOADS, OPTIMUM_NEURON_CODE, MESH_WORDS)

    def apply(self, doc: TextDocument) -> None:
        if doc.kind is FileKind.JSON:
            data, members = json_members(doc)
        else:
            members = yaml_members(doc)
            data = {key: scalar(member, doc.kind) for key, member in members.items()}
        if "distributed_type" not in data or not set(data) & CONFIG_KEYS:
            return  # not an accelerate config (a nested distributed_type belongs to something else)
        old = data["distributed_type"]
        if old == NEURON_TYPE:
            self._num_processes(doc, members)  # what the first run said, said again
            return
        if not isinstance(old, str) or old not in XLA_TYPES:
            return  # MULTI_GPU, FSDP, DEEPSPEED, NO ...: not ours
        first = next(iter(doc))
        kind_member = members.get("distributed_type")
        present = [key for key in (*TPU_KEYS, "downcast_bf16") if key in data]
        if (kept := kept_script(self.ctx.options.project, self.ctx.options)) is not None:
            path, why, labels = kept
            keys = ", ".join(present) or "nothing else"
            message = (KEPT_TODO.format(old=old, script=path, labels=", ".join(labels), keys=keys) if why == "xla"
                       else KEPT_OPTIMUM_TODO.format(old=old, script=path, keys=keys))
            self.todo(kind_member.lines[0] if kind_member else first, message)
            return
        count = str(data.get("num_processes", "")).strip()
        new = "NO" if count.isdigit() and int(count) == 1 else NEURON_TYPE
        message = TYPE_FIXED.format(old=old, new=new, why=MULTI_WHY if new == NEURON_TYPE else SINGLE_WHY)
        if kind_member is None or kind_member.value is None:
            self.todo(first, MEMBER_TODO.format(key="distributed_type", message=as_step(message)))
            return  # nothing else is removed: the config must keep loading as it is
        self._set_value(doc, kind_member, new, message)
        for key in TPU_KEYS:
            if key in data:
                self._remove(doc, members, key, Severity.FIXED, TPU_KEY_FIXED.format(key=key))
        if "downcast_bf16" in data:
            value = data["downcast_bf16"]
            member = members.get("downcast_bf16")
            shown = (member.value or "").strip() if member is not None else json.dumps(value)
            if value is None or str(value).strip().lower() in OFF_VALUES | {"", "null", "~", "none"}:
                self._remove(doc, members, "downcast_bf16", Severity.FIXED, DOWNCAST_OFF.format(value=shown))
            else:
                self._remove(doc, members, "downcast_bf16", Severity.TODO, DOWNCAST_ON.format(value=shown))
        if new == NEURON_TYPE:
            self._num_processes(doc, members)

    # -- edits ---------------------------------------------------------------------------------------

    def _num_processes(self, doc: TextDocument, members: dict[str, Member]) -> None:
        processes = members.get("num_processes")
        count = scalar(processes, doc.kind) if processes is not None else None
        if processes is None or count is None or not count.strip().isdigit():
            return
        machines_member = members.get("num_machines")
        machines = scalar(machines_member, doc.kind) if machines_member is not None else None
        per_machine = int(count)
        if machines is not None and machines.strip().isdigit() and int(machines) > 1 \
                and per_machine % int(machines) == 0:
            per_machine //= int(machines)
        if str(per_machine) in TRN1_CORES or (mentions_trn1(doc.text()) and per_machine > 1):
            self.todo(processes.lines[0], NPROC_TODO.format(value=count.strip(),
                                                                 advice=count_advice(self.ctx.options.project, doc.text())))

    def _set_value(self, doc: TextDocument, member: Member, new: str, message: str) -> None:
        line = member.lines[0]
        value = (member.value or "").strip()
        if doc.kind is FileKind.JSON:
            text = json.dumps(new)
        elif value[:1] in {"'", '"'}:
            text = value[0] + new + value[0]  # the file's own quoting
        else:
            text = "'NO'" if new == "NO" else new  # YAML 1.1 reads a bare NO as false (`accelerate config` quotes it)
        line.text = line.text[:member.start] + text + line.text[member.end:]
        self.fixed(line, message)

    def _remove(self, doc: TextDocument, members: dict[str, Member], key: str, severity: Severity,
                message: str) -> None:
        member = members.get(key)
        if member is None:  # JSON: the member shares a line with another one
            self.todo(members["distributed_type"].lines[0], MEMBER_TODO.format(key=key, message=as_step(message)))
            return
        for line in member.lines:
            doc.delete(line)
        if doc.kind is FileKind.JSON and not member.comma:
            self._drop_trailing_comma(doc, member.lines[0])
        self.report(member.lines[0], severity, message)  # a deleted line keeps its number; its note goes below

    @staticmethod
    def _drop_trailing_comma(doc: TextDocument, removed: Line) -> None:
        """The last member of the object went: the member before it loses its comma."""
        previous: Line | None = None
        for line in doc.lines:
            if line is removed:
                break
            if not line.deleted and line.text.strip():
                previous = line
        if previous is not None and previous.text.rstrip().endswith(","):
            stripped = previous.text.rstrip()
            previous.text = stripped[:-1] + previous.text[len(stripped):]
