"""`neuron-compat baseline` and `neuron-compat gate`: exit codes for each case, the aligned lines, the refresh
command, and refusal of unusable results."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from reports.compat.baseline import load_baseline
from reports.schemas import COMPAT_BASELINE

from .conftest import RESULTS, find


@pytest.fixture
def baseline(tmp_path, cli):
    path = tmp_path / "compat-baseline.json"
    result = cli("baseline", RESULTS, "-o", path)
    assert result.exit_code == 0, result.output
    return path


def gate_lines(output: str) -> dict[str, tuple[str, str]]:
    """{architecture: (OUTCOME, notes)} from the gate's aligned lines."""
    found = {}
    for line in output.splitlines():
        match = re.match(r"^(\S+)\s+(PASS|FAIL|IMPROVED|NEW|MISSING)\b\s*(.*)$", line)
        if match:
            found[match.group(1)] = (match.group(2), match.group(3))
    return found


# --- baseline ---------------------------------------------------------------------------------------------


def test_baseline_is_small_readable_and_valid(baseline):
    text = baseline.read_text()
    data = json.loads(text)
    jsonschema.validate(data, json.loads(COMPAT_BASELINE.read_text()), cls=jsonschema.Draft202012Validator)
    assert data["environment"] == {"device": "neuron", "backend": "neuron", "dtype": "bfloat16"}
    arch_lines = [line for line in text.splitlines() if line.startswith('    "')]
    assert len(arch_lines) == 10  # one line per architecture
    assert json.loads(arch_lines[3].strip().rstrip(",").split(": ", 1)[1]) == data["architectures"]["llama"]
    assert data["architectures"]["qwen3"] == {
        "verdict": "partial",
        "modes": {"eager": "pass", "compiled": "recompiles", "tp": "pass"},
        "graph_breaks": 0,
        "recompiles": 7,
        "fallback_ops": 0,
    }
    assert len(text) < 2500


def test_baseline_refuses_unusable_results(tmp_path, cli):
    empty = tmp_path / "results.jsonl"
    empty.write_text("")
    result = cli("baseline", empty, "-o", tmp_path / "b.json")
    assert result.exit_code == 1 and "empty" in result.output
    assert not (tmp_path / "b.json").exists()


def test_baseline_refuses_mixed_devices(rows, jsonl, tmp_path, cli):
    find(rows, "gpt2", "eager")["device"] = "cpu"
    result = cli("baseline", jsonl(rows), "-o", tmp_path / "b.json")
    assert result.exit_code == 1 and "the results mix devices (cpu, neuron)" in result.output


# --- gate against a baseline ------------------------------------------------------------------------------


def test_unchanged_results_pass_and_print_the_refresh_command(baseline, cli):
    result = cli("gate", RESULTS, "--baseline", baseline)
    assert result.exit_code == 0, result.output
    lines = gate_lines(result.output)
    assert len(lines) == 10 and {outcome for outcome, _ in lines.values()} == {"PASS"}
    assert f"To refresh the baseline: neuron-compat baseline {RESULTS} -o {baseline}" in result.output


def test_lines_are_aligned(baseline, cli):
    lines = [line for line in cli("gate", RESULTS, "--baseline", baseline).output.splitlines() if " PASS " in line]
    assert len({line.index("PASS") for line in lines}) == 1


def test_regression_fails(rows, jsonl, baseline, cli):
    row = find(rows, "llama", "compiled")
    row.update(status="fail_compile", verdict="unsupported", reasons=["dynamo error"])
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1
    outcome, notes = gate_lines(result.output)["llama"]
    assert outcome == "FAIL" and "compiled: pass -> fail_compile" in notes and "verdict supported -> partial" in notes
    assert "FAIL: 9 pass, 1 fail" in result.output


