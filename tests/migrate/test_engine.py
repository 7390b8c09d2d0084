"""The engine with a toy rule defined here: rewriting, prefilter, errors, encodings, writing, git safety."""

from __future__ import annotations

import codecs
import os
import stat
import subprocess
from pathlib import Path

import libcst as cst
import pytest

import migrate.pyrun
from migrate.engine import RunOptions, run
from migrate.filekinds import FileKind
from migrate.findings import FileStatus, Severity
from migrate.rule import PythonRule, Safety, SweepRule, SweepHit, TextRule


class RenameLegacy(PythonRule):
    """Toy: legacy.old_api -> modern.new_api, and a todo on legacy.manual()."""

    id = "NM990"
    name = "toy-rename"
    safety = Safety.SAFE
    triggers = ("legacy",)
    moves = {"legacy.old_api": "modern.new_api"}
    legacy_modules = ("legacy",)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.ctx.matches(original.func, {"legacy.manual"}):
            self.todo(original, "replace legacy.manual() by hand")
        if self.ctx.matches(original.func, {"legacy.explode"}):
            raise RuntimeError("boom")
        return updated


class ShellToy(TextRule):
    """Toy: drop the `legacy_wrapper` prefix in shell scripts."""

    id = "NM991"
    name = "toy-shell"
    kinds = frozenset({FileKind.SHELL})
    triggers = ("legacy_wrapper",)

    def apply(self, doc) -> None:
        for line in doc:
            if line.text.startswith("legacy_wrapper "):
                line.text = line.text[len("legacy_wrapper "):]
                self.fixed(line, "dropped legacy_wrapper")


class ScopedToy(PythonRule):
    """Toy: only in projects that carry the marker."""

    id = "NM992"
    name = "toy-scoped"
    scope = "neuron-project"
    markers = {FileKind.SHELL: (("MARKER_OF_NEURON", r"^export MARKER_OF_NEURON=1"),)}
    triggers = ("tpu_thing",)
    moves = {"tpu.tpu_thing": "neuron.thing"}


TOY = [RenameLegacy, ShellToy, ScopedToy]
LEGACY = "from legacy import old_api\n\nold_api(1)\n"


def run_toy(paths, rules=TOY, **options) -> "RunResult":  # noqa: F821
    options.setdefault("jobs", 1)
    options.setdefault("force", True)
    return run([Path(p) for p in paths], RunOptions(**options), rules=rules)


def status_of(result, name: str) -> FileStatus:
    return next(f.status for f in result.files if f.path.endswith(name))


def test_rewrites_in_place_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LEGACY)
    first = run_toy([tmp_path])
    assert (tmp_path / "a.py").read_text() == "from modern import new_api\n\nnew_api(1)\n"
    assert status_of(first, "a.py") is FileStatus.CHANGED
    second = run_toy([tmp_path])
    assert status_of(second, "a.py") is FileStatus.UNCHANGED
    assert (tmp_path / "a.py").read_text() == "from modern import new_api\n\nnew_api(1)\n"


def test_diff_and_check_write_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LEGACY)
    result = run_toy([tmp_path], write=False, diff=True)
    assert (tmp_path / "a.py").read_text() == LEGACY
    changed = next(f for f in result.files if f.path == "a.py")
    assert "-from legacy import old_api" in changed.diff and "+from modern import new_api" in changed.diff


def test_file_without_triggers_is_never_parsed(tmp_path: Path, monkeypatch) -> None:
    parsed = tmp_path.parent / f"{tmp_path.name}.parsed"  # files are parsed in a worker process: it logs there
    real_parse = cst.parse_module

    def counting_parse(source, *args, **kwargs):
        with parsed.open("a") as log:
            log.write(source)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(migrate.pyrun.cst, "parse_module", counting_parse)
    (tmp_path / "plain.py").write_text("import os\nprint(os.getcwd())\n")
    (tmp_path / "b.py").write_text(LEGACY)
    result = run_toy([tmp_path])
    assert parsed.read_text() == LEGACY
    assert status_of(result, "plain.py") is FileStatus.UNCHANGED


def test_syntax_error_leaves_file_untouched(tmp_path: Path) -> None:
    broken = b"from legacy import old_api\ndef f(:\n    old_api()\n"
    (tmp_path / "broken.py").write_bytes(broken)
    (tmp_path / "good.py").write_text(LEGACY)
    result = run_toy([tmp_path])
    assert (tmp_path / "broken.py").read_bytes() == broken
    assert status_of(result, "broken.py") is FileStatus.ERROR
    error = next(f for f in result.files if f.path == "broken.py").findings[0]
    assert error.severity is Severity.ERROR and "does not parse" in error.message
    assert status_of(result, "good.py") is FileStatus.CHANGED  # the run went on


