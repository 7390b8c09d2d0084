"""NM316: XLA/Neuron environment variables set from Python are removed, reviewed or renamed, except where the
torch_xla-era code that reads them stays."""

from tests.rules.case import findings, migrate

CC_FLAGS_NOTE = "# neuron-migrate: review NEURON_CC_FLAGS"


def test_literal_cc_flags_without_a_flag_to_drop_get_the_launchers_review_note() -> None:
    # --model-type and the other options neuronx-cc still takes: the review NM405 gives the same export (rt5I 8)
    for value in ("--model-type=transformer --enable-saturate-infinity", " --disable-dge "):
        result = migrate(f'import os\n\nos.environ["NEURON_CC_FLAGS"] = "{value}"\n', "NM316")
        assert findings(result, "NM316") == {(3, "todo")}
        assert "check each flag against the neuronx-cc of your SDK" in result.text


def test_literal_cc_flags_name_each_flag_to_drop() -> None:
    source = ('import os\n\nos.environ["NEURON_CC_FLAGS"] = ("--model-type=transformer --target=trn1 "\n'
              '                                "--cache_dir=/var/cache --retry_failed_compilation")\n')
    result = migrate(source, "NM316")
    assert findings(result, "NM316") == {(3, "todo")}
    note = next(line for line in result.text.splitlines() if CC_FLAGS_NOTE in line)
    assert "drop --target=trn1 (--target is derived by TorchNeuron from the host)" in note
    assert "drop --cache_dir=/var/cache (--cache_dir was the torch_xla persistent cache" in note
    assert "drop --retry_failed_compilation" in note
    assert "--model-type" not in note  # a kept option is not named
    assert 'os.environ["NEURON_CC_FLAGS"] = ("--model-type=transformer --target=trn1 "' in result.text  # kept


def test_cc_flags_computed_at_run_time_keep_the_general_note() -> None:
    # the value is not all here: the flags it ends up with cannot be checked, so the general review note stays
    source = 'import os\n\nos.environ["NEURON_CC_FLAGS"] = os.environ.get("NEURON_CC_FLAGS", "") + " -O1"\n'
    result = migrate(source, "NM316")
    assert findings(result, "NM316") == {(3, "todo")}
    assert "derives --target/--lnc itself; drop those and XLA-era cache flags" in result.text


KEPT_NOTE = ("was left as it is: this file keeps {code} (XLA-era code, left untouched), where it keeps its "
             "torch_xla meaning")
HEAD = 'import os\nimport torch_neuronx\nfrom neuronxcc import nki\n\nos.environ["XLA_USE_BF16"] = "1"\n'


def test_xla_variables_beside_a_kept_trace_stay_with_a_todo() -> None:
    source = '''
        import os
        import torch_neuronx
        from torch_neuronx import trace as aot_trace

        os.environ["XLA_USE_BF16"] = "1"
        os.environ.setdefault("NEURONX_DUMP_TO", "/tmp/dumps")
        os.environ["OPTIMUM_NEURON_COMMON_CACHE"] = "x"
        traced = aot_trace(model, example)
        '''
    result = migrate(source, "NM316")
    assert 'os.environ["XLA_USE_BF16"] = "1"' in result.text  # still read by the trace: not removed
    assert 'os.environ.setdefault("NEURONX_DUMP_TO", "/tmp/dumps")' in result.text  # nor renamed
    assert "OPTIMUM_NEURON_COMMON_CACHE" not in result.text  # optimum-neuron's: the trace never read it
    assert "XLA_USE_BF16 " + KEPT_NOTE.format(code="torch_neuronx.trace") in result.text
    assert findings(result, "NM316") == {(5, "todo"), (6, "todo"), (7, "fixed")}


def test_nki_kernels_pinned_to_the_xla_device_keep_the_variables() -> None:
    for kernel in ('@nki.jit(mode="torchxla")\ndef k(x):\n    return x\n',
                   'k = nki.jit(mode="torchxla")(body)\n',
                   '@torch_neuronx.nki_jit\ndef k(x):\n    return x\n'):
        source = HEAD + kernel
        result = migrate(source, "NM316")
        assert 'os.environ["XLA_USE_BF16"] = "1"' in result.text, kernel
        assert findings(result, "NM316") == {(5, "todo")}, kernel


