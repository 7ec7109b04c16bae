"""Unicast-based aggregation trees and the no-aggregation baseline on BCube (003 §3.2, §5.1).

003: "each of all senders independently delivers its data to the receiver along a unicast path
that is randomly selected from k+1 ones" (BuildPathSet's parallel paths), and aggregation happens
only where those paths happen to meet. Decisions:

* **Which paths.** Only the *shortest* of the k+1 parallel paths are drawn: a sender that differs
  from the receiver in ``h`` digits has ``h`` of them, path ``i`` correcting digit ``i`` first and
  then ``i-1, ..., 0, k, ..., i+1`` (:meth:`dcnlab.controller.routing.bcube.BCubeRouter.parallel_paths`).
  The other ``k+1-h`` paths are detours (AltDCRouting) that no one would pick for a unicast flow, and
  003's "equal-cost" wording excludes them.
* **The draw.** The path index is a hash (splitmix64) of ``(seed, receiver, sender)``: the same
  seed gives the same tree whether a tree is built alone or inside a 1,500-receiver shuffle, on any
  number of workers. 003's Fig. 2(a) (cost 22, 18 links) is the draw in which no two paths meet
  before the receiver; ``first_dims`` pins the draw to reproduce it. A fixed "highest digit first"
  order instead gives cost 16 and 12 links on that example.
* **Where paths meet.** When flows meet at a server they are merged, and the merged flow continues
  along the path of the sender with the smallest label among those whose paths cross that server.
  Every server therefore has one next hop, the union is a tree, and no order of processing matters.
* **No aggregation** (003's "existing method"): every flow travels its own unicast path; the cost
  is 2 links x Hamming distance per flow, whatever the paths, and the active links are the union
  of the drawn paths.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dcnlab.controller.aggregation.forest import Forest, ForestBuilder, attach, bits_for, run_starts, stage_members
from dcnlab.controller.aggregation.labels import LabelSpace

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(*parts: np.ndarray | int) -> np.ndarray:
    """A deterministic 64-bit hash of integer arrays (broadcast), via splitmix64 rounds."""
    h = np.zeros(np.broadcast(*[np.asarray(p) for p in parts]).shape, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for p in parts:
            h = h ^ (np.asarray(p).astype(np.uint64) & _M64)
            h = h + np.uint64(0x9E3779B97F4A7C15)
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(31))
    return h


@dataclass(frozen=True)
class PathSteps:
    """Every hop of every drawn unicast path (for the no-aggregation baseline)."""

    tree: np.ndarray
    node: np.ndarray
    level: np.ndarray

    def links(self, space: LabelSpace, trees: int) -> np.ndarray:
        """Distinct physical links per tree over the union of all paths."""
        K, N = space.K, space.N
        step = space.pow[self.level]
        nxt = self.node - ((self.node // step) % space.n) * step
        a = (self.tree * N + self.node) * K + self.level
        b = (self.tree * N + nxt) * K + self.level
        keys = np.sort(np.concatenate([a, b]))
        return np.bincount(keys[run_starts(keys)] // (N * K), minlength=trees)

    def costs(self, trees: int) -> np.ndarray:
        """No aggregation: 2 links per hop, 1 unit per flow."""
        return 2.0 * np.bincount(self.tree, minlength=trees)


def first_dimension(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, rel: np.ndarray,
                    seed: int) -> np.ndarray:
    """The digit each sender corrects first: uniform over its differing digits, drawn by hash."""
    nz = space.digits(rel)[:, ::-1] != 0                  # column c = digit K-1-c
    count = nz.sum(axis=1)
    pick = (splitmix64(seed, receivers, senders) % count.astype(np.uint64)).astype(np.int64)
    nth = np.argmax(np.cumsum(nz, axis=1) > pick[:, None], axis=1)
    return space.K - 1 - nth


def unicast_forest(space: LabelSpace, receivers: np.ndarray, pair_tree: np.ndarray, pair_sender: np.ndarray,
                   seed: int = 0, first_dims: np.ndarray | None = None) -> tuple[Forest, PathSteps]:
    """Unicast-based trees (see the module doc) and the drawn paths' hops."""
    K, N, pw = space.K, space.N, space.pow
    receivers = np.asarray(receivers, dtype=np.int64)
    pair_tree = np.asarray(pair_tree, dtype=np.int64)
    pair_sender = np.asarray(pair_sender, dtype=np.int64)
    B = receivers.shape[0]
    x = space.relabel(pair_sender, receivers[pair_tree])
    first = (first_dimension(space, receivers[pair_tree], pair_sender, x, seed)
             if first_dims is None else np.asarray(first_dims, dtype=np.int64))

    # walk every path: record (server, next-hop level) with the sender's label as priority
    st_tree, st_node, st_level, st_prio = [], [], [], []
    cur = x.copy()
    for s in range(K):
        d = (first - s) % K
        dd = (cur // pw[d]) % space.n
        move = dd != 0
        st_tree.append(pair_tree[move])
        st_node.append(cur[move])
        st_level.append(d[move])
        st_prio.append(pair_sender[move])
        cur = np.where(move, cur - dd * pw[d], cur)
    steps = PathSteps(np.concatenate(st_tree), np.concatenate(st_node), np.concatenate(st_level))
    prio = np.concatenate(st_prio)

    # the next hop of a server: that of the smallest-labelled sender whose path crosses it
    key = steps.tree * N + steps.node
    kb, pb, lb = bits_for(B * N), bits_for(N), bits_for(K)
    if kb + pb + lb <= 63:
        packed = np.sort((key << (pb + lb)) | (prio << lb) | steps.level)
        skey, slev = packed >> (pb + lb), packed & ((1 << lb) - 1)
    else:
        order = np.lexsort((steps.level, prio, key))
        skey, slev = key[order], steps.level[order]
    first_of = run_starts(skey)
    hop_keys, hop_level = skey[first_of], slev[first_of]

    fb = ForestBuilder(space, receivers)
    s_rows = fb.add(x, pair_tree, True)
    s_layer = space.layer(x)
    s_keys = pair_tree * N + x
    f_keys, f_rows = stage_members(fb, B, K, s_layer, s_keys, s_rows)
    for layer in range(K, 0, -1):
        l_keys, l_rows = stage_members(fb, B, layer - 1, s_layer, s_keys, s_rows)
        if f_rows.shape[0] == 0:
            f_keys, f_rows = l_keys, l_rows
            continue
        lev = hop_level[np.searchsorted(hop_keys, f_keys)]
        node = f_keys % N
        targets = f_keys - ((node // pw[lev]) % space.n) * pw[lev]
        f_keys, f_rows = attach(fb, B, l_keys, l_rows, f_rows, targets, lev)
    return fb.finish(), steps
