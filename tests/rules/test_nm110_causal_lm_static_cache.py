"""NM110: an inference NeuronModelForCausalLM load becomes AutoModelForCausalLM with a static-cache generation setup."""

import json
import textwrap

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def test_export_load_becomes_stock_model_with_static_cache() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained(
            "meta-llama/Llama-3.2-1B", export=True, batch_size=1, sequence_length=2048, num_cores=1,
            auto_cast_type="bf16",
        )
        """,
        "NM110",
    )
    assert "AutoModelForCausalLM.from_pretrained(" in result.text
    assert "dtype=torch.bfloat16" in result.text
    assert "device_map=" in result.text
    assert 'cache_implementation="static", max_cache_len=2048' in result.text
    assert 'CompileConfig(backend="neuron", dynamic=False, mode="default")' in result.text
    load = result.text[result.text.index("AutoModelForCausalLM.from_pretrained("):]
    load = load[:load.index("\n)")]
    for dropped in ("export=", "batch_size=", "sequence_length=", "num_cores=", "auto_cast_type="):
        assert dropped not in load
    assert findings(result, "NM110") == {(1, "fixed"), (3, "fixed"), (3, "todo")}


def _code(text: str) -> str:
    """The text without its comment lines (the todo notes quote the DistributedConfig to add)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


TP_LOAD = """
from optimum.neuron import NeuronModelForCausalLM

model = NeuronModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", export=True, batch_size=1,
                                               sequence_length=512, num_cores={cores})
"""


def test_tensor_parallel_degree_under_a_torchrun_launcher_becomes_distributed_config() -> None:
    result = migrate(TP_LOAD.format(cores=2), "NM110", path="serve.py",
                     project={"run.sh": "torchrun --nproc_per_node 2 \\\n    serve.py --port 8080\n"})
    assert "distributed_config=DistributedConfig(tp_size=2)" in result.text
    assert "device_map=" not in result.text
    assert any("torchrun --nproc_per_node 2" in f.message for f in result.findings if f.rule == "NM110")


def test_tensor_parallel_degree_without_a_torchrun_launcher_loads_on_one_device() -> None:
    """DistributedConfig in a single-process run (`python serve.py`, a SageMaker job script) raises at load, since
    from_pretrained then fails to initialize torch.distributed: one device and a todo instead."""
    for project in ({}, {"run.sh": "python serve.py --tp 2\n"}, {"other.sh": "torchrun --nproc_per_node 2 train.py\n"}):
        result = migrate(TP_LOAD.format(cores=2), "NM110", path="serve.py", project=project)
        assert "DistributedConfig" not in _code(result.text)
        assert "device_map=" in _code(result.text)
        assert any("launch with `torchrun --nproc_per_node 2` and pass distributed_config=DistributedConfig(tp_size=2)"
                   in f.message and f.severity.value == "todo" for f in result.findings if f.rule == "NM110")


def test_a_runtime_degree_without_launcher_loads_on_one_device() -> None:
    result = migrate(TP_LOAD.format(cores="args.tp_degree"), "NM110", path="compile.py")
    assert "DistributedConfig" not in _code(result.text) and "args.tp_degree ==" not in result.text
    # rt5H D10: the shell part takes a placeholder, the expression stays in the Python part
    (note,) = [f.message for f in result.findings if f.rule == "NM110" and "torchrun" in f.message]
    assert "`torchrun --nproc_per_node <tp_degree>` (<tp_degree>: the value of args.tp_degree" in note
    assert "DistributedConfig(tp_size=args.tp_degree)" in note and "nproc_per_node args." not in note


def test_a_runtime_degree_names_the_argparse_flag_it_comes_from() -> None:
    source = TP_LOAD.format(cores="opts.cores").replace(
        "from optimum.neuron", 'import argparse\nparser = argparse.ArgumentParser()\n'
        'parser.add_argument("--num-cores", dest="cores", type=int)\nopts = parser.parse_args()\n'
        "from optimum.neuron", 1)
    result = migrate(source, "NM110", path="compile.py")
    assert any("`torchrun --nproc_per_node <cores>` (<cores>: the value of opts.cores, the script's --num-cores flag)"
               in f.message for f in result.findings if f.rule == "NM110")


def test_a_runtime_degree_under_torchrun_keeps_the_conditional_device_map() -> None:
    result = migrate(TP_LOAD.format(cores="args.tp_degree"), "NM110", path="compile.py",
                     project={"launch.yaml": "command: torchrun --nproc_per_node 8 compile.py\n"})
    assert "distributed_config=DistributedConfig(tp_size=args.tp_degree)" in result.text
    assert "if args.tp_degree == 1 else None" in result.text


def test_the_training_causal_lm_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron.models.training import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", trn_config)
        """,
        "NM110",
    )


def test_a_notebook_cell_is_never_torchrun_launched() -> None:
    """Even a launcher that names the notebook does not make its cells a torchrun job."""
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": TP_LOAD.format(cores=2).lstrip("\n").splitlines(keepends=True)}
    notebook = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    result = migrate(notebook, "NM110", kind=FileKind.NOTEBOOK, path="deploy.ipynb",
                     project={"run.sh": "torchrun --nproc_per_node 2 deploy.ipynb\n"})
    assert "DistributedConfig(tp_size=2)" not in _code("".join(json.loads(result.text)["cells"][0]["source"]))
    assert "device_map=" in result.text
    assert any("pass distributed_config=DistributedConfig(tp_size=2)" in f.message for f in result.findings)


# -------------------------------------------------- optimum-only class uses the class rename would reach
KEPT_GETTER = """
from optimum.neuron import NeuronModelForCausalLM


