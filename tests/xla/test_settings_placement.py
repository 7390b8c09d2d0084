"""codemods/_lib/settings.py: process-wide settings go to the entry point, once, and keep a lazy torch import lazy."""

from __future__ import annotations

from pathlib import PurePath

import libcst as cst

from codemods._lib.settings import place
from migrate.rule import ImportMap, PythonContext, RuleOptions

LINES = ["torch._dynamo.config.automatic_dynamic_shapes = False", 'os.environ.setdefault("HF_DEACTIVATE_ASYNC_LOAD", "1")']


def _place(source: str):
    module = cst.parse_module(source)
    ctx = PythonContext(path=PurePath("x.py"), source=source, options=RuleOptions(), imports=ImportMap.from_module(module))
    new, placed = place(module, ctx, LINES, "settings")
    return new.code, placed, ctx.needed_imports


def test_main_guard_gets_the_settings():
    code, placed, imports = _place("import torch\n\ndef main():\n    pass\n\nif __name__ == '__main__':\n    main()\n")
    assert placed and code.index("automatic_dynamic_shapes") > code.index("__main__")
    assert ("os", None, None) in imports


def test_main_function_without_guard():
    code, placed, _ = _place('import torch\n\ndef main():\n    """Run."""\n    train()\n')
    assert placed and code.index('"""Run."""') < code.index("automatic_dynamic_shapes") < code.index("train()")


def test_library_module_gets_nothing():
    source = "import torch\n\ndef helper(x):\n    return x\n"
    code, placed, _ = _place(source)
    assert not placed and code == source


def test_lazy_torch_stays_lazy():
    code, placed, imports = _place("def main():\n    import torch\n    train(torch)\n\nif __name__ == '__main__':\n    main()\n")
    assert placed and ("torch", None, None) not in imports
    guard = code[code.index("__main__"):]
    assert "import torch" in guard and guard.index("import torch") < guard.index("automatic_dynamic_shapes")
    compile(code, "x.py", "exec")


def test_script_without_entry_point_gets_them_after_imports():
    code, placed, imports = _place("import torch\nmodel = torch.nn.Linear(2, 2)\n")
    assert placed and code.index("automatic_dynamic_shapes") < code.index("model =") and ("torch", None, None) in imports
