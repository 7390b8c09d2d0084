"""NM406: the todo on a consolidate that stays names the later commands of the file that read its output folder
(nothing writes that folder once the step is deleted) and says where the stock save writes the checkpoint."""

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate


def _todo(script: str) -> str:
    result = migrate(script, "NM406", kind=FileKind.SHELL, path="post.sh")
    (finding,) = [f for f in result.findings if f.rule == "NM406"]
    assert finding.severity.value == "todo"
    assert "optimum-cli neuron consolidate" in result.text  # the step stays: it and its readers change by hand
    return finding.message


def test_reads_of_the_output_through_the_path_and_a_variable_are_named() -> None:
    message = _todo(
        """
        RUN=${1:-runs/sft}
        optimum-cli neuron consolidate "$RUN" "${RUN}/merged/"
        python export.py --adapter "$RUN/merged" --out final
        MERGED=$RUN/merged
        ls "$MERGED/adapter_config.json" --color=never
        python upload.py --path=$MERGED
        python other.py --adapter "$RUN/merged_old"
        """
    )
    assert "later commands of this file read its output ${RUN}/merged:" in message
    assert ("`python export.py` ($RUN/merged), `ls $MERGED/adapter_config.json` ($MERGED/adapter_config.json), "
            "`python upload.py` (--path=$MERGED).") in message
    assert "merged_old" not in message
    assert message.endswith("point them at $RUN, where the stock save now writes the consolidated checkpoint")


def test_a_shards_input_points_at_its_parent_folder() -> None:
    message = _todo(
        """
        optimum-cli neuron consolidate out/shards merged
        python eval.py --model merged
        """
    )
    assert "`python eval.py` (merged)" in message and "point them at out," in message


def test_no_later_read_keeps_the_plain_todo() -> None:
    message = _todo(
        """
        python eval.py --model merged
        optimum-cli neuron consolidate ckpt/ merged/
        echo done
        """
    )
    assert "later commands" not in message


def test_the_in_place_consolidate_is_still_removed() -> None:
    result = migrate("optimum-cli neuron consolidate out/shards/ out\npython eval.py --model out\n", "NM406",
                     kind=FileKind.SHELL, path="post.sh")
    assert "consolidate" not in result.text and findings(result, "NM406") == {(1, "fixed")}