def main(model_id, batch, tp):
    neuron_config = NeuronModelForCausalLM.get_neuron_config(
        model_id, batch_size=batch, sequence_length=1024, tensor_parallel_size=tp
    )
    model = NeuronModelForCausalLM.export(model_id, neuron_config=neuron_config, load_weights=False)
    model.save_pretrained("out")
    print(neuron_config.on_device_sampling)
"""


def test_kept_get_neuron_config_keeps_the_file_on_optimum() -> None:
    # the result is read after the export, so get_neuron_config stays: renamed to AutoModelForCausalLM it would raise
    # AttributeError; the file keeps its import and loads, and one todo says why and what to do
    result = migrate(KEPT_GETTER, "NM110")
    code = _code(result.text)
    assert code == _code(KEPT_GETTER.lstrip("\n"))
    assert "AutoModelForCausalLM" not in code
    assert findings(result, "NM110") == {(5, "todo")}
    (todo,) = [f.message for f in result.findings if f.rule == "NM110"]
    assert "AutoModelForCausalLM has no `get_neuron_config`" in todo
    assert "instead of from its result" in todo
    assert "# neuron-migrate: `NeuronModelForCausalLM.get_neuron_config` stays in the code" in result.text


def test_folded_get_neuron_config_still_migrates() -> None:
    # the no-change side of the guard: read only as the export's neuron_config, the getter is folded as before
    result = migrate(KEPT_GETTER.replace("    print(neuron_config.on_device_sampling)\n", ""), "NM110")
    assert "get_neuron_config" not in result.text
    assert "NeuronModelForCausalLM" not in result.text
    assert "AutoModelForCausalLM.from_pretrained(model_id" in result.text
    assert "max_cache_len=1024" in result.text
    assert (5, "fixed") in findings(result, "NM110")


def test_reads_of_the_shapes_given_to_get_neuron_config_become_those_values() -> None:
    """redteam-final 5 (llm-chat-neuron/compile_model.py): `nc.batch_size` / `.sequence_length` / `.tp_degree` read
    what get_neuron_config was given: the reads become those values and the getter is folded."""
    result = migrate(KEPT_GETTER.replace("print(neuron_config.on_device_sampling)",
                                         'print(f"{neuron_config.batch_size} {neuron_config.tp_degree}", '
                                         "neuron_config.sequence_length)"), "NM110")
    assert 'print(f"{batch} {tp}", 1024)' in result.text
    assert "get_neuron_config" not in result.text and "optimum" not in _code(result.text)
    # a value that can change before the read (a name bound twice) is not read again: the file stays
    kept = migrate(KEPT_GETTER.replace("print(neuron_config.on_device_sampling)",
                                       "batch += 1\n    print(neuron_config.batch_size)"), "NM110")
    assert "get_neuron_config" in kept.text and "AutoModelForCausalLM" not in _code(kept.text)


def test_export_without_a_model_id_and_bare_class_reads_keep_the_file() -> None:
    # an export() NM110 cannot rewrite (no model id it can see) and a read of another optimum-only attribute stay
    # in the code: the class is not renamed under them
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("m", export=True, batch_size=1, sequence_length=128)
        other = NeuronModelForCausalLM.export(**settings)
        exporter = NeuronModelForCausalLM._export
        """,
        "NM110",
    )
    assert "AutoModelForCausalLM" not in _code(result.text)
    assert 'NeuronModelForCausalLM.from_pretrained("m", export=True' in result.text
    assert findings(result, "NM110") == {(4, "todo"), (5, "todo")}
    messages = [f.message for f in result.findings if f.rule == "NM110"]
    assert any("pass the model id to export()" in m for m in messages)


def test_stock_attributes_of_the_class_do_not_keep_the_file() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM

        print(NeuronModelForCausalLM.__name__)
        model = NeuronModelForCausalLM.from_pretrained("m", export=True, batch_size=1, sequence_length=128)
        """,
        "NM110",
    )
    assert "print(AutoModelForCausalLM.__name__)" in result.text
    assert "AutoModelForCausalLM.from_pretrained(" in result.text


GETTER_EXPORT = """
from optimum.neuron import NeuronModelForCausalLM

def build(args, kw):
    nc = NeuronModelForCausalLM.get_neuron_config(args.model_id, {getter})
    return NeuronModelForCausalLM.export(args.model_id, neuron_config=nc, load_weights=False)
