"""NM901 optimum-neuron-leftovers: report every optimum-neuron / Neuron-XLA reference left after the run.

What it does:

* Runs after every other rule, on the final text, and only reports (one ``todo`` per line, with an inline note).
* Whatever no rule could migrate shows up here, in code (``optimum.neuron`` imports and calls,
  ``neuronx_distributed``), in launch commands (``neuron_parallel_compile``, ``optimum-cli export neuron``,
  ``optimum-cli neuron ...``) and in dependency lists (``optimum-neuron``, ``optimum[neuron]``, ``torch-xla``
  builds of ``torch-neuronx``).
* A Python file the torch_xla family left on the old stack as a whole (its one note, from NM318 or NM320, names
  ``neuronx_distributed`` among what blocks the port) gets no line-by-line NxD notes: those references are
  reported as ``info`` findings that point at that note.
* In a Python file that still imports ``optimum.neuron`` (an import no rule could port, or one kept for an
  ``eval``), each line that uses one of optimum-neuron's classes (``NeuronModelFor...``, ``NeuronTrainer``, a name
  like ``NeuronModel`` bound from an ``eval``) is reported too: the import line alone would leave those uses
  without a word. In a file left as it is as a whole (an Inf1 flow, a torch_xla file) they are ``info`` findings.
* One finding per file per distinct message: the first occurrence gets the ``todo`` and its inline note, each later
  one an ``info`` finding (its line in the report, no second note); repeated ``info`` findings collapse into one.
* A lookup of the package by name (``pytest.importorskip("optimum.neuron")``, ``importlib.import_module``,
  ``find_spec``) is code, not prose: a ``todo`` says that it skips (or fails) on the migrated stack, so a test
  guarded by it never runs the migrated code, and to probe what the code imports now or drop it.
* A use of ``NeuronModelFor<Task>`` that no rule migrates, where transformers has ``AutoModelFor<Task>``
  (``NeuronModelForSpeechSeq2Seq``), names that class and the inference rules (NM120, NM121), not the causal-LM
  and training ones.
* An ``optimum.neuron`` import whose every use sits in a statement with another rule's note (NM205 on
  ``lazy_load_for_parallelism``, NM110 on a model class) is an ``info`` finding that points at those lines: that
  note says what to do, and a second one saying "no rule could migrate it" was noise.
* Ray Train's Neuron backend, ``TorchXLAConfig`` (``ray.train.torch.xla``), is reported at the config and at its
  import: it calls ``init_process_group("xla")`` and raises ``ImportError`` without torch_xla, while the migrated
  workers use torch.distributed. The note names the replacement, ``TorchConfig(backend="neuron")`` for Trn2/Trn3
  workers (``"gloo"`` on CPU), and says why it is not written: Ray picks the backend on the driver, whose
  accelerator need not be the workers', and TorchXLAConfig also exported the EFA variables a multi-node run may
  need. Its ``neuron_parallel_compile=`` argument (a graph-extraction-only pass: drop it) is covered by that note.
* A read of an optimum-neuron model's compiled configuration that no inference rule rewrote or noted
  (``model.neuron_config.batch_size``, ``self.model.config.neuron["static_batch_size"]``, the same inside an
  f-string, ``getattr(model, "neuron_config", None)``, ``hasattr(model.config, "neuron")``; not
  ``hasattr(torch, "neuron")``, TorchNeuron's own check): a stock model has
  neither attribute, so where the object is a migrated model (held on ``self``, handed to a helper function or
  module) the read raises AttributeError and the ``hasattr`` test takes its other branch. The inference rules
  rewrite or note the reads on the name a load binds; these get a ``todo`` here.
* A line of a statement or command whose note from another rule already names what the line holds (NM401's or
  NM410's on a ``neuron_parallel_compile`` command) gets no second note about it.
* A line that only prints (``echo``, ``printf``, a Make recipe's ``@echo``, ``print(``, a logger call) is text,
  not a run: a ``neuron_parallel_compile`` it names is not flagged there.
* Commented-out code is left alone, and so are mere mentions of a package name inside Python strings (an
  availability check, a URL): see ``codemods/sweep/_patterns.py``.

Why:

Nothing is left silently: a migrated project that still imports optimum-neuron or runs its commands fails once the
old stack is uninstalled, so every remaining reference is a line to port by hand.

Before::

    from optimum.neuron.utils import some_private_helper

After (unchanged code, plus a note)::

    # neuron-migrate: optimum-neuron API `optimum.neuron` is still used: ...
    from optimum.neuron.utils import some_private_helper

Safety: manual-only. Nothing is rewritten; each note is work for a person.

References:

* docs/architecture.md
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
"""

