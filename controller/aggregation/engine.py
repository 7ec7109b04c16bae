"""The paper-scale engine: IRS, unicast and KMB trees compiled with numba, one receiver at a time.

003's Fig. 5 point m = n = 1,500 on BCube(8,5) is 1,500 incast trees of 1,500 senders each, 100
times over. The reference implementations (:mod:`.irs`, :mod:`.unicast`: numpy over batches of
trees; :func:`.steiner.kmb_reference`: per tree) spend 2-4 microseconds per sender-receiver pair on
sorting. This module builds exactly the same trees (``tests/test_aggregation_engine.py`` compares
them row by row on thousands of random instances) in a few hundred nanoseconds per pair:

* **No sorting.** The servers already in a unicast or KMB tree form a *stamped open-addressing
  hash table* of int32 rows (:class:`Scratch`): a row belongs to the current set when its stamp
  equals the set's, and a new set is a new stamp, so nothing is ever cleared. Tables are sized to
  the members (twice their count, a power of two), not to the fabric: dense arrays over all ``N``
  labels would not stay in cache on BCube(6,8)'s 10 million servers.
* **IRS groups by direct addressing.** The sets IRS needs (the servers that share a label but one
  digit, the targets of a stage) are keyed by a label without one digit, ``N / n`` possible keys:
  bitmaps over all of them (4 KiB per column on BCube(8,5), 205 KiB on BCube(6,8)) say which keys
  the current pass holds, and an int32 table over them (512 KiB and 27 MB) holds the values, valid
  only where the bit is set, so it is never cleared; every pass lists the keys it set and zeroes
  their bitmap words. Only the entries of a tree's own servers are touched.
  Tables live per process (:func:`scratch`), so a round allocates almost nothing.
* **Choosing e_j is most of the IRS time.** A1 (:mod:`.irs`) needs the stage size of every unused
  symbol, i.e. one grouping pass per candidate (20 passes per tree on BCube(8,5)). The passes are
  branch-free (whether a digit is 0 is a coin flip to the branch predictor, and mispredictions,
  not memory, were most of the cost), stop counting fallback targets once a candidate cannot win,
  and keep their groups of two or more, which are what the intra-stage step needs; a stage with one
  candidate left skips the comparison. Measured on BCube(8,5), 1,500 senders, 1,500 receivers:
  about 0.65-0.75 CPU-s, against 0.8 with the hash tables of the previous version.
* **Inputs are trusted**: distinct senders, none equal to a receiver (the public API,
  :func:`controller.aggregation.resolve`, checks them; the model draws them so).
* **Digits by shifts** when ``n`` is a power of two (BCube(8,5), BCube(4,8)); by division otherwise.
* **Relabelling** (:mod:`.labels`) is done per receiver inside the kernels, so a shuffle is never
  materialised as ``m x n`` pairs.
* **Costs only.** At ``delta = 0`` a tree's cost is 2 x (servers - 1), so only the node count is
  needed; for ``delta > 0`` the flows of every requested ratio are folded bottom-up in one
  topological pass per ratio (:func:`_tree_flows`).
* **KMB for a shuffle** shares the senders' minimum spanning tree (see :mod:`.steiner`): one
  Kruskal pass of ``2m`` edges per receiver instead of ``m^2``.

The kernels are compiled once per machine (``cache=True`` writes them next to this file, in
``__pycache__``, git-ignored): the first process after a change to this file compiles for about
40 s on this 2-core machine, later ones load the kernels in about a second. :func:`warm_up`
compiles them before a process pool starts, so workers only load them. Results are deterministic:
they depend on the inputs and the seed, never on timing or the number of workers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numba import njit

from controller.aggregation.forest import Forest
from controller.aggregation.labels import LabelSpace

log = logging.getLogger(__name__)

_BIG = np.iinfo(np.int64).max
_SM_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SM_C1 = np.uint64(0xBF58476D1CE4E5B9)
_SM_C2 = np.uint64(0x94D049BB133111EB)


# -- label arithmetic ---------------------------------------------------------------------------------

@njit(inline="always", cache=True)
def _dig(x, d, n, sh, pw):
    """Digit ``d`` of label ``x``."""
    if sh > 0:
        return (x >> (sh * d)) & (n - 1)
    return (x // pw[d]) % n


@njit(inline="always", cache=True)
def _key(x, f, sh, pw):
    """Label ``x`` without digit ``f``: an index in ``[0, N / n)`` shared by all servers differing only in ``f``."""
    if sh > 0:
        low = x & ((1 << (sh * f)) - 1)
        return ((x >> (sh * (f + 1))) << (sh * f)) | low
    return (x // pw[f + 1]) * pw[f] + x % pw[f]


@njit(inline="always", cache=True)
def _stamp(ctr):
    ctr[0] += 1
    return ctr[0]


@njit(cache=True)
def _relabel(xs, r, K, n, sh, pw, out):
    """Digit-wise ``x - r mod n`` for every ``x`` in ``xs`` (:meth:`LabelSpace.relabel`)."""
    rd = np.empty(K, np.int64)
    for d in range(K):
        rd[d] = _dig(r, d, n, sh, pw)
    for i in range(xs.shape[0]):
        x = xs[i]
        v = 0
        for d in range(K):
            c = _dig(x, d, n, sh, pw) - rd[d]
            if c < 0:
                c += n
            v += c * pw[d]
        out[i] = v


@njit(cache=True)
def _layer(x, K, n, sh, pw):
    c = 0
    for d in range(K):
        if _dig(x, d, n, sh, pw) != 0:
            c += 1
    return c


@njit(cache=True)
def _diff_dim(a, b, K, n, sh, pw):
    """The (highest) digit in which ``a`` and ``b`` differ."""
    for d in range(K - 1, -1, -1):
        if _dig(a, d, n, sh, pw) != _dig(b, d, n, sh, pw):
            return d
    return -1


# -- per-process scratch ------------------------------------------------------------------------------

@dataclass
class Scratch:
    """Tables reused by every tree a process builds on one BCube size.

    ``hash``: a stamped open-addressing hash table of full labels (unicast and KMB trees), rows of 4
    int32 (16 bytes): stamp (the row is in the current set when it equals the set's stamp), key, then
    two values. ``bits`` and ``tab``: direct-address tables over labels without one digit (IRS
    groups; ``N / n`` entries, see the IRS section)."""

    hash: np.ndarray
    bits: np.ndarray          # (N / n / 64 + 1, 4) uint64 bitmaps, all-zero between passes
    tab: np.ndarray           # (4, N / n) int32, valid where the entry's bit is set
    ctr: np.ndarray           # (1,) the last stamp handed out


_SCRATCH: dict[tuple[int, int, int], Scratch] = {}
_STAMP_LIMIT = 1 << 30


def _pow2_at_least(x: int) -> int:
    return 1 << max(int(x) - 1, 1).bit_length()


def scratch(space: LabelSpace, members: int) -> Scratch:
    """The process's tables for ``space`` and up to ``members`` senders (one size kept at a time)."""
    cap = max(64, _pow2_at_least(2 * (1 + members * max(space.K, 2))))
    key = (space.n, space.k, cap)
    s = _SCRATCH.get(key)
    if s is None:
        _SCRATCH.clear()
        keys = space.N // space.n
        s = Scratch(np.zeros((cap, 4), np.int32), np.zeros((keys // 64 + 1, 4), np.uint64),
                    np.zeros((4, keys), np.int32), np.zeros(1, np.int64))
        _SCRATCH[key] = s
    if s.ctr[0] > _STAMP_LIMIT:           # int32 stamps: start over long before they could wrap
        s.hash[:] = 0
        s.ctr[0] = 0
    return s


def _params(space: LabelSpace) -> tuple[int, int, int, np.ndarray]:
    n = space.n
    sh = n.bit_length() - 1 if n & (n - 1) == 0 else 0
    pw = (n ** np.arange(space.K + 1)).astype(np.int64)
    return space.K, n, sh, pw


@njit(inline="always", cache=True)
def _bits_for(items):
    """log2 of a table size with at least twice ``items`` slots (at least 64)."""
    b = 6
    while (1 << b) < 2 * items:
        b += 1
    return b


@njit(inline="always", cache=True)
def _slot(tab, bits, stamp, key):
    """Slot of ``key`` in the hash table (``tab[i, 0] != stamp``: absent, and ``i`` is where it goes)."""
    mask = (1 << bits) - 1
    i = ((key * 2654435761) & 0xFFFFFFFF) >> (32 - bits)
    while tab[i, 0] == stamp and tab[i, 1] != key:
        i = (i + 1) & mask
    return i


# -- flows under the cost model ---------------------------------------------------------------------------

@njit(cache=True)
def _tree_flows(parent, sender, rows, deltas, traffic, root_out, order, kids, tot, top, col):
    """Cost (2 links per hop x the child's flow) and root output of one tree for every ratio in ``deltas``.

    ``parent[0] == -1`` is the root. Writes ``traffic[:, col]`` and ``root_out[:, col]``."""
    flat = True
    for di in range(deltas.shape[0]):
        if deltas[di] != 0.0:
            flat = False
    if flat:        # delta = 0: every hop carries one unit
        for di in range(deltas.shape[0]):
            traffic[di, col] = 2.0 * (rows - 1)
            root_out[di, col] = 1.0
        return
    for i in range(rows):
        kids[i] = 0
    for i in range(1, rows):
        kids[parent[i]] += 1
    head = 0
    tail = 0
    for i in range(rows):
        if kids[i] == 0:
            order[tail] = i
            tail += 1
    while head < tail:
        v = order[head]
        head += 1
        p = parent[v]
        if p >= 0:
            kids[p] -= 1
            if kids[p] == 0:
                order[tail] = p
                tail += 1
    for di in range(deltas.shape[0]):
        dl = deltas[di]
        if dl == 0.0:
            traffic[di, col] = 2.0 * (rows - 1)
            root_out[di, col] = 1.0
            continue
        for i in range(rows):
            tot[i] = 0.0
            top[i] = 0.0
        cost = 0.0
        for t in range(rows):
            v = order[t]
            p = parent[v]
            if p < 0:
                continue
            own = 1.0 if sender[v] else 0.0
            mx = own if own > top[v] else top[v]
            g = (1.0 - dl) * mx + dl * (own + tot[v])
            cost += 2.0 * g
            tot[p] += g
            if g > top[p]:
                top[p] = g
        traffic[di, col] = cost
        root_out[di, col] = (1.0 - dl) * top[0] + dl * tot[0]


# -- IRS (003 §3.2; decisions in controller.aggregation.irs) ----------------------------------------------
#
# Per stage, the servers of T that differ only in digit f form a group; ``gid[f, i]`` is the position of
# the first member of i's group (its representative). A server whose digit f is already the receiver's
# is alone in its group (another member with the same label-without-f would be one layer higher), so
# one pass per digit groups only the others, plus the senders one hop closer whose digit f is 0 (the
# targets that already exist). The same pass gives the stage size of candidate symbol f, and the groups
# with two or more members (``multi``) are all the intra-stage step has to look at.
#
# Labels without one digit index ``N / n`` entries directly (no hashing): four bitmap columns
# (``bm``, (N / n / 64 + 1, 4) uint64; 4 KiB per column on BCube(8,5)) say which entries the current
# pass holds, and ``tab`` ((4, N / n) int32) holds their values, valid only where the bit is set, so
# it is never cleared. Columns: 0 a sender one hop closer (row in ``tab[1, k]``), 1 a group of T
# (first member in ``tab[0, k]``), 2 a fallback target (A2; count and row in ``tab[2:4, k]``), 3 the
# group is already listed in ``multi``. Every entry a pass sets is listed in ``keys``, and its bitmap
# words are zeroed when the pass is done, so the bitmaps are all-zero between passes. The passes are
# branch-free: whether a digit is 0 is a coin flip to the CPU, and mispredicted branches, not memory,
# were most of the time.

@njit(inline="always", cache=True)
def _bit(bm, k, c):
    """Bit ``k`` of bitmap column ``c`` (0 or 1)."""
    return np.int64((bm[k >> 6, c] >> np.uint64(k & 63)) & np.uint64(1))


@njit(inline="always", cache=True)
def _set_bit(bm, k, c):
    bm[k >> 6, c] |= np.uint64(1) << np.uint64(k & 63)


@njit(cache=True)
def _clear(bm, keys, nk):
    """Zero the bitmap words of the ``nk`` entries listed in ``keys``."""
    for t in range(nk):
        w = keys[t] >> 6
        bm[w, 0] = 0
        bm[w, 1] = 0
        bm[w, 2] = 0
        bm[w, 3] = 0


@njit(cache=True)
def _a2_target(xi, e, K, n, sh, pw, bm):
    """A server whose digit e already matches the receiver's (ambiguity A2): the highest differing
    digit whose target already exists (a group target or a sender one hop closer: bitmap column 0 or
    1), with that target's entry; else -1 - the highest differing digit, and the entry of that
    (fallback) target."""
    top = -1
    for g in range(K - 1, -1, -1):
        dg = _dig(xi, g, n, sh, pw)
        if dg == 0:
            continue
        if top < 0:
            top = g
        k = _key(xi - dg * pw[g], e, sh, pw)
        if ((bm[k >> 6, 0] | bm[k >> 6, 1]) >> np.uint64(k & 63)) & np.uint64(1):
            return g, k
    return -1 - top, _key(xi - _dig(xi, top, n, sh, pw) * pw[top], e, sh, pw)


@njit(cache=True)
def _group_pass(e, t_node, tn, l_node, l_row, ln, K, n, sh, pw, bm, tab, keys, a2, gid_f, multi, limit, build,
                out):
    """Group T by label-without-digit-e and return the size of stage j-1 if ``e`` were the routing
    symbol, before the intra-stage step (A1).

    ``out`` gets (servers listed in ``multi``, the members of groups of two or more, ``gid_f[i]``
    being the first member of i's group; servers whose digit e is 0, listed in ``a2``; entries
    listed in ``keys``). A candidate (``build`` false) counts the distinct fallback targets of the
    A2 servers too, unless the count has already reached ``limit`` (the best size so far; ties go to
    the higher digit, already counted): fallbacks only add. It then clears its bits. The routing
    symbol's pass (``build``) records the senders' rows and keeps its bits for building the stage."""
    size = ln
    nk = 0
    for i in range(ln):
        y = l_node[i]
        z = np.int64(_dig(y, e, n, sh, pw) == 0)
        k = _key(y, e, sh, pw)
        bm[k >> 6, 0] |= np.uint64(z) << np.uint64(k & 63)
        if build:
            tab[1, k] = l_row[i] if z else tab[1, k]
        keys[nk] = k
        nk += z
    na2 = 0
    nm = 0
    for i in range(tn):
        xi = t_node[i]
        nz = np.int64(_dig(xi, e, n, sh, pw) != 0)
        a2[na2] = i
        na2 += 1 - nz
        k = _key(xi, e, sh, pw)
        wd = k >> 6
        sb = np.uint64(k & 63)
        old = bm[wd, 1]
        seen = np.int64((old >> sb) & np.uint64(1))         # only a server with digit e != 0 sets it
        bm[wd, 1] = old | (np.uint64(nz) << sb)
        new = nz & (1 - seen)
        fr = np.int64(tab[0, k])
        tab[0, k] = i if new else fr
        gid_f[i] = fr if seen else i
        multi[nm] = i
        nm += seen
        old3 = bm[wd, 3]
        rep = seen & np.int64(((old3 >> sb) & np.uint64(1)) == 0)
        bm[wd, 3] = old3 | (np.uint64(seen) << sb)
        multi[nm] = fr
        nm += rep
        keys[nk] = k
        nk += new
        size += new & np.int64(((bm[wd, 0] >> sb) & np.uint64(1)) == 0)
    if not build:
        t = 0
        while t < na2 and size < limit:
            g, k = _a2_target(t_node[a2[t]], e, K, n, sh, pw, bm)
            t += 1
            if g < 0 and not _bit(bm, k, 2):
                _set_bit(bm, k, 2)
                keys[nk] = k
                nk += 1
                size += 1
        _clear(bm, keys, nk)
        nk = 0
    out[0] = nm
    out[1] = na2
    out[2] = nk
    return size


@njit(cache=True)
def _irs_tree(x, K, n, sh, pw, intra, bm, tab, w, gid, o_node, o_parent, o_level, o_sender):
    """One IRS tree towards 0 over the relabelled senders ``x``; returns its number of rows.

    Rows: 0 the receiver, ``1..m`` the senders in input order, then relays in creation order.
    ``w`` is (20, m + 1) int64 work space; ``gid`` is (2K, m + 1): the groups per digit, then the
    members of groups with two or more members per digit."""
    m = x.shape[0]
    o_node[0] = 0
    o_parent[0] = -1
    o_level[0] = -1
    o_sender[0] = False
    start = np.zeros(K + 2, np.int64)
    counts = np.zeros(3, np.int64)
    n_multi = np.zeros(K, np.int64)
    by_layer, lay = w[0], w[1]
    for i in range(m):
        o_node[1 + i] = x[i]
        o_parent[1 + i] = -1
        o_level[1 + i] = -1
        o_sender[1 + i] = True
        lay[i] = _layer(x[i], K, n, sh, pw)
        start[lay[i] + 1] += 1
    for j in range(K + 1):
        start[j + 1] += start[j]
    fill = start.copy()
    for i in range(m):
        by_layer[fill[lay[i]]] = i
        fill[lay[i]] += 1
    t_node, t_row, l_node, l_row = w[2], w[3], w[4], w[5]
    tgt, lev, aux, link, kind, cnt, single = w[6], w[7], w[8], w[9], w[10], w[11], w[12]
    a2, keys = w[14], w[15]
    tn = 0
    for q in range(start[K], start[K + 1]):
        t_node[tn] = x[by_layer[q]]
        t_row[tn] = 1 + by_layer[q]
        tn += 1
    rows = 1 + m
    used = 0
    for j in range(K, 0, -1):
        ln = 0
        if j == 1:
            l_node[0] = 0
            l_row[0] = 0
            ln = 1
        else:
            for q in range(start[j - 1], start[j]):
                l_node[ln] = x[by_layer[q]]
                l_row[ln] = 1 + by_layer[q]
                ln += 1
        if tn == 0:
            for i in range(ln):
                t_node[i] = l_node[i]
                t_row[i] = l_row[i]
            tn = ln
            continue
        # e_j: the unused symbol with the smallest stage j-1 before the intra-stage step (ties: highest)
        best_e = -1
        best_size = _BIG
        n_cand = 0
        for e in range(K):
            n_multi[e] = -1                 # unknown: the intra-stage step groups T by e itself
            if not (used >> e) & 1:
                n_cand += 1
                best_e = e
        if n_cand > 1:               # one candidate left: nothing to compare
            best_e = -1
            for e in range(K - 1, -1, -1):
                if (used >> e) & 1:
                    continue
                size = _group_pass(e, t_node, tn, l_node, l_row, ln, K, n, sh, pw, bm, tab, keys, a2, gid[e],
                                   gid[K + e], best_size, False, counts)
                n_multi[e] = counts[0]
                if size < best_size:
                    best_size = size
                    best_e = e
        e = best_e
        used |= 1 << e
        _group_pass(e, t_node, tn, l_node, l_row, ln, K, n, sh, pw, bm, tab, keys, a2, gid[e], gid[K + e], 0, True,
                    counts)
        n_multi[e] = counts[0]
        na2 = counts[1]
        nk = counts[2]
        # targets along e. kind 0: group member (its representative p = gid[e, i] holds in link[p] the
        # row of the group's target, -1 until made); kind 1: matching digit e, target a sender one hop
        # closer (link = its row); kind 2: matching digit e, target of representative link[i]; kind 3:
        # matching digit e, fallback target of entry link[i] (count, row in tab[2:4, entry]).
        for i in range(tn):
            cnt[i] = 0
        for i in range(tn):
            xi = t_node[i]
            de = _dig(xi, e, n, sh, pw)
            if de == 0:
                continue
            kind[i] = 0
            tgt[i] = xi - de * pw[e]
            lev[i] = e
            cnt[gid[e, i]] += 1
            if gid[e, i] == i:
                k = _key(xi, e, sh, pw)
                link[i] = tab[1, k] if _bit(bm, k, 0) else -1
        for t in range(na2):
            i = a2[t]
            xi = t_node[i]
            g, k = _a2_target(xi, e, K, n, sh, pw, bm)
            f = g if g >= 0 else -1 - g
            tgt[i] = xi - _dig(xi, f, n, sh, pw) * pw[f]
            lev[i] = f
            if g >= 0:
                if _bit(bm, k, 0):
                    kind[i] = 1
                    link[i] = tab[1, k]
                else:
                    kind[i] = 2
                    link[i] = tab[0, k]
                    cnt[tab[0, k]] += 1
            else:
                if not _bit(bm, k, 2):
                    _set_bit(bm, k, 2)
                    tab[2, k] = 0
                    tab[3, k] = -1
                    keys[nk] = k
                    nk += 1
                tab[2, k] += 1
                kind[i] = 3
                link[i] = k
        # intra-stage step: singletons (alone on a target that is not a sender) move sideways
        n_single = 0
        for i in range(tn):
            aux[i] = -1
            single[i] = 0
            if kind[i] == 0:
                p = gid[e, i]
                if cnt[p] == 1 and link[p] < 0:
                    single[i] = 1
            elif kind[i] == 3 and tab[2, link[i]] == 1:
                single[i] = 1
            n_single += single[i]
        _clear(bm, keys, nk)        # the bits are done with; ``tab`` keeps the fallback rows (columns 2-3)
        if intra and j >= 2 and n_single > 0:
            _intra_stage(t_node, tn, l_node, l_row, single, n_multi, K, n, sh, pw, bm, tab, gid, w, counts, aux)
        # attach: redirected singletons to their neighbour, the others to their target
        made = rows
        for i in range(tn):
            r = t_row[i]
            if aux[i] >= 0:
                o_parent[r] = t_row[aux[i]]
                o_level[r] = _diff_dim(t_node[i], t_node[aux[i]], K, n, sh, pw)
                continue
            o_level[r] = lev[i]
            if kind[i] == 1:
                o_parent[r] = link[i]
                continue
            if kind[i] == 3:
                q = link[i]
                if tab[3, q] < 0:
                    tab[3, q] = rows
                    o_node[rows] = tgt[i]
                    o_parent[rows] = -1
                    o_level[rows] = -1
                    o_sender[rows] = False
                    rows += 1
                o_parent[r] = tab[3, q]
                continue
            p = gid[e, i] if kind[i] == 0 else link[i]
            if link[p] < 0:
                link[p] = rows
                o_node[rows] = tgt[p]
                o_parent[rows] = -1
                o_level[rows] = -1
                o_sender[rows] = False
                rows += 1
            o_parent[r] = link[p]
        # the next stage: the senders one hop closer and the new targets
        tn = 0
        for i in range(ln):
            t_node[tn] = l_node[i]
            t_row[tn] = l_row[i]
            tn += 1
        for rr in range(made, rows):
            t_node[tn] = o_node[rr]
            t_row[tn] = rr
            tn += 1
    return rows


@njit(cache=True)
def _intra_stage(t_node, tn, l_node, l_row, single, n_multi, K, n, sh, pw, bm, tab, gid, w, counts, aux):
    """Every singleton moves to a one-hop neighbour in T: the smallest-labelled non-singleton, else the
    smallest singleton with a smaller label (ambiguity A3). Sets ``aux[i]`` to that position, or -1.

    The groups along a digit are regrouped here unless already known (``n_multi[f] >= 0``: the
    routing symbol's and the other candidates'). Only groups with two or more members are visited."""
    a2, keys = w[14], w[15]
    ms, mg, bstay, bsing, fst = w[16], w[17], w[18], w[19], w[1]
    for i in range(tn):
        bstay[i] = _BIG
        bsing[i] = _BIG
        fst[i] = -1
    for f in range(K):
        multi = gid[K + f]
        nm = n_multi[f]
        if nm < 0:
            _group_pass(f, t_node, tn, l_node, l_row, 0, K, n, sh, pw, bm, tab, keys, a2, gid[f], multi, 0, False,
                        counts)
            nm = counts[0]
        if nm == 0:
            continue
        g = gid[f]
        # per group: the smallest (label, position) among its non-singletons (ms) and singletons (mg)
        for t in range(nm):
            i = multi[t]
            r = g[i]
            if fst[r] != f:
                fst[r] = f
                ms[r] = _BIG
                mg[r] = _BIG
            packed = (t_node[i] << 32) | i
            if single[i]:
                if packed < mg[r]:
                    mg[r] = packed
            elif packed < ms[r]:
                ms[r] = packed
        for t in range(nm):
            i = multi[t]
            if single[i]:
                r = g[i]
                if ms[r] < bstay[i]:
                    bstay[i] = ms[r]
                if mg[r] < (t_node[i] << 32) and mg[r] < bsing[i]:
                    bsing[i] = mg[r]
    for i in range(tn):
        if not single[i]:
            continue
        if bstay[i] < _BIG:
            aux[i] = bstay[i] & 0xFFFFFFFF
        elif bsing[i] < _BIG:
            aux[i] = bsing[i] & 0xFFFFFFFF


@njit(cache=True)
def _irs_batch(receivers, senders, K, n, sh, pw, intra, deltas, bm, tab, traffic, root_out, nodes):
    m = senders.shape[0]
    cap = 1 + m * K
    x = np.empty(m, np.int64)
    w = np.zeros((20, m + 1), np.int64)
    gid = np.zeros((2 * K, m + 1), np.int64)
    o_node = np.empty(cap, np.int64)
    o_parent = np.empty(cap, np.int64)
    o_level = np.empty(cap, np.int64)
    o_sender = np.empty(cap, np.bool_)
    order = np.empty(cap, np.int64)
    kids = np.empty(cap, np.int64)
    tot = np.empty(cap, np.float64)
    top = np.empty(cap, np.float64)
    for b in range(receivers.shape[0]):
        _relabel(senders, receivers[b], K, n, sh, pw, x)
        rows = _irs_tree(x, K, n, sh, pw, intra, bm, tab, w, gid, o_node, o_parent, o_level, o_sender)
        nodes[b] = rows
        _tree_flows(o_parent, o_sender, rows, deltas, traffic, root_out, order, kids, tot, top, b)


# -- unicast (003 §3.2; decisions in controller.aggregation.unicast) ------------------------------------------

@njit(inline="always", cache=True)
def _splitmix_step(h, p):
    h = h ^ p
    h = h + _SM_GOLDEN
    h = (h ^ (h >> np.uint64(30))) * _SM_C1
    h = (h ^ (h >> np.uint64(27))) * _SM_C2
    return h ^ (h >> np.uint64(31))


@njit(cache=True)
def _first_dims(seed, r, senders, x, K, n, sh, pw, out):
    """The digit each path corrects first: the ``hash % h``-th non-zero digit, highest first
    (:func:`controller.aggregation.unicast.first_dimension`)."""
    h0 = _splitmix_step(np.uint64(0), np.uint64(seed))
    h0 = _splitmix_step(h0, np.uint64(r))
    for i in range(x.shape[0]):
        h = _splitmix_step(h0, np.uint64(senders[i]))
        cnt = _layer(x[i], K, n, sh, pw)
        pick = np.int64(h % np.uint64(cnt))
        for d in range(K - 1, -1, -1):
            if _dig(x[i], d, n, sh, pw) != 0:
                if pick == 0:
                    out[i] = d
                    break
                pick -= 1


@njit(cache=True)
def _unicast_tree(x, prio, first, K, n, sh, pw, ht, ctr, o_node, o_parent, o_level, o_sender):
    """One unicast-based tree: the next hop of a server is that of the smallest-labelled sender whose
    path crosses it; the tree is everything reachable from the senders.

    Hash rows: stamp, label, (smallest sender label through it) * 16 + its next-hop digit, tree row."""
    m = x.shape[0]
    bits = _bits_for((1 + m * K) * 3 // 4)
    s_hop = _stamp(ctr)
    for i in range(m):
        cur = x[i]
        d = first[i] + 1
        for _ in range(K):
            d = d - 1 if d > 0 else K - 1
            dd = _dig(cur, d, n, sh, pw)
            if dd == 0:
                continue
            q = _slot(ht, bits, s_hop, cur)
            code = (prio[i] << 4) | d
            if ht[q, 0] != s_hop:
                ht[q, 0] = s_hop
                ht[q, 1] = cur
                ht[q, 2] = code
                ht[q, 3] = -1
            elif code < ht[q, 2]:
                ht[q, 2] = code
            cur -= dd * pw[d]
    o_node[0] = 0
    o_parent[0] = -1
    o_level[0] = -1
    o_sender[0] = False
    for i in range(m):
        o_node[1 + i] = x[i]
        o_parent[1 + i] = -1
        o_level[1 + i] = -1
        o_sender[1 + i] = True
        q = _slot(ht, bits, s_hop, x[i])
        ht[q, 3] = 1 + i
    rows = 1 + m
    for i in range(m):
        q = _slot(ht, bits, s_hop, x[i])
        row = 1 + i
        while True:
            cur = ht[q, 1]
            d = ht[q, 2] & 15
            o_level[row] = d
            nxt = cur - _dig(cur, d, n, sh, pw) * pw[d]
            if nxt == 0:
                o_parent[row] = 0
                break
            q = _slot(ht, bits, s_hop, nxt)
            if ht[q, 3] >= 0:
                o_parent[row] = ht[q, 3]
                break
            ht[q, 3] = rows
            o_node[rows] = nxt
            o_parent[rows] = -1
            o_level[rows] = -1
            o_sender[rows] = False
            o_parent[row] = rows
            row = rows
            rows += 1
    return rows


@njit(cache=True)
def _unicast_batch(receivers, senders, seed, K, n, sh, pw, deltas, ht, ctr, traffic, root_out, nodes):
    m = senders.shape[0]
    cap = 1 + m * K
    x = np.empty(m, np.int64)
    first = np.empty(m, np.int64)
    o_node = np.empty(cap, np.int64)
    o_parent = np.empty(cap, np.int64)
    o_level = np.empty(cap, np.int64)
    o_sender = np.empty(cap, np.bool_)
    order = np.empty(cap, np.int64)
    kids = np.empty(cap, np.int64)
    tot = np.empty(cap, np.float64)
    top = np.empty(cap, np.float64)
    for b in range(receivers.shape[0]):
        _relabel(senders, receivers[b], K, n, sh, pw, x)
        _first_dims(seed, receivers[b], senders, x, K, n, sh, pw, first)
        rows = _unicast_tree(x, senders, first, K, n, sh, pw, ht, ctr, o_node, o_parent, o_level, o_sender)
        nodes[b] = rows
        _tree_flows(o_parent, o_sender, rows, deltas, traffic, root_out, order, kids, tot, top, b)


# -- KMB (003 §5.1; decisions in controller.aggregation.steiner) -------------------------------------------

@njit(inline="always", cache=True)
def _find(uf, a):
    root = a
    while uf[root] != root:
        root = uf[root]
    while uf[a] != root:
        nxt = uf[a]
        uf[a] = root
        a = nxt
    return root


@njit(cache=True)
def _hamming(a, b, K, n, sh, pw):
    c = 0
    for d in range(K):
        if _dig(a, d, n, sh, pw) != _dig(b, d, n, sh, pw):
            c += 1
    return c


@njit(cache=True)
def _senders_mst(s, K, n, sh, pw):
    """Kruskal over all sender pairs in (distance, i, j) order; returns the edges (i, j, w) in that order."""
    m = s.shape[0]
    count = np.zeros(K + 2, np.int64)
    for i in range(m):
        for j in range(i + 1, m):
            count[_hamming(s[i], s[j], K, n, sh, pw) + 1] += 1
    for d in range(K + 1):
        count[d + 1] += count[d]
    total = count[K + 1]
    pi = np.empty(total, np.int32)
    pj = np.empty(total, np.int32)
    fill = count.copy()
    for i in range(m):
        for j in range(i + 1, m):
            d = _hamming(s[i], s[j], K, n, sh, pw)
            pi[fill[d]] = i
            pj[fill[d]] = j
            fill[d] += 1
    uf = np.arange(m)
    ea = np.empty(max(m - 1, 0), np.int64)
    eb = np.empty(max(m - 1, 0), np.int64)
    ew = np.empty(max(m - 1, 0), np.int64)
    got = 0
    for q in range(total):
        if got == m - 1:
            break
        a = _find(uf, np.int64(pi[q]))
        b = _find(uf, np.int64(pj[q]))
        if a != b:
            uf[a] = b
            ea[got] = pi[q]
            eb[got] = pj[q]
            ew[got] = _hamming(s[pi[q]], s[pj[q]], K, n, sh, pw)
            got += 1
    return ea[:got], eb[:got], ew[:got]


@njit(cache=True)
def _kmb_tree(r, s, x, ea, eb, ew, K, n, sh, pw, ht, ctr, w, orient, o_node, o_parent, o_level, o_sender):
    """One KMB tree over the receiver (member 0) and the senders ``s`` (members 1..m, sorted labels).

    ``ea/eb/ew`` are the senders' MST edges in Kruskal order; ``x`` the relabelled senders. Returns the
    number of rows after pruning (rows: 0 the receiver, 1..m the senders, then Steiner servers). Without
    ``orient`` only that count is computed (the ``o_*`` arrays are not a tree)."""
    m = s.shape[0]
    # (1-2) MST of the metric closure: Kruskal over the receiver's edges and the senders' MST edges,
    # in (distance, i, j) order; member 0 is the receiver, so its edges come first within a distance.
    wr = w[0]
    cnt = np.zeros(K + 2, np.int64)
    for j in range(m):
        wr[j] = _hamming(r, s[j], K, n, sh, pw)
        cnt[wr[j] + 1] += 1
    for d in range(K + 1):
        cnt[d + 1] += cnt[d]
    byw = w[1]
    fill = cnt.copy()
    for j in range(m):
        byw[fill[wr[j]]] = j
        fill[wr[j]] += 1
    uf = w[2]
    for i in range(m + 1):
        uf[i] = i
    mi, mj = w[3], w[4]
    got = 0
    q = 0
    for d in range(1, K + 1):
        for t in range(cnt[d], cnt[d + 1]):
            j = byw[t] + 1
            a = _find(uf, np.int64(0))
            b = _find(uf, j)
            if a != b:
                uf[a] = b
                mi[got] = 0
                mj[got] = j
                got += 1
        while q < ea.shape[0] and ew[q] == d:
            a = _find(uf, ea[q] + 1)
            b = _find(uf, eb[q] + 1)
            if a != b:
                uf[a] = b
                mi[got] = ea[q] + 1
                mj[got] = eb[q] + 1
                got += 1
            q += 1
        if got == m:
            break
    # (3-4) expand every MST edge, in Kruskal order, into the path from member j to member i that
    # corrects the differing digits highest first; keep a hop if it joins two components
    s_idx = _stamp(ctr)
    bits = _bits_for((1 + m * K) * 3 // 4)
    o_node[0] = 0
    o_sender[0] = False
    q = _slot(ht, bits, s_idx, 0)
    ht[q, 0] = s_idx
    ht[q, 1] = 0
    ht[q, 2] = 0
    for i in range(m):
        q = _slot(ht, bits, s_idx, x[i])
        ht[q, 0] = s_idx
        ht[q, 1] = x[i]
        ht[q, 2] = 1 + i
        o_node[1 + i] = x[i]
        o_sender[1 + i] = True
    rows = 1 + m
    for i in range(rows):
        uf[i] = i
    ha, hb, hl = w[5], w[6], w[7]
    kept = 0
    for e in range(got):
        a_lab = 0 if mj[e] == 0 else x[mj[e] - 1]
        b_lab = 0 if mi[e] == 0 else x[mi[e] - 1]
        cur = a_lab
        cur_row = mj[e]
        for d in range(K - 1, -1, -1):
            dc = _dig(cur, d, n, sh, pw)
            db = _dig(b_lab, d, n, sh, pw)
            if dc == db:
                continue
            nxt = cur + (db - dc) * pw[d]
            q = _slot(ht, bits, s_idx, nxt)
            if ht[q, 0] != s_idx:
                ht[q, 0] = s_idx
                ht[q, 1] = nxt
                ht[q, 2] = rows
                o_node[rows] = nxt
                o_sender[rows] = False
                uf[rows] = rows
                rows += 1
            nxt_row = ht[q, 2]
            ra = _find(uf, cur_row)
            rb = _find(uf, nxt_row)
            if ra != rb:
                uf[ra] = rb
                ha[kept] = cur_row
                hb[kept] = nxt_row
                hl[kept] = d
                kept += 1
            cur = nxt
            cur_row = nxt_row
    # (5) prune Steiner leaves, then orient towards the receiver
    deg = w[8]
    for i in range(rows):
        deg[i] = 0
    for e in range(kept):
        deg[ha[e]] += 1
        deg[hb[e]] += 1
    if not orient:
        leaf = False
        for i in range(1 + m, rows):
            if deg[i] == 1:
                leaf = True
                break
        if not leaf:             # the union of the paths is a tree: nothing to prune (the usual case)
            return rows
    # adjacency (CSR) of the kept hops
    adj_start = np.zeros(rows + 1, np.int64)
    for e in range(kept):
        adj_start[ha[e] + 1] += 1
        adj_start[hb[e] + 1] += 1
    for i in range(rows):
        adj_start[i + 1] += adj_start[i]
    adj = np.empty(2 * kept, np.int64)
    pos = adj_start[:-1].copy()
    for e in range(kept):
        adj[pos[ha[e]]] = e
        pos[ha[e]] += 1
        adj[pos[hb[e]]] = e
        pos[hb[e]] += 1
    alive = np.ones(rows, np.bool_)
    stack = w[9]
    sp = 0
    for i in range(1 + m, rows):
        if deg[i] == 1:
            stack[sp] = i
            sp += 1
    while sp > 0:
        sp -= 1
        v = stack[sp]
        alive[v] = False
        for t in range(adj_start[v], adj_start[v + 1]):
            e = adj[t]
            u = ha[e] if hb[e] == v else hb[e]
            if alive[u]:
                deg[u] -= 1
                if deg[u] == 1 and u > m:
                    stack[sp] = u
                    sp += 1
    if not orient:
        c = 0
        for i in range(rows):
            if alive[i]:
                c += 1
        return c
    # BFS from the receiver over the surviving hops
    o_parent[0] = -1
    o_level[0] = -1
    seen = np.zeros(rows, np.bool_)
    seen[0] = True
    stack[0] = 0
    head = 0
    tail = 1
    while head < tail:
        v = stack[head]
        head += 1
        for t in range(adj_start[v], adj_start[v + 1]):
            e = adj[t]
            u = ha[e] if hb[e] == v else hb[e]
            if alive[u] and not seen[u]:
                seen[u] = True
                o_parent[u] = v
                o_level[u] = hl[e]
                stack[tail] = u
                tail += 1
    # compact: drop pruned rows
    new = w[10]
    c = 0
    for i in range(rows):
        if alive[i]:
            new[i] = c
            c += 1
    for i in range(rows):
        if alive[i]:
            t = new[i]
            o_node[t] = o_node[i]
            o_sender[t] = o_sender[i]
            o_level[t] = o_level[i]
            o_parent[t] = -1 if o_parent[i] < 0 else new[o_parent[i]]
    return c


@njit(cache=True)
def _kmb_batch(receivers, s, ea, eb, ew, K, n, sh, pw, ht, ctr, nodes):
    m = s.shape[0]
    cap = 1 + m * K
    x = np.empty(m, np.int64)
    w = np.empty((11, cap), np.int64)
    o_node = np.empty(cap, np.int64)
    o_parent = np.empty(cap, np.int64)
    o_level = np.empty(cap, np.int64)
    o_sender = np.empty(cap, np.bool_)
    for b in range(receivers.shape[0]):
        _relabel(s, receivers[b], K, n, sh, pw, x)
        nodes[b] = _kmb_tree(receivers[b], s, x, ea, eb, ew, K, n, sh, pw, ht, ctr, w, False,
                             o_node, o_parent, o_level, o_sender)


# -- Python API -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BatchCosts:
    """Per receiver of a batch: servers in its tree, traffic and fully aggregated output per ratio."""

    deltas: tuple[float, ...]
    nodes: np.ndarray          # (B,)
    traffic: np.ndarray        # (D, B)
    root_output: np.ndarray    # (D, B)


def _prepare(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, deltas) -> tuple:
    receivers = np.ascontiguousarray(receivers, dtype=np.int64)
    senders = np.ascontiguousarray(senders, dtype=np.int64)
    d = np.ascontiguousarray(np.asarray(deltas, dtype=np.float64).reshape(-1))
    B = receivers.shape[0]
    return receivers, senders, d, np.zeros((d.shape[0], B)), np.zeros((d.shape[0], B)), np.zeros(B, np.int64)


def irs_costs(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, deltas=(0.0,),
              intra_stage: bool = True) -> BatchCosts:
    """IRS trees from ``senders`` to every receiver: node counts, traffic and root output per delta."""
    K, n, sh, pw = _params(space)
    rec, snd, d, traffic, root, nodes = _prepare(space, receivers, senders, deltas)
    sc = scratch(space, snd.shape[0])
    _irs_batch(rec, snd, K, n, sh, pw, intra_stage, d, sc.bits, sc.tab, traffic, root, nodes)
    return BatchCosts(tuple(d.tolist()), nodes, traffic, root)


def unicast_costs(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, deltas=(0.0,),
                  seed: int = 0) -> BatchCosts:
    """Unicast-based trees (the seeded path draw of :mod:`.unicast`) to every receiver."""
    K, n, sh, pw = _params(space)
    rec, snd, d, traffic, root, nodes = _prepare(space, receivers, senders, deltas)
    sc = scratch(space, snd.shape[0])
    _unicast_batch(rec, snd, np.uint64(seed), K, n, sh, pw, d, sc.hash, sc.ctr, traffic, root, nodes)
    return BatchCosts(tuple(d.tolist()), nodes, traffic, root)


def kmb_costs(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray) -> np.ndarray:
    """Servers in the KMB tree of every receiver (cost at delta = 0 is 2 x (servers - 1))."""
    K, n, sh, pw = _params(space)
    rec = np.ascontiguousarray(receivers, dtype=np.int64)
    snd = np.sort(np.asarray(senders, dtype=np.int64))
    ea, eb, ew = _senders_mst(snd, K, n, sh, pw)
    nodes = np.zeros(rec.shape[0], np.int64)
    sc = scratch(space, snd.shape[0])
    _kmb_batch(rec, snd, ea, eb, ew, K, n, sh, pw, sc.hash, sc.ctr, nodes)
    return nodes


def _forest(space: LabelSpace, receivers: np.ndarray, parts: list[tuple[np.ndarray, ...]]) -> Forest:
    """Concatenate per-tree rows (row 0 = root) into a :class:`Forest` with the roots first."""
    B = len(parts)
    node = [np.zeros(B, np.int64)]
    tree = [np.arange(B, dtype=np.int64)]
    parent = [np.full(B, -1, np.int64)]
    level = [np.full(B, -1, np.int8)]
    sender = [np.zeros(B, bool)]
    base = B
    for b, (o_node, o_parent, o_level, o_sender) in enumerate(parts):
        rows = o_node.shape[0] - 1
        node.append(o_node[1:])
        tree.append(np.full(rows, b, np.int64))
        p = o_parent[1:]
        parent.append(np.where(p == 0, b, p - 1 + base))
        level.append(o_level[1:].astype(np.int8))
        sender.append(o_sender[1:])
        base += rows
    return Forest(space, np.asarray(receivers, np.int64), np.concatenate(node), np.concatenate(tree),
                  np.concatenate(parent), np.concatenate(level), np.concatenate(sender))


def _per_tree(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, algo: str, seed: int = 0,
              intra_stage: bool = True) -> Forest:
    K, n, sh, pw = _params(space)
    receivers = np.ascontiguousarray(receivers, dtype=np.int64)
    senders = np.ascontiguousarray(senders, dtype=np.int64)
    if algo == "kmb":
        senders = np.sort(senders)
        ea, eb, ew = _senders_mst(senders, K, n, sh, pw)
    m = senders.shape[0]
    cap = 1 + m * K
    sc = scratch(space, m)
    x = np.empty(m, np.int64)
    parts = []
    for r in receivers.tolist():
        o = (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.bool_))
        _relabel(senders, r, K, n, sh, pw, x)
        if algo == "irs":
            w = np.zeros((20, m + 1), np.int64)
            gid = np.zeros((2 * K, m + 1), np.int64)
            rows = _irs_tree(x, K, n, sh, pw, intra_stage, sc.bits, sc.tab, w, gid, *o)
        elif algo == "unicast":
            first = np.empty(m, np.int64)
            _first_dims(np.uint64(seed), r, senders, x, K, n, sh, pw, first)
            rows = _unicast_tree(x, senders, first, K, n, sh, pw, sc.hash, sc.ctr, *o)
        else:
            w = np.empty((11, cap), np.int64)
            rows = _kmb_tree(r, senders, x, ea, eb, ew, K, n, sh, pw, sc.hash, sc.ctr, w, True, *o)
        parts.append(tuple(a[:rows] for a in o))
    return _forest(space, receivers, parts)


def irs_forest(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, intra_stage: bool = True) -> Forest:
    """The IRS trees themselves (same trees as :func:`controller.aggregation.irs.irs_forest`)."""
    return _per_tree(space, receivers, senders, "irs", intra_stage=intra_stage)


def unicast_forest(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, seed: int = 0) -> Forest:
    """The unicast-based trees (same trees as :func:`controller.aggregation.unicast.unicast_forest`)."""
    return _per_tree(space, receivers, senders, "unicast", seed=seed)


def kmb_forest(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray) -> Forest:
    """The KMB trees (same trees as :func:`controller.aggregation.steiner.kmb_reference`)."""
    return _per_tree(space, receivers, senders, "kmb")


def warm_up() -> None:
    """Compile (or load from the on-disk cache) every kernel, on a tiny BCube of each digit kind."""
    for n, k in ((4, 1), (3, 1)):
        sp = LabelSpace(n, k)
        s = np.array([1, 5, 6], np.int64)
        r = np.array([0, 2], np.int64)
        irs_costs(sp, r, s, (0.0, 0.5))
        unicast_costs(sp, r, s, (0.0, 0.5))
        kmb_costs(sp, r, s)
        irs_forest(sp, r[:1], s)
        unicast_forest(sp, r[:1], s)
        kmb_forest(sp, r[:1], s)
