"""NM208 (rt7L L3, L10, L1): the reads of a value the rule rewrites follow it. ``x = training_args.trn_config``
becomes the DistributedConfig (None at degree 1), so ``x.tensor_parallel_size`` becomes the moved degree and
``x.pipeline_parallel_size`` 1 (or the moved field); a use of ``x`` the replacement may not serve keeps the binding
with a todo. ``training_args.use_xser`` moves into the script's dataclass with optimum's default. Reads on the
arguments a project function returns (``args = sft_args(cfg)``) follow the field map (``max_seq_length`` ->
``max_length``)."""

from tests.rules.case import findings, migrate

HEAD = """
from dataclasses import dataclass

from optimum.neuron import NeuronHfArgumentParser, NeuronTrainingArguments


@dataclass
class ModelArguments:
    model_id: str = "m"


parser = NeuronHfArgumentParser((ModelArguments, NeuronTrainingArguments))
model_args, training_args = parser.parse_args_into_dataclasses()
"""


def test_trn_config_alias_reads_follow_the_moved_degree() -> None:
    result = migrate(HEAD + """
trn_config = training_args.trn_config
tp = trn_config.tensor_parallel_size
pp = trn_config.pipeline_parallel_size
""", "NM208", family="NM2")
    assert "tp = model_args.tensor_parallel_size\n" in result.text
    assert "pp = 1\n" in result.text
    assert "trn_config = (DistributedConfig(tp_size=model_args.tensor_parallel_size" in result.text
    assert {(14, "fixed"), (15, "fixed"), (16, "fixed")} <= findings(result, "NM208")


def test_pipeline_size_follows_the_field_where_it_moved() -> None:
    result = migrate(HEAD + """
trn_config = training_args.trn_config
stages = trn_config.pipeline_parallel_size
print(training_args.pipeline_parallel_size)
""", "NM208", family="NM2")
    assert "stages = model_args.pipeline_parallel_size\n" in result.text
    assert "    pipeline_parallel_size: int = 1\n" in result.text


def test_chained_trn_config_read_becomes_the_degree() -> None:
    result = migrate(HEAD + """
print(training_args.trn_config.tensor_parallel_size)
""", "NM208", family="NM2")
    assert "print(model_args.tensor_parallel_size)\n" in result.text
    assert "import DistributedConfig" not in result.text


def test_alias_used_otherwise_keeps_the_binding_with_a_todo() -> None:
    result = migrate(HEAD + """
trn_config = training_args.trn_config
sp = trn_config.sequence_parallel_enabled
""", "NM208", family="NM2")
    assert "trn_config = training_args.trn_config\n" in result.text
    todos = [f.message for f in result.findings if f.rule == "NM208" and f.severity.value == "todo"]
    assert any("trn_config.sequence_parallel_enabled has no stock counterpart" in m for m in todos)


def test_chained_read_of_another_field_is_left_with_a_todo() -> None:
    result = migrate(HEAD + """
print(training_args.trn_config.kv_size_multiplier)
""", "NM208", family="NM2")
    assert "print(training_args.trn_config.kv_size_multiplier)\n" in result.text
    assert (14, "todo") in findings(result, "NM208")


def test_use_xser_read_moves_into_the_script_dataclass() -> None:
    result = migrate(HEAD + """
print(training_args.use_xser)
""", "NM208", family="NM2")
    assert "    use_xser: bool = True\n" in result.text
    assert "print(model_args.use_xser)\n" in result.text


LOADER = """
import dataclasses

from optimum.neuron import NeuronSFTConfig


def build_args(cls, section):
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in section.items() if k in known})


def sft_args(cfg):
    return build_args(NeuronSFTConfig, cfg["sft"])
"""


def test_fields_of_arguments_a_project_function_returns_follow_the_field_map() -> None:
    source = """
from optimum.neuron import NeuronSFTTrainer

from config_loader import sft_args

args = sft_args({"sft": {}})
print(args.max_seq_length)
"""
    project = {"config_loader.py": LOADER, "train.py": source}
    result = migrate(source, "NM208", family="NM2", project=project)
    assert "print(args.max_length)\n" in result.text
    assert (6, "fixed") in findings(result, "NM208")