from __future__ import annotations

import re
from typing import Iterable

from codemods._tables.project_markers import MARKERS
from codemods.sweep._patterns import SWEEP_MESSAGES, once_per_message, pattern, scan
from codemods.sweep.nm902_torch_xla_leftovers import KEPT_WITH_FILE
from codemods.xla._base import BLOCKED_NOTE, WHOLESALE_NOTE
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety, SweepHit, SweepRule

#: a neuron_parallel_compile pass ran its command only to extract and compile graphs, training nothing: the advice
#: is to delete the pass, never to run the wrapped command (that would add a training run beside the real one)
NPC_MESSAGE = ("`neuron_parallel_compile` is still used: it ran the wrapped command only to extract and compile its graphs "
               "(training nothing); TorchNeuron compiles during the real run, so delete this pre-compile step (and the "
               "code that only serves it) rather than running the command it wraps")
#: a line that only prints or logs text naming the tool runs nothing (the command it names is flagged where it is built);
#: a Make recipe line may start with ``@`` / ``-`` / ``+`` (``@echo "..."``: NM401's own line in a target it emptied)
_PRINT_LINE = re.compile(r"^\s*(?:!\s*)?(?:[@+-]+\s*)?(?:echo|printf|print\s*\(|(?:logger|logging|log)\.\w+\s*\()")

NXD_MESSAGE = ("`neuronx_distributed` (NxD) is still used: port parallel layers to DTensor / "
               "transformers DistributedConfig(tp_size=...) and torch.distributed")
#: optimum-neuron's class names (and names like ``NeuronModel`` a file binds from an ``eval`` of one)
NEURON_CLASS_MESSAGE = ("an optimum-neuron class (this file still imports optimum.neuron) is still used here: port it to "
                        "the stock class (AutoModelFor<Task> / a diffusers pipeline / Trainer, TrainingArguments, trl's "
                        "trainers; see neuron-migrate --explain NM110 and NM201) and load the source checkpoint")
NEURON_CLASS = pattern(r"\bNeuron(?:Model\w*|Trainer|Seq2SeqTrainer|SFTTrainer|ORPOTrainer|TrainingArguments|SFTConfig"
                       r"|ORPOConfig|Accelerator|\w*Pipeline|ModelFor\w+)\b", NEURON_CLASS_MESSAGE)
#: the file keeps an import of optimum-neuron (so its class names in code are optimum-neuron's)
_KEPT_IMPORT = re.compile(r"(?m)^[ \t]*(?:from[ \t]+optimum\.neuron\b|import[ \t]+optimum\.neuron\b)")
#: notes of the rules that leave a whole file as it is on purpose (its lines are reported as information)
LEFT_WHOLE_NOTES = ("Inf1 flow (",)

