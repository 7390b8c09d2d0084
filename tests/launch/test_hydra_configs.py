"""NM408 on Hydra config groups (rt4E 5): ``@hydra.main(config_path="../conf")`` plus
``NeuronTrainingArguments(**OmegaConf.to_container(cfg.trainer))`` makes the files of ``conf/trainer/`` that class's
keyword arguments. NM408 said "no script of this project parses optimum-neuron training arguments from a config
file", and its "left as it is" todo ended "removed (was zero_1 true)" for a line it kept."""

from __future__ import annotations

import pytest

from codemods._lib.launch_targets import HYDRA_ARGUMENT_GROUPS, hydra_argument_groups, hydra_group_scripts
from migrate.facts import ProjectFacts
from migrate.filekinds import FileKind
from migrate.testing import apply_rules

HEAD = "import hydra\nfrom omegaconf import OmegaConf\nfrom optimum.neuron import NeuronTrainingArguments as TA\n"


@pytest.mark.parametrize(
    "body, groups",
    [
        ("    a = TA(**OmegaConf.to_container(cfg.trainer, resolve=True))\n", {("../conf", "trainer")}),
        ("    a = TA(**cfg.trainer)\n", {("../conf", "trainer")}),
        ("    a = TA(**dict(cfg.args))\n", {("../conf", "args")}),
        ("    a = TA(output_dir=cfg.out)\n", None),  # no splat of a group
        ("    a = dict(**cfg.trainer)\n", None),  # not the training arguments
    ],
)
def test_hydra_group_shapes(body: str, groups) -> None:
    text = HEAD + '@hydra.main(config_path="../conf", config_name="config")\ndef main(cfg):\n' + body
    assert hydra_argument_groups(text) == (frozenset(groups) if groups else None)


def test_without_hydra_main_no_group() -> None:
    assert hydra_argument_groups(HEAD + "def main(cfg):\n    a = TA(**cfg.trainer)\n") is None


def test_group_folder_resolved_from_the_script() -> None:
    project = ProjectFacts(
        frozenset({"src/train.py", "conf/trainer/neuron.yaml"}),
        {HYDRA_ARGUMENT_GROUPS.name: {"src/train.py": frozenset({("../conf", "trainer")})}},
    )
    assert hydra_group_scripts(project, "conf/trainer/neuron.yaml") == ["src/train.py"]
    assert hydra_group_scripts(project, "conf/model/llama.yaml") == []
    assert hydra_group_scripts(project, "src/conf/trainer/neuron.yaml") == []


def test_unfed_todo_says_what_to_do_not_what_was_done() -> None:
    text = "output_dir: out\nbf16: true\nzero_1: true\ntensor_parallel_size: 8\n"
    result = apply_rules(
        text, FileKind.YAML, select=["NM408"], path="args.yaml", project={"args.yaml": text}, neuron_project=True
    )
    notes = [f.message for f in result.findings if f.rule == "NM408"]
    assert notes and all("left as it is" in note for note in notes)
    assert not any("; removed" in note or "removed (was" in note for note in notes)
    assert any("remove it (was zero_1 true)" in note for note in notes)
    assert "\nzero_1: true\n" in result.text and "\ntensor_parallel_size: 8\n" in result.text  # both kept
