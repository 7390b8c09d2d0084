"""NM901 optimum-neuron-leftovers: every optimum-neuron reference left after the run is reported, uses of its
classes included when the file keeps the import that binds them."""

from __future__ import annotations

from tests.rules.case import findings, migrate, unchanged

RULE = "NM901"


def test_a_kept_import_and_each_use_of_its_classes_are_reported():
    result = migrate("""
        import optimum.neuron

        def load(task, path):
            model_class = eval(f"optimum.neuron.NeuronModelFor{task}")
            return model_class

        def export(path):
            NeuronModel = load("SequenceClassification", path)
            model = NeuronModel.from_pretrained(path, export=True)
            return model
    """, RULE)
    # one todo and one note per distinct message: the second use of the class is in the report as information
    assert findings(result, RULE) == {(1, "todo"), (8, "todo"), (9, "info")}
    assert result.text.count("an optimum-neuron class (this file still imports optimum.neuron)") == 1


def test_neuron_named_classes_without_an_optimum_import_are_not_reported():
    source = """
        class NeuronModelWrapper:
            pass

        model = NeuronModelWrapper()
    """
    result = migrate(source, RULE)
    assert findings(result, RULE) == set()


def test_a_file_left_whole_reports_its_class_uses_as_information():
    result = migrate("""
        # neuron-migrate: Inf1 flow (torch.neuron.trace): the inference rules leave this file as it is
        from optimum.neuron import NeuronModelForSequenceClassification

        model = NeuronModelForSequenceClassification.from_pretrained("model_dir")
    """, RULE)
    assert (4, "info") in findings(result, RULE)
    assert result.text.count("neuron-migrate:") == 2  # the file's note and the import's; no note for line 4


def test_one_todo_and_one_note_per_distinct_message_in_a_file():
    result = migrate("""
        from optimum.neuron.utils.training_utils import _SUPPORTED_MODEL_NAMES
        from optimum.neuron.utils.training_utils import _SUPPORTED_MODEL_TYPES
        from optimum.neuron.utils.training_utils import _generate_supported_model_class_names
    """, RULE)
    assert findings(result, RULE) == {(1, "todo"), (2, "info"), (3, "info")}
    assert result.text.count("# neuron-migrate:") == 1
    repeated = [f.message for f in result.findings if f.severity.value == "info"]
    assert all(m.endswith("(the same as at an earlier line of this file, whose note says it once)") for m in repeated)


COMMAND = '''
COMPILE_CMD = f"""
   {env} neuron_parallel_compile torchrun --nproc_per_node={workers}
   train.py"""
subprocess.run(COMPILE_CMD, shell=True)
'''


def test_a_command_another_rule_already_noted_gets_no_second_note():
    # NM410 writes its note on the statement; the command's second line holds the same neuron_parallel_compile
    from migrate.testing import apply_rules

    result = apply_rules("import subprocess\n" + COMMAND, select=["NM4", "NM9"], path="run.py")
    assert [(f.rule, f.severity.value) for f in result.findings] == [("NM410", "todo")]
    assert result.text.count("neuron_parallel_compile` is still used") == 0


def test_a_note_about_something_else_or_the_sweeps_own_note_does_not_hide_a_leftover():
    from codemods.sweep.nm901_optimum_neuron_leftovers import NPC_MESSAGE, OptimumNeuronLeftovers
    from migrate.filekinds import FileKind
    from migrate.rule import RuleOptions

    rule = OptimumNeuronLeftovers(RuleOptions())
    for note in ("# neuron-migrate: review NEURON_CC_FLAGS: TorchNeuron still passes it to neuronx-cc; drop --lnc=2",
                 f"# neuron-migrate: {NPC_MESSAGE}"):  # another rule's on another thing; this rule's from a first run
        hits = list(rule.scan("import subprocess\n" + note + COMMAND, FileKind.PYTHON))
        assert [(hit.line, hit.message) for hit in hits] == [(4, NPC_MESSAGE)], note
    noted = "# neuron-migrate: neuron_parallel_compile ran this command only to extract and compile its graphs"
    assert not list(rule.scan("import subprocess\n" + noted + COMMAND, FileKind.PYTHON))


