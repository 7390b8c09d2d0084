"""The result row: the one record `neuron-compat scan` writes and every report, merge, diff and gate reads.

Pure Python on purpose (no torch, no transformers): `reports/` imports this module to read results, and
running stays apart from rendering.

One row per job (architecture x mode), one JSON object per line in ``OUT/results.jsonl``. Fields:

==================  =========================================================================================
``schema_version``  int, ``SCHEMA_VERSION``; readers refuse rows of a newer version and bring older ones up to
                    date with ``migrate_row`` (see docs/results-schema.md, "Versions")
``tool_version``    version of this package that produced the row
``model_type``      transformers ``model_type`` (``llama``, ``qwen3_moe`` ...)
``rank``            position in the shipped top-100 list, or ``None`` for architectures outside it
``mode``            one of ``MODES``
``status``          one of ``STATUSES`` (closed vocabulary)
``verdict``         one of ``VERDICTS``: what this row alone says about the architecture in this mode
``evidence``        one of ``evidence.LEVELS`` (since version 2): ``observed`` (ran on neuron), ``stand-in`` (ran
                    on cpu/cuda), ``proxy`` (decided by the torch-mlir lowering proxy: ``fail_lowering``)
``reasons``         list of short strings that decided the verdict (``"predicted CPU fallback: sort"``)
``device``          ``neuron`` / ``cuda`` / ``cpu``: where the model ran
``backend``         compile backend (``neuron``, ``inductor``, ``eager`` ...); ``None`` in eager mode
``dtype``           ``bfloat16`` / ``float32`` ...
``versions``        dict: ``torch``, ``transformers``, ``torch_neuronx`` (``None`` off Neuron), ``python``
``error``           one-line error (exception type and message) or ``None``
``timings``         dict of seconds: ``load``, ``first_call`` (includes compilation), ``steady_decode_step``,
                    ``total``; missing keys mean "not reached"
``peak_memory_mb``  peak resident memory of the job (host RSS on CPU, device memory on accelerators)
``model_path``      optional: the local checkpoint folder scanned instead of a tiny random model
``details``         dict, all optional: ``params``, ``parity`` {``max_abs_diff``, ``tolerance``,
                    ``tokens_match``}, ``cache`` {``requested``, ``used``}, ``graphs``, ``graph_breaks``
                    [{``reason``, ``count``, ``steps`` {``prefill``|``decode_N``: count}}], ``recompiles``,
                    ``recompile_limit`` {``limit``, ``hit_at_step``, ``functions``, ``decode_steps``},
                    ``chunked_prefill_compile``, ``scanned_config`` {``sliding_window``, ``use_cache``},
                    ``fallback_ops`` [aten names],
                    ``fallback_ops_source`` (``predicted`` | ``torch_neuronx``), ``float64_ops``,
                    ``complex_ops``, ``lowering`` {..., ``outcome``: ``lowers`` | ``inconclusive`` |
                    ``predicted_failure``, ``unlisted_ops``, ``listed_ops``, ``experts_alternative``}, ``tp`` {...}
``started_at``      ISO-8601 UTC
``finished_at``     ISO-8601 UTC
``shard``           ``"i/n"`` or ``None``
==================  =========================================================================================
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, overload

from compat_matrix.evidence import LEVELS

#: 2: ``evidence`` on every row; a lowering failure on an op TorchNeuron implements no longer lowers the row.
SCHEMA_VERSION = 2

MODES = ("eager", "compiled", "tp")

#: Closed status vocabulary. Order matters: it is the display order in reports.
STATUSES = (
    "pass",
    "fail_load",
    "fail_forward",
    "fail_generate",
    "no_static_cache",  # generate ran, but the static cache was silently ignored (shapes change every step)
    "fail_compile",
    # compiled generate ran, but Dynamo split the forward (fullgraph=True, recommended on Neuron, fails)
    "graph_breaks",
    "fail_lowering",  # the graph does not legalise to StableHLO (torch-mlir), see checks/lowering.py
    "fail_accuracy",
    "recompiles",  # compiled decode recompiled across steps: a recompile per step is a failure on Neuron
    "no_tp_plan",  # tp mode: the architecture ships no tensor-parallel plan
    "fail_shard",  # tp mode: sharding failed (shapes do not divide, collective error ...)
    "timeout",
    "oom",
    "crash",  # the worker process died (signal, abort) while running the job
    "skipped",
)

VERDICTS = ("supported", "partial", "unsupported")

#: The verdict each status implies: the one table that rows.py, tp.py, the version migration and docs/compat-scan.md
#: follow. Two refinements, both in ``rows.verdict_for``: ``fail_generate`` is ``partial`` where the model still
#: generates (eager, where the forward works; compiled/tp when only chunked prefill fails); and a ``pass`` becomes
#: ``partial`` when the row names a caveat it measured (CPU fallbacks on Neuron, a TP plan that shards only the
#: embeddings).
STATUS_VERDICTS = {
    "pass": "supported",
    "fail_load": "unsupported",
    "fail_forward": "unsupported",
    "fail_generate": "unsupported",
    "no_static_cache": "partial",  # generate works, with shapes that change every step
    "fail_compile": "unsupported",
    "graph_breaks": "partial",  # runs compiled, in pieces
    "fail_lowering": "partial",  # runs for real; the lowering proxy predicts a failure on Neuron
    "fail_accuracy": "unsupported",
    "recompiles": "unsupported",  # a neuronx-cc compile per decode step
    "no_tp_plan": "unsupported",  # tensor parallelism cannot start without a plan (the other modes are unaffected)
    "fail_shard": "unsupported",
    "timeout": "unsupported",
    "oom": "unsupported",
    "crash": "unsupported",
    "skipped": "unsupported",  # no evidence: architecture_verdict ignores it
}

#: Statuses that mean the job itself never produced evidence about the model.
HARNESS_STATUSES = ("skipped",)

#: Keys every row carries (others are optional).
REQUIRED_KEYS = (
    "schema_version",
    "tool_version",
    "model_type",
    "mode",
    "status",
    "verdict",
    "device",
    "backend",
    "dtype",
    "versions",
    "error",
    "timings",
)


class SchemaError(ValueError):
    """A row does not follow the result schema."""


def check_row(row: Mapping[str, Any]) -> None:
    """Raise ``SchemaError`` naming the first problem of ``row``; return ``None`` for a valid row."""
    missing = [key for key in REQUIRED_KEYS if key not in row]
    if missing:
        raise SchemaError(f"row is missing {', '.join(missing)}")
    if not isinstance(row["schema_version"], int) or row["schema_version"] > SCHEMA_VERSION:
        raise SchemaError(f"unsupported schema_version {row['schema_version']!r} (this tool reads <= {SCHEMA_VERSION})")
    if row["mode"] not in MODES:
        raise SchemaError(f"unknown mode {row['mode']!r}")
    if row["status"] not in STATUSES:
        raise SchemaError(f"unknown status {row['status']!r}")
    if row["verdict"] not in VERDICTS:
        raise SchemaError(f"unknown verdict {row['verdict']!r}")
    if not isinstance(row["model_type"], str) or not row["model_type"]:
        raise SchemaError("model_type must be a non-empty string")
    if not isinstance(row.get("details") or {}, Mapping):
        raise SchemaError("details must be an object")
    if row["schema_version"] >= 2 and row.get("evidence") not in LEVELS:
        raise SchemaError(f"unknown evidence {row.get('evidence')!r}")


@overload
def migrate_row(row: dict[str, Any]) -> dict[str, Any]: ...
@overload
def migrate_row(row: Mapping[str, Any]) -> Mapping[str, Any]: ...
def migrate_row(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row of an older schema as this version writes it (a new dict; current rows are returned as they are).

    1 -> 2: ``evidence`` from the device and status, ``details.lowering`` classified; a ``fail_lowering`` whose
    failed ops TorchNeuron all implements becomes what the stand-in run found (``pass``, or ``fail_generate`` when
    chunked prefill had failed: version 1 ranked the lowering above it).
    """
    from compat_matrix import evidence

    version = row.get("schema_version") if isinstance(row, Mapping) else None
    if version != 1 or isinstance(version, bool):
        return row
    try:
        check_row(row)
    except (SchemaError, TypeError):
        return row  # not a valid version 1 row: the reader reports it as it is
    new = {**row, "schema_version": SCHEMA_VERSION, "details": dict(row.get("details") or {})}
    lowering = new["details"].get("lowering")
    if isinstance(lowering, Mapping):
        judged = evidence.classify_lowering(lowering)
        if judged:
            new["details"]["lowering"] = {**lowering, **judged}
            if new.get("status") == "fail_lowering" and judged["outcome"] != evidence.PREDICTED_FAILURE:
                _undo_lowering_failure(new)
    new["evidence"] = evidence.row_evidence(new.get("device"), new["status"])  # check_row: status is there
    return new


