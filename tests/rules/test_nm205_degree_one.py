"""NM205: a ``lazy_load_for_parallelism`` block whose degree reads the parsed arguments (a field that cannot move)
is removed with a ``fixed`` when every degree the project gives the script is 1: the config keys and the
``--tensor_parallel_size`` flags of the launch lines that run it (redteam-final 9). Any other value, a degree the
script sets itself, or no launch line seen keeps the block with its todo."""

from tests.rules.case import migrate

SCRIPT = """
import sys

from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser
from optimum.neuron import NeuronTrainer as Trainer
from optimum.neuron import NeuronTrainingArguments as TrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism
from transformers import AutoModelForCausalLM

parser = HfArgumentParser(TrainingArguments)
if "--config" in sys.argv:
    (training_args,) = parser.parse_yaml_file(sys.argv[2])
else:
    (training_args,) = parser.parse_args_into_dataclasses()
{extra}
with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
    model = AutoModelForCausalLM.from_pretrained("gpt2")
trainer = Trainer(model=model, args=training_args)
"""

CONFIG = "output_dir: out\nlearning_rate: 1.0e-5\ntensor_parallel_size: {tp}\n"
LAUNCH = "CONFIG=${1:-configs/train.yaml}\ntorchrun --nproc_per_node=32 train.py --config $CONFIG{flags}\n"


def _run(project: dict[str, str], extra: str = ""):
    return migrate(SCRIPT.replace("{extra}", extra), "NM205", family="NM2", project=project)


def _lazy(result) -> list[str]:
    return [f"{f.rule} {f.severity.value} {f.message}" for f in result.findings if "lazy_load" in f.message
            or "tensor_parallel_size" in f.message and f.rule == "NM208"]


def test_every_degree_one_removes_the_block() -> None:
    result = _run({"launch.sh": LAUNCH.replace("{flags}", ""), "configs/train.yaml": CONFIG.format(tp=1)})
    assert "lazy_load_for_parallelism" not in result.text
    assert '\nmodel = AutoModelForCausalLM.from_pretrained("gpt2")\n' in result.text
    assert "distributed_config=" not in "".join(line for line in result.text.splitlines() if not line.startswith("#"))
    said = _lazy(result)
    assert len(said) == 1 and said[0].startswith("NM205 fixed")
    assert "tensor_parallel_size: 1 in configs/train.yaml, the config launch.sh passes" in said[0]


def test_a_launcher_without_a_degree_counts_as_the_default_one() -> None:
    result = _run({"run.sh": "torchrun train.py --output_dir out --tensor_parallel_size 1\n"})
    assert "lazy_load_for_parallelism" not in result.text


def test_a_degree_above_one_keeps_the_block() -> None:
    for project in ({"launch.sh": LAUNCH.replace("{flags}", " --tensor_parallel_size 8"),
                     "configs/train.yaml": CONFIG.format(tp=1)},
                    {"launch.sh": LAUNCH.replace("{flags}", ""), "configs/train.yaml": CONFIG.format(tp=2)},
                    {"run.sh": "torchrun train.py --tensor_parallel_size $TP\n"},
                    {"args.sh": 'ARGS="--tensor_parallel_size 4"\n', "run.sh": "torchrun train.py --output_dir out\n"}):
        result = _run(project)
        assert "with lazy_load_for_parallelism(" in result.text, project
        assert any(line.startswith("NM205 todo") for line in _lazy(result)), project


def test_no_launcher_or_a_degree_set_in_the_script_keeps_the_block() -> None:
    assert "with lazy_load_for_parallelism(" in _run({}).text
    result = _run({"launch.sh": LAUNCH.replace("{flags}", ""), "configs/train.yaml": CONFIG.format(tp=1)},
                  extra="training_args.tensor_parallel_size = 8")
    assert "with lazy_load_for_parallelism(" in result.text
