"""NM412: the dict an estimator's ``hyperparameters=`` gets is the one bound last before the call runs, in its scope
(codemods/_lib/kernel_values.py); a dict that cannot be followed there gets a todo naming the fields to fix, never an
edit of some other dict of the same name."""

import json
import textwrap

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

TRAIN = textwrap.dedent("""
    from optimum.neuron import NeuronHfArgumentParser, NeuronTrainingArguments

    (training_args,) = NeuronHfArgumentParser((NeuronTrainingArguments,)).parse_args_into_dataclasses()
    """)
PROJECT = {"scripts/train.py": TRAIN}
CALL = 'HuggingFace(entry_point="train.py", source_dir="scripts", hyperparameters=hp, role=role)'
UNREAD = "hyperparameters: the dict passed here is not written out"


def _run(source: str, **project: str):
    return migrate(source, "NM412", path="launch.py", project={**PROJECT, **project})


def _messages(result) -> list[str]:
    return [f.message for f in result.findings if f.rule == "NM412"]


def test_a_function_reads_the_module_dict_bound_once() -> None:
    result = _run(f"""
        hp = {{"zero_1": True, "max_steps": 10}}

        def launch():
            return {CALL}
        """)
    assert 'hp = {"max_steps": 10, "torch_compile": True}' in result.text


def test_a_parameter_of_the_same_name_is_not_the_module_dict() -> None:
    result = _run(f"""
        hp = {{"zero_1": True, "max_steps": 10}}

        def launch(hp):
            return {CALL}
        """)
    assert 'hp = {"zero_1": True, "max_steps": 10}' in result.text
    assert findings(result, "NM412") == {(4, "todo")}
    assert _messages(result)[0].startswith(UNREAD)


def test_the_last_binding_before_the_call_is_mapped_not_an_earlier_or_later_one() -> None:
    result = _run(f"""
        hp = {{"zero_1": True}}
        hp = {{"warmup_ratio": 0.1}}
        job = {CALL}
        hp = {{"overwrite_output_dir": True}}
        """)
    assert result.text.splitlines()[:4] == [
        'hp = {"zero_1": True}',
        'hp = {"warmup_steps": 0.1, "torch_compile": True}',
        CALL.replace("HuggingFace", "job = HuggingFace"),
        'hp = {"overwrite_output_dir": True}',
    ]


def test_a_dict_changed_before_the_call_is_not_edited() -> None:
    for change in ('hp.update(zero_1=True)', 'hp |= {"zero_1": True}', 'del hp["max_steps"]'):
        result = _run(f"""
            hp = {{"max_steps": 10}}
            {change}
            job = {CALL}
            """)
        assert result.text.startswith('hp = {"max_steps": 10}\n'), change
        assert _messages(result) and _messages(result)[0].startswith(UNREAD), change


def test_dict_call_with_keywords_is_mapped_and_with_unpacking_is_not() -> None:
    result = _run(f"""
        hp = dict(zero_1=False, group_by_length=True, max_steps=10)
        job = {CALL}
        """)
    assert '\nhp = dict(train_sampling_strategy="group_by_length", max_steps=10, torch_compile=True)\n' in result.text
    kept = _run(f"""
        hp = dict(base, zero_1=True)
        job = {CALL}
        """)
    assert kept.text.splitlines()[:2] == ["hp = dict(base, zero_1=True)", "# neuron-migrate: " + _messages(kept)[0]]
    assert _messages(kept)[0].startswith(UNREAD)


def test_unread_todo_names_only_the_fields_the_script_does_not_own() -> None:
    own = TRAIN.replace("(training_args,) = NeuronHfArgumentParser((NeuronTrainingArguments,))",
                        "from dataclasses import dataclass\n\n\n@dataclass\nclass ScriptArguments:\n"
                        "    max_seq_length: int = 1024\n\n\nscript_args, training_args = "
                        "NeuronHfArgumentParser((ScriptArguments, NeuronTrainingArguments))")
    result = _run(f"hp = load()\njob = {CALL}\n", **{"scripts/train.py": own})
    message = _messages(result)[0]
    assert "max_seq_length" not in message and "warmup_ratio -> warmup_steps" in message and "zero_1" in message


