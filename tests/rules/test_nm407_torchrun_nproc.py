"""NM407: trn1 worker counts on torchrun lines, read through same-file variables and their defaults."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate, unchanged


def test_a_default_in_the_variable_counts_as_the_value() -> None:
    result = migrate(
        """
        NPROC=${NPROC:-32}
        torchrun --nproc_per_node=$NPROC train.py --epochs 1
        """,
        "NM407", kind=FileKind.SHELL, path="scripts/launch.sh",
    )
    (finding,) = result.findings
    assert finding.message.startswith("--nproc_per_node $NPROC (NPROC=${NPROC:-32}) looks like a trn1 NeuronCore count")
    assert findings(result, "NM407") == {(2, "todo")}


def test_a_default_on_the_flag_counts_as_the_value() -> None:
    result = migrate("torchrun --nproc_per_node ${WORKERS:-32} train.py\n", "NM407", kind=FileKind.SHELL,
                     path="launch.sh")
    assert findings(result, "NM407") == {(1, "todo")}


def test_other_defaults_are_left_alone() -> None:
    unchanged(
        """
        NPROC=${NPROC:-2}
        torchrun --nproc_per_node=$NPROC train.py
        torchrun --nproc_per_node ${WORKERS:-8} train.py
        """,
        "NM407", kind=FileKind.SHELL, path="launch.sh",
    )