#: Ray Train's Neuron backend (``ray.train.torch.xla``: "only neuron_cores ... is supported") runs
#: ``init_process_group("xla")``: without torch_xla it raises ImportError, while the migrated workers use torch.distributed
RAY_XLA_MESSAGE = ("Ray Train's `TorchXLAConfig` is still used: its backend calls init_process_group(\"xla\") and raises "
                   "ImportError without torch_xla, while the workers now run torch.distributed. Replace it with "
                   "`TorchConfig(backend=\"neuron\")` (from ray.train.torch) for Trn2/Trn3 workers, backend=\"gloo\" for a "
                   "CPU run: Ray picks the backend on the driver, so name the one of the workers' hosts (the driver's "
                   "accelerator does not tell). `neuron_parallel_compile=` ran a graph-extraction-only pass with no "
                   "TorchNeuron counterpart (graphs compile in the real run): drop it. TorchXLAConfig also set FI_PROVIDER=efa, "
                   "FI_EFA_USE_DEVICE_RDMA=1, FI_EFA_FORK_SAFE=1 on each worker: for a multi-node EFA run pass them in "
                   "runtime_env={\"env_vars\": ...}")
RAY_XLA_IMPORT_MESSAGE = ("`ray.train.torch.xla` (Ray Train's torch_xla backend) is still imported: its TorchXLAConfig needs "
                          "torch_xla; import TorchConfig from ray.train.torch instead when you replace the config (see the "
                          "note at its use)")
#: ``pytest.importorskip("optimum.neuron")`` / ``importlib.import_module`` / ``find_spec``: a lookup of the package
#: by name is code (a test that skips without it never runs on the migrated stack), not prose
IMPORT_PROBE_MESSAGE = ("optimum-neuron is looked up by name here (importorskip / import_module / find_spec): once the "
                        "project runs without it, this skips or fails on the new stack (a test guarded so never runs "
                        "its migrated code): probe what the code imports now (pytest.importorskip(\"transformers\"), "
                        "\"torch_neuronx\" for Trainium-only tests) or drop the probe; keep it only for code still on "
                        "optimum-neuron")
#: the generic note of an optimum-neuron import (see ``_explained_imports``)
IMPORT_MESSAGE = ("optimum-neuron API `optimum.neuron` is still used: no rule could migrate it; port it to stock "
                  "transformers/trl/accelerate (see neuron-migrate --list-rules and, for the class moves, neuron-migrate "
                  "--explain NM201)")
EXPLAINED_IMPORT = ("optimum-neuron import kept for its uses, which another rule's note explains (line {lines}): port "
                    "them as that note says and this import goes")
#: ``NeuronModelFor<Task>`` no rule migrates, where transformers has ``AutoModelFor<Task>``
TASK_CLASS_MESSAGE = ("`{name}` (optimum-neuron; this file still imports optimum.neuron) is still used here: no rule "
                      "migrates it: load the source checkpoint with transformers' `{auto}.from_pretrained(model_id)` and "
                      "move it to the device (see neuron-migrate --explain NM120 and NM121, the ports of optimum-neuron's "
                      "inference classes); a compiled folder does not load there")
_TASK_CLASS = re.compile(r"\bNeuronModelFor(\w+)")


def _register_task_messages() -> None:
    """Each task note is the sweep's own (``SWEEP_MESSAGES``): a second run must not take it for another rule's."""
    from codemods._tables.stock_api_data import EXPORTS

    for auto in (EXPORTS.get("transformers") or "").split():
        if auto.startswith("AutoModelFor"):
            message = TASK_CLASS_MESSAGE.format(name="NeuronModelFor" + auto[len("AutoModelFor"):], auto=auto)
            SWEEP_MESSAGES.add(" ".join(message.split()))


_register_task_messages()

#: ``neuron_parallel_compile=`` of a TorchXLAConfig: the note at the config speaks for it
_RAY_NPC_ARGUMENT = re.compile(r"\bneuron_parallel_compile\s*=(?!=)")

#: reads of an optimum-neuron model's compiled configuration (``model.neuron_config.batch_size``,
#: ``model.config.neuron["static_batch_size"]``, ``hasattr(model.config, "neuron")``): the inference rules rewrite or
#: note them on the name a load binds; a model held on ``self``, handed to a helper or imported reaches here
COMPILED_CONFIG_MESSAGE = (
    "reads the compiled configuration of an optimum-neuron model (`neuron_config` / `config.neuron`): stock "
    "transformers, diffusers and sentence-transformers models have neither, so once this object is a model loaded "
    "with a stock class (as neuron-migrate ports optimum-neuron loads) this raises AttributeError, and a "
    "hasattr/getattr test of it silently takes its other branch: use the values the model is exported or run with "
    "(the batch size and sequence length the code passes), or keep this model on optimum-neuron")
