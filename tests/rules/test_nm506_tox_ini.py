"""NM506: the deps of tox.ini test environments take the requirement plan of the files they install with."""

from pathlib import PurePosixPath

from codemods.deps._plan import requirement_set
from migrate.filekinds import FileKind, kind_from_name
from tests.rules.case import findings, migrate

_TOX = """[tox]
envlist = py310

[base]
deps = accelerate==0.29.2

[testenv]
deps =
    -r requirements.txt
    transformers==4.41.2
    py310: trl==0.9.6
    {[base]deps}
    pytest
commands = pip install transformers==4.41.2
"""
_REQUIREMENTS = "optimum-neuron==0.0.23\ntransformers==4.41.2\n"
_KEPT = "from optimum.neuron.utils.cache_utils import get_hf_hub_cache_repos\nprint(get_hf_hub_cache_repos())\n"


def _run(code: str):
    return migrate(_TOX, "NM506", kind=FileKind.TOX, path="tox.ini",
                   project={"tox.ini": _TOX, "requirements.txt": _REQUIREMENTS, "src/train.py": code})


def test_tox_ini_is_a_file_kind_of_its_own() -> None:
    assert kind_from_name(PurePosixPath("tox.ini")) is FileKind.TOX
    assert kind_from_name(PurePosixPath("sub/tox.ini")) is FileKind.TOX


def test_deps_pins_move_with_the_requirements_they_are_installed_with() -> None:
    # rt4E 4: requirements.txt moved to transformers>=5.24, tox.ini kept transformers==4.41.2: ResolutionImpossible
    result = _run("from transformers import Trainer\nprint(Trainer)\n")
    assert "    transformers>=5.24\n" in result.text
    assert "deps = accelerate>=1.15\n" in result.text  # a [base] section the environments take with {[base]deps}
    assert "    py310: trl==0.9.6\n    {[base]deps}\n    pytest\n" in result.text  # factors, substitutions: left
    assert "commands = pip install transformers==4.41.2\n" in result.text  # not a deps key
    # envlist = py310: its deps now install transformers 5.24 (Python>=3.11), so the env name gets a todo (rt8P-06)
    assert findings(result, "NM506") == {(2, "todo"), (5, "fixed"), (10, "fixed")}


def test_deps_pins_stay_while_the_requirements_keep_optimum_neuron() -> None:
    result = _run(_KEPT)
    assert "    transformers==4.41.2\n" in result.text and "transformers>=5.24" not in result.text
    assert "accelerate==0.29.2" in result.text
    assert findings(result, "NM506") == {(5, "todo"), (10, "todo")}
    todo = next(f for f in result.findings if f.line == 10).message
    assert "requirements.txt's optimum-neuron, kept because src/train.py still imports optimum.neuron" in todo


def test_the_requirement_set_fact_reads_only_the_deps_of_a_tox_ini() -> None:
    found = requirement_set(_TOX)
    assert found is not None
    assert found["includes"] == ("requirements.txt",) and found["requires"] == ("requirements.txt",)
    assert "envlist" not in found["names"] and "transformers" in found["names"] and "pip" not in found["names"]


def test_a_file_that_only_shares_an_include_with_the_holder_is_not_said_to_be_read_with_it() -> None:
    """final4-E 6 (hydra_ft tox.ini): tox installs -r requirements/base.txt; requirements/neuron.txt includes the
    same base.txt and holds optimum-neuron. tox never reads neuron.txt, so 'pip reads both in one install' was
    false; the pin still stays (base.txt is held with neuron.txt, and tox installs it). A tox.ini that includes the
    holding file itself keeps the old wording."""
    tox = "[testenv]\ndeps =\n    -r requirements/base.txt\n    transformers==4.41.2\n"
    base = "datasets>=2.18\ntransformers==4.41.2\n"
    neuron = "-r base.txt\noptimum-neuron==0.0.23\n"
    result = migrate(tox, "NM506", kind=FileKind.TOX, path="tox.ini",
                     project={"tox.ini": tox, "requirements/base.txt": base, "requirements/neuron.txt": neuron,
                              "src/train.py": _KEPT})
    assert "    transformers==4.41.2\n" in result.text and "transformers>=5.24" not in result.text
    todo = next(f for f in result.findings if f.line == 4).message
    assert ("(this file and requirements/neuron.txt both include requirements/base.txt, which is held with "
            "requirements/neuron.txt: pip installs this file with requirements/base.txt, and") in todo, todo
    assert "pip reads both" not in todo
    direct = _run(_KEPT)
    assert "(this file includes requirements.txt: pip reads both in one install" in next(
        f for f in direct.findings if f.line == 10).message
