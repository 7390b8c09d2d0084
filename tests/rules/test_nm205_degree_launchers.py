"""NM205's degree-one removal (codemods/_lib/zero_1.py, ``degree_one``) sees a launch line that runs the script
through a same-file variable in the command word (``TORCHRUN="torchrun ..."`` then ``$TORCHRUN train.py``, or the
whole command in ``CMD``) and a launcher that passes no flag at all, and a script that applies command-line
overrides with ``setattr`` over ``sys.argv`` (redteam-final 9, orpo-lora). A variable whose value is not a
launcher, or set in a block, a mention in ``echo``, or a ``setattr`` of a name that is not the command line keeps
the block with its todo."""

import pytest

from tests.rules.case import migrate

SCRIPT = """
import sys

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism
from transformers import AutoModelForCausalLM


def parse(extra):
    parser = HfArgumentParser(TrainingArguments)
    if "--config" in sys.argv:
        idx = sys.argv.index("--config")
        overrides = sys.argv[1:idx] + sys.argv[idx + 2:]
        (args,) = parser.parse_yaml_file(sys.argv[idx + 1])
        for k, v in zip(overrides[::2], overrides[1::2]):
            setattr(args, {name}, type(getattr(args, k.lstrip("-")))(v))
        return args
    (args,) = parser.parse_args_into_dataclasses()
    return args


training_args = parse("seed")
with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
    model = AutoModelForCausalLM.from_pretrained("gpt2")
trainer = Trainer(model=model, args=training_args)
"""
CONFIG = "output_dir: out\ntensor_parallel_size: 1\n"
TORCHRUN = 'NUM_CORES=32\nTORCHRUN="torchrun --nproc_per_node=$NUM_CORES"\n'


def _removed(launch: str, name: str = 'k.lstrip("-")', config: str = CONFIG, launcher: str = "launch.sh") -> bool:
    result = migrate(SCRIPT.replace("{name}", name), "NM205", family="NM2",
                     project={launcher: launch, "configs/train.yaml": config})
    kept = "with lazy_load_for_parallelism(" in result.text
    said = [f.severity.value for f in result.findings if f.rule == "NM205" and "lazy_load" in f.message]
    assert said == (["todo"] if kept else ["fixed"])
    return not kept


@pytest.mark.parametrize("launch", [
    TORCHRUN + "$TORCHRUN train.py --config configs/train.yaml --max_steps 10\n",
    TORCHRUN + "neuron_parallel_compile $TORCHRUN train.py --output_dir out\n${TORCHRUN} train.py --output_dir out\n",
    'CMD="torchrun --nproc_per_node 2 train.py"\n$CMD --output_dir out\n',
    "export LAUNCHER=python3\n$LAUNCHER train.py --output_dir out\n",
    "torchrun --nproc_per_node 2 train.py --output_dir out\n",  # no flag of the recorded ones at all
])
def test_a_launcher_through_a_variable_or_without_flags_runs_it(launch: str) -> None:
    assert _removed(launch)


@pytest.mark.parametrize("launch", [
    'RUNNER="ssh trn-host"\n$RUNNER train.py --output_dir out\n',  # not a launcher
    'if [ -n "$X" ]; then\n  T="torchrun"\nfi\n$T train.py --output_dir out\n',  # set in a block
    'T="torchrun"\nT="$OTHER"\n$T train.py --output_dir out\n',  # two values
    'echo "run: torchrun train.py --output_dir out"\n',  # a mention, not a launch
    "$LAUNCH train.py --output_dir out\n",  # set outside the file
])
def test_an_unresolved_launcher_keeps_the_block(launch: str) -> None:
    assert not _removed(launch)


def test_a_degree_above_one_through_the_variable_keeps_the_block() -> None:
    assert not _removed('CMD="torchrun train.py --tensor_parallel_size 8"\n$CMD --output_dir out\n')
    assert not _removed(TORCHRUN + "$TORCHRUN train.py --config configs/train.yaml\n",
                        config="output_dir: out\ntensor_parallel_size: 4\n")


def test_setattr_of_a_name_not_from_the_command_line_keeps_the_block() -> None:
    launch = TORCHRUN + "$TORCHRUN train.py --config configs/train.yaml\n"
    assert _removed(launch, name='"seed"')
    assert not _removed(launch, name='"tensor_parallel_size"')
    assert not _removed(launch, name="extra")  # a parameter: any name


def test_a_makefile_launcher_variable_runs_it() -> None:
    makefile = "TORCHRUN = torchrun --nproc_per_node 2\n\ntrain:\n\t$(TORCHRUN) train.py --output_dir out\n"
    assert _removed(makefile, launcher="Makefile")
    flags = "ARGS = --output_dir out --tensor_parallel_size 8\n\ntrain:\n\ttorchrun train.py $(ARGS)\n"
    assert not _removed(flags, launcher="Makefile")
