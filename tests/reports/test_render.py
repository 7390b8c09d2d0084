"""Renderers: golden Markdown/JSON/JUnit from the fixed fixture rows, the JSON schema, the JUnit structure and
the static properties of the HTML page (the browser test drives it for real).

Regenerate the golden files after an intended change with:
    NEURON_COMPAT_UPDATE_GOLDEN=1 .venv/bin/pytest tests/reports/test_render.py
and read the diff before committing it.
"""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from compat_matrix import schema
from reports.compat.render import GENERATOR, render_html, render_json, render_junit, render_markdown, renderer_for
from reports.compat.results import load_results
from reports.compat.summary import build_summary
from reports.schemas import COMPAT_RESULTS

from .conftest import FIXTURES, RESULTS, find
from .conftest import check_golden as golden



@pytest.fixture(scope="module")
def summary():
    return build_summary(load_results(RESULTS))


def check_golden(name: str, text: str) -> None:
    golden(name, text.replace(GENERATOR, "neuron-compat VERSION"), "NEURON_COMPAT_UPDATE_GOLDEN")


@pytest.mark.parametrize(
    ("name", "render"), [("report.md", render_markdown), ("report.json", render_json), ("report.junit.xml", render_junit)]
)
def test_golden(summary, name, render):
    check_golden(name, render(summary))


def test_rendering_is_deterministic_and_ignores_row_order(summary, rows, jsonl):
    shuffled = build_summary(load_results(jsonl(list(reversed(rows)))))
    assert render_markdown(shuffled) == render_markdown(summary)
    assert render_junit(shuffled) == render_junit(summary)


def test_headline_numbers(summary):
    head = summary["headline"]
    assert head["architectures"] == {"supported": 1, "partial": 7, "unsupported": 2, "total": 10}
    assert head["modes"]["compiled"] == {"supported": 1, "partial": 3, "unsupported": 5, "skipped": 1, "total": 10}
    assert head["modes"]["tp"]["total"] == 8  # mamba and falcon_h1 have no tp row: not counted as failures


# --- JSON -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validator():
    document = json.loads(COMPAT_RESULTS.read_text())
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(document)


def test_json_report_validates_against_the_shipped_schema(summary, validator):
    document = json.loads(render_json(summary))
    validator.validate(document)
    assert document["schema_version"] == 1
    assert len(document["jobs"]) == 28 and len(document["architectures"]) == 10


def test_every_fixture_row_validates_against_the_row_definition(validator):
    row_schema = {**validator.schema["$defs"]["row"], "$defs": validator.schema["$defs"]}
    for line in RESULTS.read_text().splitlines():
        jsonschema.validate(json.loads(line), row_schema, cls=jsonschema.Draft202012Validator)


def test_schema_vocabulary_matches_the_python_schema(validator):
    defs = validator.schema["$defs"]
    assert tuple(defs["status"]["enum"]) == schema.STATUSES
    assert tuple(defs["verdict"]["enum"]) == schema.VERDICTS
    assert tuple(defs["mode"]["enum"]) == schema.MODES
    assert defs["row"]["properties"]["schema_version"]["maximum"] == schema.SCHEMA_VERSION
    assert set(defs["row"]["required"]) == set(schema.REQUIRED_KEYS)


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d.update(schema_version=2),
        lambda d: d["summary"]["architectures"].pop("partial"),
        lambda d: d["architectures"][0].update(verdict="mostly"),
        lambda d: d["jobs"][0].update(status="bogus"),
        lambda d: d["jobs"][0]["timings"].update(first_call=-1),
        lambda d: d.update(extra=True),
    ],
)
def test_schema_rejects_broken_documents(summary, validator, breakage):
    document = json.loads(render_json(summary))
    breakage(document)
    assert not validator.is_valid(document)


def test_json_report_is_strict_json_even_with_nan_details(rows, jsonl, validator):
    find(rows, "phi3", "compiled")["details"]["parity"]["max_abs_diff"] = float("nan")
    text = render_json(build_summary(load_results(jsonl(rows))))
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"bare {name} in JSON"))
    validator.validate(document)
    assert find(document["jobs"], "phi3", "compiled")["details"]["parity"]["max_abs_diff"] == "NaN"


