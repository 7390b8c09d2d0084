"""``migrate.needed_imports.place_imports``: lines the rules wrote join the module's own ``from m import``, and
scheduled imports go above the project's own imports."""

from __future__ import annotations

from pathlib import PurePath

import libcst as cst

from migrate.needed_imports import place_imports
from migrate.rule import ImportMap


def placed(original: str, rewritten: str, needed=(), files=frozenset(), path: str = "train.py") -> str:
    """``rewritten`` (what the traversal made of ``original``) once the imports are placed."""
    before = cst.parse_module(original)
    module = cst.parse_module(rewritten)
    return place_imports(module, list(needed), ImportMap.from_module(before), before, PurePath(path), files).code


def test_a_written_line_joins_the_users_line() -> None:
    original = "from transformers import AutoTokenizer\nfrom optimum.neuron import NeuronTrainer as Trainer\nx = 1\n"
    rewritten = "from transformers import AutoTokenizer\nfrom transformers import Trainer\nx = 1\n"
    assert placed(original, rewritten) == "from transformers import AutoTokenizer, Trainer\nx = 1\n"


def test_the_users_duplicates_stay_and_the_first_one_takes_the_written_names() -> None:
    original = (
        "from transformers import AutoTokenizer\nfrom transformers import set_seed\n"
        "from optimum.neuron import NeuronTrainer as Trainer\n"
    )
    rewritten = (
        "from transformers import AutoTokenizer\nfrom transformers import set_seed\nfrom transformers import Trainer\n"
    )
    assert placed(original, rewritten) == (
        "from transformers import AutoTokenizer, Trainer\nfrom transformers import set_seed\n"
    )


def test_the_users_duplicates_alone_stay() -> None:
    source = "from transformers import AutoTokenizer\nfrom transformers import set_seed\nimport os\n"
    assert placed(source, source) == source


def test_written_lines_join_each_other_and_keep_the_blank_line_above_the_group() -> None:
    original = "import os\n\nfrom optimum.neuron import NeuronTrainer as Trainer, NeuronTrainingArguments as A\nx = 1\n"
    rewritten = (
        "import os\n\nfrom transformers import Trainer\nfrom transformers import TrainingArguments as A\nx = 1\n"
    )
    assert (
        placed(original, rewritten) == "import os\n\nfrom transformers import Trainer, TrainingArguments as A\nx = 1\n"
    )


def test_a_parenthesized_line_gets_one_name_a_line() -> None:
    block = "from transformers import (\n    AutoTokenizer,\n    set_seed,\n)\n"
    original = block + "from optimum.neuron import NeuronTrainer as Trainer\n"
    rewritten = "from transformers import (\n    AutoTokenizer,\n    set_seed,\n)\nfrom transformers import Trainer\n"
    assert (
        placed(original, rewritten)
        == "from transformers import (\n    AutoTokenizer,\n    Trainer,\n    set_seed,\n)\n"  # isort order
    )


def test_a_long_joined_line_is_wrapped() -> None:
    names = ", ".join(f"Name{index}" for index in range(12))
    original = f"from transformers import {names}\nfrom optimum.neuron import NeuronTrainer as Trainer\n"
    rewritten = f"from transformers import {names}\nfrom transformers import Trainer\n"
    result = placed(original, rewritten)
    assert result.startswith("from transformers import (\n    Name0,\n")
    assert result.endswith("    Name11,\n    Trainer,\n)\n")
    compile(result, "train.py", "exec")


def test_a_comment_keeps_the_lines_apart() -> None:
    original = (
        "from transformers import AutoTokenizer\nfrom optimum.neuron import NeuronTrainer as Trainer  # noqa: E402\n"
    )
    rewritten = "from transformers import AutoTokenizer\nfrom transformers import Trainer  # noqa: E402\n"
    assert placed(original, rewritten) == rewritten


def test_a_line_between_binding_the_name_keeps_the_order() -> None:
    original = (
        "from transformers import AutoTokenizer\nfrom mylib import Trainer\n"
        "from optimum.neuron import NeuronTrainer as Trainer\n"
    )
    rewritten = "from transformers import AutoTokenizer\nfrom mylib import Trainer\nfrom transformers import Trainer\n"
    assert placed(original, rewritten) == rewritten


