"""NM120: a traced NeuronModelFor<Task> becomes the transformers auto class on the device, compiled."""

import textwrap

from migrate.testing import apply_rules
from tests.rules.case import findings, migrate, unchanged


def test_traced_token_classifier_becomes_the_auto_class() -> None:
    result = migrate(
        """
        from optimum import neuron

        model = neuron.NeuronModelForTokenClassification.from_pretrained(
            "dslim/bert-base-NER", export=True, batch_size=2, sequence_length=32
        )
        """,
        "NM120",
    )
    assert "AutoModelForTokenClassification.from_pretrained(" in result.text
    assert 'model.compile(backend="neuron"' in result.text
    assert "export=True" not in result.text and "NeuronModelFor" not in result.text
    assert (3, "fixed") in findings(result, "NM120")
    assert (3, "todo") in findings(result, "NM120")  # the static shapes the caller must now pad to


def test_stock_auto_class_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron import NeuronTrainer
        from transformers import AutoModelForTokenClassification

        model = AutoModelForTokenClassification.from_pretrained("dslim/bert-base-NER")
        trainer = NeuronTrainer(model=model)  # another rule's business: its import stays
        """,
        "NM120",
    )


def test_load_with_a_splat_nothing_resolves_stays_on_optimum_neuron() -> None:
    source = """
        from optimum.neuron import NeuronModelForSequenceClassification

        def load(path, shapes):
            return NeuronModelForSequenceClassification.from_pretrained(path, export=True, **shapes)
        """
    result = migrate(source, "NM120")
    assert "from optimum.neuron import NeuronModelForSequenceClassification" in result.text
    assert "from_pretrained(path, export=True, **shapes)" in result.text and "dtype=" not in result.text
    (message,) = [f.message for f in result.findings if f.rule == "NM120"]
    assert message.startswith("`**shapes` cannot be resolved statically")


EXPORT_AND_SAVE = """
from optimum.neuron import NeuronModelForFeatureExtraction

compiler_args = {"auto_cast": "matmul", "auto_cast_type": "bf16"}
model = NeuronModelForFeatureExtraction.from_pretrained("sentence-transformers/all-MiniLM-L6-v2", export=True,
                                                        batch_size=8, sequence_length=128, **compiler_args)
model.save_pretrained("compiled/minilm")
"""


def test_a_model_the_file_only_saves_is_not_cast_by_its_auto_cast_type() -> None:
    # rt3A #7: dtype=torch.bfloat16 before save_pretrained wrote bf16 weights to disk for good
    result = migrate(EXPORT_AND_SAVE, "NM120")
    assert "dtype=torch.float32" in result.text and "bfloat16," not in result.text
    assert "is not applied here: this file only saves the model" in result.text
    assert "torch.autocast(<model>.device.type, dtype=torch.bfloat16)" in result.text
    assert "the whole model now runs in that dtype" not in result.text


def test_a_model_the_file_runs_under_a_matmul_only_cast_loads_float32_with_the_choices() -> None:
    # rt5H D4: optimum's outputs stayed float32 under auto_cast="matmul"; dtype=torch.bfloat16 made them bf16
    result = migrate(EXPORT_AND_SAVE.replace('model.save_pretrained("compiled/minilm")',
                                             'print(model(input_ids=ids).last_hidden_state)'), "NM120")
    assert "dtype=torch.float32, device_map" in result.text and "dtype=torch.bfloat16, device_map" not in result.text
    assert 'auto_cast="matmul" cast only the matmuls inside the compiled graph to torch.bfloat16' in result.text
    assert "torch.autocast(<device>.type, dtype=torch.bfloat16)" in result.text
    assert "is not applied here" not in result.text


def test_a_whole_model_cast_keeps_its_dtype() -> None:
    result = migrate(EXPORT_AND_SAVE.replace('"matmul"', '"all"').replace(
        'model.save_pretrained("compiled/minilm")', 'print(model(input_ids=ids).last_hidden_state)'), "NM120")
    assert "dtype=torch.bfloat16" in result.text and "cast only the matmuls" not in result.text


def test_a_seq2seq_model_under_a_matmul_only_cast_keeps_the_cast_dtype() -> None:
    # its outputs are generated tokens: the dtype does not reach the code (NM121 keeps the whole-model cast)
    result = migrate(
        """
        from optimum.neuron import NeuronModelForSeq2SeqLM

        model = NeuronModelForSeq2SeqLM.from_pretrained("t5-small", export=True, batch_size=1, sequence_length=16,
                                                        num_beams=1, auto_cast="matmul", auto_cast_type="bf16")
        print(model.generate(input_ids=ids))
        """,
        "NM121",
    )
    assert "dtype=torch.bfloat16" in result.text and "cast only the matmuls" not in result.text


def test_reads_of_the_compiled_shapes_take_the_exported_literals_or_get_a_todo() -> None:
    # rt3A #5: model.config.neuron[...] / model.input_shapes raised AttributeError on the stock model
    result = migrate(
        """
        from optimum.neuron import NeuronModelForFeatureExtraction

        model = NeuronModelForFeatureExtraction.from_pretrained("m", export=True, batch_size=4, sequence_length=64)
        bs = model.config.neuron["static_input_shapes"]["batch_size"]
        seq = model.input_shapes["sequence_length"]
        cores = model.config.neuron["num_cores"]
        shapes = model.input_shapes
        other = config.neuron["batch_size"]
        """,
        "NM120",
    )
    assert "bs = 4\n" in result.text and "seq = 64\n" in result.text
    assert 'cores = model.config.neuron["num_cores"]' in result.text and "shapes = model.input_shapes" in result.text
    assert result.text.count("has no compiled config: `model.") == 2
    assert "it was exported with the static shapes batch_size=4, sequence_length=64" in result.text
    assert 'other = config.neuron["batch_size"]' in result.text
    got = findings(result, "NM120")
    assert {(4, "fixed"), (5, "fixed"), (6, "todo"), (7, "todo")} <= got and (8, "todo") not in got


def test_reads_of_a_compiled_folder_model_get_a_todo() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForFeatureExtraction

        model = NeuronModelForFeatureExtraction.from_pretrained("compiled/minilm")
        bs = model.config.neuron["static_input_shapes"]["batch_size"]
        """,
        "NM120",
    )
    # a compiled folder of an unknown checkpoint: the file stays on optimum-neuron, where the read still works
    assert 'bs = model.config.neuron["static_input_shapes"]["batch_size"]' in result.text
    assert 'model = NeuronModelForFeatureExtraction.from_pretrained("compiled/minilm")' in result.text
    assert "NM120 leaves this file on optimum-neuron" in result.text
    assert findings(result, "NM120") == {(3, "todo")}


