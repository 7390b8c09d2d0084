"""neuron-migrate reports (reports/migrate_report.py): golden Markdown and JSON from a hand-written run, the
structure of the HTML page (the browser test drives it for real: test_migrate_report_browser.py), the PR-comment
limits of the Markdown, and that the hand-written run has the shape ``migrate.engine.report_data`` produces.

Regenerate the golden files after an intended change with:
    NEURON_MIGRATE_UPDATE_GOLDEN=1 .venv/bin/pytest tests/reports/test_migrate_report.py
and read the diff before committing it.
"""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from reports import migrate_report
from reports.migrate_report import md_code, md_text, render, view, when

from .conftest import check_golden as golden


def finding(rule: str, severity: str, line: int, message: str, column: int = 0, original_line: int | None = None) -> dict:
    original = line if original_line is None else original_line
    return {"rule": rule, "severity": severity, "line": line, "original_line": original, "column": column, "message": message}


#: A run over a small project in write mode: a Python file with fixes and two TODOs on one line, a shell script
#: with TODOs only, a file that failed to parse (an engine error), a skipped file, an unchanged one, two paths
#: whose anchors would clash, and messages holding `code`, <tags> and pipes.
RUN: dict = {
    "schema_version": 2,
    "tool": "neuron-migrate",
    "tool_version": "0.1.0",
    "generated_at": "2026-11-29T21:39:04+00:00",
    "targets": ["src", "scripts/launch.sh"],
    "mode": "write",
    "neuron_project": True,
    "device_style": "portable",
    "seconds": 1.234,
    "summary": {
        "files_scanned": 7,
        "changed": 4,
        "unchanged": 1,
        "skipped": 1,
        "errors": 1,
        "findings": {"fixed": 4, "todo": 5, "error": 1, "info": 0},
        "by_rule": {
            "NM000": {"name": "engine", "fixed": 0, "todo": 0, "error": 1, "info": 0},
            "NM110": {"name": "causal-lm-static-cache", "fixed": 1, "todo": 2, "error": 0, "info": 0},
            "NM301": {"name": "xla-device", "fixed": 2, "todo": 0, "error": 0, "info": 0},
            "NM405": {"name": "review-neuron-env", "fixed": 0, "todo": 2, "error": 0, "info": 0},
            "NM501": {"name": "requirements-neuron-stack", "fixed": 1, "todo": 1, "error": 0, "info": 0},
        },
    },
    "files": [
        {
            "path": "src/infer.py", "kind": "python", "status": "changed", "reason": None,
            "findings": [
                finding("NM110", "fixed", 2, "`optimum.neuron.NeuronModelForCausalLM` -> `transformers.AutoModelForCausalLM`", 27),
                finding("NM110", "todo", 10, "tensor parallel degree 2: launch with `torchrun --nproc_per_node 2`", 8, 9),
                finding("NM110", "todo", 10, "compiled for batch_size=1: pad <prompts> to that batch | or recompile", 8, 9),
                finding("NM301", "fixed", 14, "`xm.xla_device()` -> `torch.device(\"neuron\")`", 0, 12),
                finding("NM301", "fixed", 15, "`xm.mark_step()` removed", 0, 13),
            ],
        },
        {
            "path": "scripts/launch.sh", "kind": "shell", "status": "changed", "reason": None,
            "findings": [
                finding("NM405", "todo", 7, "review NEURON_RT_STOCHASTIC_ROUNDING_EN: its effect on TorchNeuron is unverified"),
                finding("NM405", "todo", 3, "review NEURON_CC_FLAGS: drop --cache_dir=/home/ubuntu/cache"),
            ],
        },
        {
            "path": "src/broken.py", "kind": "python", "status": "error",
            "reason": "does not parse: invalid syntax (line 2); left untouched",
            "findings": [finding("NM000", "error", 2, "does not parse: invalid syntax (line 2); left untouched")],
        },
        {
            "path": "requirements_a.txt", "kind": "requirements", "status": "changed", "reason": None,
            "findings": [finding("NM501", "fixed", 1, "optimum-neuron -> torch-neuronx==2.14.*")],
        },
        {
            "path": "requirements-a.txt", "kind": "requirements", "status": "changed", "reason": None,
            "findings": [finding("NM501", "todo", 2, "neuronx-cc==2.14.* -> neuronx-cc==2.28.*: match your SDK")],
        },
        {"path": "src/clean.py", "kind": "python", "status": "unchanged", "reason": None, "findings": []},
        {"path": "vendor/link.py", "kind": "python", "status": "skipped", "reason": "symbolic link (not followed)", "findings": []},
    ],
    "not_scanned": {"count": 3, "files": [
        {"path": "data/train.csv", "reason": "unknown kind"},
        {"path": "outputs/", "reason": "ignored by .gitignore"},
        {"path": "vendor/link.py", "reason": "symbolic link (not followed)"},
    ]},
}


