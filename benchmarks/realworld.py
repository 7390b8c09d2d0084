"""neuron-migrate on real projects: what it removes, what it leaves silent, whether a second run is a no-op.

    python benchmarks/realworld.py --corpus ../shared/corpus          # every project folder under it
    python benchmarks/realworld.py --corpus DIR --json out.json       # the figures as JSON too
    python benchmarks/realworld.py --corpus DIR --keep /tmp/migrated  # keep the migrated copies to read

Each project folder under ``--corpus`` is copied into a temporary git repository (the corpus itself is never
touched), migrated in write mode, committed, and migrated again. Per project and in total it prints:

* ``refs before/after``: legacy references (the patterns in ``LEGACY`` below, counted per line; notebook
  outputs are not code and are not counted);
* ``removed``: references gone after the run (the tool's own verification findings say when a rewrite that
  removed one cannot work: see ``verify errors``);
* ``prose``: of those, the ones on lines the tool reports as prose (NM903 ``info`` findings: comments,
  docstrings, Markdown); they are never rewritten, so the share removed is also given over code references alone;
* ``silent``: references left with no finding within 3 lines (in the original file) and no inline
  ``neuron-migrate:`` note within 3 lines above them (in the written file), in a file that no finding reports as
  kept as a whole (``WHOLE_FILE``: NM318's one note on a file left on torch_xla, NM902's single info for the
  references under it, the note of a module kept with such importers): one note there covers every reference, as
  one note per reference would only repeat it;
* ``verify errors``: error findings of the verification family (NM7xx): calls into stock libraries that
  cannot work, in the files the run rewrote; ``verify untouched``: the same in files no rule rewrote that run on
  the requirements the run migrates (a CUDA baseline importing a name the bumped trl no longer has): the tool
  reports them and leaves the code to its owner;
* ``changed``: files the first run changed; ``again``: files the second run changed again (idempotence);
* ``broken``: files that parsed before and do not parse after: Python, notebook cells, shell scripts
  (``bash -n``), JSON and YAML;
* ``seconds``: wall time of the first run.

The last lines are the totals, so ``tail -n 6`` of the output is a summary.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

#: What counts as a legacy reference, one pattern per kind, searched per line.
LEGACY = {
    "optimum.neuron": re.compile(r"optimum[.\-_]neuron"),
    "torch_xla": re.compile(r"\btorch_xla\b|\btorch-xla\b"),
    "xm/xmp call": re.compile(r"\bxmp?\.[A-Za-z_]+\s*\("),
    "neuron_parallel_compile": re.compile(r"\bneuron_parallel_compile\b"),
    "XLA env var": re.compile(r"\b(?:XLA_[A-Z0-9_]+|PJRT_DEVICE|NEURON_EXTRACT_GRAPHS_ONLY)\b"),
    # every optimum-cli Neuron command: export, consolidate, cache synchronize / lookup
    "optimum-cli neuron": re.compile(r"optimum-cli\s+(?:export\s+)?neuron\b"),
    "neuronx_distributed": re.compile(r"\bneuronx[_-]distributed\b"),
    # the Hub compile cache and optimum-neuron's own switches, and the torch-xla era NEFF cache (map H9, T9)
    "optimum-neuron env var": re.compile(r"\b(?:CUSTOM_CACHE_REPO|OPTIMUM_NEURON_[A-Z_]+|NEURON_COMPILE_CACHE_URL)\b"),
    "Neuron* class": re.compile(r"\bNeuron(?:Model\w*|Trainer|Seq2SeqTrainer|SFTTrainer|ORPOTrainer|TrainingArguments"
                                r"|SFTConfig|ORPOConfig|Accelerator|\w*Pipeline|ModelFor\w+|Config)\b"),
    "Ray TorchXLAConfig": re.compile(r"\bTorchXLAConfig\b|\bray\.train\.torch\.xla\b"),
    "xla backend": re.compile(r"""backend\s*=\s*["']xla["']|init_method\s*=\s*["']xla://"""),
    "accelerate XLA config": re.compile(r"""["']?distributed_type["']?\s*:\s*["']?(?:XLA|TPU)\b"""),
    # TorchNeuron loads torch_neuronx by itself: an import of it (a notebook's JSON line too) is XLA-era but for
    # NKI helpers; its XLA-era API (map B8 / B9)
    # an optimum-neuron model's compiled configuration: stock models have neither attribute (NM110 / NM901 notes)
    "compiled config read": re.compile(r"\.neuron_config\b|\bconfig\.neuron\b"
                                       r"""|\b(?:hasattr|getattr)\s*\((?:[^()]*,\s*["']neuron_config["']"""
                                       r"""|[^()]*\bconfig\s*,\s*["']neuron["'])"""),
    "torch_neuronx": re.compile(r"""^\s*"?\s*(?:import|from)\s+torch_neuronx\b"""
                                r"|\btorch_neuronx\.(?:trace|DataParallel)\b"),
}
NOTE = "neuron-migrate:"
#: finding texts that speak for the whole file (see ``silent``): a file left on torch_xla as a whole, its references
WHOLE_FILE = ("so it was left on torch_xla as a whole", "kept on torch_xla with the rest of this file",
              "imported only by code that neuron-migrate leaves on torch_xla as a whole",
              "kept on torch_xla with the code that imports it")