OUTPUTS_TO_NUMPY = """
import numpy as np
import torch
from optimum.neuron import NeuronModelForSequenceClassification
from transformers import AutoTokenizer

model = NeuronModelForSequenceClassification.from_pretrained("m", export=True, batch_size=1, sequence_length=16)
tokenizer = AutoTokenizer.from_pretrained("m")


def classify(texts):
    enc = tokenizer(texts, padding="max_length", max_length=16, return_tensors="pt")
    with torch.no_grad():
        out = model(**enc)
    logits = out.logits.float()
    probs = np.exp(logits.numpy())
    top = np.argmax(logits, axis=-1)
    score = helper(out).numpy()
    labels = logits.argmax(-1).tolist()
    kept = logits.cpu().numpy()
    return probs, top, score, labels, kept
"""


def test_numpy_reads_of_the_outputs_get_cpu_once_the_inputs_follow_the_model() -> None:
    # rt3A #6: inputs moved to model.device, outputs left there: .numpy() raises on any non-CPU device
    result = migrate(OUTPUTS_TO_NUMPY, "NM120")
    assert "probs = np.exp(logits.cpu().numpy())" in result.text
    assert "top = np.argmax(logits.cpu(), axis=-1)" in result.text
    assert "kept = logits.cpu().numpy()" in result.text and "labels = logits.argmax(-1).tolist()" in result.text
    assert "score = helper(out).numpy()" in result.text  # through a function of the file: not certain, a todo
    got = findings(result, "NM120")
    assert {(15, "fixed"), (16, "fixed"), (17, "todo")} <= got and (19, "fixed") not in got


def test_outputs_of_a_model_whose_inputs_were_not_moved_are_left_alone() -> None:
    # the inputs come from elsewhere (a todo at the call): the outputs' device is not the rule's doing
    result = migrate(OUTPUTS_TO_NUMPY.replace('enc = tokenizer(texts, padding="max_length", max_length=16, '
                                              'return_tensors="pt")', "enc = prepare(texts)"), "NM120")
    assert "np.exp(logits.numpy())" in result.text and ".cpu().numpy()" not in result.text.replace(
        "kept = logits.cpu().numpy()", "")