"""


def _messages(result) -> list[str]:
    return [f.message for f in result.findings if f.rule == "NM110"]


def test_get_neuron_config_arguments_are_export_arguments() -> None:
    """redteam-final 5: what get_neuron_config was given is what the export was given: a run-time auto_cast_type is
    kept as a run-time dtype choice (a bf16 checkpoint loads bf16 without dtype=), and no "not given" note."""
    result = migrate(GETTER_EXPORT.format(getter="batch_size=args.batch_size, sequence_length=args.seq, "
                                          "tensor_parallel_size=args.tp, auto_cast_type=args.dtype"), "NM110")
    code = _code(result.text)
    assert 'dtype={"bf16": torch.bfloat16' in code and '.get(args.dtype, "auto")' in code
    assert "max_cache_len=args.seq" not in code  # a call that is not assigned: the setup is a todo
    messages = _messages(result)
    assert not any("not given" in message for message in messages)
    assert any("tensor parallel degree args.tp" in message for message in messages)
    assert any("max_cache_len=args.seq" in message for message in messages)
    assert any("auto_cast_type=args.dtype -> dtype= picked from it at run time" in message for message in messages)


def test_get_neuron_config_splat_that_cannot_be_read_is_no_absent_argument() -> None:
    result = migrate(GETTER_EXPORT.format(getter="**kw"), "NM110")
    messages = _messages(result)
    assert not any("not given" in message for message in messages)
    assert any(message.startswith("**kw (passed to get_neuron_config) could not be read") for message in messages)
    assert "**kw" not in _code(result.text).split("from_pretrained(", 1)[1]  # its keys are optimum's: not passed on


def test_get_neuron_config_without_shapes_still_says_what_is_not_given() -> None:
    messages = _messages(migrate(GETTER_EXPORT.format(getter="batch_size=1"), "NM110"))
    assert any(message.startswith("num_cores not given") for message in messages)
    assert any(message.startswith("sequence_length not given") for message in messages)


def test_export_with_a_neuron_config_it_cannot_read_gives_no_not_given_note() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM

        def build(model_id, nc):
            model = NeuronModelForCausalLM.export(model_id, neuron_config=nc)
            return model
        """, "NM110")
    messages = _messages(result)
    assert not any("not given" in message for message in messages)
    assert any("`nc` (a compiled neuron config)" in message and "dtype" in message for message in messages)


BATCHED = """
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

MODEL_ID = "meta-llama/Llama-3.2-1B"


def build_inputs(tokenizer, prompts):
    texts = [p.strip() for p in prompts]
    return tokenizer(texts, return_tensors="pt", padding={padding})


def main():
    tokenizer = AutoTokenizer.from_pretrained(MODEL_ID{tokenizer_kw})
    model = NeuronModelForCausalLM.from_pretrained(MODEL_ID, export=True, batch_size=2, sequence_length=256)
    inputs = build_inputs(tokenizer, ["hello", "a longer prompt"])
    return model.generate(**inputs, max_new_tokens=8)
"""


def test_batched_padded_prompts_reaching_generate_get_left_padding() -> None:
    """redteam-final 6: the batch comes from a function of the file that pads a list of prompts; the tokenizer is
    created once: padding_side is set to "left" right after it (stock decoder-only generation wants it)."""
    for padding in ("True", '"longest"', '"max_length"'):
        result = migrate(BATCHED.format(padding=padding, tokenizer_kw=""), "NM110")
        assert 'tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)\n    tokenizer.padding_side = "left"\n' \
            in result.text
        assert any(f.line == 13 and f.message.startswith("tokenizer.padding_side = \"left\": model.generate gets")
                   for f in result.findings)
        assert not any("padding_side" in message for message in _messages(result) if "compiled for" in message)


def test_batched_prompts_of_an_attribute_tokenizer_in_a_class() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        from transformers import AutoTokenizer


        class Generator:
            def __init__(self, mid):
                self.tok = AutoTokenizer.from_pretrained(mid)
                self.model = NeuronModelForCausalLM.from_pretrained(mid, export=True, sequence_length=256)

            def run(self, prompts):
                padded = list(prompts) + [prompts[0]] * 2
                inputs = self.tok(padded, return_tensors="pt", padding=True)
                return self.model.generate(input_ids=inputs.input_ids, attention_mask=inputs["attention_mask"])
        """, "NM110")
    assert 'self.tok = AutoTokenizer.from_pretrained(mid)\n        self.tok.padding_side = "left"\n' in result.text


def test_batched_prompts_of_a_tokenizer_created_twice_get_a_todo_at_the_call() -> None:
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained("a")
        tokenizer = AutoTokenizer.from_pretrained("b")
        model = NeuronModelForCausalLM.from_pretrained("a", export=True, sequence_length=256, num_cores=1)
        ids = model.generate(**tokenizer(["x", "y z"], return_tensors="pt", padding=True).to("cpu"))
        """, "NM110")
    assert "padding_side" not in _code(result.text)
    assert (7, "todo") in findings(result, "NM110")
    assert any('set tokenizer.padding_side = "left" where the tokenizer is created' in message
               for message in _messages(result))


def test_no_left_padding_change_for_one_prompt_or_where_the_file_sets_it() -> None:
    """A single prompt string, no padding, or padding_side already "left" (assigned, or a from_pretrained keyword):
    nothing about padding."""
    single = """
        from optimum.neuron import NeuronModelForCausalLM
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained("a")
        model = NeuronModelForCausalLM.from_pretrained("a", export=True, sequence_length=256, num_cores=1)
        inputs = tokenizer({text}, return_tensors="pt"{padding})
        ids = model.generate(**inputs)
        """
    sources = [single.format(text='"hello there"', padding=", padding=True"),
               single.format(text='["a", "b c"]', padding=""),
               single.format(text='["a", "b c"]', padding=", padding=False"),
               BATCHED.format(padding="True", tokenizer_kw=', padding_side="left"'),
               BATCHED.format(padding="True", tokenizer_kw="").replace(
                   "    model =", '    tokenizer.padding_side = "left"\n    model =', 1)]
    for source in sources:
        result = migrate(source, "NM110")
        assert _code(result.text).count("padding_side") == source.count("padding_side")
        assert not any("left padding" in message for message in _messages(result))