@pytest.fixture
def run() -> dict:
    return copy.deepcopy(RUN)


def check_golden(name: str, text: str) -> None:
    golden(name, text, "NEURON_MIGRATE_UPDATE_GOLDEN")


@pytest.mark.parametrize(("name", "fmt"), [("migrate-report.md", "markdown"), ("migrate-report.json", "json")])
def test_golden(run, name, fmt):
    check_golden(name, render(run, fmt))


def test_rendering_leaves_the_data_alone_and_is_deterministic(run):
    before = copy.deepcopy(run)
    outputs = [render(run, fmt) for fmt in ("markdown", "html", "json")]
    assert run == before
    assert outputs == [render(run, fmt) for fmt in ("markdown", "html", "json")]
    assert json.loads(outputs[2]) == RUN


# --- Markdown ----------------------------------------------------------------------------------------------------


def test_markdown_order_counts_todos_then_changes(run):
    md = render(run, "markdown")
    assert md.startswith("## neuron-migrate: 5 TODOs in 3 files, 4 fixes, 1 error\n")
    assert "🟡 **5** to do · ✅ **4** fixed · ❌ **1** error · 7 files scanned: 4 rewritten, 1 unchanged, 1 skipped" in md
    assert md.index("### What a human must do") < md.index("### Changes") < md.index("By rule")
    # the file that failed comes as a TODO group with its error; lines in order, errors first
    assert "#### `src/broken.py` · 1 error\n\n- [ ] line 2: **NM000** (error) does not parse" in md
    launch = md[md.index("#### `scripts/launch.sh`"):]
    assert launch.index("line 3: **NM405**") < launch.index("line 7: **NM405**")
    # every TODO is a checkbox, nothing fixed is
    assert md.count("- [ ] ") == 6
    # <prompts> is escaped outside code spans, code spans stay as they are
    assert "pad &lt;prompts> to that batch | or recompile" in md and "`torchrun --nproc_per_node 2`" in md
    # the changes table: rules applied per rewritten file, the reason for a skipped or failed one
    assert "| `src/infer.py` | python | ✅ rewritten | 3 | 2 | NM110, NM301 ×2 |" in md
    assert "| `vendor/link.py` | python | ⏭️ skipped | 0 | 0 | symbolic link (not followed) |" in md
    assert "| `src/broken.py` | python | ❌ error | 0 | 1 | does not parse: invalid syntax (line 2); left untouched |" in md
    assert "src/clean.py" not in md  # unchanged and nothing to say


def test_markdown_when_nothing_is_left(run):
    run["summary"]["findings"] = {"fixed": 0, "todo": 0, "error": 0}
    run["summary"]["by_rule"] = {}
    run["files"] = [{"path": "a.py", "kind": "python", "status": "unchanged", "reason": None, "findings": []}]
    md = render(run, "markdown")
    assert md.startswith("## neuron-migrate: 0 TODOs, 0 fixes\n")
    assert "Nothing left for a human to do." in md and "No file changed." in md and "By rule" not in md


