"""The sourced-file facts (codemods/_lib/shell/sourced.py): which file a ``source`` line reads, who sources a file,
and what a launcher's variables know of the values a sourced file sets."""

from __future__ import annotations

from codemods._lib.shell import make
from codemods._lib.shell.sourced import SHELL_FILES, Sources, source_words, sourced_path, sourcers_of
from codemods._lib.shell.variables import ShellVariables
from migrate.facts import gather
from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from migrate.textdoc import TextDocument


class _Facts:
    facts = (SHELL_FILES,)


def _project(files: dict[str, str]):
    kinds = {name: FileKind.DOCKERFILE if name.endswith("Dockerfile") else FileKind.SHELL for name in files}
    return gather([_Facts], {name: (kinds[name], text) for name, text in files.items()})


def test_source_words_in_shell_make_and_docker_shapes() -> None:
    text = ('source ./env.sh\n. "$(dirname "$0")/neuron_env.sh"\n\t@. ./make_env.sh && torchrun x.py\n'
            "RUN . /opt/env.sh && python x.py\n# source ignored.sh\ncd src && . ../env.sh\n")
    assert source_words(text) == ["./env.sh", "$(dirname $0)/neuron_env.sh", "./make_env.sh", "/opt/env.sh",
                                  "../env.sh"]


def test_a_sourced_path_resolves_from_the_launcher_and_the_root() -> None:
    project = _project({"scripts/env.sh": "A=1\n", "jobs/run.sh": "", "train.sh": ""})
    for written in ("scripts/env.sh", "./scripts/env.sh", '$(dirname "$0")/scripts/env.sh', "${ROOT}/scripts/env.sh"):
        assert sourced_path(project, "train.sh", written) == "scripts/env.sh"
    assert sourced_path(project, "jobs/run.sh", "$(dirname $0)/../scripts/env.sh") == "scripts/env.sh"
    assert sourced_path(project, "jobs/run.sh", "scripts/env.sh") == "scripts/env.sh"  # from the project root
    assert sourced_path(project, "train.sh", "/workspace/scripts/env.sh") == "scripts/env.sh"  # a container's copy
    for written in ("$ENV_FILE", "${CONF:-env.sh}", "./missing.sh", "/etc/cluster/env.sh", "env.sh"):
        assert sourced_path(project, "train.sh", written) is None  # built at run time, or not that project file


def test_sourcers_are_followed_through_a_file_that_sources_another() -> None:
    project = _project({"env/common.sh": "export PJRT_DEVICE=NEURON\n",
                        "env/job.sh": '. "${BASH_SOURCE%/*}/common.sh"\n',
                        "run.sh": "source env/job.sh\ntorchrun train.py\n", "other.sh": "torchrun train.py\n"})
    assert sourcers_of(project, "env/common.sh") == ["env/job.sh", "run.sh"]
    assert sourcers_of(project, "other.sh") == []


def _binding(launcher: str, files: dict[str, str], word: str, makefile: bool = False):
    project = _project(files)
    doc = TextDocument(files[launcher], FileKind.SHELL)
    if makefile:
        make.mark_make_doc(doc)
    variables = ShellVariables(doc, Sources(project, launcher))
    line = next(line for line in doc if "torchrun" in line.text)
    return variables, variables.binding_at(word, line, line.text.index("torchrun"))


def test_the_launcher_knows_a_sourced_value_and_why_not() -> None:
    files = {"env/common.sh": "NPROC=32\nif [ -n \"$BIG\" ]; then TP=8; fi\n", "env/job.sh": ". env/common.sh\n",
             "run.sh": "source env/job.sh\nsource ./cluster.sh\ntorchrun --nproc_per_node $NPROC x.py $TP $EXTRA\n"}
    variables, nproc = _binding("run.sh", files, "$NPROC")
    assert nproc.imported == ("env/common.sh, which this file sources through env/job.sh", "32")
    assert nproc.assignment is None  # never spliced: its words are the other file's
    _, tp = _binding("run.sh", files, "$TP")
    assert tp.imported is not None and tp.imported[1] is None and "inside an if" in tp.why
    _, extra = _binding("run.sh", files, "$EXTRA")
    assert extra.imported is None
    assert "./cluster.sh, which this file sources and which is not among the project files" in extra.why
    _, other = _binding("run.sh", {**files, "cluster.sh": "B=1\n"}, "$EXTRA")
    assert other.why.startswith("EXTRA is not assigned in this file or in env/job.sh, cluster.sh, which it sources")


def test_an_own_assignment_after_the_source_wins() -> None:
    files = {"env.sh": "NPROC=32\n", "run.sh": "source ./env.sh\nNPROC=2\ntorchrun --nproc_per_node $NPROC x.py\n"}
    variables, binding = _binding("run.sh", files, "$NPROC")
    assert binding.imported is None and binding.assignment is not None and binding.assignment.value == "2"


def test_a_make_recipe_source_reaches_only_its_own_line() -> None:
    files = {"env.sh": "NPROC=32\n",
             "Makefile": "a:\n\t. ./env.sh && torchrun --nproc_per_node $NPROC x.py\n"
                         "b:\n\ttorchrun --nproc_per_node $NPROC y.py\n"}
    project = _project(files)
    doc = TextDocument(files["Makefile"], FileKind.SHELL)
    make.mark_make_doc(doc)
    variables = ShellVariables(doc, Sources(project, "Makefile"))
    first, second = [line for line in doc if "torchrun" in line.text]
    assert variables.binding("NPROC", *variables.place(first, first.text.index("torchrun"))).imported is not None
    assert variables.binding("NPROC", *variables.place(second, second.text.index("torchrun"))).imported is None


def test_nm407_names_the_sourced_count() -> None:
    files = {"conf/env.sh": "export WORKERS=32\n",
             "run.sh": 'source conf/env.sh\ntorchrun --nproc_per_node "$WORKERS" x.py\n'}
    result = apply_rules(files["run.sh"], FileKind.SHELL, select=["NM407"], path="run.sh", project=files)
    assert any("WORKERS=32, set in conf/env.sh, which this file sources" in f.message for f in result.findings)