def test_a_compiled_folder_load_keeps_the_file_on_optimum_neuron() -> None:
    """redteam-round2 D7: `from_pretrained(model_dir)` without export=True loads NEFFs; rewritten, it cannot run, so
    the line and the import stay (the file keeps running on its old stack) with a todo that says what to load."""
    source = """
        from optimum.neuron import NeuronModelForCausalLM
        from transformers import AutoTokenizer


        class Generator:
            def __init__(self, model_dir):
                self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
                self.model = NeuronModelForCausalLM.from_pretrained(model_dir{export})
        """
    for export in ("", ", export=False"):
        result = migrate(source.format(export=export), "NM110")
        assert _code(result.text) == _code(textwrap.dedent(source.format(export=export)).lstrip("\n"))
        assert findings(result, "NM110") == {(8, "todo")}
        assert "checkpoint_id" in _messages(result)[0] and "leaves this file on optimum-neuron" in _messages(result)[0]
    exported = migrate(source.format(export=", export=True"), "NM110")  # a compile at load time: rewritten
    assert "AutoModelForCausalLM.from_pretrained(model_dir" in exported.text and "optimum" not in _code(exported.text)
    unread = migrate(source.format(export=", export=args.export"), "NM110")  # cannot tell: rewritten, with a todo
    assert "AutoModelForCausalLM.from_pretrained(model_dir" in unread.text
    assert any("unless export= is True" in message for message in _messages(unread))


COMPILED_LOAD = """
from optimum.neuron import NeuronModelForCausalLM

model = NeuronModelForCausalLM.from_pretrained("{path}")
"""
EXPORT_SH = """\
MODEL_ID=${{MODEL_ID:-org/tiny-chat}}
OUT_DIR={out}
optimum-cli export neuron --model "$MODEL_ID" --batch_size 1 --sequence_length 512 --auto_cast_type bf16 "$OUT_DIR"
"""


def test_a_compiled_folder_an_export_script_writes_loads_its_source_checkpoint() -> None:
    """redteam-round2 D7: the project's optimum-cli export command names the id that produced the folder: the
    load is rewritten completely with that id and the shapes it was compiled with."""
    result = migrate(COMPILED_LOAD.format(path="compiled/tiny/"), "NM110", path="app/serve.py",
                     project={"scripts/export.sh": EXPORT_SH.format(out="./compiled/tiny")})
    code = _code(result.text)
    assert 'AutoModelForCausalLM.from_pretrained("org/tiny-chat", dtype=torch.bfloat16' in code
    assert "max_cache_len=512" in code and "optimum" not in code
    assert any(f.severity.value == "fixed" and "scripts/export.sh compiles from \"org/tiny-chat\"" in f.message
               for f in result.findings)
    assert not any("Neuron-compiled" in message for message in _messages(result))


def test_a_compiled_folder_no_readable_export_writes_stays() -> None:
    """Another output folder, an output or id that stays unknown ($1), an option this reader does not know: the
    load stays on optimum-neuron."""
    for script in (EXPORT_SH.format(out="compiled/other"), EXPORT_SH.format(out="$1"),
                   EXPORT_SH.format(out="compiled/tiny").replace("--batch_size", "--new-flag x --batch_size")):
        result = migrate(COMPILED_LOAD.format(path="compiled/tiny"), "NM110", project={"export.sh": script})
        assert "from optimum.neuron import NeuronModelForCausalLM" in result.text
        assert "AutoModelForCausalLM" not in _code(result.text)


def test_the_compiled_exports_fact_reads_the_script_variables() -> None:
    from codemods.inference._compiled_exports import compiled_exports

    # an expansion it cannot read
    assert compiled_exports(EXPORT_SH.format(out="./compiled/tiny-${MODEL_ID##*/}")) is None
    assert compiled_exports("optimum-cli export neuron -m org/m --num_cores=2 --trust-remote-code out/\n") == (
        ("out", "org/m", (("num_cores", "2"),)),)
    assert compiled_exports("M=a/b\nM=c/d\noptimum-cli export neuron -m $M out\n") is None  # set twice


ENV_LOAD = """
import os

from optimum.neuron import NeuronModelForCausalLM

{binding}
model = NeuronModelForCausalLM.from_pretrained({path})
"""