def test_no_join_across_code() -> None:
    head = "from transformers import AutoTokenizer\nsys.path.insert(0, '.')\n"
    original = head + "from optimum.neuron import NeuronTrainer as Trainer\n"
    rewritten = "from transformers import AutoTokenizer\nsys.path.insert(0, '.')\nfrom transformers import Trainer\n"
    assert placed(original, rewritten) == rewritten


def test_a_scheduled_import_goes_above_a_module_of_the_project() -> None:
    source = "import torch\n\nfrom data_utils import load\n\nx = 1\n"
    needed = [("torch.distributed", None, "dist")]
    files = frozenset({"src/train.py", "src/data_utils.py"})
    result = placed(source, source, needed, files, path="src/train.py")
    assert result == "import torch\nimport torch.distributed as dist\n\nfrom data_utils import load\n\nx = 1\n"


def test_a_package_of_the_project_above_the_script_is_local_too() -> None:
    source = "import torch\nfrom app.config import NAME\nx = 1\n"
    files = frozenset({"app/serve.py", "app/config.py"})
    result = placed(source, source, [("os", None, None)], files, path="app/serve.py")
    assert result == "import os\n\nimport torch\nfrom app.config import NAME\nx = 1\n"


def test_a_relative_import_is_local() -> None:
    source = "import torch\nfrom . import helpers\nx = 1\n"
    assert placed(source, source, [("os", None, None)]) == "import os\n\nimport torch\nfrom . import helpers\nx = 1\n"


def test_without_the_projects_files_the_imports_go_after_the_block() -> None:
    source = "import torch\nfrom data_utils import load\nx = 1\n"
    assert (
        placed(source, source, [("os", None, None)])
        == "import os\n\nimport torch\nfrom data_utils import load\n\nx = 1\n"  # data_utils: third party here
    )


def test_a_name_joins_its_module_below_the_local_import() -> None:
    source = "import torch\nfrom data_utils import load\nfrom transformers import AutoTokenizer\nx = 1\n"
    files = frozenset({"train.py", "data_utils.py"})
    result = placed(source, source, [("transformers", "Trainer", None)], files)
    assert (
        result == "import torch\nfrom data_utils import load\nfrom transformers import AutoTokenizer, Trainer\nx = 1\n"
    )


DIST = ("torch.distributed", None, "dist")
DRIVER = "import argparse\n\nfrom ray.train.torch import TorchTrainer\n\n\n"


def test_a_function_importing_the_package_gets_the_import_beside_its_own() -> None:
    worker = "def worker():\n    import torch\n    from ray import train\n\n    x = torch.ones(1)\n"
    worker += "    dist.all_reduce(x)\n"
    result = placed(DRIVER + worker, DRIVER + worker, [DIST, ("torch", None, None)])
    # `ray.train.torch` of a module-level import is no use of `torch`: the driver stays without torch
    assert result == DRIVER + worker.replace("import torch\n", "import torch\n    import torch.distributed as dist\n")


def test_a_function_using_it_without_importing_the_package_needs_the_top_import() -> None:
    source = (
        DRIVER + "def worker():\n    import torch\n    dist.barrier()\n\n\ndef report():\n    return dist.get_rank()\n"
    )
    result = placed(source, source, [DIST])
    assert result.startswith(
        "import argparse\n\nimport torch.distributed as dist\nfrom ray.train.torch import TorchTrainer\n"
    )
    assert result.count("import torch.distributed as dist") == 1


def test_a_decorator_reads_it_at_module_level() -> None:
    source = "import os\n\n\ndef main():\n    import torch\n    return torch.ones(1)\n\n\n"
    source += "@torch.no_grad()\ndef f():\n    pass\n"
    result = placed(source, source, [("torch", None, None)])
    assert result.startswith("import os\n\nimport torch\n")
    assert result.count("import torch\n") == 2  # the user's own, in main, stays