def test_host_mode_kernels_and_a_file_without_xla_era_code_get_the_porting_todo() -> None:
    for tail in ('@nki.jit(mode="simulation")\ndef k(x):\n    return x\n', 'y = torch_neuronx.__version__\n', ''):
        source = HEAD + tail
        result = migrate(source, "NM316")
        assert "XLA-era code, left untouched" not in result.text, tail
        # no model here carries the precision: kept with the todo the launchers give (one policy, NM403)
        assert "# neuron-migrate: XLA_USE_BF16 was left as it is: TorchNeuron ignores it" in result.text, tail
        assert findings(result, "NM316") == {(5, "todo")}, tail


FSDP_SCRIPT = ("import torch_xla.core.xla_model as xm\n"
               "from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP\n"
               "from {module} import upcast\n\n"
               "model = FSDP(model.to(xm.xla_device()))\n")
HELPER = ('import os\n\nos.environ["XLA_DOWNCAST_BF16"] = "1"\n\n\n'
          'def upcast():\n    return os.environ.get("XLA_DOWNCAST_BF16")\n')
KEPT_WITH = "this module is imported only by code that neuron-migrate leaves on torch_xla as a whole"


def _helper_result(project: dict, path: str = "src/helper.py"):
    return migrate(HELPER, "NM316", path=path, project={path: HELPER, **project})


def test_a_module_imported_only_by_scripts_left_on_torch_xla_keeps_its_settings_with_one_note() -> None:
    result = _helper_result({"src/train.py": FSDP_SCRIPT.format(module="helper")})
    assert result.text.count("# neuron-migrate:") == 1
    assert f"# neuron-migrate: {KEPT_WITH}: src/train.py (XLA FSDP)" in result.text
    assert 'os.environ["XLA_DOWNCAST_BF16"] = "1"' in result.text  # the XLA run still reads it
    assert findings(result, "NM316") == {(3, "todo")}


def test_through_a_package_a_relative_import_and_another_kept_module() -> None:
    # pkg/helper.py is imported by pkg/wrap.py, which only the kept script imports: both stay with it
    project = {"train.py": FSDP_SCRIPT.format(module="pkg.wrap"), "pkg/__init__.py": "",
               "pkg/wrap.py": "from .helper import upcast\n"}
    result = _helper_result(project, path="pkg/helper.py")
    assert f"{KEPT_WITH}: pkg/wrap.py (kept with its own importers)" in result.text


def test_a_module_that_may_run_otherwise_gets_the_porting_notes() -> None:
    kept = {"src/train.py": FSDP_SCRIPT.format(module="helper")}
    ported = "import torch_xla.core.xla_model as xm\nfrom helper import upcast\n\ndevice = xm.xla_device()\n"
    for project in ({},  # no importer in the run
                    {**kept, "src/eval.py": ported},  # a ported script imports it too
                    {**kept, "nb.ipynb": '{"cells": [{"cell_type": "code", "source": ["from helper import upcast"]}]}'},
                    {**kept, "run.sh": "python src/helper.py --check\n"}):  # a launcher runs it
        result = _helper_result(project)
        assert KEPT_WITH not in result.text, project
        assert findings(result, "NM316") == {(3, "todo"), (7, "todo")}, project
    script = HELPER + '\n\nif __name__ == "__main__":\n    upcast()\n'
    result = migrate(script, "NM316", path="src/helper.py", project={"src/helper.py": script, **kept})
    assert KEPT_WITH not in result.text


def test_a_comment_naming_the_module_is_no_launch_and_a_second_run_finds_the_same() -> None:
    # a launcher's note from a first run ("... src/helper.py still read it") names the module in a comment
    kept = {"src/train.py": FSDP_SCRIPT.format(module="helper"),
            "run.sh": "# neuron-migrate: XLA_DOWNCAST_BF16 was left as it is: src/helper.py still reads it\n"
                      "export XLA_DOWNCAST_BF16=1\ntorchrun src/train.py\n"}
    result = _helper_result(kept)
    assert f"{KEPT_WITH}: src/train.py (XLA FSDP)" in result.text


