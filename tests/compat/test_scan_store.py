"""results.jsonl: atomic appends, torn-line repair, resume keys, shards."""

from __future__ import annotations

import json

import pytest

from compat_matrix import store
from compat_matrix.rows import harness_row
from compat_matrix.schema import check_row


def _job(model_type, mode="eager"):
    return {"model_type": model_type, "mode": mode, "device": "cpu", "backend": "aot_eager", "dtype": "float32"}


def test_append_read_and_repair(tmp_path):
    path = store.prepare(tmp_path / "out")
    store.append_row(path, harness_row(_job("llama"), "crash", "worker died with SIGSEGV"))
    store.append_row(path, harness_row(_job("gpt2"), "timeout", "no result"))
    with open(path, "a") as handle:
        handle.write('{"model_type": "opt", "mo')  # a kill in the middle of a write
    assert {key[:2] for key in store.finished(path)} == {("llama", "eager"), ("gpt2", "eager")}
    assert store.repair(path) == (1, path.with_name(store.REJECTED))
    assert path.read_text().endswith("\n")
    for line in path.read_text().splitlines():
        check_row(json.loads(line))


def test_rows_are_schema_checked(tmp_path):
    path = store.prepare(tmp_path)
    row = harness_row(_job("llama"), "crash", "x")
    row["status"] = "exploded"
    with pytest.raises(ValueError):
        store.append_row(path, row)


def test_shards_partition_every_job_exactly_once():
    jobs = [(f"arch{i}", mode) for i in range(37) for mode in ("eager", "compiled", "tp")]
    for count in (1, 2, 3, 7, 200):
        seen = [job for index in range(1, count + 1) for job in store.shard(jobs, index, count)]
        assert sorted(seen) == sorted(jobs)
        assert len(seen) == len(set(seen))
    assert store.shard(jobs, 2, 4) == store.shard(list(jobs), 2, 4)  # deterministic


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "3", "1/2/3"])
def test_bad_shard(text):
    with pytest.raises(store.StoreError):
        store.parse_shard(text)


def test_unwritable_out(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(store.StoreError):
        store.prepare(blocker / "out")


def test_one_status_verdict_table_covers_every_status():
    from compat_matrix.rows import verdict_for
    from compat_matrix.schema import STATUS_VERDICTS, STATUSES, VERDICTS

    assert set(STATUS_VERDICTS) == set(STATUSES) and set(STATUS_VERDICTS.values()) <= set(VERDICTS)
    for status in STATUSES:
        for mode in ("compiled", "tp"):
            assert verdict_for(status, mode) == STATUS_VERDICTS[status]
    assert verdict_for("no_tp_plan", "tp") == "unsupported"  # tp.py wrote this; rows.py used to say partial
    assert verdict_for("fail_generate", "eager") == "partial"
    assert verdict_for("fail_generate", "compiled", generate_runs=True) == "partial"
