"""Evidence levels and the published figures in the reports: a CPU scan's rows (stand-in evidence, the lowering proxy
lowering, inconclusive on an op TorchNeuron implements, predicted to fail on one it does not, and a version-1 row
brought up to date on reading) rendered to golden Markdown and JSON, plus the rules themselves.

Regenerate the golden files after an intended change with:
    NEURON_COMPAT_UPDATE_GOLDEN=1 .venv/bin/pytest tests/reports/test_evidence.py
and read the diff before committing it.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from compat_matrix import evidence, schema
from reports.compat.render import GENERATOR, render_html, render_json, render_markdown
from reports.compat.results import load_results
from reports.compat.summary import build_summary
from reports.schemas import COMPAT_RESULTS

from .conftest import FIXTURES, check_golden, read_jsonl

EVIDENCE_RESULTS = FIXTURES / "scan-cpu-evidence.jsonl"


@pytest.fixture(scope="module")
def summary():
    return build_summary(load_results(EVIDENCE_RESULTS))


@pytest.mark.parametrize(("name", "render"), [("report-evidence.md", render_markdown),
                                              ("report-evidence.json", render_json)])
def test_golden(summary, name, render):
    check_golden(name, render(summary).replace(GENERATOR, "neuron-compat VERSION"), "NEURON_COMPAT_UPDATE_GOLDEN")


def test_the_headline_is_per_mode_and_per_evidence_level(summary):
    assert summary["evidence"]["text"] == (
        "eager: 4 of 5 pass (stand-in, cpu) · compiled: 4 of 5 pass (stand-in, aot_eager) · "
        "lowering proxy: 1 lower, 2 inconclusive, 1 predicted to fail"
    )
    assert summary["evidence"]["text"] in render_markdown(summary)
    assert summary["evidence"]["text"] in render_html(summary)


def test_an_inconclusive_proxy_failure_lowers_no_verdict_and_a_predicted_one_names_its_op(summary):
    archs = {arch["model_type"]: arch for arch in summary["architectures"]}
    assert archs["qwen3_moe"]["verdict"] == "supported" and archs["qwen3_moe"]["evidence"] == "stand-in"
    assert archs["qwen3_5"]["verdict"] == "partial" and archs["qwen3_5"]["evidence"] == "proxy"
    assert "aten::slice_scatter" in archs["qwen3_5"]["reasons"][0]
    assert [d["model_type"] for d in summary["published"]["difference"]] == ["qwen3_5", "falcon"]


def test_a_version_1_row_is_brought_up_to_date(summary):
    (old,) = [row for row in read_jsonl(EVIDENCE_RESULTS) if row["model_type"] == "mixtral" and row["mode"] == "compiled"]
    assert old["schema_version"] == 1 and old["status"] == "fail_lowering" and "evidence" not in old
    new = next(row for row in summary["jobs"] if row["model_type"] == "mixtral" and row["mode"] == "compiled")
    assert new["schema_version"] == schema.SCHEMA_VERSION
    assert (new["status"], new["verdict"], new["evidence"]) == ("pass", "supported", "stand-in")
    assert new["details"]["lowering"]["outcome"] == "inconclusive" and new["reasons"] == []
    schema.check_row(new)
    assert schema.migrate_row(new) is new  # current rows pass through


def test_a_version_1_lowering_failure_that_hid_a_chunked_prefill_failure():
    row = dict(read_jsonl(EVIDENCE_RESULTS)[-3])  # mixtral compiled, version 1
    row["details"] = {**row["details"], "chunked_prefill_error": "RuntimeError: chunk without attention mask"}
    new = schema.migrate_row(row)
    assert new["status"] == "fail_generate" and new["verdict"] == "partial" and "chunk" in new["reasons"][0]


@pytest.mark.parametrize(("failed_ops", "outcome", "unlisted"), [
    (["aten::histc"], "inconclusive", []),
    (["aten::histc.out"], "inconclusive", []),
    (["aten::slice_scatter"], "predicted_failure", ["aten::slice_scatter"]),
    (["aten::histc", "torch.runtime.assert"], "predicted_failure", ["torch.runtime.assert"]),
    ([], "inconclusive", []),
])
def test_lowering_failures_are_judged_against_torchneurons_op_list(failed_ops, outcome, unlisted):
    judged = evidence.classify_lowering({"status": "failed", "failed_ops": failed_ops})
    assert judged["outcome"] == outcome and judged["unlisted_ops"] == unlisted
    assert evidence.classify_lowering({"status": "lowered"})["outcome"] == "lowers"
    assert evidence.classify_lowering({"status": "skipped"}) is None


def test_architecture_evidence():
    observed = {"evidence": "observed", "verdict": "supported"}
    stand_in = {"evidence": "stand-in", "verdict": "supported"}
    proxy_fail = {"evidence": "proxy", "verdict": "partial"}
    real_fail = {"evidence": "stand-in", "verdict": "partial"}
    assert evidence.architecture_evidence([observed, stand_in], "supported") == "stand-in"  # the weakest held
    assert evidence.architecture_evidence([stand_in, proxy_fail], "partial") == "proxy"
    assert evidence.architecture_evidence([real_fail, proxy_fail], "partial") == "stand-in"  # the strongest failing


def test_rows_and_the_report_validate_against_the_shipped_schema(summary):
    document = json.loads(COMPAT_RESULTS.read_text())
    validator = jsonschema.Draft202012Validator(document)
    validator.validate(json.loads(render_json(summary)))
    row_schema = {**document["$defs"]["row"], "$defs": document["$defs"]}
    for row in read_jsonl(EVIDENCE_RESULTS):
        jsonschema.validate(row, row_schema, cls=jsonschema.Draft202012Validator)
    bad = dict(read_jsonl(EVIDENCE_RESULTS)[0])
    del bad["evidence"]
    assert not jsonschema.Draft202012Validator(row_schema).is_valid(bad)
    with pytest.raises(schema.SchemaError, match="evidence"):
        schema.check_row(bad)


@pytest.mark.parametrize("broken", [{"details": [1, 2]}, {"mode": "fast"}, {"status": None}])
def test_a_broken_version_1_row_is_reported_not_raised(broken, tmp_path):
    row = {**read_jsonl(EVIDENCE_RESULTS)[-3], **broken}
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(row) + "\n")
    results = load_results(path)
    assert not results.rows and len(results.errors) == 1