def test_a_compiled_folder_named_by_an_environment_default_loads_its_source_checkpoint() -> None:
    """final-BF N3: ``os.environ.get(NAME, "<folder>")`` / ``os.getenv(NAME, "<folder>")`` - at the load, bound
    once at module level, or bound so in a project module the file imports the name from - is that folder, as the
    shell ``${NAME:-<folder>}`` is. The variable keeps overriding the path (rtG p4): the getter stays, with the
    source checkpoint as its default, and a todo says what the variable must name now."""
    project = {"scripts/export.sh": EXPORT_SH.format(out="./compiled/tiny")}
    getter = 'os.environ.get("COMPILED_DIR", "compiled/tiny/")'
    environ = 'os.environ.get("COMPILED_DIR", "org/tiny-chat")'
    for binding, path, extra, loaded in (
            ("", getter, {}, environ),
            (f"COMPILED_DIR = {getter}", "COMPILED_DIR", {}, environ),
            ('COMPILED_DIR = os.getenv("COMPILED_DIR", "compiled/tiny")', "COMPILED_DIR", {},
             'os.getenv("COMPILED_DIR", "org/tiny-chat")'),
            ("from app.settings import COMPILED_DIR", "COMPILED_DIR",
             {"app/settings.py": f"import os\n\nCOMPILED_DIR = {getter}\n"}, environ),
            ("from settings import COMPILED_DIR", "COMPILED_DIR", {"settings.py": 'COMPILED_DIR = "compiled/tiny"\n'},
             '"org/tiny-chat"')):
        result = migrate(ENV_LOAD.format(binding=binding, path=path), "NM110", path="app/serve.py",
                         project={**project, **extra})
        code = _code(result.text)
        assert f"AutoModelForCausalLM.from_pretrained({loaded}, dtype=torch.bfloat16" in code, (binding, code)
        assert "optimum" not in code
        overrides = [f for f in result.findings if "still overrides this path" in f.message]
        assert len(overrides) == (loaded != '"org/tiny-chat"'), (binding, result.findings)
        assert all(f.severity.value == "todo" for f in overrides)


def test_a_compiled_folder_whose_path_cannot_be_read_says_so() -> None:
    """The todo names the missing link: a path it cannot read (no default, a name bound twice, a settings module
    that binds it twice), or a folder that no readable export command writes."""
    project = {"scripts/export.sh": EXPORT_SH.format(out="./compiled/tiny")}
    for binding, path, extra in (
            ("", 'os.environ.get("COMPILED_DIR")', {}),
            ("", 'os.environ["COMPILED_DIR"]', {}),
            ('COMPILED_DIR = os.environ.get("COMPILED_DIR", "compiled/tiny")\nCOMPILED_DIR += "/"', "COMPILED_DIR", {}),
            ("from settings import COMPILED_DIR", "COMPILED_DIR",
             {"settings.py": 'COMPILED_DIR = "compiled/tiny"\nCOMPILED_DIR = "other"\n'})):
        result = migrate(ENV_LOAD.format(binding=binding, path=path), "NM110", path="serve.py",
                         project={**project, **extra})
        assert "from optimum.neuron import NeuronModelForCausalLM" in result.text
        assert "AutoModel" not in _code(result.text)
        (message,) = [message for message in _messages(result) if "Neuron-compiled" in message]
        assert f"its path `{path}` is no folder this rule can read" in message, message
        assert "not named in this project" not in message
    other = migrate(ENV_LOAD.format(binding="", path='os.getenv("D", "compiled/other")'), "NM110", project=project)
    (message,) = [message for message in _messages(other) if "Neuron-compiled" in message]
    assert "(in a shell script, Dockerfile or Makefile of the project) and no saved Python export with constant " \
        "arguments writes `compiled/other`" in message


def test_the_module_folders_fact() -> None:
    from codemods.inference._compiled_exports import module_folders

    text = ('import os\nA = "x"\nB = os.environ.get("B", "y")\nC = os.getenv("C", "z")\nD = os.environ.get("D")\n'
            'E = "e"\nE = "f"\n\n\ndef f():\n    global A\n    A = "w"\n')
    assert module_folders(text) == {"B": "y", "C": "z"}
    assert module_folders('B = os.environ.get("B", "y")\n') is None  # no `import os`: `os` may be anything


def test_a_load_with_a_splat_nothing_resolves_keeps_the_file_on_optimum_neuron() -> None:
    source = """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("gpt2", export=True, **vars(args))
        other = NeuronModelForCausalLM.from_pretrained("gpt2", export=True, batch_size=1, sequence_length=64)
        """
    result = migrate(source, "NM110")
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("# neuron-migrate"))
    assert code == textwrap.dedent(source).strip("\n")  # the import and both loads stay: the file still runs
    assert findings(result, "NM110") == {(3, "todo")}
    (message,) = [f.message for f in result.findings if f.rule == "NM110"]
    assert message.startswith("`**vars(args)` cannot be resolved statically") and "TypeError" in message


def test_a_star_args_splat_and_a_parameter_splat_are_kept_too() -> None:
    for call in ('NeuronModelForCausalLM.from_pretrained("gpt2", *extra, export=True)',
                 'NeuronModelForCausalLM.from_pretrained(path, export=True, **neuron_kwargs)'):
        source = f"""
            from optimum.neuron import NeuronModelForCausalLM

            def load(path, *extra, **neuron_kwargs):
                return {call}
            """
        result = migrate(source, "NM110")
        assert "from optimum.neuron import NeuronModelForCausalLM" in result.text and call in result.text
        assert "AutoModelForCausalLM" not in result.text and "device_map" not in result.text
        assert findings(result, "NM110") == {(4, "todo")}


def test_a_splat_of_a_dict_a_project_module_binds_is_folded() -> None:
    source = """
        from optimum.neuron import NeuronModelForCausalLM

        from app.config import LLM_EXPORT

        model = NeuronModelForCausalLM.from_pretrained("gpt2", export=True, **LLM_EXPORT)
        """
    config = 'LLM_EXPORT = dict(batch_size=1, sequence_length=256, num_cores=1, auto_cast_type="bf16")\n'
    result = migrate(source, "NM110", path="app/generate.py", project={"app/config.py": config})
    assert 'AutoModelForCausalLM.from_pretrained("gpt2", dtype=torch.bfloat16, device_map=' in result.text
    assert "**LLM_EXPORT" not in result.text and "max_cache_len=256" in result.text
    messages = [f.message for f in result.findings if f.rule == "NM110" and f.severity.value == "fixed"]
    assert any("**LLM_EXPORT (a dict of app/config.py, folded in" in m for m in messages)
    # changed in place there: its keys are not known, the file stays
    result = migrate(source, "NM110", path="app/generate.py",
                     project={"app/config.py": config + 'LLM_EXPORT.update(num_cores=2)\n'})
    assert "NeuronModelForCausalLM.from_pretrained(\"gpt2\", export=True, **LLM_EXPORT)" in result.text
    assert findings(result, "NM110") == {(5, "todo")}