def test_markdown_stays_short_enough_for_a_pr_comment(run):
    many = [
        {"path": f"pkg/mod_{i:03}.py", "kind": "python", "status": "changed", "reason": None,
         "findings": [finding("NM110", "todo", line, "x" * 300) for line in range(1, 6)]
         + [finding("NM301", "fixed", 9, "`xm.xla_device()` -> `torch.device(\"neuron\")`")]}
        for i in range(400)
    ]
    run["files"] = many
    run["summary"].update(files_scanned=400, changed=400, unchanged=0, skipped=0, errors=0,
                          findings={"fixed": 400, "todo": 2000, "error": 0})
    md = render(run, "markdown")
    assert len(md) < 65_536  # GitHub's limit on a comment
    assert md.count("- [ ] ") == migrate_report.MD_TODO_LIMIT
    assert f"… and {2000 - migrate_report.MD_TODO_LIMIT} more TODOs: see the HTML or JSON report." in md
    assert f"… and {400 - migrate_report.MD_FILE_LIMIT} more files: see the HTML or JSON report." in md
    assert "<details><summary>400 files</summary>" in md  # the long changes table is folded


def test_markdown_helpers():
    assert md_text("a <b>\n  c `<d>` e") == "a &lt;b> c `<d>` e"
    assert md_code("path") == "`path`"
    assert md_code("we`ird") == "``we`ird``"
    assert md_code("`x") == "`` `x ``"
    assert when("2026-11-29T23:39:04+02:00") == "2026-11-29 21:39 UTC"
    assert when("2026-11-29T21:39:04") == "2026-11-29 21:39"
    assert when("yesterday") == "yesterday"


# --- HTML (static; the browser test checks it live) -------------------------------------------------------------


class Outline(HTMLParser):
    """Ids, links, external references and the elements of interest of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.external: list[str] = []
        self.details: list[dict] = []
        self.rows: list[dict] = []
        self.in_changes = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "a" and "href" in attrs:
            self.hrefs.append(attrs["href"])
        for name in ("src", "href"):
            if re.match(r"(https?:)?//", attrs.get(name) or ""):
                self.external.append(attrs[name])
        if tag == "link":
            self.external.append(str(attrs))
        if tag == "details":
            self.details.append(attrs)
        if tag == "table":
            self.in_changes = attrs.get("id") == "changes"
        if tag == "tr" and self.in_changes and "data-key" in attrs:
            self.rows.append(attrs)


@pytest.fixture
def html(run) -> str:
    return render(run, "html")


@pytest.fixture
def outline(html) -> Outline:
    parser = Outline()
    parser.feed(html)
    return parser


def test_html_uses_the_shared_layout_and_is_self_contained(html, outline):
    assert '<meta name="generator" content="neuron-migrate 0.1.0">' in html
    assert '<header class="nm-header">' in html and "--head-1:" in html  # _layout.html.j2 and _base.css inlined
    assert "function applyFilters" in html  # _table.js inlined
    assert outline.external == [] and "@import" not in html and "url(" not in html
    assert "<title>neuron-migrate report: 5 TODOs, 4 fixes, 1 error</title>" in html
    assert 'class="nm-card nm-stat warn"' in html and 'class="nm-card nm-stat bad"' in html


def test_html_lists_todos_first_grouped_by_file_then_changes(html, outline):
    assert html.index('id="todos"') < html.index('id="changes"') < html.index('id="files"')
    # one panel per file with something to do, in file order; the failed file included
    assert [d["id"] for d in outline.details] == [
        "file-src-infer-py", "file-scripts-launch-sh", "file-src-broken-py", "file-requirements-a-txt-2"
    ]
    assert all("nm-detail" in d["class"] for d in outline.details)


def test_html_line_anchors_are_unique_and_every_link_has_a_target(outline):
    assert len(outline.ids) == len(set(outline.ids))
    assert {"file-src-infer-py-L10", "file-scripts-launch-sh-L3", "file-scripts-launch-sh-L7", "file-src-broken-py-L2"} <= set(outline.ids)
    for href in outline.hrefs:
        assert href.startswith("#") and href[1:] in outline.ids, href
    # two TODOs on line 10 share one anchor; both link to it
    assert outline.hrefs.count("#file-src-infer-py-L10") >= 2


def test_html_changes_table_has_a_row_per_finding_with_filter_keys(outline, html):
    assert len(outline.rows) == 10
    assert [r["data-severity"] for r in outline.rows[:5]] == ["fixed", "todo", "todo", "fixed", "fixed"]
    assert len({r["data-key"] for r in outline.rows}) == 10
    assert all(r["data-search"] and r["data-kind"] and r["data-rule"] for r in outline.rows)
    assert 'data-table="changes"' in html and 'select data-filter="severity"' in html
    assert '<option value="NM110">NM110 causal-lm-static-cache</option>' in html


def test_html_escapes_messages_and_shows_code_spans(html):
    assert "pad &lt;prompts&gt; to that batch | or recompile" in html and "<prompts>" not in html
    assert "launch with <code>torchrun --nproc_per_node 2</code>" in html


def test_html_when_nothing_is_left(run):
    run["summary"]["findings"] = {"fixed": 0, "todo": 0, "error": 0}
    run["summary"]["by_rule"] = {}
    run["files"] = []
    html = render(run, "html")
    assert "Nothing left for a human to do." in html and "<details class" not in html


# --- the fixture stays true to the producer ----------------------------------------------------------------------


def shape(value):
    """The keys (recursively) of a report, values reduced to their types; by_rule ids reduced to one entry."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def test_fixture_has_the_shape_of_a_real_run(tmp_path):
    from migrate.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "legacy.py").write_text("from optimum.neuron.utils import private_helper\n\nprivate_helper()\n")
    report = tmp_path / "r.json"
    result = CliRunner().invoke(main, [str(project), "--check", "--select", "NM9", "--jobs", "1", "--force", "--report", str(report)])
    assert result.exit_code == 1, result.output
    real = json.loads(report.read_text())
    assert list(real) == list(RUN) and list(real["summary"]) == list(RUN["summary"])
    assert list(real["files"][0]) == list(RUN["files"][0])
    assert list(real["files"][0]["findings"][0]) == list(RUN["files"][0]["findings"][0])
    assert list(next(iter(real["summary"]["by_rule"].values()))) == list(RUN["summary"]["by_rule"]["NM110"])
    assert set(real["summary"]["findings"]) == set(RUN["summary"]["findings"])
    # and the real run renders too
    assert "- [ ] line 1: **NM901**" in render(real, "markdown")
    assert 'href="#file-legacy-py-L1"' in render(real, "html")


