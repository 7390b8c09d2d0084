"""NM903 legacy-mentions-in-prose: in a Neuron project, report each line of prose that still names the old stack.

What it does:

* Runs after every other rule, on the final text, and only reports: one ``info`` finding per line ("docs to
  update"), never an inline note, never work for ``--check``.
* Prose is what the code rules and the other sweeps do not read: Python comments, docstrings and other string
  literals; comment lines of shell scripts, Dockerfiles, requirements and YAML; Markdown / reStructuredText files;
  notebook markdown and raw cells. A line another rule or sweep already reported is not reported again, so code
  keeps its ``todo``; nor is a string in a statement whose note from another rule already names the mention (NM410's
  on a command string that runs ``neuron_parallel_compile``), nor a string on a line NM901/NM902 report as code (an
  ``os.environ`` read of ``XLA_USE_BF16``), even where they report it once per file.
* The replacement fields of an f-string (``f"[ordinal {xm.get_ordinal()}]"``) are code, not prose (before Python
  3.12 the tokenizer gives the whole f-string as one string token; ``ast`` gives the fields): a mention there is
  reported as code, a ``todo`` with the code sweep's wording ("a torch_xla `xm.` call is still used: ..."), unless
  the file is kept on torch_xla as a whole (NM318's / NM320's / NM316's one note covers its calls) or another
  rule's note above the statement already names it. The text around the fields stays prose.
* What counts as a mention: optimum-neuron (``optimum.neuron``, ``optimum-neuron``), torch_xla / PyTorch/XLA,
  ``xm.``/``xmp.`` calls, ``neuron_parallel_compile``, ``optimum-cli ... neuron``, the XLA environment variables,
  optimum-neuron's Neuron* classes, neuronx-distributed and transformers-neuronx, and the compile-cache settings
  (``CUSTOM_CACHE_REPO``, ``OPTIMUM_NEURON_*``, ``NEURON_COMPILE_CACHE_URL``: TorchNeuron's NEFF cache is local), and
  the XLA-era ``torch_neuronx`` API (``torch_neuronx.trace``, ``torch_neuronx.DataParallel`` ...).
* Each message says what the text should say now (for a class, its stock counterpart). A string literal's message
  also says to port the code when the string is a name the code looks up (``"torch_xla" in sys.modules``).

Why:

After the code moves, comments and docs that still describe the old stack mislead the next reader; they are listed
so they can be updated, without blocking ``--check``.

Before::

    # XLA: use xm.save instead of torch.save to move tensors back to the CPU first
    torch.save(model.state_dict(), path)

After (unchanged; the report lists)::

    info  NM903  docs to update: mentions `xm.save`: a torch_xla API; describe the native torch / torch.distributed
                 call (launch with torchrun instead of xmp)

Safety: manual-only. Nothing is rewritten; the report lists the lines to update.

References:

* docs/migrate-report.md
* docs/architecture.md
"""

from __future__ import annotations

import ast
import re
from typing import Iterable

from codemods._tables.training_symbols import TRAINING_MOVES
from codemods.sweep import nm901_optimum_neuron_leftovers as nm901
from codemods.sweep import nm902_torch_xla_leftovers as nm902
from codemods.sweep._patterns import noted_by_another_rule, python_views, scan, statement_starts
from codemods.xla._base import BLOCKED_NOTE, WHOLESALE_NOTE
from codemods.xla._importers import KEPT_NOTES
from migrate.filekinds import HASH_COMMENT_KINDS, FileKind
from migrate.findings import Severity
from migrate.rule import Safety, SweepHit, SweepRule

#: optimum-neuron training class -> its stock class, for the message ("say `Trainer` instead")
_STOCK_NAME = {old.rsplit(".", 1)[1]: new for old, new in TRAINING_MOVES.items()}

