"""JSON Schemas shipped with the package (a package so that setuptools ships the .json files beside it)."""

from pathlib import Path

SCHEMAS = Path(__file__).parent
COMPAT_RESULTS = SCHEMAS / "compat-results.schema.json"
COMPAT_BASELINE = SCHEMAS / "compat-baseline.schema.json"
MIGRATE_REPORT = SCHEMAS / "migrate-report.schema.json"
