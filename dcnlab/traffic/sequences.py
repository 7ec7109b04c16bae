"""Sequence-number bookkeeping shared by the receivers of the tree agents (multicast, CIST broadcast)."""

from __future__ import annotations

from collections.abc import Iterable


def seq_runs(seqs: Iterable[int]) -> list[list[int]]:
    """Sorted sequence numbers as inclusive [lo, hi] runs: ``[1, 2, 3, 7] -> [[1, 3], [7, 7]]``."""
    out: list[list[int]] = []
    for s in sorted(seqs):
        if out and s == out[-1][1] + 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return out