def test_a_class_body_reads_it_at_module_level() -> None:
    source = "import os\n\n\ndef main():\n    import torch\n\n\nclass Config:\n    dtype = torch.float32\n"
    assert placed(source, source, [("torch", None, None)]).startswith("import os\n\nimport torch\n")


def test_a_new_line_takes_its_sorted_place_in_its_sections_group() -> None:
    source = "import argparse\n\nimport ray\nimport torch\nfrom ray.train.torch import TorchTrainer\n\nx = 1\n"
    assert placed(source, source, [DIST]) == (
        "import argparse\n\nimport ray\nimport torch\nimport torch.distributed as dist\n"
        "from ray.train.torch import TorchTrainer\n\nx = 1\n"
    )


def test_a_stdlib_line_goes_before_the_one_it_sorts_before() -> None:
    assert placed("import time\n\nx = 1\n", "import time\n\nx = 1\n", [("os", None, None)]) == (
        "import os\nimport time\n\nx = 1\n"
    )


def test_a_section_without_a_group_gets_one_in_isort_order() -> None:
    source = '"""Doc."""\nimport torch\nfrom transformers import Trainer\n\nx = 1\n'
    assert placed(source, source, [("os", None, None)]) == (
        '"""Doc."""\nimport os\n\nimport torch\nfrom transformers import Trainer\n\nx = 1\n'
    )


def test_a_joined_name_takes_its_sorted_place() -> None:
    source = "import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\nx = 1\n"
    assert placed(source, source, [("transformers", "CompileConfig", None)]) == (
        "import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer, CompileConfig\n\nx = 1\n"
    )
    original = "from transformers import AutoTokenizer\nfrom optimum.neuron import NeuronModelForCausalLM\n"
    rewritten = "from transformers import AutoTokenizer\nfrom transformers import AutoModelForCausalLM\n"
    assert placed(original, rewritten) == "from transformers import AutoModelForCausalLM, AutoTokenizer\n"


def test_the_users_unsorted_lines_and_names_stay_as_they_are() -> None:
    source = "import time\nimport argparse\nfrom transformers import Trainer, AutoTokenizer\n\nx = 1\n"
    assert placed(source, source, [("os", None, None), ("transformers", "CompileConfig", None)]) == (
        "import time\nimport argparse\nfrom transformers import CompileConfig, Trainer, AutoTokenizer\nimport os\n\n"
        "x = 1\n"
    )


def test_a_group_with_a_comment_is_left_alone() -> None:
    source = "import time  # clock\nimport sys\n\nx = 1\n"
    assert placed(source, source, [("os", None, None)]) == "import time  # clock\nimport sys\nimport os\n\nx = 1\n"


_PRELUDE = (
    "import os\n\n"
    "# must be set before torch is imported\n"
    'os.environ["XLA_USE_BF16"] = "1"\n'
    'os.environ.setdefault("NEURON_CC_FLAGS", "--model-type=transformer")\n\n'
    "import argparse\n\n"
    "import torch\n"
    "from torch.utils.data import DataLoader\n\n"
    "x = 1\n"
)


def test_a_new_import_goes_after_a_top_of_module_environment_prelude() -> None:
    result = placed(_PRELUDE, _PRELUDE, [("torch.distributed", None, "dist")])
    assert result.startswith("import os\n\n# must be set before torch is imported\n")
    assert "import torch\nimport torch.distributed as dist\nfrom torch.utils.data import DataLoader\n" in result
    assert result.index("import torch.distributed") > result.index('os.environ.setdefault(')


def test_a_prelude_whose_block_imports_the_package_keeps_the_top_placement() -> None:
    original = "import os\nimport torch\n\nos.environ['A'] = '1'\nimport numpy\n\nx = 1\n"
    result = placed(original, original, [("torch.distributed", None, "dist")])
    assert result.index("import torch.distributed as dist") < result.index("os.environ")


def test_settings_after_the_imports_are_no_prelude() -> None:
    original = "import os\nimport torch\n\nos.environ['A'] = '1'\nx = 1\n"
    result = placed(original, original, [("sys", None, None)])
    assert result.index("import sys") < result.index("os.environ")