def test_no_todo_where_the_entry_point_is_not_a_neuron_trainer() -> None:
    other = "import argparse\nparser = argparse.ArgumentParser()\nparser.parse_args()\n"
    assert findings(_run(f"hp = load()\njob = {CALL}\n", **{"scripts/train.py": other}), "NM412") == set()
    missing = CALL.replace('source_dir="scripts"', 'source_dir="elsewhere"').replace("train.py", "run.py")
    assert findings(_run(f"hp = load()\njob = {missing}\n"), "NM412") == set()


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": textwrap.dedent(cell).lstrip("\n")} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _cells(result) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(result.text)["cells"]]


def _run_notebook(*cells: str):
    return migrate(_notebook(*cells), "NM412", kind=FileKind.NOTEBOOK, path="job.ipynb", project=PROJECT)


def test_notebook_dict_of_an_earlier_cell_is_mapped_in_its_cell() -> None:
    result = _run_notebook('hp = {"zero_1": True, "max_steps": 10}\n', "x = 1\n", f"job = {CALL}\n")
    assert _cells(result)[0].endswith('hp = {"max_steps": 10, "torch_compile": True}\n')
    assert _cells(result)[2] == f"job = {CALL}\n"


def test_notebook_cell_that_does_not_parse_between_stops_the_lookup() -> None:
    result = _run_notebook('hp = {"zero_1": True}\n', "def broken(:\n", f"job = {CALL}\n")
    assert _cells(result)[0] == 'hp = {"zero_1": True}\n'
    assert _cells(result)[2].startswith("# neuron-migrate: " + UNREAD)


def test_notebook_writefile_cell_is_not_kernel_code() -> None:
    result = _run_notebook('hp = {"zero_1": True}\n', f"%%writefile launch.py\nhp = load()\njob = {CALL}\n",
                           f"job = {CALL}\n")
    assert _cells(result)[0].endswith('\nhp = {"torch_compile": True}\n')


def test_a_binding_in_a_branch_the_call_is_outside_of_is_not_followed() -> None:
    result = _run(f"""
        if big:
            hp = {{"zero_1": True, "max_steps": 10}}
        else:
            hp = {{"max_steps": 5}}
        job = {CALL}
        """)
    assert '    hp = {"zero_1": True, "max_steps": 10}\n' in result.text and '    hp = {"max_steps": 5}\n' in result.text
    assert _messages(result) and _messages(result)[0].startswith(UNREAD)


def test_a_binding_in_the_block_of_the_call_is_followed() -> None:
    result = _run(f"""
        if __name__ == "__main__":
            hp = {{"zero_1": True, "max_steps": 10}}
            job = {CALL}
        """)
    assert '    hp = {"max_steps": 10, "torch_compile": True}\n' in result.text


def test_an_entry_point_left_on_optimum_neuron_keeps_its_hyperparameters() -> None:
    # the verifier withdraws train.py's class rewrite (it reads training_args.zero_1): it stays on optimum-neuron
    staying = TRAIN + 'if training_args.zero_1:\n    print("ZeRO-1")\n'
    source = f'hp = {{"zero_1": True, "max_steps": 10}}\n{CALL}\n'
    result = migrate(source, "NM412", path="launch.py", project={"scripts/train.py": staying})
    assert 'hp = {"zero_1": True, "max_steps": 10}' in result.text and "torch_compile" not in result.text
    assert findings(result, "NM412") == {(1, "todo")}
    assert _messages(result) == ["scripts/train.py stays on optimum-neuron after this run (see its findings): its "
                                 "hyperparameters were left as they are; port it, then run neuron-migrate again"]


def test_an_entry_point_the_run_ports_gets_its_hyperparameters_mapped() -> None:
    result = _run(f'hp = {{"zero_1": True, "max_steps": 10}}\n{CALL}\n')
    assert 'hp = {"max_steps": 10, "torch_compile": True}' in result.text
