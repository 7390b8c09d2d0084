"""Reading and validating result rows: what the gate must refuse, and what a report may show with a warning."""

from __future__ import annotations

import json
import math

import pytest

from reports.compat.results import load_results, validate_row

from .conftest import RESULTS, find


def test_fixture_rows_are_all_valid():
    results = load_results(RESULTS)
    assert results.problems == []
    assert len(results.rows) == 28
    assert results.unusable_reasons() == []


def test_a_scan_output_folder_means_its_results_file(tmp_path, rows, jsonl):
    jsonl(rows, "out/results.jsonl")
    results = load_results(tmp_path / "out")
    assert len(results.rows) == 28 and results.sources == [str(tmp_path / "out" / "results.jsonl")]


def test_folder_without_results_file_is_unusable(tmp_path):
    results = load_results(tmp_path)
    assert results.rows == []
    assert any("no results.jsonl" in reason for reason in results.unusable_reasons())


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_file_is_unusable(tmp_path, text):
    path = tmp_path / "results.jsonl"
    path.write_text(text)
    reasons = load_results(path).unusable_reasons()
    assert any("empty" in reason for reason in reasons)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(math.nan, "timings.first_call is nan"), (math.inf, "timings.first_call is inf"), (-1.0, "negative"), ("fast", "not a number")],
)
def test_bad_timings_are_errors(rows, jsonl, value, expected):
    find(rows, "llama", "compiled")["timings"]["first_call"] = value
    results = load_results(jsonl(rows))
    assert [p.severity for p in results.problems] == ["error"]
    assert expected in results.problems[0].message
    assert results.problems[0].where.endswith(":2")  # llama/compiled is the second line
    assert len(results.rows) == 27  # the bad row is left out, not silently kept
    assert results.unusable_reasons()


def test_nan_literal_in_the_file_is_caught(tmp_path, rows):
    # json.dumps writes NaN as a bare literal, which Python's json accepts: the check must be on the value
    text = json.dumps(find(rows, "llama", "eager")).replace('"first_call": 0.42', '"first_call": NaN')
    assert "NaN" in text
    path = tmp_path / "results.jsonl"
    path.write_text(text + "\n")
    assert "timings.first_call is nan" in load_results(path).problems[0].message


@pytest.mark.parametrize("version", [0, 3, "1", None])
def test_unknown_schema_version_is_an_error(rows, jsonl, version):
    rows[0]["schema_version"] = version
    results = load_results(jsonl(rows))
    assert len(results.errors) == 1 and "schema_version" in results.errors[0].message


def test_unknown_status_and_missing_keys(rows, jsonl):
    rows[0]["status"] = "mostly_fine"
    del rows[1]["verdict"]
    messages = [p.message for p in load_results(jsonl(rows)).errors]
    assert messages == ["unknown status 'mostly_fine'", "row is missing verdict"]


def test_broken_json_line_names_the_line(tmp_path, rows):
    path = tmp_path / "results.jsonl"
    lines = [json.dumps(row) for row in rows[:3]]
    lines[1] = lines[1][:40]  # a worker killed mid-write
    path.write_text("\n".join(lines) + "\n")
    results = load_results(path)
    assert [p.where for p in results.errors] == [f"{path}:2"]
    assert "not JSON" in results.errors[0].message
    assert len(results.rows) == 2


def test_repeated_job_in_one_file_keeps_the_last_row_with_a_warning(rows, jsonl):
    retry = dict(find(rows, "phi3", "tp"), status="pass", verdict="supported", reasons=[], error=None)
    results = load_results(jsonl(rows + [retry]))
    assert [p.kind for p in results.problems] == ["duplicate"]
    assert find(results.rows, "phi3", "tp")["status"] == "pass"
    assert len(results.rows) == 28


def test_all_skipped_is_unusable(rows, jsonl):
    for row in rows:
        row["status"] = "skipped"
    assert any("every job was skipped" in r for r in load_results(jsonl(rows)).unusable_reasons())


def test_validate_row_accepts_nulls_for_not_reached_timings(rows):
    row = find(rows, "qwen3_moe", "compiled")
    row["timings"] = {"load": None}
    row["peak_memory_mb"] = None
    assert validate_row(row) == []
    row["peak_memory_mb"] = math.nan
    assert validate_row(row) == ["peak_memory_mb is not a finite non-negative number: nan"]
