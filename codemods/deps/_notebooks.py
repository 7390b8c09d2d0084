"""The files a notebook writes with ``%%writefile`` cells, read for the dependency rules' project facts.

A notebook that launches a SageMaker job often writes the job's whole ``source_dir`` from its cells
(``%%writefile src/requirements.txt``, ``%%writefile src/compile.py``). Those files exist only inside the
notebook, so the facts that say what a requirements file serves (which files import a package, which keep
their optimum.neuron import) must read them as files of their own: ``dir/src/compile.py`` for a notebook in
``dir/`` (the cell's path is relative to the notebook's folder, where Jupyter runs it). The notebook handler
gives a ``%%writefile`` cell its written name as its path (``src/requirements.txt``), with nothing that says
which notebook holds it: ``fingerprint`` ties the cell to the notebook cells of the same name and text.
"""

from __future__ import annotations

import posixpath
import re

from migrate.textdoc import NOTE_PREFIX

_WRITEFILE = re.compile(r"^%%writefile((?:\s+-a)?)\s+(\S+)\s*$")
_NOTE_LINE = re.compile(rf"^\s*#\s*{re.escape(NOTE_PREFIX)}")


def written_files(sources: list[str]) -> list[tuple[str, str]]:
    """(name as written, body) of each ``%%writefile NAME`` cell; an appending cell (``-a``) is a part of the file
    its name already holds."""
    found: list[tuple[str, str]] = []
    for source in sources:
        head, _, body = source.partition("\n")
        match = _WRITEFILE.match(head.strip())
        if match is None:
            continue
        name = match.group(2).strip("'\"")
        earlier = next((index for index, (other, _) in enumerate(found) if other == name), None)
        if match.group(1) and earlier is not None:
            found[earlier] = (name, found[earlier][1] + "\n" + body)
        else:
            found.append((name, body))
    return found


def fingerprint(text: str) -> str:
    """The text of a written file without the tool's own notes and blank lines: the same before and after a run
    that only adds notes, so a cell is recognised on a second run too."""
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip() and not _NOTE_LINE.match(line))


def resolved(notebook: str, name: str) -> str:
    """The project path of the file ``name`` that the notebook at ``notebook`` writes (relative to its folder)."""
    folder = posixpath.dirname(notebook)
    return posixpath.normpath(posixpath.join(folder, name)) if folder else posixpath.normpath(name)
