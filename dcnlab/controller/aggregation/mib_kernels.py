"""Compiled kernels of M2's grouping steps (:mod:`.mib`): the branch owners (Def. 2 + Alg. 1) and the greedy
groups of minimal clustering (Alg. 2), numba-compiled like :mod:`.engine` (``cache=True``; :func:`warm_up` compiles
or loads them, :func:`dcnlab.controller.aggregation.engine.warm_up` calls it before a pool forks).

They compute exactly what the numpy versions did (``tests/test_fast_model_same.py`` and
``tests/test_m2_kernels_same.py`` compare trees and groups):

* :func:`branch_owner` enumerates, per sender ``X``, the subsets of its non-zero digits zeroed (the servers on a
  shortest path from ``X`` to 0, Def. 2) and looks each up among the senders by binary search: once to count each
  lower sender's related senders, once to pick each sender's owner, the lower related sender of highest
  (layer, related count, -label).
* :func:`greedy_groups` keys every (candidate, digit subset) pair whose digits all differ from the root's, sorts the
  keys (stable: a key's members in candidate order; by counting where the possible keys are few) and takes groups
  largest first with a lazy heap, ties to the smallest key (subset index, then shared values), recounting a group
  when members were taken.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit


@njit(inline="always", cache=True)
def _lookup(srt: np.ndarray, order: np.ndarray, y: int) -> int:
    """Index (in the original order) of label ``y`` among the sorted labels, -1 when absent or 0."""
    if y == 0:
        return -1
    p = np.searchsorted(srt, y)
    if p >= srt.shape[0]:
        p = srt.shape[0] - 1
    if srt[p] != y:
        return -1
    return order[p]


@njit(cache=True)
def _branch_owner(rel: np.ndarray, dig: np.ndarray, pw: np.ndarray) -> np.ndarray:
    m, K = dig.shape
    order = np.argsort(rel, kind="mergesort")
    srt = rel[order]
    layer = np.zeros(m, np.int64)
    for x in range(m):
        for d in range(K):
            if dig[x, d] != 0:
                layer[x] += 1
    count = np.zeros(m, np.int64)
    owner = np.full(m, -1, np.int64)
    nzd = np.empty(K, np.int64)
    for rnd in range(2):
        for x in range(m):
            L = 0
            for d in range(K):
                if dig[x, d] != 0:
                    nzd[L] = d
                    L += 1
            best = -1
            for sub in range(1, 1 << L):
                y = rel[x]
                for j in range(L):
                    if sub >> j & 1:
                        y -= dig[x, nzd[j]] * pw[nzd[j]]
                a = _lookup(srt, order, y)
                if a < 0:
                    continue
                if rnd == 0:
                    count[a] += 1
                elif best < 0 or layer[a] > layer[best] or (layer[a] == layer[best] and (
                        count[a] > count[best] or (count[a] == count[best] and rel[a] < rel[best]))):
                    best = a
            if rnd == 1:
                owner[x] = best
    return owner


def branch_owner(rel: np.ndarray, dig: np.ndarray, pw: np.ndarray) -> np.ndarray:
    """Per sender (relabelled labels ``rel``, their digits ``dig``, ``pw[d] = n**d``), the index of the related
    lower sender it hangs on, -1 for a root."""
    return _branch_owner(np.ascontiguousarray(rel, dtype=np.int64), np.ascontiguousarray(dig, dtype=np.int64),
                         np.ascontiguousarray(pw, dtype=np.int64))


@njit(cache=True)
def _digits(x: np.ndarray, pw: np.ndarray, n: int) -> np.ndarray:
    out = np.empty((x.shape[0], pw.shape[0]), np.int64)
    for i in range(x.shape[0]):
        for d in range(pw.shape[0]):
            out[i, d] = (x[i] // pw[d]) % n
    return out


@njit(cache=True)
def _differing(x: np.ndarray, root_dig: np.ndarray, pw: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(x.shape[0], np.int64)
    for i in range(x.shape[0]):
        for d in range(pw.shape[0]):
            if (x[i] // pw[d]) % n != root_dig[d]:
                out[i] += 1
    return out


def differing(x: np.ndarray, root_dig: np.ndarray, pw: np.ndarray, n: int) -> np.ndarray:
    """Per label of ``x``, the number of digits (``pw[d] = n**d``) in which it differs from ``root_dig``."""
    return _differing(np.ascontiguousarray(x, dtype=np.int64), np.ascontiguousarray(root_dig, dtype=np.int64),
                      np.ascontiguousarray(pw, dtype=np.int64), int(n))


@njit(cache=True)
def _greedy_groups(cand: np.ndarray, pw: np.ndarray, root_dig: np.ndarray, combos: np.ndarray, n: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dig = _digits(cand, pw, n)
    c = cand.shape[0]
    S, t = combos.shape
    nt = 1
    for _j in range(t):
        nt *= n
    keys = np.empty(S * c, np.int64)
    who = np.empty(S * c, np.int64)
    differ = np.zeros(c, np.int64)            # per candidate, a bit per digit that differs from the root's
    for i in range(c):
        for d in range(pw.shape[0]):
            differ[i] |= np.int64(dig[i, d] != root_dig[d]) << d
    e = 0
    for s in range(S):                        # subset outer, candidate inner: a stable sort keeps members in order
        sub = 0
        for j in range(t):
            sub |= np.int64(1) << combos[s, j]
        for i in range(c):
            if differ[i] & sub != sub:        # a digit of the subset is the root's (one test, not a loop)
                continue
            code = 0
            w = 1
            for j in range(t):
                code += dig[i, combos[s, j]] * w
                w *= n
            keys[e] = s * nt + code
            who[e] = i
            e += 1
    members = np.empty(c, np.int64)
    offsets = np.zeros(c // 2 + 1, np.int64)
    subsets = np.empty(c // 2, np.int64)
    if e < 2:
        return members[:0], offsets[:1], subsets[:0]
    total = S * nt
    if total <= 4 * e + 65536:     # few possible keys: a counting sort (stable, as the merge sort)
        cnt = np.zeros(total + 1, np.int64)
        for i in range(e):
            cnt[keys[i] + 1] += 1
        for i in range(total):
            cnt[i + 1] += cnt[i]
        srt = np.empty(e, np.int64)
        for i in range(e):
            srt[cnt[keys[i]]] = i
            cnt[keys[i]] += 1
    else:
        srt = np.argsort(keys[:e], kind="mergesort")    # type: ignore[assignment]  # int64 on every platform numba runs
    key = keys[:e][srt]
    mem = who[:e][srt]
    heads = np.empty(e + 1, np.int64)
    G = 0
    for i in range(e):
        if i == 0 or key[i] != key[i - 1]:
            heads[G] = i
            G += 1
    heads[G] = e
    heap = [np.int64(0)]                    # (c + 1 - size) * G + g: largest first, then the smallest key
    heap.pop()
    for g in range(G):
        size = heads[g + 1] - heads[g]
        if size >= 2:
            heap.append((c + 1 - size) * G + g)
    heapq.heapify(heap)
    taken = np.zeros(c, np.bool_)
    ng = 0
    nm = 0
    while len(heap) > 0:
        top = heapq.heappop(heap)
        q = top % G
        stored = c + 1 - top // G
        live = 0
        for i in range(heads[q], heads[q + 1]):
            if not taken[mem[i]]:
                live += 1
        if live < 2:
            continue
        if live < stored:
            heapq.heappush(heap, (c + 1 - live) * G + q)
            continue
        for i in range(heads[q], heads[q + 1]):
            if not taken[mem[i]]:
                taken[mem[i]] = True
                members[nm] = mem[i]
                nm += 1
        subsets[ng] = key[heads[q]] // nt
        ng += 1
        offsets[ng] = nm
    return members[:nm], offsets[:ng + 1], subsets[:ng]


def greedy_groups(cand: np.ndarray, pw: np.ndarray, root_dig: np.ndarray, combos: np.ndarray, n: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Alg. 2's disjoint groups of the candidate labels ``cand`` (digits: ``pw[d] = n**d``) sharing non-root values on the digits of one row
    of ``combos``: their members (candidate positions, group ``g`` is ``members[offsets[g]:offsets[g + 1]]``) and
    the row of ``combos`` each shares, largest group first."""
    return _greedy_groups(np.ascontiguousarray(cand, dtype=np.int64), np.ascontiguousarray(pw, dtype=np.int64),
                          np.ascontiguousarray(root_dig, dtype=np.int64), np.ascontiguousarray(combos, dtype=np.int64),
                          int(n))


def warm_up() -> None:
    """Compile (or load from the on-disk cache) the kernels on a tiny BCube(3,1)."""
    rel = np.array([1, 3, 4], np.int64)
    dig = np.array([[1, 0], [0, 1], [1, 1]], np.int64)
    branch_owner(rel, dig, np.array([1, 3], np.int64))
    greedy_groups(rel, np.array([1, 3], np.int64), np.zeros(2, np.int64), np.array([[0], [1]], np.int64), 3)
    differing(rel, np.zeros(2, np.int64), np.array([1, 3], np.int64), 3)
