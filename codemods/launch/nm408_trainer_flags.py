"""NM408 neuron-trainer-flags: Neuron trainer ``--flags`` and config keys, through the shared field map.

``HfArgumentParser`` aborts on arguments it does not know (map trap T35), so the launch scripts must change
together with the Python code. Every ``--flag`` of a command line (shell, Dockerfile, YAML argument lists)
and every top-level key of an argument-parser config (``parse_json_file`` JSON, ``parse_yaml_file`` YAML) is
looked up in THE shared table ``codemods/_tables/training_args.py`` (``TRAINING_ARGS``, also used by the
Python training rules; map 2.7, 3.G G4-G9):

* ``rename``: ``--old`` -> ``--new`` (value kept), ``fixed``;
* ``drop``: the flag and its value are removed, ``fixed``;
* ``distributed_config`` / ``model_init_kwargs``: removed, with a ``todo`` that carries the old value and the
  table's next step (the value moves to model loading);
* ``todo``: left in place with the table's message; ``keep``: nothing.

Both spellings ``--tensor_parallel_size`` and ``--tensor-parallel-size`` are recognised.

A flag is mapped only on a command whose script is a file of the project that parses Neuron training
arguments (``HfArgumentParser`` / ``TrlParser`` over ``NeuronTrainingArguments``, ``NeuronSFTConfig`` ...; a
project fact, see docs/rules-launch.md), and then ``--torch_compile true`` is added (``torch_compile: true`` in
a config), the way TorchNeuron's Hugging Face guide trains. A script the project does not hold keeps its flags,
each with a todo; ``vllm serve``, a script with its own argparse, an installed module (``python -m ...``),
``optimum-cli`` (NM406) and fields the script's own dataclass declares keep theirs without a word. A config
file is mapped only when a Neuron script of the project reads its arguments from one.

Before::

    torchrun train.py --tensor_parallel_size 8 --zero_1 true --max_seq_length 1024

After (with the table's entries)::

    # neuron-migrate: tensor_parallel_size -> DistributedConfig(tp_size=...) ... (was --tensor_parallel_size 8)
    torchrun train.py --max_length 1024 --torch_compile true

Fix safety: needs review. A boolean flag followed by a positional argument would take it as its value
(HfArgumentParser scripts rarely have positionals). JSON files get findings only (no comments in JSON).
A JSON/YAML file counts as an argument-parser config only when at least two of its top-level keys are
training-argument fields (so a compiled model's ``neuron_config.json`` is not edited).
"""

from __future__ import annotations

import ast
import json
import re

from codemods._lib import shell
from codemods._lib.launch_targets import NOTEBOOK_SCRIPTS, PARSER_SCRIPTS, config_parsers, resolver
from codemods._tables.project_markers import MARKERS
from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from codemods.launch._base import LAUNCH_KINDS, LaunchRule
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import Line, TextDocument

_BASE_TRIGGERS = ("--tensor_parallel_size", "--tensor-parallel-size", "--zero_1", "--pipeline_parallel_size",
                  "tensor_parallel_size", "--disable_sequence_parallel", "--use_cpu", "--use-cpu")
_UNFED_TODO = ("{key} was left as it is: no script of this project parses optimum-neuron training arguments from a "
               "config file, so this may not be one; if it feeds NeuronTrainingArguments/NeuronSFTConfig: {message}")
_KEY = re.compile(r"^(\s*)(\"?)([A-Za-z_][\w-]*)\2(\s*:\s*)(.*?)(,?)\s*$")


def _triggers() -> tuple[str, ...]:
    names = {name for name, mapping in TRAINING_ARGS.items() if mapping.action is not FieldAction.KEEP}
    return tuple(sorted(set(_BASE_TRIGGERS) | names))


