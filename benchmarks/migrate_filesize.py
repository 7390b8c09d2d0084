"""Time against file size: one file with legacy code at both ends, up to 5 MB, beside the libcst floor.

    python benchmarks/migrate_filesize.py                 # 64 KB .. 5 MB, prints a Markdown table
    python benchmarks/migrate_filesize.py --sizes 64,256  # sizes in KB

Each file: an optimum-neuron import and model load at the top, pure-Python standard-library modules
(standing for the project's own code) in the middle, torch_xla device code at the bottom, so that the
rewrite touches both ends of the file (the case where a whole-file difflib went quadratic: issue 16).
Columns: the floor (libcst parse + codegen of the file, no rules, in this process), `neuron-migrate --check
--xla --jobs 1` on the file (a fresh process, as a user runs it) and the time in the sweep's line map.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import libcst

from migrate.pipeline import _line_map

HEAD = (
    "from optimum.neuron import NeuronModelForCausalLM\n\n"
    'model = NeuronModelForCausalLM.from_pretrained("gpt2", export=True, batch_size=1, sequence_length=128)\n\n'
)
TAIL = "\nimport torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\nxm.mark_step()\n"


def stdlib_code(size: int) -> str:
    """About ``size`` bytes of real Python: whole standard-library modules one after another."""
    parts, total = [], 0
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py")) + sorted(p for p in stdlib.glob("*/**/*.py") if "site-packages" not in p.parts):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "from __future__" in text or "\t" in text:
            continue
        try:
            compile(text, str(path), "exec")
        except SyntaxError:
            continue
        if total + len(text) > size and parts:
            continue
        parts.append(text if text.endswith("\n") else text + "\n")
        total += len(parts[-1])
        if total >= size * 0.98:
            return "".join(parts)
    raise SystemExit(f"the standard library holds less than {size} bytes of usable modules")


def best_of(function, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="64,256,1024,2048,5120", help="file sizes in KB, comma-separated")
    args = parser.parse_args()
    sizes = [int(kb) * 1024 for kb in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            text = HEAD + stdlib_code(size - len(HEAD) - len(TAIL)) + TAIL
            target = Path(folder) / "model_code.py"
            target.write_text(text)
            repeat = 3 if size <= 1024 * 1024 else 1
            floor = best_of(lambda: libcst.parse_module(text).code, repeat)
            command = [sys.executable, "-m", "migrate", "--check", "--xla", "--jobs", "1", "--time-limit", "0", str(target)]
            tool = best_of(lambda: subprocess.run(command, capture_output=True, check=False), repeat)
            rewritten = HEAD.replace("optimum.neuron", "transformers") + text[len(HEAD):-len(TAIL)] + "# note\n" + TAIL
            line_map = best_of(lambda: _line_map(text, rewritten), repeat)
            completed = subprocess.run(command, capture_output=True, text=True, check=False)
            if completed.returncode != 1 or "would be rewritten" not in completed.stdout + completed.stderr:
                raise SystemExit(f"the {size // 1024} KB file was not migrated: {completed.stderr[-500:]}")
            rows.append((len(text), text.count("\n"), floor, tool, line_map))
            print(f"{len(text) / 1024:.0f} KB: floor {floor:.2f} s, neuron-migrate {tool:.2f} s, line map {line_map:.3f} s",
                  file=sys.stderr, flush=True)
    print("| file size | lines | libcst floor (parse + codegen) | `neuron-migrate --check` | ratio | line map |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size, lines, floor, tool, line_map in rows:
        print(f"| {size / 1024:,.0f} KB | {lines:,} | {floor:.2f} s | {tool:.2f} s | {tool / floor:.1f}x | {line_map:.3f} s |")


if __name__ == "__main__":
    main()