# --- JUnit ------------------------------------------------------------------------------------------------


def test_junit_has_one_testcase_per_job_and_failures_carry_reasons(summary):
    root = ET.fromstring(render_junit(summary))
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 28
    assert {(c.get("classname"), c.get("name")) for c in cases} == {
        (f"neuron-compat.{row['mode']}", row["model_type"]) for row in summary["jobs"]
    }
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("28", "11", "2")
    recompiles = root.find("./testsuite[@name='neuron-compat.compiled']/testcase[@name='qwen3']/failure")
    assert recompiles.get("type") == "recompiles"
    assert recompiles.get("message") == "recompiles: 7 recompile(s) across decode steps (cache_position guard)"
    oom = root.find("./testsuite[@name='neuron-compat.eager']/testcase[@name='falcon_h1']/failure")
    assert oom.get("type") == "oom" and "NRT_RESOURCE" in oom.text
    lowering = root.find("./testsuite[@name='neuron-compat.compiled']/testcase[@name='mistral']")  # partial
    assert lowering.find("failure") is None
    assert "LoweringError" in lowering.find("system-out").text
    skipped = root.find("./testsuite[@name='neuron-compat.tp']/testcase[@name='qwen3_moe']/skipped")
    assert skipped.get("message") == "skipped: eager failed"
    partial = root.find("./testsuite[@name='neuron-compat.compiled']/testcase[@name='qwen2']")
    assert partial.find("failure") is None and "graph break" in partial.find("system-out").text


# --- Markdown ---------------------------------------------------------------------------------------------


def test_markdown_escapes_cells(rows, jsonl):
    find(rows, "qwen2", "compiled")["reasons"] = ["a | b <script>\nnext"]
    text = render_markdown(build_summary(load_results(jsonl(rows))))
    line = [line for line in text.splitlines() if "`qwen2`" in line][-1]  # the matrix (after the difference table)
    assert "a \\| b &lt;script> next" in line
    assert line.count(" | ") == 9  # 10 columns, the pipe in the reason did not add one


def many_architectures(rows, count):
    out = []
    for index in range(count):
        for row in rows[:3]:  # llama's three modes
            out.append(dict(copy.deepcopy(row), model_type=f"arch_{index:03d}", rank=index + 1))
    return out


def test_markdown_stays_short_for_a_hundred_architectures(rows, jsonl):
    text = render_markdown(build_summary(load_results(jsonl(many_architectures(rows, 100)))))
    assert len(text) < 20_000  # a PR comment takes 65,536 characters
    assert "<details><summary>Matrix: 100 architectures</summary>" in text
    assert text.count("| `arch_") == 100


# --- HTML (static checks; tests/reports/test_browser.py opens it in Chromium) ----------------------------


def test_html_is_self_contained(summary):
    html = render_html(summary)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "the page must not load anything"
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert html.count("<svg") == 2


def test_html_has_header_matrix_and_details(summary):
    html = render_html(summary)
    for text in ("neuron", "bfloat16", "2.13.0", "5.24.1", "2026-04-16 09:34 UTC"):
        assert text in html
    assert len(re.findall(r'<tr data-key="', html)) == 10
    assert len(re.findall(r'<details class="nm-detail" id="arch-', html)) == 10
    # the detail panel of phi3 shows its parity numbers and errors
    panel = html[html.index('id="arch-phi3"') : html.index('id="arch-gpt2"')]
    assert "0.31 / 0.02" in panel and "tokens differ" in panel and "TimeoutError" in panel


def test_html_escapes_row_text(rows, jsonl):
    find(rows, "mamba", "compiled")["error"] = "<img src=x onerror=alert(1)>"
    html = render_html(build_summary(load_results(jsonl(rows))))
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_format_by_extension():
    assert renderer_for("a/b.HTML") is render_html
    assert renderer_for("x.md") is render_markdown
    assert renderer_for("x.xml") is render_junit
    with pytest.raises(ValueError, match="cannot tell the report format"):
        renderer_for("report.pdf")


# --- `neuron-compat report` -------------------------------------------------------------------------------