def test_a_name_bound_to_the_neuron_class_in_one_branch_is_a_neuron_load() -> None:
    source = """
        import os

        if os.environ.get("SMOKE"):
            from transformers import AutoModelForCausalLM as ModelCls
        else:
            from optimum.neuron import NeuronModelForCausalLM as ModelCls

        model = ModelCls.from_pretrained("compiled/llama")
        """
    result = migrate(source, "NM110")
    assert 'model = ModelCls.from_pretrained("compiled/llama", device_map=' in result.text
    assert 'model.generation_config.update(cache_implementation="static", compile_config=' in result.text
    todos = [f.message for f in result.findings if f.rule == "NM110" and f.severity.value == "todo"]
    assert any("one of the classes `ModelCls` is bound to here" in m and '`"compiled/llama"` named a Neuron-compiled'
               in m for m in todos)
    assert (8, "fixed") not in findings(result, "NM110")  # a compiled folder on the Neuron branch: not complete


def test_a_name_bound_to_two_stock_classes_is_left_alone() -> None:
    unchanged(
        """
        import os

        if os.environ.get("SMOKE"):
            from transformers import AutoModelForCausalLM as ModelCls
        else:
            from transformers import LlamaForCausalLM as ModelCls

        model = ModelCls.from_pretrained("meta-llama/Llama-3.2-1B")
        """,
        "NM110",
    )


def test_the_batch_note_gives_left_padding_advice_only_where_it_applies() -> None:
    """rt4F 9: the batch note said 'and tokenizer.padding_side = "left" for batched prompts' beside a tokenizer
    created with padding_side="left", and in a file with no tokenizer at all."""
    load = ('model = NeuronModelForCausalLM.from_pretrained("m", export=True, batch_size=4, sequence_length=64, '
            'num_cores=1)\n')
    head = "from optimum.neuron import NeuronModelForCausalLM\nfrom transformers import AutoTokenizer\n"

    def batch_note(source: str) -> str:
        result = migrate(source, "NM110")
        (note,) = [message for message in _messages(result) if message.startswith("compiled for batch_size=4")]
        return note

    assert "padding_side" in batch_note(head + 'tok = AutoTokenizer.from_pretrained("m")\n' + load)
    assert "padding_side" not in batch_note(head + 'tok = AutoTokenizer.from_pretrained("m", padding_side="left")\n'
                                            + load)
    assert "padding_side" not in batch_note("from optimum.neuron import NeuronModelForCausalLM\n" + load)


def test_a_notebook_export_cell_names_the_source_of_its_folder() -> None:
    """018099d follow-up: `!optimum-cli export neuron ...` in a notebook writes the compiled folder a script loads;
    the reader takes `!` lines and %%bash cells (an IPython-expanded `$NAME` / `{NAME}` stays unread)."""
    import json

    from codemods.inference._compiled_exports import compiled_exports

    cells = [["!pip install optimum-neuron==0.0.24\n",
              "!optimum-cli export neuron --model org/m --batch_size 1 \\\n", "    --sequence_length 64 compiled/m\n"],
             ["MODEL = 'org/x'\n", "!optimum-cli export neuron --model {MODEL} --batch_size 1 out2\n",
              "!optimum-cli export neuron --model $MODEL --batch_size 1 out3\n"],
             ["%%bash\n", "M=org/b\n", "optimum-cli export neuron --model $M --batch_size 2 out4\n"]]
    notebook = json.dumps({"cells": [{"cell_type": "code", "source": cell} for cell in cells]})
    assert compiled_exports(notebook) == (("compiled/m", "org/m", (("batch_size", "1"), ("sequence_length", "64"))),
                                          ("out4", "org/b", (("batch_size", "2"),)))
    result = migrate('from optimum.neuron import NeuronModelForCausalLM\n\n'
                     'model = NeuronModelForCausalLM.from_pretrained("compiled/m")\n', "NM110", path="serve.py",
                     project={"walkthrough.ipynb": notebook})
    assert 'AutoModelForCausalLM.from_pretrained("org/m"' in result.text, result.text


