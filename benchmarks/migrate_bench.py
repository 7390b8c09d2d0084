"""How fast `neuron-migrate` is, against TorchFix and against the floor libcst itself sets.

    python benchmarks/migrate_bench.py            # full run, writes docs/performance.md's migrate section
    python benchmarks/migrate_bench.py --quick    # smaller trees, same measurements

Negative tree: a copy of the installed transformers package source (about 2,900 .py files, TPU torch_xla
code, no Neuron usage). `neuron-migrate --check` must change nothing; wall time and peak RSS are measured
with a cold process, as a user runs it. TorchFix (`torchfix`, libcst-based, from PyPI) lints the same tree
in the same run; it needs libcst < 1.6, so it gets its own virtualenv under benchmarks/_work/.

Positive tree: N files that all need rewriting, generated from the golden fixtures (every
tests/fixtures/**/before/*.py whose expected output differs). Throughput in files/s for --jobs 1 and 2,
against the floor: parse + codegen of the same files with libcst and no rules, in one process.
In the same run, in one process, where the time goes: the floor, the engine with no rule (parse, import
map, one traversal with the statement bookkeeping, codegen) and the whole migration of each file.

Mixed tree: files that all need rewriting at the density of a real project: each is one golden input
followed by a pure-Python standard-library module standing for the project's own code (about 32 KB a
file, a few legacy references among a thousand lines). Same measurements as the positive tree.

Memory: peak RSS of the positive run at N and 4N files (flat means no whole-tree state per file).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "_work"  # the TorchFix virtualenv
# The trees live OUTSIDE this repository: inside it they would be gitignored (benchmarks/_work/ is), and
# neuron-migrate honours .gitignore while TorchFix does not.
TREES = Path(tempfile.gettempdir()) / "neuron-migrate-bench"
RESULTS = ROOT / "benchmarks" / "results"

MEASURE = r"""
import json, resource, subprocess, sys, time
started = time.perf_counter()
completed = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "peak_rss_mb": peak / 1024, "returncode": completed.returncode,
                  "stderr_tail": completed.stderr[-2000:]}))