def test_metric_regression_fails(rows, jsonl, baseline, cli):
    find(rows, "qwen2", "compiled")["details"]["graph_breaks"].append({"reason": "new break", "count": 3})
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1
    assert gate_lines(result.output)["qwen2"] == ("FAIL", "graph breaks 2 -> 5")


def test_change_between_failing_statuses_fails_the_ratchet(rows, jsonl, baseline, cli):
    find(rows, "mistral", "compiled")["status"] = "fail_compile"
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1
    assert gate_lines(result.output)["mistral"] == ("FAIL", "compiled: fail_lowering -> fail_compile")


def test_mode_that_stopped_running_fails(rows, jsonl, baseline, cli):
    rows.remove(find(rows, "llama", "tp"))
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1
    assert gate_lines(result.output)["llama"] == ("FAIL", "tp: not run (was pass)")


def improve(rows):
    row = find(rows, "qwen3", "compiled")
    row.update(status="pass", verdict="supported", reasons=[])
    row["details"]["recompiles"] = 0


def test_improvement_fails_the_ratchet_by_default(rows, jsonl, baseline, cli):
    improve(rows)
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1
    outcome, notes = gate_lines(result.output)["qwen3"]
    assert outcome == "IMPROVED" and "compiled: recompiles -> pass" in notes and "recompiles 7 -> 0" in notes
    assert "refresh the baseline to lock them in" in result.output
    assert "To refresh the baseline: neuron-compat baseline" in result.output


def test_improvement_passes_with_allow_improvements(rows, jsonl, baseline, cli):
    improve(rows)
    result = cli("gate", jsonl(rows), "--baseline", baseline, "--allow-improvements")
    assert result.exit_code == 0, result.output
    assert gate_lines(result.output)["qwen3"][0] == "IMPROVED"


def test_new_architecture_passes(rows, jsonl, baseline, cli):
    extra = [dict(row, model_type="olmo2", rank=20) for row in rows if row["model_type"] == "llama"]
    result = cli("gate", jsonl(rows + extra), "--baseline", baseline)
    assert result.exit_code == 0, result.output
    assert gate_lines(result.output)["olmo2"] == ("NEW", "supported (not in the baseline)")


def test_missing_architecture_fails(rows, jsonl, baseline, cli):
    rows = [row for row in rows if row["model_type"] != "gpt2"]
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1
    assert gate_lines(result.output)["gpt2"] == ("MISSING", "in the baseline (partial), not in the results")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("device", "cpu", "device is 'cpu' in the results but 'neuron' in the baseline"),
        ("backend", "inductor", "backend is 'inductor' in the results but 'neuron' in the baseline"),
        ("dtype", "float32", "dtype is 'float32' in the results but 'bfloat16' in the baseline"),
    ],
)
def test_other_environment_fails_unless_allowed(rows, jsonl, baseline, cli, field, value, message):
    for row in rows:
        if field != "backend" or row["backend"]:
            row[field] = value
    path = jsonl(rows)
    refused = cli("gate", path, "--baseline", baseline)
    assert refused.exit_code == 1
    assert "the results are unusable" in refused.output and message in refused.output
    assert gate_lines(refused.output) == {}
    allowed = cli("gate", path, "--baseline", baseline, "--allow-device-change")
    assert allowed.exit_code == 0, allowed.output
    assert f"warning: {message}" in allowed.output


# --- unusable input never passes ------------------------------------------------------------------------


def test_empty_results_fail(tmp_path, baseline, cli):
    empty = tmp_path / "results.jsonl"
    empty.write_text("")
    result = cli("gate", empty, "--baseline", baseline)
    assert result.exit_code == 1 and "empty: no result rows" in result.output
    assert "To refresh the baseline" not in result.output  # refreshing from unusable results is not the fix


def test_missing_results_fail(tmp_path, baseline, cli):
    result = cli("gate", tmp_path / "nowhere", "--baseline", baseline)
    assert result.exit_code == 1 and "not found" in result.output


