"""The engine carries the launch rules' project fact (which scripts parse Neuron training arguments) from
its scan pass to the rules: a launcher's flags are mapped only for a script of the run that parses them."""

from __future__ import annotations

from pathlib import Path

from migrate.engine import RunOptions, run

NEURON_SCRIPT = (
    "from transformers import HfArgumentParser\n"
    "from optimum.neuron import NeuronTrainingArguments\n"
    "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()\n"
)
OWN_ARGPARSE = "import argparse\nargparse.ArgumentParser().parse_args()\n"
LAUNCHER = "#!/bin/bash\ntorchrun train.py --zero_1 true --output_dir out\ntorchrun bench.py --zero_1 true\n"


def test_the_scan_pass_tells_the_launch_rules_which_script_parses_neuron_arguments(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.sh").write_text(LAUNCHER)
    (tmp_path / "scripts" / "train.py").write_text(NEURON_SCRIPT)
    (tmp_path / "scripts" / "bench.py").write_text(OWN_ARGPARSE)
    # the training rules port train.py in the same run (NM2): its flags are then the stock parser's
    result = run([tmp_path], RunOptions(select=("NM2", "NM4"), write=False, jobs=1))
    assert result.options.write is False
    launcher = next(item for item in result.files if item.path.endswith("run.sh"))
    messages = [finding.message for finding in launcher.findings]
    assert any("ZeRO-1" in message for message in messages)  # train.py: mapped
    assert any(message.startswith("--torch_compile true added") for message in messages)
    assert len([m for m in messages if "ZeRO-1" in m]) == 1  # bench.py has its own argparse: its flag is its own


def test_a_launcher_whose_script_this_run_leaves_on_optimum_neuron_keeps_its_flags(tmp_path: Path) -> None:
    # --select NM4: no rule of this run ports train.py, which keeps parsing NeuronTrainingArguments
    (tmp_path / "run.sh").write_text(LAUNCHER)
    (tmp_path / "train.py").write_text(NEURON_SCRIPT)
    (tmp_path / "bench.py").write_text(OWN_ARGPARSE)
    result = run([tmp_path], RunOptions(select=("NM4",), write=False, jobs=1))
    launcher = next(item for item in result.files if item.path.endswith("run.sh"))
    assert [(f.line, f.severity.value, f.message) for f in launcher.findings if f.rule == "NM408"] == [
        (2, "todo", "train.py stays on optimum-neuron after this run (see its findings): its flags were left as they "
                    "are; port it, then run neuron-migrate again")]


def test_a_launcher_given_alone_keeps_its_flags(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(LAUNCHER)
    (tmp_path / "train.py").write_text(NEURON_SCRIPT)
    result = run([tmp_path / "run.sh"], RunOptions(select=("NM4",), write=False, jobs=1, xla=True))
    findings = result.files[0].findings
    assert findings and all(f.severity.value == "todo" and "was left as it is" in f.message for f in findings)


def _migrated(root: Path, files: dict[str, str], select: tuple[str, ...]) -> tuple[dict[str, str], list]:
    """Write ``files`` under ``root``, migrate them in place with the ``select``ed rules: (the files' new texts,
    the run's file results)."""
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    result = run([root], RunOptions(select=select, write=True, jobs=1))
    return {name: (root / name).read_text() for name in files}, result.files


def _code(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.lstrip().startswith("# neuron-migrate:")]


PY_LAUNCHER = (
    "import os\n"
    "import subprocess\n\n"
    'env = dict(os.environ, XLA_USE_BF16="1")\n'
    'subprocess.run(["XLA_USE_BF16=1", "torchrun", "train.py", "--zero_1", "true", "--output_dir", "out"], check=True)\n'
    'cmd = "torchrun train.py --zero_1 true --output_dir out"\n'
    "os.system(cmd)\n"
)


def test_commands_in_python_strings_keep_the_flags_of_a_script_left_on_optimum_neuron(tmp_path: Path) -> None:
    """NM410 edits command strings and argv lists in Python with the launch rules' edits: for a script no rule of
    the run ports, the flags (and the bf16 variable its torch_xla run reads) stay, with the same todo as a launcher."""
    files = {"launch.py": PY_LAUNCHER, "train.py": NEURON_SCRIPT}
    texts, results = _migrated(tmp_path / "kept", files, ("NM4",))
    assert _code(texts["launch.py"]) == PY_LAUNCHER.splitlines()  # only notes were added
    launcher = next(item for item in results if item.path.endswith("launch.py"))
    assert any("train.py stays on optimum-neuron after this run" in f.message for f in launcher.findings)
    assert not any(f.severity.value == "fixed" for f in launcher.findings)
    texts, results = _migrated(tmp_path / "ported", files, ("NM2", "NM4"))
    launcher = next(item for item in results if item.path.endswith("launch.py"))
    assert any("ZeRO-1" in f.message and f.severity.value == "todo" for f in launcher.findings)
    assert '"--torch_compile", "true"' in texts["launch.py"] and '"--zero_1"' not in texts["launch.py"]


KEPT_LAUNCHER = (
    "#!/bin/bash\n"
    "export NEURON_FUSE_SOFTMAX=1\n"
    "neuron_parallel_compile torchrun train.py --output_dir out --max_steps 10\n"
    "torchrun train.py --output_dir out\n"
    "NEURON_EXTRACT_GRAPHS_ONLY=1 torchrun train.py --output_dir out\n"
)


def test_the_xla_settings_of_a_script_left_on_optimum_neuron_stay(tmp_path: Path) -> None:
    """A script that stays on optimum-neuron after the run still runs on torch_xla: the launcher keeps its compile
    pass, its compile-only run and the XLA-era variables it reads (final check of rt3A glue-trn: without
    NEURON_EXTRACT_GRAPHS_ONLY its COMPILE=1 pass trained for real on the old stack)."""
    files = {"run.sh": KEPT_LAUNCHER, "train.py": NEURON_SCRIPT}
    texts, results = _migrated(tmp_path / "kept", files, ("NM4",))
    assert _code(texts["run.sh"]) == KEPT_LAUNCHER.splitlines()
    launcher = next(item for item in results if item.path.endswith("run.sh"))
    assert not any(f.severity.value == "fixed" for f in launcher.findings)
    texts, _ = _migrated(tmp_path / "ported", files, ("NM2", "NM4"))
    assert _code(texts["run.sh"]) == ["#!/bin/bash", "torchrun train.py --output_dir out"]
