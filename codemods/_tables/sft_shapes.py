"""The ``SFTConfig`` fields a migrated optimum-neuron SFT run needs beside the ones it sets, to keep its shapes.

optimum-neuron padded every example to ``max_length`` (one shape, one compiled graph) and packed with wrapping;
trl 1.x's ``SFTConfig`` pads to the longest example of the batch (a multiple of 128 on Neuron) and packs with
``bfd``, which is padding-free (``padding_free`` follows ``packing`` with a ``bfd`` strategy: trl 1.16
``sft_trainer.py``): a new shape for every batch, a new compilation for every shape. One table for every front end
that sets SFT arguments: NM202 writes keywords of a ``SFTConfig(...)`` call, NM408 flags of a launch line
(``--pad_to_multiple_of 512``) and keys of a YAML / JSON argument config (``pad_to_multiple_of: 512``).
``ORPOConfig`` declares neither field (HfArgumentParser would reject them): only SFT arguments get them.
"""

from __future__ import annotations

from typing import NamedTuple


class ShapeField(NamedTuple):
    field: str  # the SFTConfig field to add
    trigger: str  # the field whose presence asks for it
    value: str | None  # the value to give (a string value, unquoted), or None: the trigger's value
    off: frozenset[str]  # trigger values (lowercased) for which nothing is added
    why: str  # the reason, for the "<field> added: <why>" message


SFT_SHAPE_FIELDS: tuple[ShapeField, ...] = (
    ShapeField(
        "pad_to_multiple_of",
        "max_length",
        None,
        frozenset(),
        "optimum padded every example to max_length (one compiled shape); trl pads to a multiple of 128 on "
        "Neuron otherwise",
    ),
    ShapeField(
        "packing_strategy",
        "packing",
        "wrapped",
        frozenset({"false", "0", "no", "n", "f", "off"}),
        "trl 1.x default bfd packing is padding-free, which optimum forbade on Neuron",
    ),
)


def shape_fields(given: dict[str, str | None]) -> list[tuple[ShapeField, str]]:
    """(entry, value to write) for each shape field to add to SFT arguments that give ``given`` (field -> value as
    written, None where it is not a literal): its trigger is given with a value that is not off, and the field itself
    is not."""
    found = []
    for entry in SFT_SHAPE_FIELDS:
        if entry.field in given or entry.trigger not in given:
            continue
        value = given[entry.trigger]
        if value is not None and value.strip().strip("\"'").lower() in entry.off:
            continue
        written = entry.value if entry.value is not None else value
        if written is not None:
            found.append((entry, written))
    return found