LAUNCHER = '''
    import argparse
    import os
    import subprocess

    parser = argparse.ArgumentParser()
    parser.add_argument("--script", default="./{script}")
    args = parser.parse_args()
    os.environ["NEURON_RT_STOCHASTIC_ROUNDING_EN"] = "1"
    os.environ["XLA_USE_BF16"] = "1"
    subprocess.run(f"torchrun --nproc_per_node=2 {{args.script}}", shell=True, check=True)
    '''
LAUNCHES = "this file launches only project scripts that neuron-migrate leaves on torch_xla as a whole"


def test_a_python_launcher_of_scripts_left_on_torch_xla_keeps_what_it_exports_with_one_note() -> None:
    project = {"src/train.py": FSDP_SCRIPT.format(module="helper"), "src/helper.py": HELPER}
    result = migrate(LAUNCHER.format(script="train.py"), "NM316", path="src/run.py", project=project)
    assert f"# neuron-migrate: {LAUNCHES}: src/train.py (XLA FSDP)" in result.text
    assert result.text.count("# neuron-migrate:") == 1
    assert 'os.environ["XLA_USE_BF16"] = "1"' in result.text  # the kept script still reads it
    assert findings(result, "NM316") == {(8, "todo")}


def test_a_launcher_of_a_ported_script_gets_the_porting_notes() -> None:
    ported = "import torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\n"
    result = migrate(LAUNCHER.format(script="train.py"), "NM316", path="src/run.py", project={"src/train.py": ported})
    assert LAUNCHES not in result.text
    assert findings(result, "NM316") == {(8, "todo"), (9, "todo")}


BF16_SCRIPT = """\
import os

os.environ["XLA_USE_BF16"] = "1"  # full bf16 on the device

import torch
import torch_xla.core.xla_model as xm
from transformers import AutoConfig, AutoModelForCausalLM


def main(args):
    device = xm.xla_device()
    if args.config_name:
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(args.config_name))
    else:
        model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return model, optimizer
"""


def test_a_model_built_once_and_moved_once_carries_the_bf16_setting() -> None:
    result = migrate(BF16_SCRIPT, "NM316")
    assert 'os.environ["XLA_USE_BF16"]' not in result.text
    assert "    model.to(device, dtype=torch.bfloat16)\n" in result.text
    assert findings(result, "NM316") == {(3, "fixed"), (16, "fixed")}
    removed = next(f for f in result.findings if f.rule == "NM316" and f.line == 3)
    assert "the model is moved to the device in bf16 instead" in removed.message


def test_the_bf16_setting_stays_with_the_launchers_todo_where_no_model_carries_it() -> None:
    kept = "# neuron-migrate: XLA_USE_BF16 was left as it is: TorchNeuron ignores it, so removing it alone"
    for old, new in (("AutoModelForCausalLM", "AutoModelForImageClassification"),  # float inputs: a cast each
                     ("    model.to(device)\n", "    model.to(device)\n    model.half()\n"),  # cast twice
                     ("import torch\n", ""),  # `torch` not bound: dtype=torch.bfloat16 would raise NameError
                     ("from_pretrained(args.model_name_or_path)",
                      "from_pretrained(args.model_name_or_path, torch_dtype='auto')"),  # its own dtype
                     ("    return model, optimizer\n",
                      "    return model, optimizer, os.environ.get('XLA_USE_BF16')\n"),  # read: the code decides
                     ("    else:\n        model =", "    else:\n        model = wrap(model)\n        model =")):
        source = BF16_SCRIPT.replace(old, new)
        assert source != BF16_SCRIPT, old
        result = migrate(source, "NM316")
        assert kept in result.text, old
        assert 'os.environ["XLA_USE_BF16"] = "1"' in result.text and "(device, dtype=" not in result.text, old
    # a setting to 0 switched nothing on: removed as before
    result = migrate(BF16_SCRIPT.replace('= "1"', '= "0"'), "NM316")
    assert 'os.environ["XLA_USE_BF16"]' not in result.text and "model.to(device)\n" in result.text
