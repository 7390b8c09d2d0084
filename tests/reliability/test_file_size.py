"""The map from migrated lines back to original ones (pipeline._line_map) stays linear in file size when
edits sit at both ends of a long file (difflib over the whole middle was quadratic: 5 MB took > 600 s)."""

from __future__ import annotations

import random
import time

from migrate.pipeline import _line_map, _matching_lines


def _long_module(lines: int) -> list[str]:
    # code-like lines with the repetition real code has (blank lines, `return`, `pass`, closing brackets)
    pool = ["", "    return result", "        pass", ")", "    ]", "    def method(self):"]
    return [pool[n % 7] if n % 7 < len(pool) else f"value_{n} = compute({n})" for n in range(lines)]


def test_edits_at_both_ends_of_a_long_file_map_in_linear_time() -> None:
    old = _long_module(200_000)
    new = ["# neuron-migrate: note", "import torch"] + old[2:-2] + ["model.to(device)", ""]
    started = time.perf_counter()
    to_original = _line_map("\n".join(old) + "\n", "\n".join(new) + "\n")
    assert time.perf_counter() - started < 5
    assert [to_original(line) for line in (1, 2, 3, 1000, len(new) - 2)] == [1, 1, 3, 1000, len(old) - 2]
    assert to_original(len(new)) == len(old) - 1


def test_matched_lines_are_equal_and_in_order_on_both_sides() -> None:
    generator = random.Random(16)
    for _ in range(200):
        old = [generator.choice("abcdefgh") for _ in range(generator.randrange(0, 60))]
        new = [line if generator.random() < 0.8 else generator.choice("abcxyz") for line in old]
        new[generator.randrange(0, len(new) + 1):0] = ["inserted"] * generator.randrange(0, 3)
        pairs = _matching_lines(old, new)
        assert all(old[i] == new[j] for i, j in pairs)
        assert [i for i, _ in pairs] == sorted({i for i, _ in pairs}) and [j for _, j in pairs] == sorted({j for _, j in pairs})
