"""`neuron-compat merge` (shards -> one results.jsonl) and `neuron-compat diff`."""

from __future__ import annotations

import json

from reports.compat.render import render_json, render_markdown
from reports.compat.results import load_results
from reports.compat.summary import build_summary

from .conftest import RESULTS, find, read_jsonl, write_jsonl


def shard(rows, count):
    """Split rows into ``count`` shards the way a sharded scan would (round-robin over jobs, labelled i/n)."""
    shards = [[] for _ in range(count)]
    for index, row in enumerate(rows):
        shards[index % count].append(dict(row, shard=f"{index % count + 1}/{count}"))  # 1-based, like the scan
    return shards


def without_shard(rows):
    return [{key: value for key, value in row.items() if key != "shard"} for row in rows]


def test_merge_of_shards_equals_a_single_run(tmp_path, rows, cli):
    dirs = []
    for index, part in enumerate(shard(rows, 3)):
        dirs.append(tmp_path / f"shard-{index}")
        write_jsonl(dirs[-1] / "results.jsonl", list(reversed(part)))
    result = cli("merge", *dirs, "-o", tmp_path / "merged")
    assert result.exit_code == 0, result.output
    assert "merged 28 jobs from 3 inputs" in result.output and "0 duplicates" in result.output
    merged = read_jsonl(tmp_path / "merged" / "results.jsonl")
    single = load_results(RESULTS).rows
    assert without_shard(merged) == without_shard(single)  # same rows, same order
    assert {row["shard"] for row in merged} == {"1/3", "2/3", "3/3"}  # provenance is kept
    merged_summary = build_summary(load_results(tmp_path / "merged"))
    single_summary = build_summary(load_results(RESULTS))
    assert render_markdown(merged_summary) == render_markdown(single_summary)
    merged_doc, single_doc = json.loads(render_json(merged_summary)), json.loads(render_json(single_summary))
    assert merged_doc["summary"] == single_doc["summary"]
    assert merged_doc["architectures"] == single_doc["architectures"]


def test_missing_shard_is_reported(tmp_path, rows, cli):
    parts = shard(rows, 3)
    paths = [write_jsonl(tmp_path / f"s{i}.jsonl", parts[i]) for i in (0, 2)]
    result = cli("merge", *paths, "-o", tmp_path / "merged.jsonl")
    assert result.exit_code == 0
    assert "only 2 of 3 shards present (seen 1, 3)" in result.output


def test_duplicates_are_reported_and_kept_once(tmp_path, rows, cli):
    a = write_jsonl(tmp_path / "a.jsonl", rows)
    again = [dict(row) for row in rows if row["model_type"] == "llama"]
    for row in again:
        row["finished_at"] = "2026-04-17T00:00:00Z"
    b = write_jsonl(tmp_path / "b.jsonl", again)
    result = cli("merge", a, b, "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "3 duplicates" in result.output
    assert result.output.count("duplicate: in ") == 3 and "llama/compiled" in result.output
    merged = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert len(merged) == 28
    assert find(merged, "llama", "eager")["finished_at"] == "2026-04-17T00:00:00Z"  # the later row is kept


def conflicting(tmp_path, rows):
    a = write_jsonl(tmp_path / "a.jsonl", rows)
    other = dict(find(rows, "phi3", "compiled"), status="pass", verdict="supported", reasons=[], finished_at="2026-04-17T00:00:00Z")
    return a, write_jsonl(tmp_path / "b.jsonl", [other])


def test_conflicts_fail_and_write_nothing(tmp_path, rows, cli):
    a, b = conflicting(tmp_path, rows)
    result = cli("merge", a, b, "-o", tmp_path / "out")
    assert result.exit_code == 1
    assert "phi3/compiled: conflict:" in result.output and "fail_accuracy/unsupported" in result.output
    assert "1 conflicting job; nothing written" in result.output
    assert not (tmp_path / "out").exists()


def test_conflicts_resolved_by_prefer_latest_are_still_reported(tmp_path, rows, cli):
    a, b = conflicting(tmp_path, rows)
    result = cli("merge", a, b, "-o", tmp_path / "out", "--prefer-latest")
    assert result.exit_code == 0, result.output
    assert "warning: phi3/compiled: conflict:" in result.output and "1 conflict resolved" in result.output
    assert find(read_jsonl(tmp_path / "out" / "results.jsonl"), "phi3", "compiled")["status"] == "pass"


def test_invalid_rows_block_the_merge_unless_skipped(tmp_path, rows, cli):
    rows[5]["timings"]["total"] = float("nan")
    path = write_jsonl(tmp_path / "a.jsonl", rows)
    refused = cli("merge", path, "-o", tmp_path / "out")
    assert refused.exit_code == 1 and "timings.total is nan" in refused.output
    assert not (tmp_path / "out").exists()
    skipped = cli("merge", path, "-o", tmp_path / "out", "--skip-invalid")
    assert skipped.exit_code == 0 and "1 invalid row left out" in skipped.output
    assert len(read_jsonl(tmp_path / "out" / "results.jsonl")) == 27


def test_merge_of_nothing_fails(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    write_jsonl(tmp_path / "empty" / "results.jsonl", [])
    result = cli("merge", tmp_path / "empty", "-o", tmp_path / "out")
    assert result.exit_code == 1


# --- diff ---------------------------------------------------------------------------------------------------


def changed(rows):
    find(rows, "llama", "tp").update(status="fail_shard", verdict="unsupported", reasons=["boom"])
    find(rows, "mistral", "compiled").update(status="pass", verdict="supported", reasons=[])
    find(rows, "mistral", "tp").update(status="pass", verdict="supported", reasons=[])
    rows = [row for row in rows if row["model_type"] != "mamba"]
    rows += [dict(row, model_type="olmo2", rank=30) for row in rows if row["model_type"] == "qwen2"]
    return rows


def test_diff_lists_every_kind_of_change(rows, jsonl, cli):
    new = jsonl(changed(rows))
    result = cli("diff", RESULTS, new)
    assert result.exit_code == 0
    text = result.output
    assert "regressions (1):\n  llama    verdict supported -> partial; tp: pass -> fail_shard" in text
    assert "improvements (1):\n  mistral  verdict partial -> supported; compiled: fail_lowering -> pass; tp: no_tp_plan -> pass" in text
    assert "new architectures (1):\n  olmo2    partial" in text
    assert "removed architectures (1):\n  mamba    was partial" in text
    assert "unchanged: 7" in text


def test_diff_exit_code_and_formats(rows, jsonl, cli):
    new = jsonl(changed(rows))
    assert cli("diff", RESULTS, new, "--exit-code").exit_code == 1
    assert cli("diff", RESULTS, RESULTS, "--exit-code").exit_code == 0
    data = json.loads(cli("diff", RESULTS, new, "--format", "json").output)
    assert set(data["regressions"]) == {"llama"} and data["removed_architectures"] == {"mamba": "partial"}
    markdown = cli("diff", RESULTS, new, "--format", "markdown").output
    assert markdown.startswith("### neuron-compat diff: 1 regression, 1 improvement, 1 new, 1 removed, 7 unchanged")
    assert "| `llama` | ❌ regression |" in markdown


def test_diff_refuses_empty_input(tmp_path, cli):
    empty = tmp_path / "results.jsonl"
    empty.write_text("")
    result = cli("diff", RESULTS, empty)
    assert result.exit_code == 1 and "no usable result rows" in result.output
