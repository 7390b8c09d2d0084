"""The report's project-level todos (``project_findings``: rules with ``project_level``, NM904's deployment target):
in the JSON only when there are any, valid against the schema, and listed first under "What a human must do"."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from reports.migrate_report import render
from tests.reports.test_migrate_report import RUN

SCHEMA = json.loads((Path(__file__).parents[2] / "reports/schemas/migrate-report.schema.json").read_text())
MESSAGE = "deployment target: this project names Inf2 (README.md: 'Inferentia2' (prose)); TorchNeuron runs on Trn2/Trn3"


def _run(tmp_path: Path, readme: str) -> dict:
    from migrate.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "serve.py").write_text("from optimum.neuron import NeuronModelForCausalLM\n")
    (project / "README.md").write_text(readme)
    report = tmp_path / "r.json"
    result = CliRunner().invoke(main, [str(project), "--check", "--select", "NM9", "--jobs", "1", "--force",
                                       "--report", str(report)])
    assert result.exit_code in (0, 1), result.output
    return json.loads(report.read_text())


def test_a_real_run_lists_the_deployment_target_todo_as_a_project_finding(tmp_path):
    data = _run(tmp_path, "# gen\n\nGeneration on Inferentia2.\n")
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    [finding] = data["project_findings"]
    assert (finding["path"], finding["rule"], finding["severity"], finding["line"]) == ("README.md", "NM904", "todo", 3)
    readme = next(file for file in data["files"] if file["path"] == "README.md")
    assert [f["message"] for f in readme["findings"] if f["rule"] == "NM904"] == [finding["message"]]


def test_no_key_without_a_project_finding(tmp_path):
    assert "project_findings" not in _run(tmp_path, "# gen\n\nGeneration on Trainium2.\n")


def test_markdown_and_html_show_project_findings_first():
    data = copy.deepcopy(RUN)
    data["project_findings"] = [
        {"path": "README.md", "rule": "NM904", "severity": "todo", "line": 3, "message": MESSAGE},
    ]
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    md = render(data, "markdown")
    assert md.index("### What a human must do") < md.index("**About the whole project**") < md.index("Will fail")
    assert "- [ ] `README.md` line 3: **NM904** deployment target: this project names Inf2" in md
    html = render(data, "html")
    assert html.index('id="project-todos"') < html.index('id="file-src-infer-py"')
    assert "About the whole project" not in render(RUN, "markdown") + render(RUN, "html")
