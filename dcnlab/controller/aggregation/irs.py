"""IRS-based incast aggregation trees on BCube(n,k): IRS/SRS (Guo et al.), §3.2, Figs. 2-3.

The tree is built stage by stage, from the largest Hamming distance ``d`` to the receiver down to
stage 1. Stage ``j`` holds servers at distance ``j``; stage ``j-1`` holds the servers the stage-``j``
servers send to plus the senders at distance ``j-1``. One *routing symbol* ``e_j`` (a digit not used
at an earlier stage) is chosen per stage; servers whose labels differ only in digit ``e_j`` form a
group and send to their common neighbour with digit ``e_j`` set to the receiver's (inter-stage
aggregation). A group of one whose target is not a sender may instead send sideways to a one-hop
neighbour in the same stage (intra-stage aggregation), so its target server is never added.

Decisions where the paper's §3.2 leaves the construction open, written here once:

* **A1, choice of e_j.** ``e_j`` minimises the size of the stage-``(j-1)`` set *before* the
  intra-stage step, because §3.2 compares "the set of servers at stage j−1 ... achieved under a
  partition of all servers at stage j according to dimension e_j" (the groups' common neighbours and
  the senders at stage j−1) and describes the intra-stage step as applied "after partitioning all
  servers at any stage j according to e_j". The text gives no tie rule: ties go to the highest
  digit, the order BCubeRouting corrects digits in (the simplest reading). Figs. 2-3's worked trees
  are tests of the construction, not the reason for this reading.
* **A2, servers whose digit e_j already equals the receiver's.** They occur whenever senders enter
  below the top stage (v11 for receiver v3 in Fig. 3(a)). Such a server still moves one hop, so every
  stage-``j`` server is at distance ``j`` and every path is shortest: it corrects the highest digit
  in which it differs whose target is already in the stage-``(j-1)`` set (a group target or a
  sender), else its highest differing digit; servers making the same move share the target. Their
  targets count in the stage size that chooses ``e_j``.
* **A3, intra-stage targets.** A *singleton* is a stage-``j`` server (``j >= 2``) that alone sends to
  its target, the target not being a sender. Stage 1 is exempt: its targets are the receiver, and a
  detour saves nothing there (the paper's argument needs an aggregation point at stage ``<= j-2``).
  A singleton redirects to a one-hop neighbour in the same stage, in any digit: preferably the
  smallest-labelled neighbour that is not a singleton (it stays put), otherwise the smallest
  singleton neighbour with a *smaller* label. Sideways hops thus either end at a server that stays
  or strictly decrease the label, so they never form a cycle; chains are allowed and each link of a
  chain removes one target. A server may receive any number of redirects. "Label" here and in every
  tie below is the label relative to the receiver (:mod:`dcnlab.controller.aggregation.labels`).
* **A4, d < k+1.** Nothing special: the stages run from ``d`` down; stages above ``d`` are empty and
  use no symbol.

The construction is vectorised over many trees at once (a whole shuffle's receivers): every stage
needs, per digit ``f``, the servers grouped by their label without digit ``f``, which one packed
sort gives; that is the O(k^2 m) per stage of the paper's Theorem 1 with numpy doing the inner loops.
"""

from __future__ import annotations

import numpy as np

from dcnlab.controller.aggregation.forest import (Forest, ForestBuilder, attach, bits_for, in_sorted, run_starts, sort_index,
                                          stage_members)
from dcnlab.controller.aggregation.labels import LabelSpace

_BIG = np.iinfo(np.int64).max