def test_a_shell_command_noted_on_its_first_line_gets_no_note_on_its_continuation():
    from codemods.sweep.nm901_optimum_neuron_leftovers import OptimumNeuronLeftovers
    from migrate.filekinds import FileKind
    from migrate.rule import RuleOptions

    rule = OptimumNeuronLeftovers(RuleOptions())
    command = "torchrun --nproc_per_node 2 \\\n    $(which neuron_parallel_compile) train.py\n"
    noted = "# neuron-migrate: neuron_parallel_compile ran this command only to extract and compile its graphs\n"
    assert [hit.line for hit in rule.scan("#!/bin/bash\n" + command, FileKind.SHELL)] == [3]
    assert not list(rule.scan("#!/bin/bash\n" + noted + command, FileKind.SHELL))


RAY_LAUNCH = """
    import ray
    from ray.train import ScalingConfig
    from ray.train.torch import TorchTrainer
    from ray.train.torch.xla import TorchXLAConfig


    def main(loop, precompile):
        ray.init()
        trainer = TorchTrainer(
            loop,
            scaling_config=ScalingConfig(num_workers=2, resources_per_worker={"neuron_cores": 1}),
            torch_config=TorchXLAConfig(
                neuron_parallel_compile=precompile,
            ),
        )
        return trainer.fit()
"""


def test_ray_torch_xla_config_gets_a_todo_at_the_config_and_its_import():
    # TorchXLAConfig's backend runs init_process_group("xla") and raises ImportError without torch_xla: the config
    # is named with its replacement, not rewritten (Ray picks the backend string on the driver)
    result = migrate(RAY_LAUNCH, RULE)
    assert findings(result, RULE) == {(4, "todo"), (12, "todo")}
    assert 'TorchConfig(backend=\\"neuron\\")' not in result.text
    note = next(f.message for f in result.findings if f.line == 12)
    assert 'TorchConfig(backend="neuron")' in note and 'backend="gloo"' in note and "drop it" in note
    assert "FI_PROVIDER=efa" in note
    # the neuron_parallel_compile= argument is covered by the config's note: no pre-compile-command note
    assert "rather than running the command it wraps" not in result.text
    assert "torch_config=TorchXLAConfig(" in result.text  # the code is unchanged


def test_ray_torch_config_is_not_reported():
    unchanged("""
        from ray.train.torch import TorchConfig, TorchTrainer

        trainer = TorchTrainer(lambda config: None, torch_config=TorchConfig(backend="gloo"))
    """, RULE)


def test_neuron_parallel_compile_keyword_elsewhere_is_still_reported():
    result = migrate("""
        def run(command, neuron_parallel_compile=False):
            return ["neuron_parallel_compile", *command] if neuron_parallel_compile else command
    """, RULE)
    assert findings(result, RULE) == {(1, "todo"), (2, "info")}  # no TorchXLAConfig in the file: reported as before


def test_an_importorskip_of_optimum_neuron_is_code_with_a_todo() -> None:
    # rt4D 11: the probe skipped the migrated module's test forever; it was reported as prose (docs to update)
    result = migrate("""
        import pytest

        def test_import():
            pytest.importorskip("optimum.neuron")
            assert True
    """, RULE, path="tests/test_smoke.py")
    assert findings(result, RULE) == {(4, "todo")}
    assert 'pytest.importorskip(\\"transformers\\")' not in result.text  # a note, nothing rewritten
    note = next(f.message for f in result.findings if f.rule == RULE)
    assert note.startswith("optimum-neuron is looked up by name here") and "drop the probe" in note


def test_a_mention_in_a_plain_string_is_not_a_lookup() -> None:
    unchanged("""
        def describe():
            return "ported from optimum.neuron"
    """, RULE)


def test_an_unknown_neuron_task_class_points_to_its_auto_class() -> None:
    # rt4D 13: the todo named NM110 and NM201 (causal LM, training) for a speech seq2seq class
    result = migrate("""
        from optimum.neuron import NeuronModelForSpeechSeq2Seq

        def load(path):
            return NeuronModelForSpeechSeq2Seq.from_pretrained(path)
    """, RULE)
    note = next(f.message for f in result.findings if f.rule == RULE and f.line == 4)
    assert "`AutoModelForSpeechSeq2Seq.from_pretrained(model_id)`" in note and "NM120 and NM121" in note
    assert "NM201" not in note


