"""NM121: a Neuron encoder-decoder becomes the stock class with a static-cache generation config."""

from tests.rules.case import findings, migrate, unchanged


def test_seq2seq_model_gets_a_static_cache_generation_config() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForSeq2SeqLM as Seq2Seq

        translator = Seq2Seq.from_pretrained(
            "google/flan-t5-small",
            export=True,
            batch_size=1,
            sequence_length=128,
            num_beams=2,
        )
        """,
        "NM121",
    )
    assert "from transformers import AutoModelForSeq2SeqLM as Seq2Seq, CompileConfig" in result.text
    assert "translator = Seq2Seq.from_pretrained(" in result.text and "export=True" not in result.text
    assert 'translator.generation_config.update(cache_implementation="static", num_beams=2' in result.text
    assert (3, "fixed") in findings(result, "NM121")
    assert (3, "todo") in findings(result, "NM121")


def test_stock_seq2seq_class_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from transformers import AutoModelForSeq2SeqLM

        translator = AutoModelForSeq2SeqLM.from_pretrained("google/flan-t5-small")
        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM121",
    )


T5_CONFIG = """\
T5_MODEL = "google/flan-t5-small"
T5_INPUT_SHAPES = {"batch_size": 1, "sequence_length": 128, "num_beams": 4}
T5_COMPILER_ARGS = {"auto_cast": "matmul", "auto_cast_type": "bf16"}
"""

T5_EXPORT = """
from optimum.neuron import NeuronModelForSeq2SeqLM

from app.config import T5_MODEL, T5_INPUT_SHAPES, T5_COMPILER_ARGS

model = NeuronModelForSeq2SeqLM.from_pretrained(T5_MODEL, export=True, **T5_COMPILER_ARGS, **T5_INPUT_SHAPES)
model.save_pretrained("compiled/t5")
"""


def test_splat_of_a_dict_a_project_module_binds_is_folded_like_inline_keywords() -> None:
    result = migrate(T5_EXPORT, "NM121", path="app/compile_t5.py", project={"app/config.py": T5_CONFIG})
    assert "**T5_" not in result.text.split("import T5_MODEL")[1]  # the splats left the call
    assert "AutoModelForSeq2SeqLM.from_pretrained(T5_MODEL, dtype=torch.bfloat16, device_map=" in result.text
    assert 'generation_config.update(cache_implementation="static", num_beams=4' in result.text
    messages = [f.message for f in result.findings if f.rule == "NM121"]
    assert any("**T5_INPUT_SHAPES (a dict of app/config.py" in m for m in messages)
    assert any("batch_size=1, sequence_length=128" in m for m in messages)  # the shapes became the padding todo
    assert (5, "fixed") in findings(result, "NM121")


def test_splat_nobody_can_read_keeps_the_load_and_its_import() -> None:
    # the dict is changed in place in its module: its keys are not known, a stock call could get auto_cast
    config = T5_CONFIG + 'T5_COMPILER_ARGS.update(optlevel="2")\n'
    result = migrate(T5_EXPORT, "NM121", path="app/compile_t5.py", project={"app/config.py": config})
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("# neuron-migrate"))
    assert code == T5_EXPORT.strip("\n")  # nothing rewritten: the file still runs on optimum-neuron
    assert findings(result, "NM121") == {(5, "todo")}
    (message,) = [f.message for f in result.findings if f.rule == "NM121"]
    assert "`**T5_COMPILER_ARGS` cannot be resolved statically" in message and "TypeError" in message
    assert "**T5_INPUT_SHAPES`" not in message  # that one is readable


def test_splat_of_a_parameter_keeps_the_load_without_a_default_dtype() -> None:
    source = """
        from optimum.neuron import NeuronModelForSeq2SeqLM

        def load(path, **neuron_kwargs):
            return NeuronModelForSeq2SeqLM.from_pretrained(path, export=True, **neuron_kwargs)
        """
    result = migrate(source, "NM121")
    assert "from optimum.neuron import NeuronModelForSeq2SeqLM" in result.text
    assert "NeuronModelForSeq2SeqLM.from_pretrained(path, export=True, **neuron_kwargs)" in result.text
    assert "torch.float32" not in result.text
    assert findings(result, "NM121") == {(4, "todo")}


def test_load_of_a_name_bound_to_the_neuron_class_in_one_branch_gets_the_rewrite() -> None:
    source = """
        import os

        if os.environ.get("SMOKE"):
            from transformers import AutoModelForSeq2SeqLM as ModelCls
        else:
            from optimum.neuron import NeuronModelForSeq2SeqLM as ModelCls

        model = ModelCls.from_pretrained("compiled/t5")
        """
    result = migrate(source, "NM121")
    assert 'model = ModelCls.from_pretrained("compiled/t5", device_map=' in result.text
    assert 'model.generation_config.update(cache_implementation="static"' in result.text
    messages = [f.message for f in result.findings if f.rule == "NM121" and f.severity.value == "todo"]
    assert any("one of the classes `ModelCls` is bound to here" in m and 'if "compiled/t5" is a Neuron-compiled'
               in m for m in messages)
    assert (9, "fixed") not in findings(result, "NM121")  # a compiled folder on the Neuron branch: not complete


def test_a_literal_argument_of_a_model_call_gets_no_device_note() -> None:
    source = """
        from optimum.neuron import NeuronModelForSeq2SeqLM

        model = NeuronModelForSeq2SeqLM.from_pretrained("t5-small", export=True)
        out = model.generate(input_ids=None, num_beams=4)
        more = model.generate(ids, num_beams=4)
        """
    result = migrate(source, "NM121")
    messages = [f.message for f in result.findings if f.rule == "NM121"]
    assert not any("move `None`" in m for m in messages)
    assert any("move `ids` there first" in m for m in messages)  # a name is still a tensor to move


def test_a_compiled_folder_load_keeps_the_file_on_optimum_neuron_naming_its_source() -> None:
    """A folder an export command of the project writes: NM121 does not rewrite the load to its source, so the file
    stays, the todo naming the --model; a folder nothing names stays too (rewritten, both raised OSError)."""
    code = """
    from optimum.neuron import NeuronModelForSeq2SeqLM

    model = NeuronModelForSeq2SeqLM.from_pretrained("compiled/t5")
    """
    result = migrate(code, "NM121", path="summarize.py", project={
        "compile.sh": "optimum-cli export neuron --model t5-small --batch_size 1 --sequence_length 64 compiled/t5\n"})
    assert 'NeuronModelForSeq2SeqLM.from_pretrained("compiled/t5")' in result.text
    assert 'from "t5-small"' in result.text and 'load "t5-small" here with export=True' in result.text
    assert findings(result, "NM121") == {(3, "todo")}
    result = migrate(code, "NM121")
    assert 'NeuronModelForSeq2SeqLM.from_pretrained("compiled/t5")' in result.text
    assert "no optimum-cli export neuron command" in result.text