COMPILED_CONFIG = (
    # in strings too: Python 3.11 tokenizes an f-string whole, and its {model.neuron_config.batch_size} is code
    pattern(r"\.neuron_config\b|\bconfig\.neuron\b", COMPILED_CONFIG_MESSAGE, in_strings=True),
    # "neuron" only on a config (``hasattr(model.config, "neuron")``): ``hasattr(torch, "neuron")`` is TorchNeuron's own
    pattern(r"\b(?:hasattr|getattr)\s*\((?:[^()]*,\s*[\"']neuron_config[\"']|[^()]*\bconfig\s*,\s*[\"']neuron[\"'])",
            COMPILED_CONFIG_MESSAGE, in_strings=True),
)

PATTERNS = (
    pattern(r"\bTorchXLAConfig\s*\(", RAY_XLA_MESSAGE),
    pattern(r"\bray\.train\.torch\.xla\b|\bTorchXLAConfig\b", RAY_XLA_IMPORT_MESSAGE),
    pattern(r"\b(?:importorskip|import_module|find_spec|find_loader)\(\s*[\"']optimum\.(?:exporters\.)?neuron\b",
            IMPORT_PROBE_MESSAGE, in_strings=True),
    pattern(r"\boptimum\.exporters\.neuron\b",
            "`optimum.exporters.neuron` is still used: there is no ahead-of-time export on TorchNeuron; load the "
            "source checkpoint with from_pretrained and let torch.compile compile on first call"),
    pattern(r"\boptimum\.neuron\b", IMPORT_MESSAGE),
    pattern(r"\bneuronx_distributed\b", NXD_MESSAGE),
    pattern(r"\bneuron_parallel_compile\b", NPC_MESSAGE, in_strings=True),
    pattern(r"\boptimum-cli\s+export\s+neuron\b",
            "`optimum-cli export neuron` is still used: nothing to pre-compile on TorchNeuron; load the source "
            "model id with from_pretrained instead of the exported folder", in_strings=True),
    pattern(r"\boptimum-cli\s+neuron\b",
            "`optimum-cli neuron ...` is still used: it has no TorchNeuron counterpart (cache commands can go; "
            "consolidate checkpoints once on the old stack)", in_strings=True),
    pattern(r"(?:^|[\s\"'\[,=])optimum(?:-neuron|\[neuronx?\])",
            "optimum-neuron is still a dependency here: replace it with torch-neuronx (TorchNeuron, from AWS's "
            "Neuron package repository) plus transformers>=5.24 / trl / accelerate"),
)


class OptimumNeuronLeftovers(SweepRule):
    """Report every optimum-neuron / Neuron-XLA reference left after all rules ran."""

    id = "NM901"
    name = "optimum-neuron-leftovers"
    safety = Safety.MANUAL_ONLY
    kinds = frozenset(FileKind) - {FileKind.NOTEBOOK, FileKind.DOCS}  # prose is NM903's
    triggers = ("TorchXLAConfig", "ray.train.torch.xla", "optimum.neuron", "optimum.exporters.neuron",
                "neuronx_distributed", "neuron_parallel_compile",
                "optimum-cli", "optimum-neuron", "optimum[neuron", "neuron_config", "config.neuron",
                "config, \"neuron\"", "config, 'neuron'")
    markers = MARKERS  # the project-wide Neuron markers live with this rule: it is always active

    def scan(self, text: str, kind: FileKind) -> Iterable[SweepHit]:
        return once_per_message(hits(text, kind), text, kind)


