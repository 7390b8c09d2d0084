"""NM905 entry-point-on-two-stacks: an entry point whose import closure, after the run, holds a module left on
optimum-neuron / torch_xla and a module the run moved to the stock stack gets one error; a closure on one stack, or a
split no entry point loads, gets none. Runs the engine over a project on disk (a project rule reads every file after
the run)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from migrate.engine import RunOptions, run

RULE = "NM905"
#: a class no rule knows: the module stays on optimum-neuron, with NM901's todo
KEPT = """
    from optimum.neuron import NeuronModelForSomethingNew

    def load_kept(path):
        return NeuronModelForSomethingNew.from_pretrained(path)
"""
#: moved to the stock device expression by NM301 (torch_xla's xla_device)
MOVED = """
    import torch_xla.core.xla_model as xm

    def load_moved(path):
        return path, xm.xla_device()
"""
APP = """
    from kept import load_kept
    from moved import load_moved

    if __name__ == "__main__":
        load_kept("a"), load_moved("b")
"""


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "project"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def _errors(root: Path, write: bool = False) -> dict[str, list[str]]:
    result = run([root], RunOptions(jobs=1, write=write, force=True))
    found = {file.path: [f.message for f in file.findings if f.rule == RULE] for file in result.files}
    for file in result.files:
        assert all(f.severity.value == "error" and f.line == 0 for f in file.findings if f.rule == RULE)
    return {path: messages for path, messages in found.items() if messages}


def test_a_script_importing_a_kept_and_a_moved_module_gets_one_error(tmp_path):
    root = _project(tmp_path, {"kept.py": KEPT, "moved.py": MOVED, "app.py": APP})
    found = _errors(root)
    assert list(found) == ["app.py"]
    [message] = found["app.py"]
    assert "kept.py still imports optimum-neuron (left on the old stack by neuron-migrate)" in message
    assert "while moved.py needs the stock stack" in message and "Migrate kept.py by hand first" in message


def test_the_closure_is_followed_through_modules_and_a_test_file_is_an_entry_point(tmp_path):
    root = _project(tmp_path, {
        "pkg/__init__.py": "", "pkg/kept.py": KEPT, "pkg/moved.py": MOVED,
        "pkg/api.py": "from pkg.kept import load_kept\nfrom .moved import load_moved\n",
        "tests/test_api.py": "from pkg.api import load_kept\n\n\ndef test_load():\n    assert load_kept\n",
    })
    found = _errors(root)
    assert list(found) == ["tests/test_api.py"]
    assert "pkg/kept.py still imports optimum-neuron" in found["tests/test_api.py"][0]


def test_after_a_written_run_a_second_run_says_the_same_and_changes_nothing(tmp_path):
    root = _project(tmp_path, {"kept.py": KEPT, "moved.py": MOVED, "app.py": APP})
    first = _errors(root, write=True)
    written = {path: path.read_text() for path in root.rglob("*.py")}
    assert "torch_xla" not in written[root / "moved.py"]
    assert _errors(root, write=True) == first
    assert {path: path.read_text() for path in root.rglob("*.py")} == written


def test_no_error_when_the_closure_is_on_one_stack_or_no_entry_point_loads_both(tmp_path):
    both_moved = _project(tmp_path / "a", {"one.py": MOVED, "two.py": MOVED.replace("load_moved", "load_two"),
                                           "app.py": "from one import load_moved\nfrom two import load_two\n\n"
                                                     "if __name__ == '__main__':\n    load_moved('a')\n"})
    assert _errors(both_moved) == {}
    only_kept = _project(tmp_path / "b", {"kept.py": KEPT, "moved.py": MOVED,
                                          "app.py": "from kept import load_kept\n\nif __name__ == '__main__':\n"
                                                    "    load_kept('a')\n",
                                          "lib.py": "from kept import load_kept\nfrom moved import load_moved\n"})
    assert _errors(only_kept) == {}  # lib.py loads both but is no entry point; app.py loads one stack only
    no_neuron = _project(tmp_path / "c", {"a.py": "import os\n", "app.py": "import a\n\nif __name__ == '__main__':\n"
                                                                          "    pass\n"})
    assert _errors(no_neuron) == {}


def _findings(root: Path) -> dict[str, list[tuple[str, str]]]:
    result = run([root], RunOptions(jobs=1, write=False, force=True))
    found = {file.path: [(f.severity.value, f.message) for f in file.findings if f.rule == RULE]
             for file in result.files}
    return {path: messages for path, messages in found.items() if messages}


def test_a_kept_module_imported_only_inside_a_function_or_under_except_importerror_is_an_info(tmp_path):
    root = _project(tmp_path, {
        "kept.py": KEPT, "moved.py": MOVED,
        "main.py": "import moved\n\n\ndef serve():\n    import kept\n    return kept.load_kept('c')\n\n\n"
                   "if __name__ == '__main__':\n    print(moved.load_moved('a'))\n",
        "tests/test_moved.py": "import moved\n\n\ndef test_kept():\n    try:\n        import kept\n"
                               "    except ImportError:\n        return\n    assert kept.load_kept\n",
    })
    found = _findings(root)
    assert sorted(found) == ["main.py", "tests/test_moved.py"]
    [(severity, message)] = found["main.py"]
    assert severity == "info" and "kept.py inside serve() (main.py, line 5)" in message
    assert "At import time it loads moved.py (the stock stack) only" in message
    [(severity, message)] = found["tests/test_moved.py"]
    assert severity == "info"
    assert "kept.py under try/except ImportError inside test_kept() (tests/test_moved.py, line 6)" in message


def test_module_level_imports_in_an_if_or_the_main_block_still_make_the_error(tmp_path):
    root = _project(tmp_path, {
        "kept.py": KEPT, "moved.py": MOVED,
        "main.py": "import os\nimport moved\n\nif os.environ.get('SERVE'):\n    import kept\n\n"
                   "if __name__ == '__main__':\n    print(moved.load_moved('a'))\n",
        "run.py": "import moved\n\nif __name__ == '__main__':\n    import kept\n    kept.load_kept('a')\n",
        "lib.py": "import moved\n\nif __name__ == '__main__':\n    import kept\n",
        "app.py": "from lib import moved\n\nif __name__ == '__main__':\n    pass\n",
    })
    found = _findings(root)
    # lib.py's main block runs only when lib.py is the script: app.py, importing lib, loads one stack
    assert sorted(found) == ["lib.py", "main.py", "run.py"]
    assert all(severity == "error" for messages in found.values() for severity, _ in messages)


def test_a_typing_only_import_or_a_guarded_legacy_import_in_the_module_loads_nothing_old(tmp_path):
    guarded = ("try:\n    from optimum.neuron import NeuronModelForSomethingNew\nexcept ImportError:\n"
               "    NeuronModelForSomethingNew = None\n")
    root = _project(tmp_path, {
        "kept.py": KEPT, "moved.py": MOVED, "optional.py": guarded,
        "main.py": "from typing import TYPE_CHECKING\n\nimport moved\nimport optional\n\nif TYPE_CHECKING:\n"
                   "    import kept\n\nif __name__ == '__main__':\n    print(moved.load_moved('a'), optional)\n",
    })
    assert _findings(root) == {}


def test_a_module_whose_rewrite_runs_on_either_stack_is_not_moved(tmp_path):
    # final check N3: NM305 makes xm.master_print a rank-0 print, which the old stack runs too; the entry point
    # loads both modules in one environment, so there is no split to report
    either = """
        import torch_xla.core.xla_model as xm

        def log(msg):
            xm.master_print(msg)
    """
    app = """
        from kept import load_kept
        from logutil import log

        if __name__ == "__main__":
            log(load_kept("a"))
    """
    root = _project(tmp_path, {"kept.py": KEPT, "logutil.py": either, "app.py": app})
    result = run([root], RunOptions(jobs=1, write=True, force=True))
    assert "torch_xla" not in (root / "logutil.py").read_text()  # the rewrite was made
    assert not [f for file in result.files for f in file.findings if f.rule == RULE]
