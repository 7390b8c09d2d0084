"""NM413: accelerate configs with distributed_type XLA become MULTI_NEURON (NO for one process), TPU keys go."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from codemods.launch._base import MESH_COUNT
from codemods.launch.nm413_accelerate_config import DOWNCAST_ON, NPROC_TODO
from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from tests.rules.case import findings, migrate, unchanged

TRN1 = """\
    # accelerate config for a single trn1.32xlarge (32 NeuronCores)
    compute_environment: LOCAL_MACHINE
    debug: false
    distributed_type: XLA
    downcast_bf16: 'no'
    machine_rank: 0
    main_training_function: main
    mixed_precision: bf16
    num_machines: 1
    num_processes: 32  # all cores
    rdzv_backend: static
    same_network: true
    tpu_env: []
    tpu_use_cluster: false
    tpu_use_sudo: false
    use_cpu: false
"""

NOTE = "# neuron-migrate: "
NPROC_NOTE = NOTE + NPROC_TODO.format(value="32", advice=MESH_COUNT)
TRN1_AFTER = f"""\
    # accelerate config for a single trn1.32xlarge (32 NeuronCores)
    compute_environment: LOCAL_MACHINE
    debug: false
    distributed_type: MULTI_NEURON
    machine_rank: 0
    main_training_function: main
    mixed_precision: bf16
    num_machines: 1
    {NPROC_NOTE}
    num_processes: 32  # all cores
    rdzv_backend: static
    same_network: true
    use_cpu: false