def test_a_chained_save_of_an_export_is_held_while_another_file_loads_compiled_folders() -> None:
    # X.from_pretrained(..., export=True).save_pretrained(dir) writes NEFFs as `model.save_pretrained` does: while
    # chat.py keeps loading compiled folders with optimum-neuron, the export stays (it was migrated to stock weights)
    project = {"chat.py": "from optimum.neuron import NeuronModelForCausalLM\n"
                          "model = NeuronModelForCausalLM.from_pretrained(input())\n"}
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM

        NeuronModelForCausalLM.from_pretrained("org/m", export=True, sequence_length=64).save_pretrained("out")
        """, "NM110", path="export.py", project=project)
    assert "from optimum.neuron import NeuronModelForCausalLM" in result.text
    assert "AutoModelForCausalLM" not in _code(result.text)


def test_python_export_fact_reads_imported_and_joined_folders() -> None:
    from codemods.inference._compiled_exports import IMPORTED, compiled_folder_uses, module_folders

    assert module_folders("import os\nfrom pathlib import Path\nROOT = 'a'\nJ = os.path.join(ROOT, 'b')\n"
                          "P = Path(ROOT) / 'c'\nF = f'{ROOT}/d'\nT = 'x'\nT = 'y'\nR = input()\n") == {
        "ROOT": "a", "J": "a/b", "P": "a/c", "F": "a/d"}
    uses = compiled_folder_uses("from optimum.neuron import NeuronModelForCausalLM\nfrom paths import OUT\n"
                                "m = NeuronModelForCausalLM.from_pretrained('org/m', export=True, batch_size=1, "
                                "sequence_length=64, auto_cast_type='bf16')\nm.save_pretrained(OUT)\n")
    assert uses is not None
    assert uses["exports"] == ((f"{IMPORTED}paths.OUT", "org/m",
                                (("batch_size", "1"), ("sequence_length", "64"), ("auto_cast_type", "bf16"))),)
    # a shape known only at run time: no export the loads can be rewritten from
    runtime = compiled_folder_uses("import sys\nfrom optimum.neuron import NeuronModelForCausalLM\n"
                                   "m = NeuronModelForCausalLM.from_pretrained('org/m', export=True, "
                                   "sequence_length=int(sys.argv[1]))\nm.save_pretrained('out')\n")
    assert runtime is not None and "exports" not in runtime


def test_a_cli_command_and_a_python_export_of_one_folder_agree_in_any_keyword_order() -> None:
    project = {
        "export.sh": "optimum-cli export neuron --model org/m --batch_size 4 --sequence_length 128 out\n",
        "export.py": "from optimum.neuron import NeuronModelForCausalLM\n"
                     "m = NeuronModelForCausalLM.from_pretrained('org/m', export=True, sequence_length=128, "
                     "batch_size=4)\n"
                     "m.save_pretrained('out')\n",
    }
    result = migrate("""
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("out")
        """, "NM110", path="chat.py", project=project)
    assert 'AutoModelForCausalLM.from_pretrained("org/m"' in result.text
    assert "max_cache_len=128" in result.text
    other = dict(project, **{"export.py": project["export.py"].replace("sequence_length=128", "sequence_length=256")})
    held = migrate("""
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("out")
        """, "NM110", path="chat.py", project=other)
    assert "from optimum.neuron import NeuronModelForCausalLM" in held.text
    # the reason says what they disagree on (rt7L L13: never "different checkpoints" when the checkpoint agrees)
    assert ("compile different shapes (export.py: batch_size=4, sequence_length=256; export.sh: batch_size=4, "
            "sequence_length=128)") in " ".join(f.message for f in held.findings)


def test_shape_and_batching_arguments_are_todos_never_dropped_and_fixed() -> None:
    """n_positions / max_context_length (shapes), continuous_batching / dynamic_batch_size (batching) and
    local_ranks_size (parallelism) changed how the compiled decoder ran: each is a todo; compiler-only flags and
    the neutral start_rank_id=0 stay in the fixed list of dropped arguments."""
    from tests.rules.case import migrate as run
    result = run(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("gpt2", export=True, batch_size=1, sequence_length=128,
                                                       n_positions=256, continuous_batching=True, start_rank_id=0,
                                                       local_ranks_size=2, max_context_length=64,
                                                       dynamic_batch_size=True, fuse_qkv=True, auto_cast_type="bf16")
        """,
        "NM110", path="serve.py",
    )
    fixed = " ".join(f.message for f in result.findings if f.severity.value == "fixed")
    notes = [f.message for f in result.findings if f.severity.value == "todo"]
    assert "dropped export/compiler-only arguments: export, start_rank_id, fuse_qkv" in fixed
    for key in ("n_positions=256", "continuous_batching=True", "local_ranks_size=2", "max_context_length=64",
                "dynamic_batch_size=True"):
        assert key.split("=")[0] not in fixed
        assert sum(n.startswith(key) for n in notes) == 1, key


