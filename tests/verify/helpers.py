"""Helpers for the verification tests: check a text with the NM7xx rules, and run a snippet for real."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from migrate.registry import all_rules
from migrate.verification import VerifyRule, violations

VERIFIERS = [rule for rule in all_rules() if issubclass(rule, VerifyRule)]


def check(source: str) -> list[tuple[str, int, str]]:
    """(rule, line, message) for every violation in ``source``."""
    return [(rule, v.line, v.message) for rule, v in violations(textwrap.dedent(source), VERIFIERS)]


def outcomes(sources: list[str]) -> list[str]:
    """Run each source against the real libraries, in ONE fresh interpreter (each in its own namespace):
    the name of the exception each raises, "" when it runs through."""
    programs = [textwrap.dedent(source) + "\n" for source in sources]
    driver = (
        "import warnings, sys; warnings.simplefilter('ignore')\n"
        f"for program in {programs!r}:\n"
        "    try:\n        exec(compile(program, 'snippet', 'exec'), {'__name__': '__main__'})\n"
        "        print('OUTCOME -')\n"
        "    except BaseException as error:\n        print('OUTCOME', type(error).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=600)
    found = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("OUTCOME ")]
    assert len(found) == len(sources), done.stderr[-2000:]
    return ["" if outcome == "-" else outcome for outcome in found]