def _undo_lowering_failure(row: dict[str, Any]) -> None:
    from compat_matrix.rows import verdict_for

    row["reasons"] = [reason for reason in row.get("reasons") or [] if not reason.startswith("StableHLO lowering")]
    chunked_error = row["details"].get("chunked_prefill_error")
    row["status"] = "fail_generate" if chunked_error else "pass"
    if chunked_error:
        row["reasons"].insert(0, str(chunked_error)[:300])
    row["verdict"] = verdict_for(row["status"], row["mode"], generate_runs=True)


def job_key(row: Mapping[str, Any]) -> tuple[str, str]:
    """The identity of a job in a report: one architecture in one mode."""
    return (row["model_type"], row["mode"])


#: What besides the job decides a row's outcome, as ``run_key`` compares it (for messages).
RUN_SETTINGS = ("device", "backend", "dtype", "model_path")


def run_key(row: Mapping[str, Any]) -> tuple:
    """The identity of a job in a scan: the job plus the settings its outcome depends on (device, compile backend in
    compiled mode, dtype, and the model source: a checkpoint folder or ``None`` for the tiny random model). Jobs and
    rows both have these fields, so ``--resume`` compares them directly."""
    backend = row.get("backend") if row["mode"] == "compiled" else None
    return (row["model_type"], row["mode"], row.get("device"), backend, row.get("dtype"), row.get("model_path"))


def architecture_verdict(rows: Iterable[Mapping[str, Any]]) -> tuple[str, list[str]]:
    """Fold the rows of one architecture (all its modes) into one verdict and the reasons for it.

    supported   every mode that ran is ``supported``;
    unsupported eager (the baseline every other mode builds on) is ``unsupported``, or nothing ran;
    partial     anything in between (e.g. eager works, compiled mode graph-breaks or recompiles).
    """
    ran = [row for row in rows if row["status"] not in HARNESS_STATUSES]
    if not ran:
        return "unsupported", ["no mode ran"]
    reasons = [f"{row['mode']}: {reason}" for row in ran for reason in (row.get("reasons") or [])]
    by_mode = {row["mode"]: row for row in ran}
    eager = by_mode.get("eager")
    if eager is not None and eager["verdict"] == "unsupported":
        return "unsupported", reasons or [f"eager: {eager['status']}"]
    if all(row["verdict"] == "supported" for row in ran):
        return "supported", reasons
    failing = [f"{row['mode']}: {row['status']}" for row in ran if row["verdict"] != "supported"]
    return "partial", reasons or failing
