"""Length-sorted rows are cut into batches where the padding saved outweighs one more forward call."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from groundjudge.local_nli.batches import length_batches


def brute_force(lengths: list[int], cap: int, overhead: int) -> float:
    """The cheapest cost over every way to cut ``lengths`` into runs of at most ``cap`` rows."""
    n, best = len(lengths), float("inf")
    for mask in itertools.product((0, 1), repeat=n - 1):
        cuts = [0] + [i + 1 for i, m in enumerate(mask) if m] + [n]
        runs = list(itertools.pairwise(cuts))
        if all(e - s <= cap for s, e in runs):
            best = min(best, sum((e - s) * lengths[e - 1] + overhead for s, e in runs))
    return best


def cost(lengths: list[int], sizes: list[int], overhead: int) -> float:
    ends = np.cumsum(sizes)
    return sum(size * lengths[end - 1] + overhead for size, end in zip(sizes, ends))


@pytest.mark.parametrize("seed", range(20))
def test_the_cuts_are_the_cheapest(seed):
    rng = np.random.default_rng(seed)
    lengths = sorted(int(x) for x in rng.choice([8, 12, 15, 40, 128, 130], size=int(rng.integers(1, 11))))
    cap, overhead = int(rng.integers(1, 6)), int(rng.choice([0, 16, 64, 500]))
    sizes = length_batches(lengths, cap, overhead)
    assert sum(sizes) == len(lengths) and all(1 <= s <= cap for s in sizes)
    assert cost(lengths, sizes, overhead) == pytest.approx(brute_force(lengths, cap, overhead))


def test_short_and_long_rows_are_not_padded_together():
    lengths = [12] * 20 + [128] * 30
    assert length_batches(lengths, 64) == [20, 30]
    assert length_batches([10] * 100, 64) in ([64, 36], [36, 64], [50, 50])   # equal rows: fewest calls
    assert len(length_batches([10] * 100, 64)) == 2
    assert length_batches([], 16) == []
