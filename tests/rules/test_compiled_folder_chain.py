"""rt5H D1/D3: the producers of Neuron-compiled folders (an export=True load that the file saves or pushes, an
optimum-cli export) keep their compiled output while another project file still loads compiled folders with
optimum-neuron after the run; once that load is migrated too (its source found), they are migrated as before."""

import textwrap

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

PRODUCER = textwrap.dedent("""
    from optimum.neuron import NeuronModelForCausalLM

    model = NeuronModelForCausalLM.from_pretrained("org/llm", export=True, batch_size=1, sequence_length=64)
    model.save_pretrained("compiled/llm")
    model.push_to_hub("compiled/llm", repository_id="me/llm-neuron")
    """)
KEPT_CONSUMER = textwrap.dedent("""
    import os

    from optimum.neuron import NeuronModelForCausalLM as Decoder

    model = Decoder.from_pretrained(os.environ["MODEL_DIR"])
    """)
EXPORT = "optimum-cli export neuron --model org/enc --batch_size 1 --sequence_length 32 out/enc/\n"


def run(text: str, path: str, project: dict[str, str], kind: FileKind = FileKind.PYTHON):
    return apply_rules(text, kind, select=["NM1", "NM4"], path=path, project={path: text, **project})


def test_a_producer_stays_while_a_consumer_keeps_its_compiled_folder_load() -> None:
    # a read of the compiled config the export does not give keeps the load (else the two are a round trip: NM110)
    consumer = KEPT_CONSUMER + "print(model.neuron_config.continuous_batching)\n"
    result = run(PRODUCER, "compile.py", {"serve.py": consumer})
    assert "from optimum.neuron import NeuronModelForCausalLM" in result.text
    assert 'model.push_to_hub("compiled/llm", repository_id="me/llm-neuron")' in result.text
    todos = [f.message for f in result.findings if f.severity.value == "todo"]
    assert any(m.startswith("this load compiles the model") and "serve.py still loads Neuron-compiled folders" in m
               for m in todos)
    assert sum(m.startswith("kept: this writes the Neuron-compiled folder/repo") for m in todos) == 2
    assert "AutoModelForCausalLM" not in result.text


def test_a_producer_is_migrated_when_no_kept_load_remains() -> None:
    result = run(PRODUCER, "compile.py", {"serve.py": KEPT_CONSUMER.replace('os.environ["MODEL_DIR"]',
                                                                            '"org/llm", export=True')})
    assert "AutoModelForCausalLM.from_pretrained" in result.text and 'push_to_hub("me/llm-neuron")' in result.text


def test_the_export_command_is_kept_until_the_consumer_is_ported() -> None:
    consumer = KEPT_CONSUMER.replace("NeuronModelForCausalLM as Decoder", "NeuronModelForFeatureExtraction as Enc")
    consumer = consumer.replace("Decoder.from_pretrained", "Enc.from_pretrained")
    result = run(EXPORT, "export.sh", {"embed.py": consumer}, FileKind.SHELL)
    (note,) = [f.message for f in result.findings if f.rule == "NM406"]
    assert note.startswith("keep this export until embed.py is ported (it still loads Neuron-compiled folders")
    assert "then delete it: TorchNeuron compiles on first call" in note


def test_the_export_command_is_deleted_when_its_folder_loads_are_migrated() -> None:
    # the load of out/enc is rewritten to org/enc (NM120, the export's source): no compiled-folder load is kept
    consumer = 'from optimum.neuron import NeuronModelForFeatureExtraction\n\nm = ' \
               'NeuronModelForFeatureExtraction.from_pretrained("out/enc")\n'
    result = run(EXPORT, "export.sh", {"embed.py": consumer}, FileKind.SHELL)
    (note,) = [f.message for f in result.findings if f.rule == "NM406"]
    assert note.startswith("delete this export: ")


def test_the_tools_own_notes_are_no_mentions_of_the_files_they_name() -> None:
    # a second run read NM406's "keep this export until app/chat_cli.py is ported" as a mention of that file, and
    # the notebook's pip install note changed (not idempotent)
    from codemods.deps._plan import mentioned_scripts

    shell = "# neuron-migrate: keep this export until app/chat_cli.py is ported\npython serve.py\n"
    assert mentioned_scripts(shell) == frozenset({"serve.py"})
    cell = '    "# neuron-migrate: keep this export until generate.py is ported ...\\n",\n    "!python bench.py\\n"\n'
    assert mentioned_scripts(cell) == frozenset({"bench.py"})


def test_a_producer_and_a_consumer_of_each_others_folders_end() -> None:
    # both files compile+save and load a compiled folder: the nested question about a file being simulated is
    # answered by its own text (no endless nesting); both stay, each naming the other
    both = PRODUCER + '\nother = NeuronModelForCausalLM.from_pretrained("compiled/other")\n'
    result = run(both, "a.py", {"b.py": both})
    assert "from optimum.neuron import NeuronModelForCausalLM" in result.text
    assert any("b.py still loads Neuron-compiled folders" in f.message for f in result.findings)


def test_a_kept_load_of_another_kind_does_not_hold_the_producer() -> None:
    # a kept encoder load reads no decoder export (optimum-neuron checks the exported task): the decoder producer is
    # migrated; a kept load through an alias of the same kind holds it (the first test)
    encoder = KEPT_CONSUMER.replace("NeuronModelForCausalLM as Decoder", "NeuronModelForFeatureExtraction as Enc")
    result = run(PRODUCER, "compile.py", {"embed.py": encoder.replace("Decoder.from_pretrained", "Enc.from_pretrained")})
    assert "AutoModelForCausalLM.from_pretrained" in result.text and "from optimum.neuron" not in result.text
    assert not any("still loads Neuron-compiled folders" in f.message for f in result.findings)
    unknown = "import optimum.neuron as on\n\nmodel = on.NeuronLoader.from_pretrained(COMPILED)\n"
    held = run(PRODUCER, "compile.py", {"serve.py": unknown})  # a class of no known kind counts for every kind
    assert "from optimum.neuron import NeuronModelForCausalLM" in held.text
