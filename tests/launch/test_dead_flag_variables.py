"""rt7L L11: a shell variable whose only use was a Neuron flag NM408 removed (``PP=${PP:-4}`` for
``--pipeline_parallel_size $PP``) gets a note at its assignment, and so does the ``export PP=8`` of a job script
that runs that launcher; a variable still read (by the file, or by the project's Python from the environment)
gets none."""

from __future__ import annotations

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

TRAIN = (
    "from optimum.neuron import NeuronHfArgumentParser as HfArgumentParser\n"
    "from optimum.neuron import NeuronTrainer, NeuronTrainingArguments\n"
    "(args,) = HfArgumentParser(NeuronTrainingArguments).parse_args_into_dataclasses()\n"
    "NeuronTrainer(model='m', args=args).train()\n"
)
RUN = ("#!/bin/bash\nPP=${PP:-4}\nZ=true\n"
       "torchrun --nproc_per_node 2 train.py --output_dir out --pipeline_parallel_size $PP --zero_1 $Z\n")
JOB = "#!/bin/bash\n#SBATCH --nodes=4\nexport PP=8 TP=8\nsrun bash run.sh\n"


def _notes(result, text: str) -> list[str]:
    return [f.message for f in result.findings if f.rule == "NM408" and text in f.message]


def test_each_assignment_of_a_dead_variable_gets_a_note() -> None:
    result = apply_rules(RUN, FileKind.SHELL, select=["NM408"], path="run.sh",
                         project={"train.py": TRAIN, "run.sh": RUN})
    [pp] = _notes(result, "PP is read by nothing now")
    assert "--pipeline_parallel_size $PP" in pp and "grows PP-fold" in pp
    [z] = _notes(result, "Z is read by nothing now")
    assert "--zero_1 $Z" in z and "layout" not in z
    lines = result.text.splitlines()
    assert lines[lines.index("PP=${PP:-4}") - 1].startswith("# neuron-migrate: PP is read by nothing now")


def test_a_variable_still_read_gets_no_note() -> None:
    run = RUN.replace("torchrun", 'echo "pp=$PP"\ntorchrun')
    result = apply_rules(run, FileKind.SHELL, select=["NM408"], path="run.sh",
                         project={"train.py": TRAIN, "run.sh": run})
    assert not _notes(result, "PP is read by nothing now")


def test_the_job_script_export_gets_the_layout_with_its_numbers() -> None:
    run = RUN.replace("--zero_1 $Z", "--zero_1 $Z --tensor_parallel_size $TP")
    project = {"train.py": TRAIN, "run.sh": run, "job.sbatch": JOB}
    result = apply_rules(JOB, FileKind.SHELL, select=["NM408"], path="job.sbatch", project=project)
    [note] = _notes(result, "PP sets nothing now")
    assert "run.sh" in note and "remove PP=8 here" in note
    assert "pipeline 8 x tensor 8 x data WORLD_SIZE // 64" in note and "tensor 8 x data WORLD_SIZE // 8" in note
    assert not _notes(result, "TP sets nothing")  # run.sh still passes $TP


def test_an_export_the_projects_python_reads_gets_no_note() -> None:
    project = {"train.py": TRAIN + "import os\nprint(os.environ['PP'])\n", "run.sh": RUN, "job.sbatch": JOB}
    result = apply_rules(JOB, FileKind.SHELL, select=["NM408"], path="job.sbatch", project=project)
    assert not _notes(result, "PP sets nothing now")