def irs_forest(space: LabelSpace, receivers: np.ndarray, pair_tree: np.ndarray, pair_sender: np.ndarray,
               intra_stage: bool = True) -> tuple[Forest, np.ndarray]:
    """IRS trees towards ``receivers``; sender ``pair_sender[i]`` belongs to tree ``pair_tree[i]``.

    Returns the forest and the routing symbols, ``symbols[b, j-1] = e_j`` (-1 for an empty stage).
    Inputs must already be valid (distinct senders per tree, none equal to its receiver)."""
    K, N = space.K, space.N
    receivers = np.asarray(receivers, dtype=np.int64)
    pair_tree = np.asarray(pair_tree, dtype=np.int64)
    B = receivers.shape[0]
    x = space.relabel(np.asarray(pair_sender, dtype=np.int64), receivers[pair_tree])
    fb = ForestBuilder(space, receivers)
    srows = fb.add(x, pair_tree, True)
    slayer = space.layer(x)
    used = np.zeros((B, K), dtype=bool)
    symbols = np.full((B, K), -1, dtype=np.int64)

    s_keys = pair_tree * N + x
    t_keys, t_rows = stage_members(fb, B, K, slayer, s_keys, srows)
    for j in range(K, 0, -1):
        l_keys, l_rows = stage_members(fb, B, j - 1, slayer, s_keys, srows)
        if t_rows.shape[0] == 0:
            t_keys, t_rows = l_keys, l_rows
            continue
        t_tree, t_node = t_keys // N, t_keys % N
        stage = _Stage(space, B, t_tree, t_node, l_keys)
        best = stage.choose(used)
        active = np.zeros(B, dtype=bool)
        active[t_tree] = True
        used[active, best[active]] = True
        symbols[active, j - 1] = best[active]
        pos = np.arange(t_rows.shape[0])
        tgt = stage.targets[best[t_tree], pos]
        lev = stage.levels[best[t_tree], pos]

        redirect = stage.intra_stage(tgt) if intra_stage and j >= 2 else np.full(pos.shape[0], -1)
        moved = redirect >= 0
        if moved.any():
            src, dst = pos[moved], redirect[moved]
            fb.link(t_rows[src], t_rows[dst], space.differing_dim(t_node[src], t_node[dst]))

        stay = ~moved
        t_keys, t_rows = attach(fb, B, l_keys, l_rows, t_rows[stay], tgt[stay], lev[stay])
    return fb.finish(), symbols