def test_a_class_without_an_auto_class_keeps_the_generic_note() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForWidgets

        def load(path):
            return NeuronModelForWidgets.from_pretrained(path)
    """, RULE)
    note = next(f.message for f in result.findings if f.rule == RULE and f.line == 4)
    assert note.startswith("an optimum-neuron class (this file still imports optimum.neuron)")


def test_an_import_whose_uses_another_rule_explains_gets_no_second_note() -> None:
    # rt4E 9: "no rule could migrate it" on the import, while the note at its only use says exactly what to do
    result = migrate("""
        from optimum.neuron.distributed import lazy_load_for_parallelism

        def build(make):
            # neuron-migrate: lazy_load_for_parallelism left as it is: replace it with a plain load
            with lazy_load_for_parallelism(tensor_parallel_size=2):
                return make()
    """, RULE)
    assert findings(result, RULE) == {(1, "info")}
    assert "no rule could migrate it" not in result.text
    info = next(f.message for f in result.findings if f.rule == RULE)
    assert "another rule's note explains (line 5)" in info


def test_an_import_with_a_use_no_note_explains_keeps_its_todo() -> None:
    result = migrate("""
        from optimum.neuron.distributed import lazy_load_for_parallelism

        def build(make):
            # neuron-migrate: lazy_load_for_parallelism left as it is: replace it with a plain load
            with lazy_load_for_parallelism(tensor_parallel_size=2):
                make()
            return lazy_load_for_parallelism
    """, RULE)
    assert (1, "todo") in findings(result, RULE)


def test_the_auto_class_note_is_written_once_and_a_second_run_keeps_it() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForSpeechSeq2Seq

        def load(path, compiled):
            if compiled:
                return NeuronModelForSpeechSeq2Seq.from_pretrained(path)
            return NeuronModelForSpeechSeq2Seq.from_pretrained(path, export=True)
    """, RULE)  # migrate() checks that a second run changes nothing
    assert result.text.count("`AutoModelForSpeechSeq2Seq.from_pretrained(model_id)`") == 1


COMPILED_CONFIG = "reads the compiled configuration of an optimum-neuron model"


def test_compiled_config_reads_in_a_helper_that_receives_the_model_are_reported():
    """A helper handed the (migrated) model reads its compiled shapes: a stock model has no neuron_config or
    config.neuron, so the helper raises AttributeError; the inference rules only see reads on the name a load binds."""
    result = migrate("""
        def compiled_batch_sizes(model):
            found = getattr(model, "neuron_config", None)
            if found is not None:
                return [found.batch_size]
            return [model.config.neuron["batch_size"]]
    """, RULE, path="bench_utils.py")
    # one todo with its note; the second line with the same message is information
    assert findings(result, RULE) == {(2, "todo"), (5, "info")}
    assert result.text.count(COMPILED_CONFIG) == 1


def test_compiled_config_reads_inside_an_f_string_and_on_self_are_reported():
    result = migrate("""
        class Embedder:
            def __init__(self, model):
                self.model = model
                self.seq_len = self.model.config.neuron["static_sequence_length"]

        def banner(model):
            return f"batch {model.neuron_config.batch_size}"

        def has_shapes(model):
            return hasattr(model.config, "neuron")
    """, RULE, path="embedder.py")
    assert findings(result, RULE) == {(4, "todo"), (7, "info"), (10, "info")}


def test_names_that_only_look_like_a_compiled_config_are_not_reported():
    unchanged("""
        neuron_config = {"batch_size": 1}
        neuron_configs = load_all()
        size = settings.config.neurons
        path = getattr(args, "neuron_config_path", None)
        print(model.config.neuron_count, optimum_config.neuron)
        # TorchNeuron's own device module, not a compiled configuration
        if hasattr(torch, "neuron") and getattr(torch, "neuron").is_available():
            device = "neuron"
    """, RULE, path="settings.py")