class NeuronTrainerFlags(LaunchRule):
    """Map Neuron trainer --flags and argument-parser config keys through the shared training-arguments table."""

    id = "NM408"
    name = "neuron-trainer-flags"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    kinds = LAUNCH_KINDS | {FileKind.JSON}
    triggers = _triggers()
    facts = (PARSER_SCRIPTS, NOTEBOOK_SCRIPTS)

    def apply(self, doc: TextDocument) -> None:
        project = self.ctx.options.project
        if doc.kind in (FileKind.JSON, FileKind.YAML):
            # a key that a config-reading script declares in its own dataclass is that script's, Neuron parser or
            # not: after a first run migrated the script it is no longer a Neuron parser, and the key is still its own
            owned = {name for record in project.of(PARSER_SCRIPTS.name).values() if record.reads_config
                     for name in record.own_fields}
            self._config_keys(doc, config_parsers(project), owned)
        if doc.kind is not FileKind.JSON:
            shell.edit_flags(doc, self.report, resolver(project, self.ctx.path))

    def _config_keys(self, doc: TextDocument, parsers: list, owned: set[str]) -> None:
        """Keys of an argument-parser config, mapped when a script of the project parses Neuron training
        arguments from a config file (a key a config-reading script declares in its own dataclass stays)."""
        lines = list(doc)
        indents = [len(line.text) - len(line.text.lstrip()) for line in lines if line.text.strip() and not line.text.lstrip().startswith(("#", "{", "}"))]
        if not indents:
            return
        level = min(indents)
        keys = [m.group(3) for line in lines if (m := _KEY.match(line.text)) and len(m.group(1)) == level]
        if sum(1 for key in keys if key in TRAINING_ARGS) < 2:
            return  # not an argument-parser config (e.g. a compiled model's neuron_config.json)
        edited = False
        for index, line in enumerate(lines):
            match = _KEY.match(line.text)
            if not match or len(match.group(1)) != level or (doc.kind is FileKind.JSON and not match.group(2)):
                continue
            mapping = TRAINING_ARGS.get(match.group(3))
            value = re.sub(r"\s+#.*$", "", match.group(5)) if doc.kind is FileKind.YAML else match.group(5)
            if mapping is None or mapping.action is FieldAction.KEEP or value.endswith(("{", "[")) or value in {"|", ">"} \
                    or mapping.source in owned:
                continue
            plan = shell.flag_plan(mapping, mapping.source, value.strip("\"'"))
            if plan is None:
                continue
            if not parsers:
                self.report(line, Severity.TODO, _UNFED_TODO.format(key=mapping.source, message=plan.message))
                continue
            edited = True
            if plan.words:
                new_value = match.group(5)
                if mapping.value is not None:
                    new_value = json.dumps(ast.literal_eval(mapping.value))
                line.text = (line.text[:match.start(3)] + plan.words[0][2:] + line.text[match.end(3):match.start(5)]
                             + new_value + line.text[match.end(5):])
                self.report(line, plan.severity, plan.message)
                continue
            message = plan.message.replace(f"(was {mapping.source} ", f"(was {mapping.source}: ")
            self._delete_key(doc, lines, index, bool(match.group(6)))
            self.report(line, plan.severity, message)  # a deleted line keeps its number; its note goes below
        if edited and "torch_compile" not in keys:
            self._add_torch_compile(doc, lines, level)

    def _add_torch_compile(self, doc: TextDocument, lines: list[Line], level: int) -> None:
        """The config feeds Neuron training arguments: it trains with torch_compile (issue 15, class 8). The key
        goes after a top-level scalar member (which in JSON is followed by another, so the new one takes a comma)."""
        json_file = doc.kind is FileKind.JSON
        for line in lines:
            match = _KEY.match(line.text)
            if line.deleted or not match or len(match.group(1)) != level or match.group(5).endswith(("{", "[")) \
                    or (json_file and not (match.group(2) and match.group(6))):
                continue
            indent = match.group(1)
            doc.insert_after(line, [indent + ('"torch_compile": true,' if json_file else "torch_compile: true")])
            self.report(line, Severity.FIXED, shell.COMPILE_ADDED.replace("--torch_compile true", "torch_compile: true"))
            return
        self.report(lines[0], Severity.TODO, shell.COMPILE_TODO.replace("--torch_compile true", "torch_compile: true"))

    @staticmethod
    def _delete_key(doc: TextDocument, lines: list[Line], index: int, had_comma: bool) -> Line:
        line = lines[index]
        doc.delete(line)
        if doc.kind is FileKind.JSON and not had_comma:  # it was the last member: the one before loses its comma
            for previous in reversed(lines[:index]):
                if previous.deleted or not previous.text.strip():
                    continue
                if previous.text.rstrip().endswith(","):
                    stripped = previous.text.rstrip()
                    previous.text = stripped[:-1] + previous.text[len(stripped):]
                break
        return doc.next_live(line) or line
