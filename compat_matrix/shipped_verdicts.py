"""Write the compact results file ``neuron-migrate`` ships: model_type -> {mode: status}, with its provenance.

    python -m compat_matrix.shipped_verdicts scan-out/                 # writes compat_matrix/data/shipped_verdicts.json
    python -m compat_matrix.shipped_verdicts scan-out/ -o other.json

``neuron-migrate`` reads it (``migrate/models.py``) to say, next to a project's TODOs, whether the models the
project loads ran in the matrix. Refresh it after each full top-100 scan (docs/compat-scan.md shows the command).
Pure Python: reads rows through ``reports.compat.results`` and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from reports.compat.results import load_results
from reports.templating import plural

DEFAULT = Path(__file__).with_name("data") / "shipped_verdicts.json"


def compact(scan: Path) -> dict:
    results = load_results(scan)
    if results.unusable_reasons():
        raise SystemExit(f"shipped_verdicts: {'; '.join(results.unusable_reasons())}")
    verdicts: dict[str, dict[str, str]] = {}
    for row in sorted(results.rows, key=lambda r: (r["model_type"], r["mode"])):
        verdicts.setdefault(row["model_type"], {})[row["mode"]] = row["status"]
    rows = results.rows
    devices = sorted({f"{r['device']}/{r.get('backend') or 'eager'}/{r.get('evidence', 'stand-in')}" for r in rows})
    finished = max((r.get("finished_at") or "" for r in rows), default="")[:10]
    versions = sorted({f"transformers {r['versions'].get('transformers')}" for r in rows if r.get("versions")})
    source = f"{plural(len(verdicts), 'architecture')}, {', '.join(devices)}, {', '.join(versions)}, scanned {finished}"
    return {"source": source, "verdicts": verdicts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scan", type=Path, help="a scan output folder or results.jsonl")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT)
    args = parser.parse_args(argv)
    data = json.dumps(compact(args.scan), indent=1, sort_keys=True) + "\n"
    handle, temp = tempfile.mkstemp(dir=args.output.parent, prefix=f".{args.output.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(data)
    os.chmod(temp, 0o644)  # package data: readable by everyone, as the rest of the package
    os.replace(temp, args.output)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