_MENTIONS: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(expression), advice) for expression, advice in (
    (r"optimum[.\-_]neuron\w*|optimum\[neuronx?\]",
     "the project now runs stock transformers / trl / accelerate on TorchNeuron (torch-neuronx); update the text"),
    (r"\bneuron_parallel_compile\b",
     "there is no ahead-of-time compile pass on TorchNeuron (torch.compile compiles on first call); drop that step"),
    (r"\boptimum-cli\s+(?:export\s+)?neuron\b",
     "there is no export or cache step on TorchNeuron; load the source checkpoint with from_pretrained"),
    (r"\bNeuron(?:Model\w*|Trainer|Seq2SeqTrainer|SFTTrainer|ORPOTrainer|TrainingArguments|SFTConfig|ORPOConfig"
     r"|Accelerator|HfArgumentParser|\w+Pipeline|PeftModel\w*)\b",
     "an optimum-neuron class; name its stock counterpart"),
    (r"\bxmp?\.[A-Za-z_]\w*",
     "a torch_xla API; describe the native torch / torch.distributed call (launch with torchrun instead of xmp)"),
    (r"\btorch[_-]xla\b|\bPyTorch/XLA\b|\bpytorch-xla\b",
     "TorchNeuron runs native PyTorch eagerly on the `neuron` device; torch_xla is not used"),
    (r"\b(?:XLA_[A-Z0-9_]+|PJRT_DEVICE|NEURON_EXTRACT_GRAPHS_ONLY|NEURON_PARALLEL_COMPILE)\b",
     "an XLA-era setting that has no effect on TorchNeuron (bf16 comes from the model dtype or autocast)"),
    (r"\bneuronx[_-]distributed\w*|\bNxD\b",
     "neuronx-distributed runs on PyTorch/XLA; TorchNeuron shards with DTensor / DistributedConfig(tp_size=...)"),
    # optimum-neuron's Hub compile cache and switches, and the torch-xla era NEFF cache (map H9, T9)
    (r"\b(?:CUSTOM_CACHE_REPO|OPTIMUM_NEURON_[A-Z_]+|NEURON_COMPILE_CACHE_URL)\b",
     "an optimum-neuron / XLA-era compile-cache setting; TorchNeuron has no Hub or S3 compile cache and keeps its "
     "NEFF cache on local disk (TORCH_NEURONX_NEFF_CACHE_DIR)"),
    # the XLA-era torch_neuronx API (map B8, B9); TorchNeuron's own torch_neuronx names are not mentions
    (r"\btorch_neuronx\.(?:trace|DataParallel|move_trace_to_device|dynamic_batch|lazy_load|async_load"
     r"|replace_weights|analyze)\b",
     "torch_neuronx's XLA-era tracing API; TorchNeuron compiles the eager model with torch.compile(backend=\"neuron\") "
     "(no traced artifact)"),
    (r"\btransformers[_-]neuronx\b",
     "transformers-neuronx runs on PyTorch/XLA; stock transformers runs on TorchNeuron"),
))
_ANY = re.compile("|".join(f"(?:{pattern.pattern})" for pattern, _ in _MENTIONS))


def _message(mention: str, in_string: bool = False) -> str:
    advice = next((advice for pattern, advice in _MENTIONS if pattern.fullmatch(mention)), "")
    stock = _STOCK_NAME.get(mention)
    if stock:
        advice = f"say `{stock.rsplit('.', 1)[1]}` ({stock}) instead"
    if in_string:  # a string literal may be text, or a name the code looks up (an import check, a command)
        return (f"docs to update: a string mentions `{mention}`: update the text, or port the code if it looks "
                f"the name up (nothing of the old stack is installed on TorchNeuron); {advice}")
    return f"docs to update: mentions `{mention}`: {advice}"


CODE_NOTE = "code in an f-string replacement field uses"


def _noted_above(lines: list[str], start: int, matched: str) -> bool:
    """Whether another rule's note names ``matched`` above the statement at ``start`` or above a block header written
    right above it (``if rank == 0:``, the wrapper NM3xx put round a ``master_print``: its note sits above the ``if``)."""
    while True:
        if noted_by_another_rule(lines, start, matched):
            return True
        if start < 2:
            return False
        header, statement = lines[start - 2], lines[start - 1]
        indent = len(statement) - len(statement.lstrip())
        if header.lstrip().startswith("#") or not header.rstrip().endswith(":") or (
            len(header) - len(header.lstrip()) >= indent
        ):
            return False
        start -= 1