PROSE_RULE = "NM903"  # legacy mentions in comments, docstrings and documentation (info: docs to update)
SHELL_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch")
KINDS = {".py", ".ipynb", ".sh", ".bash", ".slurm", ".sbatch", ".txt", ".toml", ".cfg", ".yaml", ".yml", ".json", ""}


@dataclass
class Figures:
    project: str
    files: int = 0
    refs_before: int = 0
    refs_after: int = 0
    prose_before: int = 0  # on lines the tool reports as prose (info: docs to update), never rewritten
    prose_after: int = 0
    silent: int = 0
    verify_errors: int = 0
    verify_untouched: int = 0  # NM7xx errors in files the run did not change
    changed: int = 0
    again: int = 0
    broken: int = 0
    parse_errors_before: int = 0
    seconds: float = 0.0
    silent_examples: list[str] = field(default_factory=list)

    @property
    def removed(self) -> int:
        return self.refs_before - self.refs_after

    @property
    def code_removed_share(self) -> float:
        """Of the references in code (not prose), the share the run removed."""
        code_before = self.refs_before - self.prose_before
        return (code_before - (self.refs_after - self.prose_after)) / code_before if code_before else 0.0

    def add(self, other: "Figures") -> None:
        for name in ("files", "refs_before", "refs_after", "prose_before", "prose_after", "silent", "verify_errors", "verify_untouched", "changed", "again", "broken",
                     "parse_errors_before"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds


def code_lines(path: Path, text: str) -> list[tuple[int, str]]:
    """(1-based line, text) of the lines that are code or configuration; a notebook's outputs are left out."""
    lines = text.splitlines()
    if path.suffix != ".ipynb":
        return list(enumerate(lines, 1))
    kept, in_source = [], False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith('"source":'):
            in_source = not stripped.endswith("[]") and not stripped.endswith("],")
            if stripped.startswith('"source": "'):  # a one-string source
                kept.append((number, line))
                in_source = False
            continue
        if in_source:
            if stripped in ("]", "],"):
                in_source = False
            else:
                kept.append((number, line))
    return kept


def references(path: Path, text: str) -> list[tuple[int, str]]:
    found = []
    for number, line in code_lines(path, text):
        if NOTE in line:
            continue  # the tool's own notes quote the old code on purpose
        for kind, pattern in LEGACY.items():
            found.extend((number, kind) for _ in pattern.finditer(line))
    return found


def parses(path: Path, text: str) -> bool:
    if path.suffix == ".py":
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return False
        return True
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(text).get("cells", [])
        except (ValueError, AttributeError):
            return False
        for cell in cells:
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            if source.lstrip().startswith("%%"):
                continue
            masked = "\n".join("pass" if line.lstrip().startswith(("!", "%")) else line
                               for line in source.splitlines())
            try:
                ast.parse(masked)
            except (SyntaxError, ValueError):
                return False
        return True
    if path.suffix in SHELL_SUFFIXES:  # bash reads the whole script before it runs a line of it
        checked = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        return checked.returncode == 0
    if path.suffix == ".json":
        try:
            json.loads(text)
        except ValueError:
            return False
    if path.suffix in (".yaml", ".yml"):
        try:
            list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            return False
    return True


def old_line_of(before: list[str], after: list[str]) -> dict[int, int]:
    """1-based line of the written file -> the nearest line of the original file."""
    mapping: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        for offset, b in enumerate(range(b0, b1)):
            mapping[b + 1] = min(a0 + offset, max(a1 - 1, a0)) + 1 if tag == "equal" else a0 + 1
    return mapping


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args], cwd=cwd,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def tool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("neuron-migrate")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "migrate"]
    return subprocess.run(command + list(args), cwd=cwd, capture_output=True, text=True)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def measure(project: Path, work: Path) -> Figures:
    figures = Figures(project.name)
    # the project's own repository (hooks, a detached HEAD, submodules) stays behind: the copy gets a fresh one
    shutil.copytree(project, work, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    for path in work.rglob("*"):
        if path.is_file():
            path.chmod(path.stat().st_mode | 0o200)
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "before", "--allow-empty", "--no-verify")  # empty: every file is gitignored
    before = snapshot(work)
    report = work.parent / f"{project.name}.report.json"
    started = time.perf_counter()
    run = tool(".", "--report", str(report), cwd=work)
    figures.seconds = time.perf_counter() - started
    if run.returncode not in (0, 1):
        raise SystemExit(f"{project.name}: neuron-migrate exited {run.returncode}: {run.stderr.strip()[-300:]}")
    findings: dict[str, list[dict]] = {}
    after = snapshot(work)
    for entry in json.loads(report.read_text())["files"]:
        findings[entry["path"]] = entry["findings"]
        errors = sum(1 for f in entry["findings"] if f["severity"] == "error" and f["rule"].startswith("NM7"))
        if after.get(entry["path"]) == before.get(entry["path"]):
            figures.verify_untouched += errors
        else:
            figures.verify_errors += errors
    for name, old_bytes in before.items():
        path = Path(name)
        if path.suffix not in KINDS or path.name == "LICENSE":
            continue
        new_bytes = after.get(name, old_bytes)
        old_text = old_bytes.decode("utf-8", "replace")
        new_text = new_bytes.decode("utf-8", "replace")
        figures.files += 1
        figures.changed += new_bytes != old_bytes
        was_valid, is_valid = parses(path, old_text), parses(path, new_text)
        figures.parse_errors_before += not was_valid
        figures.broken += was_valid and not is_valid
        old_refs, new_refs = references(path, old_text), references(path, new_text)
        figures.refs_before += len(old_refs)
        figures.refs_after += len(new_refs)
        reported = {f.get("original_line", f["line"]) for f in findings.get(name, [])}
        prose = {f.get("original_line", f["line"]) for f in findings.get(name, [])
                 if f["severity"] == "info" and f["rule"] == PROSE_RULE}
        whole = any(any(text in f["message"] for text in WHOLE_FILE) for f in findings.get(name, []))
        new_lines = new_text.splitlines()
        to_old = old_line_of(old_text.splitlines(), new_lines)
        figures.prose_before += sum(1 for line, _ in old_refs if line in prose)
        figures.prose_after += sum(1 for line, _ in new_refs if to_old.get(line, line) in prose)
        for line, kind in new_refs:
            noted = any(NOTE in new_lines[i - 1] for i in range(max(1, line - 3), line + 1))
            old = to_old.get(line, line)
            near = any(abs(old - r) <= 3 for r in reported)
            if not noted and not near and not whole:
                figures.silent += 1
                if len(figures.silent_examples) < 200:
                    figures.silent_examples.append(f"{name}:{line}: {kind}: {new_lines[line - 1].strip()[:100]}")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "after", "--allow-empty", "--no-verify")
    second = tool(".", cwd=work)
    if second.returncode not in (0, 1):
        raise SystemExit(f"{project.name}: second run exited {second.returncode}: {second.stderr.strip()[-300:]}")
    again = snapshot(work)
    figures.again = sum(1 for name, data in after.items() if again.get(name) != data)
    return figures