def test_view_counts(run):
    v = view(run)
    infer = v["files"][0]
    assert infer["counts"] == {"todo": 2, "error": 0, "fixed": 3, "info": 0} and infer["note"] == "NM110, NM301 ×2"
    assert [f["path"] for f in v["todo_files"]] == ["src/infer.py", "scripts/launch.sh", "src/broken.py", "requirements-a.txt"]
    assert [f["anchor"] for f in v["files"][3:5]] == ["file-requirements-a-txt", "file-requirements-a-txt-2"]


def test_info_findings_are_shown_but_are_not_work(run):
    """`info` (docs to update) is listed with the other findings and counted in the headline, never as a TODO."""
    run["summary"]["findings"]["info"] = 1
    run["summary"]["by_rule"]["NM903"] = {"name": "legacy-mentions-in-prose", "fixed": 0, "todo": 0, "error": 0, "info": 1}
    run["files"].append({"path": "README.md", "kind": "docs", "status": "unchanged", "reason": None, "findings": [
        finding("NM903", "info", 3, "docs to update: mentions `neuron_parallel_compile`: drop that step")]})
    v = view(run)
    readme = next(f for f in v["files"] if f["path"] == "README.md")
    assert readme["counts"]["info"] == 1 and readme["todos"] == [] and readme not in v["todo_files"]
    markdown = render(run, "markdown")
    assert "1 legacy mention in docs and comments to update" in markdown
    assert "neuron_parallel_compile" not in markdown  # the PR comment lists work only
    html = render(run, "html")
    assert "1 legacy mention in docs to update" in html and 'data-severity="info"' in html