"""


def measure(command: list[str], env: dict | None = None) -> dict:
    """Run ``command`` in a fresh process; wall time and the peak RSS of its largest process."""
    completed = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True, text=True,
                               env={**os.environ, **(env or {})}, check=True)
    return json.loads(completed.stdout)


def best_of(runs: int, command: list[str]) -> dict:
    results = [measure(command) for _ in range(runs)]
    best = min(results, key=lambda r: r["seconds"])
    best["all_seconds"] = [round(r["seconds"], 3) for r in results]
    return best


# ------------------------------------------------------------------------------------------- trees


def negative_tree() -> Path:
    import transformers

    target = TREES / "transformers-src"
    if not target.exists():
        shutil.copytree(Path(transformers.__file__).parent, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def positive_sources() -> list[tuple[str, str]]:
    """(name, source) of every Python golden input that the rules change."""
    sources = []
    for before in sorted((ROOT / "tests" / "fixtures").glob("*/*/before/**/*.py")):
        case = next(parent for parent in before.parents if (parent / "before").is_dir())
        after = case / "after" / before.relative_to(case / "before")
        if after.exists():
            sources.append((f"{case.parent.name}_{case.name}_{before.stem}", before.read_text()))
    return sources


def positive_tree(files: int) -> Path:
    target = TREES / f"positive-{files}"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    sources = positive_sources()
    (target / "requirements.txt").write_text("optimum-neuron==0.4.5\n")  # a Neuron project: all families run
    for index in range(files):
        name, source = sources[index % len(sources)]
        folder = target / f"pkg{index // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"{name}_{index}.py").write_text(source)
    return target


#: Pure-Python standard-library modules with no torch, transformers or XLA in them: a project's own code.
STDLIB_MODULES = (
    "textwrap.py", "statistics.py", "fractions.py", "heapq.py", "bisect.py", "shlex.py", "string.py",
    "calendar.py", "difflib.py", "glob.py", "fnmatch.py", "colorsys.py", "csv.py", "dataclasses.py", "enum.py",
    "functools.py", "ipaddress.py", "pprint.py", "random.py", "tempfile.py",
)


def mixed_tree(files: int) -> Path:
    import sysconfig

    target = TREES / f"mixed-{files}"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    library = Path(sysconfig.get_paths()["stdlib"])
    padding = [
        "\n".join(line for line in (library / name).read_text().splitlines() if not line.startswith("from __future__"))
        for name in STDLIB_MODULES
    ]
    sources = positive_sources()
    (target / "requirements.txt").write_text("optimum-neuron==0.4.5\n")
    for index in range(files):
        name, source = sources[index % len(sources)]
        folder = target / f"pkg{index // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"{name}_{index}.py").write_text(source + "\n\n" + padding[index % len(padding)] + "\n")
    return target


def throughput(tree: Path, repeats: int, label: str) -> dict:
    """The libcst floor and ``neuron-migrate --check`` with --jobs 1 and 2 over ``tree``."""
    floor = libcst_floor(tree, repeats)
    runs = {}
    for jobs in (1, 2):
        run = best_of(repeats, [sys.executable, "-m", "migrate", "--check", "-q", "--jobs", str(jobs), str(tree)])
        assert f"{floor['files'] + 1} files scanned" in run["stderr_tail"], run["stderr_tail"]
        run["files_per_s"] = floor["files"] / run["seconds"]
        runs[jobs] = run
        print(f"{label} ({floor['files']} files) --jobs {jobs}: {run['seconds']:.2f}s, "
              f"{run['files_per_s']:.0f} files/s ({run['files_per_s'] / floor['files_per_s']:.0%} of the floor), "
              f"peak RSS {run['peak_rss_mb']:.0f} MB", flush=True)
    print(f"  libcst floor (parse + codegen, 1 process): {floor['files_per_s']:.0f} files/s", flush=True)
    return {
        "files": floor["files"], "floor": floor, "jobs": runs,
        "ratio_to_floor_jobs1": runs[1]["files_per_s"] / floor["files_per_s"],
        "ratio_to_floor_jobs2": runs[2]["files_per_s"] / floor["files_per_s"],
        "scaling_jobs2_over_jobs1": runs[2]["files_per_s"] / runs[1]["files_per_s"],
    }


def libcst_floor(tree: Path, repeats: int = 3) -> dict:
    """Parse + codegen of every .py file under ``tree``, one process, no rules: what libcst alone costs
    (best of ``repeats``, like the runs it is compared with)."""
    import libcst

    paths = sorted(tree.rglob("*.py"))
    texts = [path.read_text() for path in paths]
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        for text in texts:
            libcst.parse_module(text).code
        timings.append(time.perf_counter() - started)
    seconds = min(timings)
    return {"files": len(paths), "seconds": seconds, "files_per_s": len(paths) / seconds,
            "all_seconds": [round(t, 3) for t in timings]}


def in_process_split(tree: Path, repeats: int) -> dict:
    """Seconds for every .py file under ``tree``, in this process (best of ``repeats``): libcst alone
    (parse + codegen), the engine with no rule, and the whole migration (every rule, the findings'
    positions, import clean-up, the sweep)."""
    import libcst

    from migrate.filekinds import FileKind
    from migrate.pipeline import migrate_source
    from migrate.pyrun import transform_module
    from migrate.registry import all_rules
    from migrate.rule import ImportMap, PythonContext, RuleOptions

    texts = [path.read_text() for path in sorted(tree.rglob("*.py"))]
    rules, options = list(all_rules()), RuleOptions()

    def floor() -> None:
        for text in texts:
            libcst.parse_module(text).code

    def engine() -> None:
        for text in texts:
            context = PythonContext(path=Path("x.py"), source=text, options=options, imports=ImportMap())
            transform_module(text, [], context)

    def migration() -> None:
        for text in texts:
            migrate_source(text, FileKind.PYTHON, Path("x.py"), rules, options)

    seconds = {}
    for name, work in (("floor", floor), ("engine_no_rules", engine), ("migration", migration)):
        timings = []
        for _ in range(repeats):
            started = time.perf_counter()
            work()
            timings.append(time.perf_counter() - started)
        seconds[name] = min(timings)
    return {
        "files": len(texts), "seconds": seconds,
        "engine_share_of_floor": seconds["floor"] / seconds["engine_no_rules"],
        "migration_share_of_floor": seconds["floor"] / seconds["migration"],
    }


def torchfix_command() -> list[str] | None:
    venv = WORK / "torchfix-venv"
    executable = venv / "bin" / "torchfix"
    if not executable.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        installed = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "torchfix==0.7.0"],
                                   capture_output=True, text=True)
        if installed.returncode != 0:
            print("torchfix could not be installed:", installed.stderr[-500:], file=sys.stderr)
            return None
    return [str(executable)]


def versions() -> dict:
    from importlib import metadata

    import migrate

    cpu = "unknown"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"python": platform.python_version(), "libcst": metadata.version("libcst"),
            "neuron_migrate": migrate.__version__, "cpu": cpu, "cores": os.cpu_count()}


# ---------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller trees and one repetition")
    parser.add_argument("--files", type=int, default=None, help="positive tree size (default 1000, quick 200)")
    parser.add_argument("--no-torchfix", action="store_true")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    files = args.files or (200 if args.quick else 1000)
    WORK.mkdir(parents=True, exist_ok=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    tool = [sys.executable, "-m", "migrate"]
    results: dict = {"machine": versions(), "quick": args.quick}

    tree = negative_tree()
    py_files = sum(1 for _ in tree.rglob("*.py"))
    negative = best_of(repeats, [*tool, "--check", "-q", str(tree)])
    scanned = int(negative["stderr_tail"].split(" files scanned")[0].split()[-1])
    assert scanned >= py_files, f"neuron-migrate looked at {scanned} files of {py_files}: is the tree gitignored?"
    results["negative"] = {"tree": "installed transformers package source", "py_files": py_files,
                           "neuron_migrate_check": negative}
    print(f"negative tree ({py_files} .py): neuron-migrate --check {negative['seconds']:.2f}s "
          f"(rc {negative['returncode']}), peak RSS {negative['peak_rss_mb']:.0f} MB", flush=True)
    previous = RESULTS / ("migrate-quick.json" if args.quick else "migrate.json")
    if args.no_torchfix and previous.exists() and "torchfix" in json.loads(previous.read_text()).get("negative", {}):
        # TorchFix and the tree did not change: keep its earlier measurement, say so, and recompute the ratio
        kept = json.loads(previous.read_text())["negative"]["torchfix"]
        kept["kept_from_previous_run"] = True
        results["negative"]["torchfix"] = kept
        results["negative"]["speedup_vs_torchfix"] = kept["seconds"] / negative["seconds"]
        print(f"  torchfix {kept['seconds']:.1f}s (previous run) -> {kept['seconds'] / negative['seconds']:.0f}x faster", flush=True)
    elif not args.no_torchfix:
        command = torchfix_command()
        if command:
            torchfix = measure([*command, str(tree)])
            results["negative"]["torchfix"] = torchfix
            ratio = torchfix["seconds"] / negative["seconds"]
            results["negative"]["speedup_vs_torchfix"] = ratio
            print(f"  torchfix {torchfix['seconds']:.1f}s -> neuron-migrate is {ratio:.0f}x faster", flush=True)

    small = positive_tree(files)
    results["positive"] = throughput(small, repeats, "positive tree")
    split = in_process_split(small, 3)
    results["positive"]["in_process"] = split
    print(f"  in one process: floor {split['seconds']['floor']:.2f}s, engine with no rule "
          f"{split['seconds']['engine_no_rules']:.2f}s ({split['engine_share_of_floor']:.0%} of the floor's speed), "
          f"whole migration {split['seconds']['migration']:.2f}s ({split['migration_share_of_floor']:.0%})", flush=True)
    big = positive_tree(files * 4)
    big_run = measure([*tool, "--check", "-q", "--jobs", "2", str(big)])
    print(f"positive tree ({files * 4} files) --jobs 2: peak RSS {big_run['peak_rss_mb']:.0f} MB", flush=True)
    results["positive"]["memory"] = {
        "files": [files, files * 4], "peak_rss_mb": [results["positive"]["jobs"][2]["peak_rss_mb"], big_run["peak_rss_mb"]],
    }
    mixed_files = 50 if args.quick else 200
    results["mixed"] = throughput(mixed_tree(mixed_files), repeats, "mixed tree")
    output = RESULTS / ("migrate-quick.json" if args.quick else "migrate.json")
    output.write_text(json.dumps(results, indent=2))
    print(f"results: {output}")


if __name__ == "__main__":
    main()
