"""M2's compiled grouping kernels (:mod:`dcnlab.controller.aggregation.mib_kernels`) against plain-Python statements of
the rules they implement: the branch owner of Alg. 1 from the related senders of Def. 2, and Alg. 2's greedy groups
recounted from scratch after every take (the kernel recounts lazily). The trees they make are compared with trees
recorded from the numpy code in ``tests/test_fast_model_same.py``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dcnlab.controller.aggregation import mib, mib_kernels
from dcnlab.controller.aggregation.labels import LabelSpace

SPACES = [(2, 3), (3, 3), (4, 8), (5, 3), (6, 2), (6, 6), (8, 5), (3, 1)]


def _owner_by_rule(space: LabelSpace, rel: np.ndarray) -> list[int]:
    """Each sender hangs on its related lower sender of highest (layer, related count, -label); -1: a root."""
    related = mib.related_senders(space, rel)
    layer = space.layer(rel)
    owner = []
    for x in range(rel.shape[0]):
        lower = [a for a in range(rel.shape[0]) if x in related[a]]
        owner.append(max(lower, key=lambda a: (int(layer[a]), len(related[a]), -int(rel[a]))) if lower else -1)
    return owner


def _groups_by_rule(space: LabelSpace, cand: list[int], root: int, t: int) -> list[tuple[list[int], tuple[int, ...]]]:
    """Repeatedly the largest group of untaken candidates sharing non-root values on ``t`` digits (ties: the first
    subset in combinations order, then the smallest values read as base-n digits, lowest digit first)."""
    dig, rd = space.digits(np.array(cand, dtype=np.int64)).tolist(), space.digits(root).tolist()
    taken: set[int] = set()
    out = []
    combos = list(itertools.combinations(range(space.K), t))
    while True:
        groups: dict[tuple[int, int], list[int]] = {}
        for s, dims in enumerate(combos):
            for i in range(len(cand)):
                if i not in taken and all(dig[i][d] != rd[d] for d in dims):
                    code = sum(dig[i][d] * space.n ** j for j, d in enumerate(dims))
                    groups.setdefault((s, code), []).append(i)
        if not groups:
            return out
        key = min(groups, key=lambda kk: (-len(groups[kk]), kk))
        if len(groups[key]) < 2:
            return out
        taken.update(groups[key])
        out.append((groups[key], combos[key[0]]))


@pytest.mark.parametrize("n,k", SPACES)
def test_branch_owner_kernel_is_the_rule(n, k):
    sp = LabelSpace(n, k)
    rng = np.random.default_rng([n, k])
    for m in sorted({min(sp.N - 1, m) for m in (1, 2, 30, 300)}):
        pick = rng.choice(sp.N, m + 1, replace=False)
        rel = sp.relabel(pick[1:], int(pick[0]))
        dig = sp.digits(rel[:10])
        low = (dig != 0).argmax(axis=1)                        # plus some senders' relatives: their lowest
        near = rel[:10] - dig[np.arange(dig.shape[0]), low] * sp.pow[low]   # non-zero digit zeroed
        rel = np.r_[rel, np.array([v for v in dict.fromkeys(near.tolist()) if v != 0 and v not in set(rel.tolist())],
                                  dtype=np.int64)]
        got = mib_kernels.branch_owner(rel, sp.digits(rel), sp.pow).tolist()
        assert got == _owner_by_rule(sp, rel)
        assert m < 8 or sum(a >= 0 for a in got) > 0          # some senders do hang on others


@pytest.mark.parametrize("n,k", SPACES)
def test_greedy_groups_kernel_is_the_rule(n, k):
    sp = LabelSpace(n, k)
    rng = np.random.default_rng([n, k, 7])
    seen = 0
    for m in sorted({min(sp.N, m) for m in (2, 12, 120)}):
        for root in (0, int(rng.integers(sp.N))):
            cand = sorted(rng.choice(sp.N, m, replace=False).tolist())
            for t in range(1, sp.K):
                got = mib._greedy_groups(sp, np.array(cand, dtype=np.int64), sp.digits(root), t)
                assert got == _groups_by_rule(sp, cand, root, t), (m, root, t)
                seen += len(got)
    assert seen > 0


def test_greedy_groups_take_the_largest_first():
    """BCube(3,1), root 0, one shared digit: digit 0 = 1 is shared by 3 candidates, digit 1 = 2 by 2 (one of them
    taken by the first group), so one group of 3 and then none of 2."""
    sp = LabelSpace(3, 1)
    cand = [1, 4, 7, 8]      # digits (1,0), (1,1), (1,2), (2,2): digit 0 values 1, 1, 1, 2
    groups = mib._greedy_groups(sp, np.array(cand, dtype=np.int64), sp.digits(0), 1)
    assert groups == [([0, 1, 2], (0,))]
