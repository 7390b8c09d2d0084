"""The sweep's map from lines of the migrated text back to lines of the file as it was."""

from __future__ import annotations

from migrate.pipeline import _line_map


def _mapped(old: str, new: str) -> list[int]:
    to_original = _line_map(old, new)
    return [to_original(line) for line in range(1, len(new.splitlines()) + 1)]


def test_unchanged_text_maps_every_line_to_itself():
    text = "a\nb\nc\n"
    assert _mapped(text, text) == [1, 2, 3]


def test_lines_inserted_at_the_top_map_to_the_first_original_line():
    assert _mapped("a\nb\nc\n", "# note\nx = 1\na\nb\nc\n") == [1, 1, 1, 2, 3]


def test_a_rewrite_in_the_middle_keeps_both_ends_in_place():
    old = "\n".join(f"line{n}" for n in range(1, 11)) + "\n"
    new = old.replace("line5\n", "# neuron-migrate: note\nLINE5\n")
    assert _mapped(old, new) == [1, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10]


def test_a_deleted_line_shifts_the_lines_after_it_back():
    assert _mapped("a\nb\nc\nd\n", "a\nc\nd\n") == [1, 3, 4]


def test_repeated_lines_around_the_change_are_not_misplaced():
    old = "x\nx\nold\nx\nx\n"
    new = "x\nx\nnew\nnew2\nx\nx\n"
    assert _mapped(old, new) == [1, 2, 3, 3, 4, 5]