"""


def _yaml(source: str, **options):
    return migrate(source, "NM413", kind=FileKind.YAML, path="configs/trn1.yaml", **options)


def test_xla_config_becomes_multi_neuron_and_loses_its_tpu_keys() -> None:
    result = _yaml(TRN1)
    assert result.text == textwrap.dedent(TRN1_AFTER)
    assert "num_processes: 32 looks like a trn1 NeuronCore count" in NPROC_NOTE
    assert findings(result, "NM413") == {(4, "fixed"), (5, "fixed"), (13, "fixed"), (14, "fixed"), (15, "fixed"),
                                         (10, "todo")}


def test_downcast_on_is_removed_with_a_precision_todo() -> None:
    result = _yaml("""\
        compute_environment: LOCAL_MACHINE
        distributed_type: 'TPU'
        downcast_bf16: yes
        mixed_precision: bf16
        num_processes: 8
    """)
    assert result.text == textwrap.dedent(f"""\
        compute_environment: LOCAL_MACHINE
        distributed_type: 'MULTI_NEURON'
        {NOTE}{DOWNCAST_ON.format(value="yes")}
        mixed_precision: bf16
        num_processes: 8
    """)  # 8 processes in a file that names no trn1 instance: no core-count todo
    assert findings(result, "NM413") == {(2, "fixed"), (3, "todo")}
    assert "XLA_DOWNCAST_BF16" in DOWNCAST_ON and "load the model with dtype=torch.bfloat16" in DOWNCAST_ON


def test_one_process_becomes_no_and_block_lists_go_with_their_key() -> None:
    result = _yaml("""\
        compute_environment: LOCAL_MACHINE
        distributed_type: XLA
        num_processes: 1
        tpu_env:
        - XLA_USE_BF16=1

        - XLA_FLAGS=--xla_dump_to=/tmp
        # the pod's commands
        commands:
          - pip install -r requirements.txt
          # (one more)
          - echo done
        use_cpu: false
    """)
    assert result.text == textwrap.dedent("""\
        compute_environment: LOCAL_MACHINE
        distributed_type: 'NO'
        num_processes: 1
        # the pod's commands
        use_cpu: false
    """)
    assert yaml.safe_load(result.text) == {"compute_environment": "LOCAL_MACHINE", "distributed_type": "NO",
                                           "num_processes": 1, "use_cpu": False}


def test_json_config_is_edited_line_by_line() -> None:
    source = """\
        {
          "compute_environment": "LOCAL_MACHINE",
          "distributed_type": "XLA",
          "num_processes": 32,
          "tpu_vm": [
            "vm-1"
          ],
          "downcast_bf16": true
        }
    """
    result = migrate(source, "NM413", kind=FileKind.JSON, path="accelerate.json")
    assert json.loads(result.text) == {"compute_environment": "LOCAL_MACHINE", "distributed_type": "MULTI_NEURON",
                                       "num_processes": 32}
    assert result.text == textwrap.dedent("""\
        {
          "compute_environment": "LOCAL_MACHINE",
          "distributed_type": "MULTI_NEURON",
          "num_processes": 32
        }
    """)
    assert findings(result, "NM413") == {(3, "fixed"), (5, "fixed"), (8, "todo"), (4, "todo")}


def test_json_on_one_line_gets_a_todo_and_stays() -> None:
    source = '{"compute_environment": "LOCAL_MACHINE", "distributed_type": "XLA", "num_processes": 2}\n'
    result = migrate(source, "NM413", kind=FileKind.JSON, path="accelerate.json")
    assert result.text == source
    assert findings(result, "NM413") == {(1, "todo")}


def test_a_second_run_reports_the_core_count_again() -> None:
    once = _yaml(TRN1)
    again = _yaml(once.text)
    assert again.text == once.text
    assert findings(again, "NM413") == {(10, "todo")}  # the num_processes line of the output


def test_config_stays_on_xla_while_a_script_it_launches_stays_on_torch_xla() -> None:
    project = {
        "train.py": "import torch_xla.core.xla_model as xm\n"
                    "from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP\nmodel = FSDP(model)\n",
        "Makefile": "train:\n\taccelerate launch --config_file $(CONFIG) \\\n\t\ttrain.py --lr 1\n",
    }
    result = _yaml(TRN1, project=project)
    assert result.text.replace(
        "# neuron-migrate: distributed_type: XLA was left as it is: accelerate launch runs train.py here, which "
        "neuron-migrate left on torch_xla as a whole (it keeps XLA FSDP), and that script needs the XLA launcher; "
        "once it runs on TorchNeuron, set distributed_type: MULTI_NEURON (NO for one process) and remove "
        "tpu_use_cluster, tpu_use_sudo, tpu_env, downcast_bf16\n", "") == textwrap.dedent(TRN1)
    assert findings(result, "NM413") == {(4, "todo")}
    # the same script started by torchrun, not by accelerate launch: the config is edited
    project["Makefile"] = "train:\n\ttorchrun --nproc_per_node 2 train.py\n"
    assert _yaml(TRN1, project=project).text == textwrap.dedent(TRN1_AFTER)


def test_config_stays_on_xla_while_a_script_it_launches_stays_on_optimum_neuron() -> None:
    """rt5I 2: the script stays on optimum-neuron after the run (an optimum.neuron use no rule ports), so NM501 holds
    the requirements on the accelerate pinned beside it, whose DistributedType has no MULTI_NEURON: the config stays
    on XLA with a todo, as NM401-NM405 keep that script's launcher settings."""
    script = ("from optimum.neuron import NeuronAccelerator\n"
              "from optimum.neuron.accelerate.utils import ModelParallelismPlugin\n\n"
              "plugin = ModelParallelismPlugin(tensor_parallel_size=2)\n"
              "accelerator = NeuronAccelerator(mp_plugin=plugin)\n"
              "print(plugin.tensor_parallel_size)\n")
    project = {"train.py": script,
               "Makefile": "train:\n\taccelerate launch --config_file $(CONFIG) train.py --lr 1\n"}
    result = apply_rules(textwrap.dedent(TRN1), FileKind.YAML, select=["NM2", "NM4", "NM7"],
                         path="accelerate_config.yaml", project=project)
    [todo] = [finding for finding in result.findings if finding.rule == "NM413"]
    assert todo.line == 4 and todo.severity.value == "todo"
    assert todo.message.startswith("distributed_type: XLA was left as it is: accelerate launch runs train.py here, "
                                   "which stays on optimum-neuron after this run")
    assert "distributed_type: XLA" in result.text and "MULTI_NEURON\n" not in result.text
    # once the run ports the script (nothing else reads the plugin: it goes with the keyword), the config moves
    project["train.py"] = script.replace("print(plugin.tensor_parallel_size)\n", "")
    moved = apply_rules(textwrap.dedent(TRN1), FileKind.YAML, select=["NM2", "NM4", "NM7"],
                        path="accelerate_config.yaml", project=project)
    assert "distributed_type: MULTI_NEURON" in moved.text