def test_nan_timing_fails(rows, jsonl, baseline, cli):
    find(rows, "llama", "eager")["timings"]["total"] = float("nan")
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1 and "timings.total is nan" in result.output


def test_unknown_schema_version_fails(rows, jsonl, baseline, cli):
    for row in rows:
        row["schema_version"] = 3
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1 and "unsupported schema_version 3" in result.output


def test_one_bad_row_fails_even_if_the_rest_match(rows, jsonl, baseline, cli):
    rows.append(dict(rows[0], status="exploded"))
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1 and "unknown status 'exploded'" in result.output


def test_all_skipped_fails(rows, jsonl, baseline, cli):
    for row in rows:
        row["status"] = "skipped"
    result = cli("gate", jsonl(rows), "--baseline", baseline)
    assert result.exit_code == 1 and "every job was skipped" in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "baseline not found"),
        ("{not json", "cannot read the baseline"),
        ('{"format": "something-else"}', 'expected a JSON object with "format": "neuron-compat-baseline"'),
        ('{"format": "neuron-compat-baseline", "version": 9}', "unsupported baseline version 9"),
    ],
)
def test_bad_baseline_fails(tmp_path, cli, content, message):
    path = tmp_path / "b.json"
    if content is not None:
        path.write_text(content)
    result = cli("gate", RESULTS, "--baseline", path)
    assert result.exit_code == 1 and message in result.output


def test_baseline_with_a_bad_status_is_rejected(baseline):
    data = json.loads(baseline.read_text())
    data["architectures"]["llama"]["modes"]["eager"] = "fine"
    baseline.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="llama: modes must map modes"):
        load_baseline(baseline)


# --- gate on required architectures ---------------------------------------------------------------------


def test_required_supported_architecture_passes(cli):
    result = cli("gate", RESULTS, "--require", "llama")
    assert result.exit_code == 0, result.output
    assert gate_lines(result.output) == {"llama": ("PASS", "supported")}


def test_required_partial_architecture_fails_unless_partial_is_enough(cli):
    strict = cli("gate", RESULTS, "--require", "llama,qwen2")
    assert strict.exit_code == 1
    assert gate_lines(strict.output)["qwen2"] == ("FAIL", "partial; compiled: 2 graph break(s): data-dependent branching on a tensor value (torch.any(mask))")
    lenient = cli("gate", RESULTS, "--require", "llama,qwen2", "--min-verdict", "partial")
    assert lenient.exit_code == 0, lenient.output


def test_required_unsupported_architecture_fails_even_with_partial(cli):
    result = cli("gate", RESULTS, "--require", "qwen3_moe", "--min-verdict", "partial")
    assert result.exit_code == 1
    assert gate_lines(result.output)["qwen3_moe"][0] == "FAIL"


def test_missing_required_architecture_fails(cli):
    result = cli("gate", RESULTS, "--require", "llama", "--require", "deepseek_v3")
    assert result.exit_code == 1
    assert gate_lines(result.output)["deepseek_v3"] == ("MISSING", "required, not in the results")


def test_require_file(tmp_path, cli):
    path = tmp_path / "required.txt"
    path.write_text("# what our product needs\nllama\n\nqwen3  # partial is fine for now\n")
    result = cli("gate", RESULTS, "--require-file", path, "--min-verdict", "partial")
    assert result.exit_code == 0, result.output
    assert set(gate_lines(result.output)) == {"llama", "qwen3"}


def test_require_mode_refuses_unusable_results(tmp_path, cli):
    empty = tmp_path / "results.jsonl"
    empty.write_text("\n")
    result = cli("gate", empty, "--require", "llama")
    assert result.exit_code == 1 and "the results are unusable" in result.output


@pytest.mark.parametrize(
    "args",
    [(), ("--baseline", "b.json", "--require", "llama"), ("--require", " , ")],
)
def test_usage_errors(cli, args):
    result = cli("gate", RESULTS, *args)
    assert result.exit_code == 2
