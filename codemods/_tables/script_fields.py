"""Stock training-argument fields that transformers 5 removed and that only user scripts ever acted on.

A field qualifies when the stock Trainer of transformers 4.x did not read it: its only effect was what the script
did with it (HF example scripts: ``if ... and not training_args.overwrite_output_dir: last_checkpoint = ...``).
Moving it into a dataclass of the script that HfArgumentParser parses beside the arguments then keeps the run's
behaviour: the flag and the config key still parse, and the reads see the same value. A field the Trainer acted on
(``warmup_ratio``, ``logging_dir``) does NOT qualify: declared in the script it would parse and do nothing.

Read by ``codemods/_lib/parsed_args.py`` (the move, and the script's CLI fields the launch rules keep) and by
``codemods/_lib/launch_targets.py`` (a script that reads one of these fields keeps its flag).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScriptField:
    annotation: str  # the declaration added to the script's dataclass: ``<name>: <annotation> = <default>``
    default: str  # transformers 4.x's default, so a command that does not pass the flag reads the same value
    comment: str  # the one-line comment above the declaration


SCRIPT_FIELDS: dict[str, ScriptField] = {
    # transformers 4.x TrainingArguments.overwrite_output_dir (default False): only scripts read it, to decide
    # whether to resume from the last checkpoint in output_dir; the Trainer never did
    "overwrite_output_dir": ScriptField(
        "bool", "False",
        "# was a TrainingArguments field (removed in transformers 5, the Trainer never read it): this script reads it"),
}