def test_rule_that_raises_leaves_file_untouched(tmp_path: Path) -> None:
    source = "from legacy import old_api, explode\nexplode()\nold_api()\n"
    (tmp_path / "a.py").write_text(source)
    result = run_toy([tmp_path])
    assert (tmp_path / "a.py").read_text() == source
    finding = result.files[0].findings[0]
    assert result.files[0].status is FileStatus.ERROR and "RuntimeError: boom" in finding.message


def test_todo_becomes_inline_note_unless_disabled(tmp_path: Path) -> None:
    source = "import legacy\n\n\ndef f():\n    legacy.manual()\n"
    (tmp_path / "a.py").write_text(source)
    result = run_toy([tmp_path], write=False, diff=True)
    assert "+    # neuron-migrate: replace legacy.manual() by hand" in result.files[0].diff
    todo = result.files[0].findings[0]
    assert (todo.line, todo.column, todo.severity) == (5, 4, Severity.TODO)
    quiet = run_toy([tmp_path], write=False, inline_notes=False)
    assert quiet.files[0].status is FileStatus.UNCHANGED and quiet.files[0].findings[0].severity is Severity.TODO


def test_crlf_bom_and_mode_survive(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(codecs.BOM_UTF8 + LEGACY.replace("\n", "\r\n").encode())
    path.chmod(0o751)
    run_toy([tmp_path])
    data = path.read_bytes()
    assert data.startswith(codecs.BOM_UTF8)
    assert data[3:].decode() == "from modern import new_api\r\n\r\nnew_api(1)\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]  # no temporary file left behind


def test_declared_latin1_encoding_round_trips(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\nfrom legacy import old_api\nname = 'Fran\xe7ois'\nold_api(name)\n"
    (tmp_path / "a.py").write_bytes(source.encode("latin-1"))
    run_toy([tmp_path])
    assert (tmp_path / "a.py").read_bytes() == source.replace("legacy import old_api", "modern import new_api").replace(
        "old_api(name)", "new_api(name)").encode("latin-1")


def test_invalid_utf8_is_an_error_and_untouched(tmp_path: Path) -> None:
    data = b"from legacy import old_api\nx = '\xff\xfe'\n"
    (tmp_path / "a.py").write_bytes(data)
    result = run_toy([tmp_path])
    assert result.files[0].status is FileStatus.ERROR and "not valid utf-8" in result.files[0].findings[0].message
    assert (tmp_path / "a.py").read_bytes() == data


def test_empty_file_and_shell_rule_with_continuations(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("")
    script = tmp_path / "run"
    script.write_text("#!/bin/bash\nlegacy_wrapper torchrun \\\n  train.py\n")
    result = run_toy([tmp_path])
    assert status_of(result, "empty.py") is FileStatus.UNCHANGED
    assert script.read_text() == "#!/bin/bash\ntorchrun \\\n  train.py\n"
    assert next(f for f in result.files if f.path == "run").kind == "shell"


def test_symlinks_are_skipped_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.py").write_text(LEGACY)
    project = tmp_path / "project"
    project.mkdir()
    (project / "link.py").symlink_to(outside / "target.py")
    (project / "linked_dir").symlink_to(outside, target_is_directory=True)
    result = run_toy([project])
    assert [(f.path, f.status) for f in result.files] == [("link.py", FileStatus.SKIPPED)]
    assert (outside / "target.py").read_text() == LEGACY


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text(LEGACY)
    path.chmod(0)
    result = run_toy([tmp_path])
    assert result.files[0].status is FileStatus.ERROR and "cannot read" in result.files[0].findings[0].message


def test_scoped_rules_need_a_marker_or_xla(tmp_path: Path) -> None:
    (tmp_path / "tpu.py").write_text("from tpu import tpu_thing\ntpu_thing()\n")
    assert not run_toy([tmp_path]).neuron_project
    assert (tmp_path / "tpu.py").read_text() == "from tpu import tpu_thing\ntpu_thing()\n"
    forced = run_toy([tmp_path], write=False, xla=True)
    assert forced.neuron_project and status_of(forced, "tpu.py") is FileStatus.CHANGED
    (tmp_path / "launch.sh").write_text("export MARKER_OF_NEURON=1\n")
    marked = run_toy([tmp_path])
    assert marked.neuron_project
    assert (tmp_path / "tpu.py").read_text() == "from neuron import thing\nthing()\n"


def test_pool_gives_the_same_results(tmp_path: Path) -> None:
    for index in range(12):
        (tmp_path / f"m{index}.py").write_text(LEGACY if index % 2 else "x = 1\n")
    serial = run_toy([tmp_path], write=False, jobs=1)
    parallel = run_toy([tmp_path], write=False, jobs=2)
    assert [(f.path, f.status) for f in serial.files] == [(f.path, f.status) for f in parallel.files]
    assert sum(f.status is FileStatus.CHANGED for f in parallel.files) == 6


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True)


def test_refuses_files_with_uncommitted_changes(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "committed.py").write_text(LEGACY)
    (tmp_path / "dirty.py").write_text("x = 1\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "init")
    (tmp_path / "dirty.py").write_text(LEGACY)  # modified after the commit
    (tmp_path / "untracked.py").write_text(LEGACY)
    result = run_toy([tmp_path], force=False)
    assert (tmp_path / "dirty.py").read_text() == LEGACY
    assert (tmp_path / "untracked.py").read_text() == LEGACY
    assert status_of(result, "dirty.py") is FileStatus.ERROR
    assert "uncommitted changes" in next(f for f in result.files if f.path == "dirty.py").findings[0].message
    assert status_of(result, "committed.py") is FileStatus.CHANGED  # clean files are safe: git can restore them
    forced = run_toy([tmp_path], force=True)
    assert status_of(forced, "dirty.py") is FileStatus.CHANGED


class ToySweep(SweepRule):
    """Toy: report any remaining `legacy.`."""

    id = "NM993"
    name = "toy-sweep"
    kinds = frozenset({FileKind.PYTHON})
    triggers = ("legacy",)

    def scan(self, text, kind):
        for number, line in enumerate(text.splitlines(), start=1):
            if "legacy." in line and not line.lstrip().startswith("#"):
                yield SweepHit(number, line.index("legacy."), "legacy still used")


def test_sweep_reports_on_original_lines(tmp_path: Path) -> None:
    source = "from legacy import old_api\nimport legacy\n\nold_api()\nlegacy.other()\n"
    (tmp_path / "a.py").write_text(source)
    result = run_toy([tmp_path], rules=[RenameLegacy, ToySweep])
    sweep = [f for f in result.files[0].findings if f.rule == "NM993"]
    assert [(f.line, f.severity) for f in sweep] == [(5, Severity.TODO)]
    text = (tmp_path / "a.py").read_text()
    assert "# neuron-migrate: legacy still used\nlegacy.other()" in text
    again = run_toy([tmp_path], rules=[RenameLegacy, ToySweep])
    assert status_of(again, "a.py") is FileStatus.UNCHANGED


def test_read_failure_is_an_error_not_a_crash(tmp_path: Path, monkeypatch) -> None:
    """Root reads any file whatever its mode, so the failing read is simulated at the filesystem call."""
    (tmp_path / "locked.py").write_text(LEGACY)
    (tmp_path / "open.py").write_text(LEGACY)
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = run_toy([tmp_path])
    locked = next(f for f in result.files if f.path == "locked.py")
    assert locked.status is FileStatus.ERROR and locked.findings[0].message == "cannot read: Permission denied"
    assert status_of(result, "open.py") is FileStatus.CHANGED


def test_rules_that_read_no_facts_say_so_truthfully() -> None:
    """The engine skips the facts pass when only rules with ``reads_facts = False`` have work: such a rule must
    declare no fact and its module must never look at ``options.project``."""
    import inspect
    import re

    from migrate.registry import all_rules

    quiet = [rule for rule in all_rules() if not rule.reads_facts]
    assert {rule.id for rule in quiet} >= {"NM901", "NM902", "NM903"}
    for rule in quiet:
        assert rule.facts == (), rule.id
        assert not re.search(r"\.project\b", inspect.getsource(inspect.getmodule(rule))), rule.id


def _facts_passes(monkeypatch) -> list[int]:
    import migrate.engine

    passes: list[int] = []
    real = migrate.engine._facts_all

    def counting(items, *args):
        passes.append(len(items))
        return real(items, *args)

    monkeypatch.setattr(migrate.engine, "_facts_all", counting)
    return passes


def test_facts_are_read_only_when_a_rule_that_reads_them_has_work(tmp_path: Path, monkeypatch) -> None:
    # a project with no Neuron usage, whose one trigger wakes only the reporting sweep: no facts pass
    (tmp_path / "helpers.py").write_text('HELP = "migrated from optimum-neuron"\nimport os\n')
    (tmp_path / "run.sh").write_text("python helpers.py\n")
    passes = _facts_passes(monkeypatch)
    result = run([tmp_path], RunOptions(jobs=1, write=False))
    assert result.neuron_project is False
    assert passes == []
    # the same files beside a script that uses optimum-neuron: its rules read the facts, so they are gathered
    (tmp_path / "train.py").write_text(
        "from optimum.neuron import NeuronTrainingArguments\nargs = NeuronTrainingArguments(output_dir='o')\n"
    )
    result = run([tmp_path], RunOptions(jobs=1, write=False))
    assert result.neuron_project is True
    assert len(passes) == 1 and passes[0] >= 2