def test_report_command_writes_every_format_by_extension(tmp_path, cli):
    outputs = [tmp_path / name for name in ("r.html", "r.md", "r.json", "junit.xml")]
    result = cli("report", RESULTS, *[arg for path in outputs for arg in ("-o", path)])
    assert result.exit_code == 0, result.output
    assert outputs[0].read_text().startswith("<!doctype html>")
    assert outputs[1].read_text().startswith("## TorchNeuron compatibility: 1 of 10")
    assert json.loads(outputs[2].read_text())["format"] == "neuron-compat-report"
    assert ET.parse(outputs[3]).getroot().get("tests") == "28"


def test_report_command_prints_markdown_without_output(cli):
    result = cli("report", RESULTS)
    assert result.exit_code == 0
    assert result.stdout == render_markdown(build_summary(load_results(RESULTS)))


def test_report_command_rejects_unknown_extension_before_reading(tmp_path, cli):
    result = cli("report", tmp_path / "missing", "-o", tmp_path / "r.pdf")
    assert result.exit_code == 2 and "cannot tell the report format" in result.output


def test_report_command_shows_problems_and_strict_fails_on_them(rows, jsonl, cli):
    rows[0]["timings"]["total"] = float("nan")
    path = jsonl(rows)
    lenient = cli("report", path)
    assert lenient.exit_code == 0
    assert "timings.total is nan" in lenient.stderr
    assert "> [!CAUTION]" in lenient.stdout and "1 error (rows left out)" in lenient.stdout
    assert cli("report", path, "--strict").exit_code == 1


def test_report_command_fails_without_usable_rows(tmp_path, cli):
    empty = tmp_path / "results.jsonl"
    empty.write_text("")
    result = cli("report", empty)
    assert result.exit_code == 1 and "no usable result rows" in result.output


def test_html_for_a_hundred_architectures_stays_small(rows, jsonl):
    html = render_html(build_summary(load_results(jsonl(many_architectures(rows, 100)))))
    assert len(html) < 1_000_000
    assert len(re.findall(r'<tr data-key="', html)) == 100


def test_shared_layout_works_from_a_plain_jinja_environment():
    """Other reports (neuron-migrate's) extend _layout.html.j2 with their own environment: the layout and the
    macros must need nothing but `generator` and standard jinja."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(loader=PackageLoader("reports", "templates"), autoescape=select_autoescape(["html", "html.j2"]),
                      undefined=StrictUndefined)
    page = env.from_string(
        '{% extends "_layout.html.j2" %}{% import "_macros.html.j2" as ui %}'
        "{% block title %}t{% endblock %}{% block header %}<h1>{{ name }}</h1>{% endblock %}"
        '{% block content %}{{ ui.stat_card("todo", 3, "warn") }}{{ ui.badge("fixed", "ok") }}'
        '{{ ui.filter_bar("t1", "Filter files", [("severity", "severity", [("todo", "todo")])]) }}{% endblock %}'
    ).render(generator="neuron-migrate 0.1.0", name="<x>")
    assert "<h1>&lt;x&gt;</h1>" in page and "nm-stat warn" in page and "--ok:" in page
    assert 'data-table="t1"' in page and "applyFilters" in page


def test_rows_captured_from_a_real_cpu_scan_read_validate_and_render(validator):
    """fixtures/scan-cpu-llama.jsonl: two rows written by compat_matrix.worker.run_job (llama, eager and compiled,
    CPU/inductor/float32): the contract between the scan and the reports, with every detail key it writes."""
    results = load_results(FIXTURES / "scan-cpu-llama.jsonl")
    assert results.problems == [] and len(results.rows) == 2
    summary = build_summary(results)
    validator.validate(json.loads(render_json(summary)))
    html = render_html(summary)
    assert "forward: 0 / 0.000157; generate: 1.192e-07 / 0.000154 · tokens match" in html
    lowering = re.search(r"<dt>lowering</dt><dd><code>(.*?)</code>", html).group(1)  # 930 characters of JSON
    assert lowering.endswith("…") and len(lowering.replace("&#34;", '"')) == 240  # cut in the page, whole in JSON
    assert ET.fromstring(render_junit(summary)).get("failures") == "0"
