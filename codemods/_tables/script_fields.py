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


@dataclass(frozen=True)
class NeuronField:
    """A field of optimum-neuron's NeuronTrainingArguments that a script may read (a log line, an ``if``) and that
    the stock classes lack. Declared in the script's dataclass with optimum's default, the reads and the flag keep
    working; what optimum DID with the value (``effect``) is not reproduced by a dataclass field, so the rule says so."""

    annotation: str
    default: str  # optimum's default (for zero_1 the rule takes the project's optimum-neuron line instead)
    effect: str  # what optimum did with the value and the stock stack does not do, for the todo at the declaration
    #: where a value other than the default must stop the run (the effect changed the model's layout, not only
    #: memory): the message of that stop ("" for none)
    stop: str = ""


#: Neuron-only training-argument fields that move into the script's dataclass when they are READ on parsed Neuron
#: arguments (codemods/_lib/parsed_args.py, ``_script_fields``; NM208 declares them). Defaults from the field scan
#: of every optimum-neuron tag (migration map section 2.7).
NEURON_SCRIPT_FIELDS: dict[str, NeuronField] = {
    # 0.0.8-0.3.0 False, 0.4.0-0.4.5 True: NM208 declares the project's line's default (codemods/_lib/optimum_version.py)
    "zero_1": NeuronField("bool", "False", "optimum sharded the optimizer state across the data-parallel ranks (ZeRO-1) "
                                           "when it was True; the stock Trainer has no such switch"),
    "pipeline_parallel_size": NeuronField(
        "int", "1", "optimum split the model into that many pipeline stages; stock transformers does not (pipeline "
                    "parallelism is manual on TorchNeuron: DistributedConfig(pp_size=...) raises next to any data "
                    "parallelism)",
        "pipeline parallelism is not done by the stock Trainer on TorchNeuron (DistributedConfig(pp_size=...) raises "
        "next to any data parallelism)"),
    "pipeline_parallel_num_microbatches": NeuronField(
        "int", "-1", "optimum split each batch into that many pipeline microbatches; nothing does now"),
    "sequence_parallel_enabled": NeuronField(
        "bool", "False", "optimum sharded the activations along the sequence across the tensor-parallel ranks when it "
                         "was True; stock transformers does not (each rank holds the full-sequence activations: check "
                         "that the batch size and sequence length still fit in device memory)"),
    "disable_sequence_parallel": NeuronField(
        "bool", "False", "optimum sharded the activations along the sequence across the tensor-parallel ranks unless "
                         "it was True; stock transformers never does (each rank holds the full-sequence activations: "
                         "check that the batch size and sequence length still fit in device memory)"),
    # checkpoint and custom-modeling options whose default is the same in every tag that has them (map 2.7)
    "use_xser": NeuronField(
        "bool", "True", "optimum saved and loaded its sharded checkpoints with torch-xla serialization (xser) when it "
                        "was True; the stock Trainer writes ordinary safetensors checkpoints whatever its value"),
    "async_save": NeuronField(
        "bool", "False", "optimum wrote its sharded checkpoints asynchronously when it was True; the stock Trainer "
                         "saves synchronously (custom loops: torch.distributed.checkpoint.async_save)"),
    "num_local_ranks_per_step": NeuronField(
        "int", "8", "optimum loaded and saved checkpoints that many local ranks at a time; the stock Trainer has no "
                    "such throttle"),
    "fuse_qkv": NeuronField(
        "bool", "False", "optimum's custom models fused the query, key and value projections when it was True; stock "
                         "models keep the Hugging Face layout"),
    "recompute_causal_mask": NeuronField(
        "bool", "True", "optimum's custom models recomputed the causal mask in each layer when it was True; stock "
                        "models build it once"),
    "kv_size_multiplier": NeuronField(
        "Optional[int]", "None", "optimum replicated the KV heads that many times for a tensor-parallel degree above "
                                 "num_key_value_heads; stock tensor parallelism does not: choose a tp_size that divides "
                                 "num_key_value_heads"),
}
