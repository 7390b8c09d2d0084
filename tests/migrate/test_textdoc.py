"""Notes in text documents: placement (continuations, heredocs, deleted lines) and idempotence."""

from __future__ import annotations

from migrate.filekinds import FileKind
from migrate.textdoc import TextDocument, add_notes


def test_note_goes_above_the_first_line_of_a_continued_command() -> None:
    doc = TextDocument("#!/bin/bash\ntorchrun \\\n  --flag \\\n  train.py\n", FileKind.SHELL)
    add_notes(doc, [(doc.lines[2], "check --flag")])
    assert doc.text() == "#!/bin/bash\n# neuron-migrate: check --flag\ntorchrun \\\n  --flag \\\n  train.py\n"
    add_notes(doc, [(doc.lines[4], "check --flag")])  # same note again: nothing added
    assert doc.text().count("neuron-migrate") == 1


def test_note_never_lands_inside_a_heredoc() -> None:
    doc = TextDocument("cat > run.sh <<'EOF'\nexport XLA_USE_BF16=1\nEOF\necho done\n", FileKind.SHELL)
    add_notes(doc, [(doc.lines[1], "bf16")])
    assert doc.text().startswith("# neuron-migrate: bf16\ncat > run.sh <<'EOF'\n")


def test_notes_of_deleted_lines_move_down_or_to_the_end() -> None:
    doc = TextDocument("a\nb\nc", FileKind.SHELL)
    doc.delete(doc.lines[1])
    doc.delete(doc.lines[2])
    add_notes(doc, [(doc.lines[1], "b was removed"), (doc.lines[2], "c was removed")])
    assert doc.text() == "a\n# neuron-migrate: b was removed\n# neuron-migrate: c was removed\n"


def test_crlf_survives_insertions() -> None:
    doc = TextDocument("x=1\r\ny=2\r\n", FileKind.SHELL)
    add_notes(doc, [(doc.lines[1], "note")])
    assert doc.text() == "x=1\r\n# neuron-migrate: note\r\ny=2\r\n"


def test_note_never_lands_inside_a_quoted_string_over_lines() -> None:
    """The shell would pass a note inside ``ARGS="..."`` on as words (``#``, ``neuron-migrate:`` ...)."""
    text = 'ARGS="--a 1\n  --zero_1 true\n  --b 2"  # it\'s kept\necho \'x\n#y\' z\nrun $ARGS\n'
    doc = TextDocument(text, FileKind.SHELL)
    lines = list(doc)
    add_notes(doc, [(lines[1], "one"), (lines[2], "two"), (lines[4], "three"), (lines[5], "four")])
    assert doc.text().splitlines() == [
        "# neuron-migrate: one", "# neuron-migrate: two", 'ARGS="--a 1', "  --zero_1 true", '  --b 2"  # it\'s kept',
        "# neuron-migrate: three", "echo 'x", "#y' z", "# neuron-migrate: four", "run $ARGS"]
    yaml = TextDocument('a: "x\n  y"\n', FileKind.YAML)  # YAML: above the key whose value goes on over lines
    add_notes(yaml, [(list(yaml)[1], "n")])
    assert yaml.text() == '# neuron-migrate: n\na: "x\n  y"\n'


def test_a_longer_note_of_an_earlier_run_holds_the_shorter_one() -> None:
    # the first run named a script it moved; the second cannot see that script as it was and says less
    first = "X was left as it is: a.py reads it; b.py, which this file runs too, was moved"
    doc = TextDocument(f"set -e\n# neuron-migrate: {first}\nexport X=1\n", FileKind.SHELL)
    add_notes(doc, [(doc.lines[2], "X was left as it is: a.py reads it")])
    assert doc.text() == f"set -e\n# neuron-migrate: {first}\nexport X=1\n"
    # a note that only starts the same way without continuing it is another note
    add_notes(doc, [(doc.lines[2], "X was left")])
    assert "# neuron-migrate: X was left\n" in doc.text()
