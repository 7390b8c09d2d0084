"""Where a migrated file's time goes, phase by phase, in one process; and what an oracle would save.

    python benchmarks/migrate_breakdown.py                 # the dense tree's 41 sources, 5 times over
    python benchmarks/migrate_breakdown.py --mixed 100     # 100 files of the mixed tree (fixture + stdlib module)

It replays ``migrate.pyrun.transform_module`` and ``migrate.pipeline.migrate_source`` step by step with a
timer around each step (parse, import map, the traversal with every rule's callbacks, import clean-up and
insertion, codegen, finding positions, the sweep), so it has to follow those two functions when they
change; the totals are printed beside an untimed run of ``migrate_source`` to show it still does.

The oracle runs, for each file, only the rules that report something in it (plus the sweep): the most any
narrowing of triggers could save. See docs/performance.md.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path, PurePath

sys.path.insert(0, str(Path(__file__).resolve().parent))

import libcst  # noqa: E402

from migrate import cstwalk, pyrun, unused_imports  # noqa: E402
from migrate.filekinds import FileKind  # noqa: E402
from migrate.imports import add_imports  # noqa: E402
from migrate.pipeline import _sweep, migrate_source, rules_for  # noqa: E402
from migrate.registry import all_rules  # noqa: E402
from migrate.rule import ImportMap, PythonContext, PythonRule, RuleOptions, SweepRule  # noqa: E402
from migrate_bench import STDLIB_MODULES, positive_sources  # noqa: E402

PATH = PurePath("x.py")


def sources(mixed: int) -> list[str]:
    fixtures = [source for _, source in positive_sources()]
    if not mixed:
        return fixtures * 5
    import sysconfig

    library = Path(sysconfig.get_paths()["stdlib"])
    padding = [
        "\n".join(line for line in (library / name).read_text().splitlines() if not line.startswith("from __future__"))
        for name in STDLIB_MODULES
    ]
    return [fixtures[i % len(fixtures)] + "\n\n" + padding[i % len(padding)] + "\n" for i in range(mixed)]


def phases(texts: list[str], rules: list, options: RuleOptions) -> collections.Counter:
    spent: collections.Counter = collections.Counter()

    def lap(label: str, since: float) -> float:
        now = time.perf_counter()
        spent[label] += now - since
        return now

    for text in texts:
        clock = time.perf_counter()
        active = rules_for(FileKind.PYTHON, rules, text, PATH.name)
        python_rules = [rule for rule in active if issubclass(rule, PythonRule)]
        clock = lap("choosing rules", clock)
        ctx = PythonContext(path=PATH, source=text, options=options, imports=ImportMap())
        module = libcst.parse_module(text)
        clock = lap("parse", clock)
        ctx.imports = ImportMap.from_module(module)
        clock = lap("import map", clock)
        instances: list = [rule(ctx) for rule in python_rules]
        moves = {old: (new, rule.id) for rule in python_rules for old, new in rule.moves.items()}
        if moves:
            instances.insert(0, pyrun.SymbolMover(ctx, moves))
        dispatcher = pyrun._Dispatcher(instances, ctx, module)
        new = cstwalk.transform(module, dispatcher)
        clock = lap("traversal with every rule", clock)
        legacy = tuple(prefix for rule in python_rules for prefix in rule.legacy_modules)
        if legacy and unused_imports.imports_any(ctx.imports, legacy):
            new = unused_imports.remove_unused_imports(new, legacy, set(), dispatcher.names_by_statement)
        if ctx.needed_imports:
            new = add_imports(new, ctx.needed_imports)
        clock = lap("import clean-up and insertion", clock)
        code = new.code
        clock = lap("codegen", clock)
        findings = pyrun._positioned(module, text, ctx)
        clock = lap("finding positions", clock)
        sweeps = [rule for rule in active if issubclass(rule, SweepRule)]
        if sweeps:
            _sweep(text, code, FileKind.PYTHON, sweeps, options, findings)
        lap("sweep", clock)
    return spent


def timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mixed", type=int, default=0, help="files of the mixed tree instead of the dense sources")
    args = parser.parse_args()
    texts = sources(args.mixed)
    rules, options = list(all_rules()), RuleOptions()
    for text in texts[:41]:  # warm every cache a long run would have warm
        migrate_source(text, FileKind.PYTHON, PATH, rules, options)

    floor = min(timed(lambda: [libcst.parse_module(text).code for text in texts]) for _ in range(3))
    whole = min(timed(lambda: [migrate_source(text, FileKind.PYTHON, PATH, rules, options) for text in texts])
                for _ in range(3))
    spent = min((phases(texts, rules, options) for _ in range(3)), key=lambda c: sum(c.values()))
    total = sum(spent.values())
    print(f"{len(texts)} files, {sum(map(len, texts)) // len(texts)} characters on average")
    print(f"libcst floor {floor:.3f}s; migrate_source {whole:.3f}s ({floor / whole:.0%} of the floor's speed); "
          f"replayed with timers {total:.3f}s")
    for label, seconds in spent.most_common():
        print(f"  {label:32s} {seconds:7.3f}s  {seconds / total:4.0%}")

    reporting = {}
    for text in texts:
        ids = {finding.rule for finding in migrate_source(text, FileKind.PYTHON, PATH, rules, options).findings}
        reporting[text] = [rule for rule in rules if rule.id in ids or issubclass(rule, SweepRule)]
    oracle = min(timed(lambda: [migrate_source(text, FileKind.PYTHON, PATH, reporting[text], options) for text in texts])
                 for _ in range(3))
    print(f"oracle (only the rules that report something in each file): {oracle:.3f}s, "
          f"{1 - oracle / whole:.0%} less than every triggered rule")


if __name__ == "__main__":
    main()