@pytest.mark.parametrize("source", [
    # another distributed type: accelerate's own launcher for it
    """\
        compute_environment: LOCAL_MACHINE
        distributed_type: MULTI_GPU
        num_processes: 32
        downcast_bf16: 'no'
        tpu_env: []
    """,
    # distributed_type nested: not an accelerate config
    """\
        job:
          distributed_type: XLA
          num_processes: 32
        mixed_precision: bf16
    """,
    # a top-level distributed_type with none of accelerate's other keys
    """\
        distributed_type: XLA
        tpu_env: []
    """,
    # not a spelling accelerate accepts (DistributedType("xla") raises)
    """\
        compute_environment: LOCAL_MACHINE
        distributed_type: xla
        num_processes: 32
    """,
])
def test_other_configs_stay(source: str) -> None:
    unchanged(source, "NM413", kind=FileKind.YAML, path="config.yaml")


def test_other_json_configs_stay() -> None:
    unchanged('{\n  "compute_environment": "LOCAL_MACHINE",\n  "distributed_type": "FSDP",\n  "num_processes": 32\n}\n',
              "NM413", kind=FileKind.JSON, path="fsdp.json")
    unchanged('{\n  "model": {\n    "distributed_type": "XLA",\n    "num_processes": 32\n  }\n}\n', "NM413",
              kind=FileKind.JSON, path="nested.json")


def test_a_tpu_project_keeps_its_config() -> None:
    unchanged(TRN1, "NM413", kind=FileKind.YAML, path="configs/trn1.yaml", neuron_project=False)


# ------------------------------------------------------------------- accelerate itself reads the result


def test_accelerate_loads_the_result_and_launches_it_through_torchrun(tmp_path: Path) -> None:
    config_args = pytest.importorskip("accelerate.commands.config.config_args")
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils import DistributedType

    before, after = tmp_path / "before.yaml", tmp_path / "after.yaml"
    before.write_text(textwrap.dedent(TRN1))
    after.write_text(_yaml(TRN1).text.replace("num_processes: 32", "num_processes: 2"))
    script = tmp_path / "show_rank.py"
    # each rank writes its own file: two processes printing to one pipe can interleave their characters
    script.write_text("import os, pathlib\n"
                      "rank, world = os.environ['RANK'], os.environ['WORLD_SIZE']\n"
                      "pathlib.Path(f'rank{rank}.txt').write_text(f'rank {rank} of {world}')\n")

    def launch_args(path: Path):
        args = launch_command_parser().parse_args(["--config_file", str(path), str(script)])
        return _validate_launch_command(args)[0]

    assert config_args.load_config_from_file(str(before)).distributed_type is DistributedType.XLA
    assert launch_args(before).tpu  # the TPU launcher, which imports torch_xla
    assert config_args.load_config_from_file(str(after)).distributed_type is DistributedType.MULTI_NEURON
    args = launch_args(after)
    assert args.multi_gpu and not args.tpu and not args.tpu_use_cluster  # the torchrun launcher
    one = tmp_path / "one.yaml"
    one.write_text(_yaml(TRN1.replace("num_processes: 32", "num_processes: 1")).text)
    assert config_args.load_config_from_file(str(one)).distributed_type is DistributedType.NO
    args = launch_args(one)
    assert not args.multi_gpu and not args.tpu  # the plain launcher: one process

    # and it runs: two processes through torchrun, no torch_xla anywhere
    run = subprocess.run([sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(after), str(script)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(f.read_text() for f in tmp_path.glob("rank*.txt")) == ["rank 0 of 2", "rank 1 of 2"]