class _Stage:
    """One stage of every tree: the grouping per digit, the candidate targets, the intra-stage step."""

    def __init__(self, space: LabelSpace, B: int, tree: np.ndarray, node: np.ndarray, l_keys: np.ndarray) -> None:
        self.space, self.B, self.tree, self.node, self.l_keys = space, B, tree, node, l_keys
        K, N, n = space.K, space.N, space.n
        m = node.shape[0]
        self.m = m
        self.dig = space.digits(node)
        self.base = tree * N + node
        # per digit f: servers sorted by (tree, label without digit f, digit f)
        self.order: list[np.ndarray] = []
        self.group: list[np.ndarray] = []       # sorted target keys (label with digit f zeroed)
        self.starts: list[np.ndarray] = []
        self.moves: list[np.ndarray] = []       # sorted position: digit f differs from the receiver's
        for f in range(K):
            df = self.dig[:, f]
            comp = (self.base - df * space.pow[f]) * n + df
            skeys, order = sort_index(comp, B * N * n)
            g, d = np.divmod(skeys, n)
            self.order.append(order)
            self.group.append(g)
            self.starts.append(run_starts(g))
            self.moves.append(d != 0)
        self.targets = np.zeros((K, m), dtype=np.int64)
        self.levels = np.zeros((K, m), dtype=np.int64)

    def choose(self, used: np.ndarray) -> np.ndarray:
        """e_j per tree: the smallest stage-(j-1) set before the intra-stage step (ties: highest digit)."""
        K, N, B = self.space.K, self.space.N, self.B
        l_count = np.bincount(self.l_keys // N, minlength=B)
        pre = np.full((B, K), _BIG, dtype=np.int64)
        unused = ~used[self.tree]
        for e in range(K):
            usable = unused[:, e]
            if not usable.any():
                continue
            de = self.dig[:, e]
            g, starts = self.group[e], self.starts[e]
            group_keys = g[starts & self.moves[e]]              # distinct inter-stage targets
            self.targets[e] = self.base - de * self.space.pow[e]
            self.levels[e] = e
            a2 = np.flatnonzero((de == 0) & usable)
            fallback_keys = self._a2_targets(e, a2, group_keys)
            size = (np.bincount(group_keys // N, minlength=B) + l_count
                    - np.bincount(group_keys[in_sorted(self.l_keys, group_keys)] // N, minlength=B))
            if fallback_keys.shape[0]:
                fk = np.sort(fallback_keys)
                size += np.bincount(fk[run_starts(fk)] // N, minlength=B)
            ok = np.zeros(B, dtype=bool)
            ok[self.tree[usable]] = True
            pre[ok, e] = size[ok]
        return (K - 1 - np.argmin(pre[:, ::-1], axis=1)).astype(np.int64)

    def _a2_targets(self, e: int, a2: np.ndarray, group_keys: np.ndarray) -> np.ndarray:
        """Targets of servers whose digit e already matches (A2); returns the keys of new targets."""
        if a2.shape[0] == 0:
            return np.zeros(0, np.int64)
        space = self.space
        K = space.K
        dig = self.dig[a2]                                            # (A, K)
        cand = self.base[a2][:, None] - dig * space.pow               # target when correcting digit f
        can = dig != 0
        flat = cand[can]
        hit = np.zeros(can.shape, dtype=bool)
        hit[can] = in_sorted(group_keys, flat) | in_sorted(self.l_keys, flat)
        # highest differing digit whose target exists, else the highest differing digit
        rev = np.arange(K - 1, -1, -1)
        first_hit = K - 1 - np.argmax(hit[:, rev], axis=1)
        first_can = K - 1 - np.argmax(can[:, rev], axis=1)
        done = hit.any(axis=1)
        rows = np.arange(a2.shape[0])
        tgt = cand[rows, first_hit]
        lev = first_hit.astype(np.int64)
        fallback, fallback_level = cand[rows, first_can], first_can.astype(np.int64)
        tgt[~done], lev[~done] = fallback[~done], fallback_level[~done]
        self.targets[e, a2], self.levels[e, a2] = tgt, lev
        return tgt[~done]

    def intra_stage(self, tgt: np.ndarray) -> np.ndarray:
        """Position each singleton redirects to (-1: none), following the A3 rule of the module doc."""
        m, B, N = self.m, self.B, self.space.N
        skeys, order = sort_index(tgt, B * N)
        starts = run_starts(skeys)
        run = np.cumsum(starts) - 1
        count = np.empty(m, dtype=np.int64)
        count[order] = np.bincount(run)[run]
        single = (count == 1) & ~in_sorted(self.l_keys, tgt)
        redirect = np.full(m, -1, dtype=np.int64)
        if not single.any():
            return redirect
        ib = bits_for(max(m - 1, 1))
        packed = (self.node << ib) | np.arange(m, dtype=np.int64)
        best_stay = np.full(m, _BIG, dtype=np.int64)
        best_single = np.full(m, _BIG, dtype=np.int64)
        for f in range(self.space.K):
            order_f, starts_f = self.order[f], self.starts[f]
            if starts_f.all():
                continue                                        # no two servers differ only in digit f
            first = np.flatnonzero(starts_f)
            run_f = np.cumsum(starts_f) - 1
            p = packed[order_f]
            s = single[order_f]
            min_stay = np.minimum.reduceat(np.where(s, _BIG, p), first)[run_f]
            min_single = np.minimum.reduceat(np.where(s, p, _BIG), first)[run_f]
            min_single = np.where(min_single < p, min_single, _BIG)
            best_stay[order_f] = np.minimum(best_stay[order_f], min_stay)
            best_single[order_f] = np.minimum(best_single[order_f], min_single)
        choice = np.where(best_stay < _BIG, best_stay, best_single)
        go = single & (choice < _BIG)
        redirect[go] = choice[go] & ((1 << ib) - 1)
        return redirect