def hits(text: str, kind: FileKind) -> list[SweepHit]:
    """Every line the rule reports, before ``once_per_message`` (NM903 leaves these lines to it)."""
    patterns = PATTERNS if kind is not FileKind.PYTHON else (*PATTERNS[:-1], *COMPILED_CONFIG)
    if kind is FileKind.PYTHON and _KEPT_IMPORT.search(text):
        patterns = (*patterns, NEURON_CLASS)
    lines = text.splitlines()
    ray_config = "TorchXLAConfig" in text
    found = [hit for hit in scan(text, kind, patterns)
             if not (hit.message is NPC_MESSAGE and (_PRINT_LINE.match(lines[hit.line - 1]) or ray_config
                                                     and _RAY_NPC_ARGUMENT.search(lines[hit.line - 1])))]
    if kind is FileKind.PYTHON and (BLOCKED_NOTE in text or WHOLESALE_NOTE in text):
        # the torch_xla family left the file on the old stack as a whole and its one note (NM318 / NM320) names
        # neuronx_distributed: each NxD reference is still reported, as information (no inline note)
        found = [SweepHit(hit.line, hit.column, KEPT_WITH_FILE, Severity.INFO) if hit.message == NXD_MESSAGE
                 else hit for hit in found]
    if kind is FileKind.PYTHON and any(note in text for note in LEFT_WHOLE_NOTES):
        found = [SweepHit(hit.line, hit.column, hit.message, Severity.INFO) if hit.message is NEURON_CLASS_MESSAGE
                 else hit for hit in found]
    return _specific(found, text, lines) if kind is FileKind.PYTHON else found


def _specific(found: list[SweepHit], text: str, lines: list[str]) -> list[SweepHit]:
    """The generic notes made specific: a use of ``NeuronModelFor<Task>`` names transformers' ``AutoModelFor<Task>``
    (and the inference rules); an import whose every use another rule's note explains is an ``info`` finding
    pointing there (no second note)."""
    from codemods._tables.stock_api_data import EXPORTS

    stock = set((EXPORTS.get("transformers") or "").split())
    explained = _explained_imports(text, lines)
    out = []
    for hit in found:
        if hit.message is NEURON_CLASS_MESSAGE:
            match = _TASK_CLASS.search(lines[hit.line - 1])
            auto = f"AutoModelFor{match.group(1)}" if match else ""
            if match and auto in stock:
                hit = SweepHit(hit.line, hit.column, TASK_CLASS_MESSAGE.format(name=match.group(0), auto=auto),
                               hit.severity)
        elif hit.message is IMPORT_MESSAGE and hit.line in explained:
            hit = SweepHit(hit.line, hit.column, EXPLAINED_IMPORT.format(lines=", ".join(map(str, explained[hit.line]))),
                           Severity.INFO)
        out.append(hit)
    return out


def _explained_imports(text: str, lines: list[str]) -> dict[int, list[int]]:
    """Line of a module-level ``from optimum.neuron... import a, b`` -> the lines of its uses, where each name it
    binds is used and every use sits in a statement whose note from another rule (above it) says what to do."""
    import ast

    from codemods.sweep._patterns import noted_by_another_rule, statement_starts

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    imports = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and node.module.split(".")[:2] == ["optimum", "neuron"] and node.lineno == node.end_lineno:
            imports[node.lineno] = {alias.asname or alias.name for alias in node.names if alias.name != "*"}
    if not imports:
        return {}
    uses: dict[str, list[int]] = {}
    for name in ast.walk(tree):
        if isinstance(name, ast.Name):
            uses.setdefault(name.id, []).append(name.lineno)
    wanted = sorted({line for names in imports.values() for name in names for line in uses.get(name, [])})
    starts = statement_starts(text, FileKind.PYTHON, wanted) if wanted else {}
    out = {}
    for line, names in imports.items():
        used = sorted({use for name in names for use in uses.get(name, [])})
        if names and all(uses.get(name) for name in names) and all(
                noted_by_another_rule(lines, starts.get(use, use), None) for use in used):
            out[line] = sorted({starts.get(use, use) for use in used})
    return out