def test_exports_of_one_folder_that_differ_only_in_casting_give_the_source_and_a_dtype_todo() -> None:
    """rt7L L13: two exports write the folder from the same checkpoint and shapes, in different precisions: the
    load reads that checkpoint (certain), the precision is a todo naming both exports (not 'different
    checkpoints or shapes')."""
    from tests.rules.case import migrate as run
    make = ("MODEL ?= org/llm\nOUT ?= llm-neuron\nexport:\n\toptimum-cli export neuron --model $(MODEL) "
            "--batch_size 1 --sequence_length 256 --num_cores 1 --auto_cast_type bf16 $(OUT)\n")
    script = ("optimum-cli export neuron --model org/llm --batch_size 1 --sequence_length 256 --num_cores 1 "
              "--auto_cast_type fp16 llm-neuron\n")
    result = run(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("llm-neuron")
        """,
        "NM110", path="serve.py", project={"Makefile": make, "export.sh": script},
    )
    assert 'AutoModelForCausalLM.from_pretrained("org/llm"' in result.text
    notes = [f.message for f in result.findings if f.severity.value == "todo"]
    assert any("different casting" in n and "--auto_cast_type bf16" in n and "--auto_cast_type fp16" in n
               for n in notes)
    assert not any("different checkpoints or shapes" in n for n in notes)


def test_a_reload_of_the_folder_expression_another_file_saves_to_names_that_export() -> None:
    """rt7N N6 across files: `cfg["compiled_dir"]` saved by export.py and loaded here: the note names that export
    and what to check (one config file and key), not 'no folder this rule can read'."""
    from tests.rules.case import migrate as run
    export = ("import yaml\nfrom optimum.neuron import NeuronModelForCausalLM\ncfg = yaml.safe_load(open('c.yaml'))\n"
              "m = NeuronModelForCausalLM.from_pretrained('org/m', export=True, batch_size=1, sequence_length=64)\n"
              "m.save_pretrained(cfg['compiled_dir'])\n")
    result = run(
        """
        import yaml
        from optimum.neuron import NeuronModelForCausalLM

        cfg = yaml.safe_load(open("c.yaml"))
        model = NeuronModelForCausalLM.from_pretrained(cfg["compiled_dir"])
        """,
        "NM110", path="serve.py", project={"export.py": export},
    )
    notes = " ".join(f.message for f in result.findings if f.severity.value == "todo")
    assert "the saved export of export.py writes (`save_pretrained(cfg[\"compiled_dir\"])` there)" in notes
    assert "the same config file and key" in notes and "no folder this rule can read" not in notes


def test_an_export_keyword_no_table_sorts_keeps_the_file_and_a_stock_one_is_passed_on() -> None:
    # kept in the stock call, `rotary_bucketing=` would reach LlamaForCausalLM.__init__ (TypeError); dropped, what it
    # did in the export would be lost: the file stays, with a todo naming it
    kept = migrate("""
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("org/m", export=True, sequence_length=64, rotary_bucketing=True)
        """, "NM110")
    assert "NeuronModelForCausalLM.from_pretrained(" in kept.text and "AutoModelForCausalLM" not in kept.text
    assert any("`rotary_bucketing=True`" in finding.message for finding in kept.findings if finding.rule == "NM110")
    stock = migrate("""
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("org/m", export=True, sequence_length=64, use_safetensors=True)
        """, "NM110")
    assert "AutoModelForCausalLM.from_pretrained(\"org/m\", use_safetensors=True" in stock.text
    assert "check it is valid" not in stock.text


ROUND_TRIP_EXPORTER = textwrap.dedent("""\
    import argparse

    from optimum.neuron import NeuronModelForCausalLM

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="compiled/m")
    args = parser.parse_args()
    model = NeuronModelForCausalLM.from_pretrained("org/m", export=True, batch_size=1, sequence_length=64)
    model.save_pretrained(args.out)
    """)


def _round_trip_loader(keywords: str) -> str:
    return textwrap.dedent(f"""\
        import argparse

        from optimum.neuron import NeuronModelForCausalLM

        parser = argparse.ArgumentParser()
        parser.add_argument("--model-dir", default="compiled/m")
        args = parser.parse_args()
        model = NeuronModelForCausalLM.from_pretrained(args.model_dir, {keywords})
        """)


def test_a_round_trip_load_drops_a_degree_with_the_torchrun_route_and_an_unsorted_keyword_cancels_the_trip() -> None:
    loader = _round_trip_loader("num_cores=2")
    result = migrate(loader, "NM110", path="serve.py", project={"export.py": ROUND_TRIP_EXPORTER, "serve.py": loader})
    assert "AutoModelForCausalLM.from_pretrained(args.model_dir, device_map=" in result.text
    assert "num_cores=2" not in _code(result.text)
    assert any("`num_cores=2` dropped" in finding.message and "torchrun --nproc_per_node" in finding.message
               for finding in result.findings if finding.rule == "NM110")
    # all or none: a load keyword nothing sorts keeps the loader, and with it the exporter, on optimum-neuron
    unsorted = _round_trip_loader("rotary_bucketing=True")
    project = {"export.py": ROUND_TRIP_EXPORTER, "serve.py": unsorted}
    assert "NeuronModelForCausalLM.from_pretrained(args.model_dir" in migrate(
        unsorted, "NM110", path="serve.py", project=project).text
    exporter = migrate(ROUND_TRIP_EXPORTER, "NM110", path="export.py", project=project).text
    assert "from optimum.neuron import NeuronModelForCausalLM" in exporter


def test_a_dict_call_of_shapes_splatted_into_the_exporter_is_read_for_the_round_trip() -> None:
    def exporter(shapes: str) -> str:
        return ROUND_TRIP_EXPORTER.replace("batch_size=1, sequence_length=64)", "**SHAPES)").replace(
            "parser = ", f"SHAPES = {shapes}\nparser = ")

    loader = _round_trip_loader("token=None")
    read = exporter("dict(batch_size=1, sequence_length=64)")
    result = migrate(loader, "NM110", path="serve.py", project={"export.py": read, "serve.py": loader})
    assert "AutoModelForCausalLM.from_pretrained(args.model_dir, token=None, device_map=" in result.text
    # a dict(...) with a positional mapping is not read: the round trip is not made, the loader stays
    unread = exporter("dict(BASE, sequence_length=64)")
    kept = migrate(loader, "NM110", path="serve.py", project={"export.py": unread, "serve.py": loader})
    assert "NeuronModelForCausalLM.from_pretrained(args.model_dir" in kept.text