def row(f: Figures) -> str:
    share = f"{100 * f.removed / f.refs_before:.0f}%" if f.refs_before else "-"
    return (f"{f.project[:44]:44} {f.files:5} {f.refs_before:6} {f.refs_after:6} {f.removed:7} {share:>5} "
            f"{f.silent:6} {f.verify_errors:6} {f.changed:7} {f.again:5} {f.broken:6} {f.seconds:7.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a folder of project folders")
    parser.add_argument("--json", type=Path, help="also write the figures (and silent examples) here")
    parser.add_argument("--keep", type=Path, help="keep the migrated copies in this (new) folder")
    parser.add_argument("--silent", action="store_true", help="print every silent reference")
    args = parser.parse_args(argv)
    # a hidden folder (.git, .ruff_cache, .venv) or __pycache__ beside the projects is no project
    projects = sorted(p for p in args.corpus.iterdir()
                      if p.is_dir() and not p.name.startswith(".") and p.name != "__pycache__")
    if not projects:
        parser.error(f"no project folders under {args.corpus}")
    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="realworld-"))
    scratch.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    header = (f"{'project':44} {'files':>5} {'before':>6} {'after':>6} {'removed':>7} {'share':>5} "
              f"{'silent':>6} {'verify':>6} {'changed':>7} {'again':>5} {'broken':>6} {'seconds':>7}")
    print(header)
    total = Figures("total")
    results = []
    try:
        for project in projects:
            figures = measure(project, scratch / project.name)
            results.append(figures)
            total.add(figures)
            print(row(figures), flush=True)
            if args.silent:
                for example in figures.silent_examples:
                    print("    silent:", example)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(f) | {"removed": f.removed, "code_removed_share": f.code_removed_share}
                                         for f in results + [total]], indent=1))
    print("-" * len(header))
    print(row(total))
    share = 100 * total.removed / total.refs_before if total.refs_before else 0.0
    print(f"legacy references: {total.refs_before} before, {total.refs_after} after, {total.removed} removed "
          f"({share:.0f}%), {total.silent} silent; in code (prose reported as docs to update left out): "
          f"{100 * total.code_removed_share:.0f}% removed ({total.prose_before} prose mentions before, "
          f"{total.prose_after} after)")
    print(f"verification errors: {total.verify_errors} in rewritten files, {total.verify_untouched} in files no rule "
          f"rewrote that run on the migrated requirements; files changed: {total.changed}; changed again by a second "
          f"run: {total.again}; broken by the run: {total.broken} (parse errors before: {total.parse_errors_before})")
    print(f"time: {total.seconds:.2f} s for {total.files} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
