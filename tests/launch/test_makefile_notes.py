"""Notes in a Makefile sit above the target line of the rule they are about, never in its recipe: a tab-indented
``# neuron-migrate: ...`` line is a recipe line, which make echoes on every run with its ``$(VAR)`` text expanded
(rt6J J8). ``make -n`` on every migrated Makefile of the launch goldens prints no note."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parents[1] / "fixtures" / "launch"
MAKEFILES = sorted(FIXTURES.glob("*/after/Makefile")) + sorted(FIXTURES.glob("*/after/*.mk"))
_TARGET = re.compile(r"^([A-Za-z0-9_][\w.-]*)\s*:(?!=)", re.M)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("makefile", MAKEFILES, ids=lambda path: path.parents[1].name)
def test_make_echoes_no_note(makefile: Path, tmp_path: Path) -> None:
    text = makefile.read_text()
    for target in dict.fromkeys(_TARGET.findall(text)):
        run = subprocess.run(["make", "-n", "-f", str(makefile), target], cwd=tmp_path, capture_output=True,
                             text=True, timeout=30)
        assert "neuron-migrate" not in run.stdout, (target, run.stdout)


def test_no_note_is_a_recipe_line() -> None:
    for makefile in MAKEFILES:
        for line in makefile.read_text().splitlines():
            assert not (line.startswith("\t") and "neuron-migrate:" in line), (makefile, line)