def _fstring_fields(text: str) -> dict[int, list[tuple[int, int]]]:
    """line -> the column spans of the expressions in f-string replacement fields (``f"{xm.get_ordinal()}"``): code
    that runs, though the tokenizer of Python < 3.12 gives the whole f-string as one string token. A line inside a
    multi-line expression is spanned whole."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    spans: dict[int, list[tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FormattedValue):
            continue
        value = node.value
        end_line = value.end_lineno or value.lineno
        end_col = value.end_col_offset if value.end_col_offset is not None else 1 << 30
        for number in range(value.lineno, end_line + 1):
            start = value.col_offset if number == value.lineno else 0
            spans.setdefault(number, []).append((start, end_col if number == end_line else 1 << 30))
    return spans


def _inside(spans: Iterable[tuple[int, int]], match: re.Match) -> bool:
    return any(start <= match.start() and match.end() <= end for start, end in spans)


def kept_whole(text: str) -> bool:
    """The torch_xla family left the file (or its importers) on torch_xla, and its one note says so: the old stack's
    calls in it keep their meaning (NM902 says the same)."""
    return BLOCKED_NOTE in text or WHOLESALE_NOTE in text or any(note in text for note in KEPT_NOTES)


def _code_hit(number: int, mention: re.Match) -> SweepHit:
    """A mention in an f-string replacement field is a live reference: reported as code (a todo, with the code
    sweep's wording where it has a pattern for it), never as text to update."""
    advice = next((item.message for item in nm902.PATTERNS[:-1] if item.regex.search(mention.group(0))), None)
    if advice is None:
        advice = next((text for pattern, text in _MENTIONS if pattern.fullmatch(mention.group(0))), "")
    return SweepHit(number, mention.start(), f"{CODE_NOTE} `{mention.group(0)}`: {advice}", Severity.TODO)


class LegacyMentionsInProse(SweepRule):
    """In a Neuron project, report prose (comments, docstrings, docs, markdown cells) that names the old stack."""

    id = "NM903"
    name = "legacy-mentions-in-prose"
    safety = Safety.MANUAL_ONLY
    scope = "neuron-project"
    kinds = frozenset(FileKind) - {FileKind.NOTEBOOK, FileKind.JSON}  # notebook cells come through their own kinds
    triggers = ("optimum.neuron", "optimum-neuron", "optimum_neuron", "optimum[neuron", "neuron_parallel_compile",
                "optimum-cli", "Neuron", "xm.", "xmp.", "torch_xla", "torch-xla", "PyTorch/XLA", "pytorch-xla",
                "XLA_", "PJRT_DEVICE", "NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE", "neuronx_distributed",
                "neuronx-distributed", "NxD", "transformers_neuronx", "transformers-neuronx", "CUSTOM_CACHE_REPO",
                "OPTIMUM_NEURON_", "NEURON_COMPILE_CACHE_URL", "torch_neuronx.")

    def _covered(self, text: str, kind: FileKind) -> set[int]:
        """The lines NM901/NM902 (those of them this run applies) report, before they collapse repeated messages."""
        active = self.options.rules
        found = set()
        if active is None or "NM901" in active:
            found |= {hit.line for hit in nm901.hits(text, kind)}
        if active is None or "NM902" in active:
            found |= {hit.line for hit in scan(text, kind, nm902.PATTERNS[:-1])}
        return found

    def scan(self, text: str, kind: FileKind) -> Iterable[SweepHit]:
        lines = text.splitlines()
        candidates = [(number, match) for number, line in enumerate(lines, start=1) for match in [_ANY.search(line)] if match]
        if not candidates:
            return
        covered: set[int] | None = None  # the lines the code sweeps' patterns find (a string that runs or sets something)
        fields: dict[int, list[tuple[int, int]]] | None = None  # f-string replacement fields: code, not prose
        others: list[str] | None = None
        if kind is FileKind.PYTHON:
            code, with_strings = python_views(text, candidates[-1][0])
            starts = statement_starts(text, kind, [number for number, _ in candidates])
        for number, _ in candidates:
            line = lines[number - 1]
            in_string = False
            if kind is FileKind.PYTHON:
                # a mention inside a comment, docstring or string: the code view has it blanked out (the
                # strings view keeps string literals, not comments and docstrings)
                prose = code[number - 1]
                mentions = [m for m in _ANY.finditer(line) if not prose[m.start():m.end()].strip()]
                if fields is None:
                    fields = _fstring_fields(text)
                in_field = [m for m in mentions if _inside(fields.get(number, ()), m)]
                if in_field and not kept_whole(text):
                    if others is None:  # the tool's notes, less this rule's own code notes (an earlier run's)
                        others = ["#" if CODE_NOTE in other else other for other in lines]
                    start = starts.get(number, number)
                    if not any(_noted_above(others, start, m.group(0)) for m in in_field):
                        yield _code_hit(number, in_field[0])  # code the old stack runs, not text
                mentions = [m for m in mentions if m not in in_field]
                mention = mentions[0] if mentions else None
                in_string = mention is not None and bool(with_strings[number - 1][mention.start():mention.end()].strip())
                if mention is not None and in_string and noted_by_another_rule(lines, starts.get(number, number),
                                                                               mention.group(0)):
                    continue  # a command string another rule's note already speaks about (NM410's)
                if mention is not None and in_string:
                    if covered is None:
                        covered = self._covered(text, kind)
                    if number in covered:
                        continue  # code NM901/NM902 report (once per file per message), not prose
            elif kind is FileKind.DOCS or (kind in HASH_COMMENT_KINDS and line.lstrip().startswith("#")):
                mention = _ANY.search(line)
            else:
                mention = None
            if mention is not None:
                yield SweepHit(number, mention.start(), _message(mention.group(0), in_string), Severity.INFO)