def test_the_export_reader_reads_makefile_variables_and_encoder_shapes() -> None:
    """rt4D 5: the Makefile recipe's `$(CLS_MODEL)` / `$(CLS_OUT)` (``?=``) and `--audio_sequence_length` made the
    command unreadable, so NM120 never saw that the folder was compiled."""
    from codemods.inference._compiled_exports import compiled_exports

    makefile = ("CLS_MODEL ?= org/kws\nCLS_OUT := compiled/kws\n\nexport:\n"
                "\toptimum-cli export neuron --model $(CLS_MODEL) --task audio-classification \\\n"
                "\t\t--batch_size 1 --audio_sequence_length 16000 $(CLS_OUT)\n")
    assert compiled_exports(makefile) == (
        ("compiled/kws", "org/kws", (("batch_size", "1"), ("audio_sequence_length", "16000"))),)
    # a shell `$(...)` is a command substitution, never a Make variable: the command is not recorded
    assert compiled_exports("optimum-cli export neuron --model org/kws $(date +%s)\n") is None
    # a Make variable set twice is unknown
    assert compiled_exports("M ?= a/b\nM ?= c/d\nx:\n\toptimum-cli export neuron --model $(M) out\n") is None


HUB_LOAD = """
from optimum.neuron import NeuronModelForSequenceClassification

model = NeuronModelForSequenceClassification.from_pretrained("org/bert-sst2")
"""


def test_a_load_without_export_of_a_plain_id_keeps_the_file_on_optimum_neuron() -> None:
    """optimum-neuron 0.4.5 reads only *.neuron files without export=True (a plain checkpoint raises
    FileNotFoundError), so the id names compiled artifacts: a stock load of it would raise OSError."""
    result = migrate(HUB_LOAD, "NM120")
    assert "from optimum.neuron import NeuronModelForSequenceClassification" in result.text
    assert 'NeuronModelForSequenceClassification.from_pretrained("org/bert-sst2")' in result.text
    rest = result.text.replace("fail on AutoModelForSequenceClassification", "")
    assert "AutoModelForSequenceClassification" not in rest
    assert findings(result, "NM120") == {(3, "todo")}


def test_a_load_without_export_of_a_certain_source_checkpoint_is_rewritten() -> None:
    # the project compiles "org/bert-sst2" (--model of its export command): a plain checkpoint, stock loads it
    result = migrate(HUB_LOAD, "NM120", path="classify.py", project={
        "export.sh": "optimum-cli export neuron --model org/bert-sst2 --batch_size 1 --sequence_length 8 out/\n"})
    assert 'AutoModelForSequenceClassification.from_pretrained("org/bert-sst2"' in result.text
    assert "optimum.neuron" not in result.text
    # likewise a file that also loads it with export=True
    result = migrate(HUB_LOAD + 'first = NeuronModelForSequenceClassification.from_pretrained("org/bert-sst2", '
                     "export=True)\n", "NM120")
    assert "optimum.neuron" not in result.text and result.text.count("AutoModelForSequenceClassification.from_") == 2


def test_a_processor_of_a_recovered_folder_follows_the_model_and_one_of_an_unsure_folder_stays() -> None:
    # rt5H D5: the load of the folder became its source checkpoint, the processor stayed on the deleted folder
    source = """
        from optimum.neuron import NeuronModelForImageClassification
        from transformers import AutoImageProcessor

        processor = AutoImageProcessor.from_pretrained("compiled/vit")
        model = NeuronModelForImageClassification.from_pretrained("compiled/vit")
        """
    export = "optimum-cli export neuron --model google/vit-base-patch16-224 --batch_size 1 compiled/vit\n"
    result = apply_rules(textwrap.dedent(source), select=["NM120"], path="predict.py", project={"export.sh": export})
    assert result.text.count('from_pretrained("google/vit-base-patch16-224"') == 2
    two = {"export.sh": export, "other.sh": export.replace("google/vit-base-patch16-224", "org/other")}
    kept = apply_rules(textwrap.dedent(source), select=["NM120"], path="predict.py", project=two)
    assert 'AutoImageProcessor.from_pretrained("compiled/vit")' in kept.text  # the model load is kept too


def test_makefile_variables_are_read_as_make_reads_them() -> None:
    """rt7L L13: ``NAME ?= / := / =`` defaults (a trailing comment left out), ``$(NAME)`` and ``${NAME}`` alike; a
    variable ``+=`` appends to or ``!=`` sets from a shell command is unknown, and so is the command."""
    from codemods.inference._compiled_exports import compiled_exports

    make = ("M ?= org/a # the checkpoint\nOUT := out/${M}\nB = 2\nexport:\n"
            "\toptimum-cli export neuron --model ${M} --batch_size $(B) --sequence_length 8 $(OUT)\n")
    assert compiled_exports(make) == (("out/org/a", "org/a", (("batch_size", "2"), ("sequence_length", "8"))),)
    assert compiled_exports(make.replace("B = 2\n", "B = 2\nB += 4\n")) is None
    assert compiled_exports(make.replace("M ?= org/a # the checkpoint", "M != cat model.txt")) is None
