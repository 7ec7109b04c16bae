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
  labels would not stay in cache on BCube(6,8)'s 10 million servers. A unicast tree's first pass
  also notes, per row, the slot of the next hop on its smallest sender's path, so the second pass
  (the walks from the senders) follows slots instead of hashing labels again.
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
  candidate left skips the comparison. The top stage (T: the senders with no digit of the
  receiver's) needs no pass at all: whether two senders differ in exactly one digit, and which, does
  not depend on the receiver, so a shuffle lists those pairs once (:func:`_one_digit_pairs`, a few
  hundred among 1,500 senders) and every tree's top-stage sizes and groups come from them
  (:func:`_top_stage_groups`). The intra-stage step needs the groups along the routing symbols of
  earlier stages too; there it looks only at the singletons' groups (:func:`_intra_probe`; such
  groups are rare, so its one branch is predictable). Not kept: candidate passes that only count
  (and an intra-stage step that then finds the groups itself) were slower overall, since along the
  candidates groups are common. Measured on BCube(8,5), 1,500 senders, 1,500 receivers: about
  0.6-0.7 CPU-s (0.8 before the top-stage shortcut and the singleton probe).
* **Inputs are trusted**: distinct senders, none equal to a receiver (the public API,
  :func:`dcnlab.controller.aggregation.resolve`, checks them; the model draws them so).
* **Digits by shifts** when ``n`` is a power of two (BCube(8,5), BCube(4,8)); by division otherwise.
  With ``n = 2^sh`` a whole label is also handled at once: relabelling is a carry-less digit-wise
  addition of ``-r``, and a Hamming distance or a layer is a popcount after OR-ing each digit's bits
  into its lowest one.
* **Relabelling** (:mod:`.labels`) is done per receiver inside the kernels, so a shuffle is never
  materialised as ``m x n`` pairs.
* **Costs only.** At ``delta = 0`` a tree's cost is 2 x (servers - 1), so only the node count is
  needed; for ``delta > 0`` the flows of every requested ratio are folded bottom-up in one
  topological pass for all of them, the ratios innermost (:func:`_tree_flows`; each ratio's sums in
  the order of a pass of its own, so the same floats). Where the trees themselves are wanted too (a
  shuffle's detail), :func:`forest_costs` builds them once and gives both.
* **KMB for a shuffle** shares the senders' minimum spanning tree (see :mod:`.steiner`): one
  Kruskal pass of ``2m`` edges per receiver instead of ``m^2``. The senders' MST is Kruskal over
  one byte of distance per pair, scanned once per distance (no sorting, no pair lists). Its edges'
  paths visit the same servers for every receiver (relabelling is a digit-wise bijection), so they
  are expanded and numbered once per shuffle (:func:`_kmb_paths`); a receiver then replays them as
  server ids with a union-find and looks servers up only on its own few edges (:func:`_kmb_count`;
  about 70 microseconds per tree of 1,500 senders, against 180 with a hash table per tree). A tree
  that would need a Steiner leaf pruned (none among 1,500 trees of the 1,500 point) is built in
  full by :func:`_kmb_tree`.

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

from dcnlab.controller.aggregation.forest import Forest
from dcnlab.controller.aggregation.labels import LabelSpace

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


_P1 = np.uint64(0x5555555555555555)
_P2 = np.uint64(0x3333333333333333)
_P4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_P8 = np.uint64(0x0101010101010101)


@njit(inline="always", cache=True)
def _popcount(f):
    """Set bits of a uint64 (SWAR)."""
    f = f - ((f >> np.uint64(1)) & _P1)
    f = (f & _P2) + ((f >> np.uint64(2)) & _P2)
    f = (f + (f >> np.uint64(4))) & _P4
    return np.int64((f * _P8) >> np.uint64(56))


@njit(cache=True)
def _hmask(sh):
    """Bits ``0, sh, 2 sh, ...`` of a 64-bit word: one per digit when ``n = 2^sh`` (0 otherwise)."""
    hm = np.uint64(0)
    if sh > 0:
        for b in range(0, 64, sh):
            hm |= np.uint64(1) << np.uint64(b)
    return hm


@njit(cache=True)
def _relabel(xs, r, K, n, sh, pw, out):
    """Digit-wise ``x - r mod n`` for every ``x`` in ``xs`` (:meth:`LabelSpace.relabel`).

    With ``n = 2^sh``: ``x + (-r)`` digit by digit, the carries out of each digit's top bit dropped
    (the low bits of every digit are added with one word addition, the top bits by xor)."""
    if sh > 0:
        hi = (_hmask(sh) << np.uint64(sh - 1)) & np.uint64((1 << (sh * K)) - 1)
        lo = np.uint64((1 << (sh * K)) - 1) & ~hi
        y = np.uint64(0)
        for d in range(K):
            y |= np.uint64((n - _dig(r, d, n, sh, pw)) & (n - 1)) << np.uint64(sh * d)
        ylo = y & lo
        for i in range(xs.shape[0]):
            x = np.uint64(xs[i])
            out[i] = np.int64(((x & lo) + ylo) ^ ((x ^ y) & hi))
        return
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


@njit(inline="always", cache=True)
def _layer(x, K, n, sh, pw, hm):
    """Non-zero digits of ``x`` (``hm``: :func:`_hmask`)."""
    if sh > 0:
        v = np.uint64(x)
        f = v
        for t in range(1, sh):
            f |= v >> np.uint64(t)
        return _popcount(f & hm)
    c = 0
    for d in range(K):
        if _dig(x, d, n, sh, pw) != 0:
            c += 1
    return c


@njit(inline="always", cache=True)
def _unrelabel_one(x, r, K, n):
    """Digit-wise ``x + r mod n``, one division per digit of each (by a constant where the caller's ``n`` is one)."""
    v = 0
    p = 1
    for _ in range(K):
        qx = x // n
        qr = r // n
        c = (x - qx * n) + (r - qr * n)
        if c >= n:
            c -= n
        v += c * p
        p *= n
        x = qx
        r = qr
    return v


@njit(cache=True)
def _unrelabel(xs, rs, K, n, sh, pw, out):
    """Digit-wise ``x + r mod n`` of every pair ``(xs[i], rs[i])`` (:meth:`LabelSpace.unrelabel`).

    With ``n = 2^sh`` a carry-less word addition (as :func:`_relabel`); the papers' other ``n`` (3, 5, 6, 7)
    divide by a constant, which compiles to a multiplication."""
    if sh > 0:
        hi = (_hmask(sh) << np.uint64(sh - 1)) & np.uint64((1 << (sh * K)) - 1)
        lo = np.uint64((1 << (sh * K)) - 1) & ~hi
        for i in range(xs.shape[0]):
            x = np.uint64(xs[i])
            r = np.uint64(rs[i])
            out[i] = np.int64(((x & lo) + (r & lo)) ^ ((x ^ r) & hi))
        return
    if n == 6:
        for i in range(xs.shape[0]):
            out[i] = _unrelabel_one(xs[i], rs[i], K, 6)
    elif n == 3:
        for i in range(xs.shape[0]):
            out[i] = _unrelabel_one(xs[i], rs[i], K, 3)
    elif n == 5:
        for i in range(xs.shape[0]):
            out[i] = _unrelabel_one(xs[i], rs[i], K, 5)
    elif n == 7:
        for i in range(xs.shape[0]):
            out[i] = _unrelabel_one(xs[i], rs[i], K, 7)
    else:
        for i in range(xs.shape[0]):
            out[i] = _unrelabel_one(xs[i], rs[i], K, n)


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

    ``parent[0] == -1`` is the root. Writes ``traffic[:, col]`` and ``root_out[:, col]``. ``tot`` and ``top``
    hold at least ``rows x`` (the non-zero ratios) floats: one topological pass folds every ratio at once
    (row-major, the ratios innermost, each ratio's sums in the same order as a pass of its own)."""
    D = deltas.shape[0]
    nd = 0
    for di in range(D):
        if deltas[di] != 0.0:
            nd += 1
        else:
            traffic[di, col] = 2.0 * (rows - 1)
            root_out[di, col] = 1.0
    if nd == 0:        # delta = 0: every hop carries one unit
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
    leaves = tail
    while head < tail:
        v = order[head]
        head += 1
        p = parent[v]
        if p >= 0:
            kids[p] -= 1
            if kids[p] == 0:
                order[tail] = p
                tail += 1
    dl = np.empty(nd, np.float64)
    keep = np.empty(nd, np.float64)
    cost = np.zeros(nd, np.float64)
    gb = np.empty(nd, np.float64)
    j = 0
    for di in range(D):
        if deltas[di] != 0.0:
            dl[j] = deltas[di]
            keep[j] = 1.0 - deltas[di]
            j += 1
    # a leaf's flow (nothing below it: top = tot = 0) is the same at every leaf, a sender's or not
    leaf = np.empty((2, nd), np.float64)
    for c in range(2):
        own = float(c)
        for j in range(nd):
            mx = own if own > 0.0 else 0.0
            leaf[c, j] = keep[j] * mx + dl[j] * (own + 0.0)
    for i in range(rows * nd):
        tot[i] = 0.0
        top[i] = 0.0
    for t in range(rows):
        v = order[t]
        p = parent[v]
        if p < 0:
            continue
        bp = p * nd
        if t < leaves:
            c = 1 if sender[v] else 0
            for j in range(nd):
                gb[j] = leaf[c, j]
        else:
            own = 1.0 if sender[v] else 0.0
            bv = v * nd
            for j in range(nd):         # two loops over the ratios, the child's row then the parent's
                tv = top[bv + j]
                mx = own if own > tv else tv
                gb[j] = keep[j] * mx + dl[j] * (own + tot[bv + j])
        for j in range(nd):
            g = gb[j]
            cost[j] += 2.0 * g
            tot[bp + j] += g
            tp = top[bp + j]
            top[bp + j] = g if g > tp else tp
    j = 0
    for di in range(D):
        if deltas[di] != 0.0:
            traffic[di, col] = cost[j]
            root_out[di, col] = keep[j] * top[j] + dl[j] * tot[j]
            j += 1


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
def _irs_tree(x, K, n, sh, pw, intra, bm, tab, w, gid, pairs, o_node, o_parent, o_level, o_sender):
    """One IRS tree towards 0 over the relabelled senders ``x``; returns its number of rows.

    Rows: 0 the receiver, ``1..m`` the senders in input order, then relays in creation order.
    ``w`` is (20, m + 1) int64 work space; ``gid`` is (2K, m + 1): the groups per digit, then the
    members of groups with two or more members per digit. ``pairs``: the senders' pairs that differ
    in one digit (:func:`_one_digit_pairs`), which give the top stage's candidates without passes."""
    m = x.shape[0]
    hm = _hmask(sh)
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
        lay[i] = _layer(x[i], K, n, sh, pw, hm)
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
        if n_cand > 1 and j == K:    # T: the senders with no digit of the receiver's
            best_e = -1
            sizes = _top_stage_groups(pairs, lay, K, t_row, tn, ln, gid, n_multi)
            for e in range(K - 1, -1, -1):
                if sizes[e] < best_size:
                    best_size = sizes[e]
                    best_e = e
        elif n_cand > 1:             # one candidate left: nothing to compare
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
def _intra_probe(f, t_node, tn, sl, ns, n, sh, pw, bm, tab, keys, single, bstay, bsing):
    """The intra-stage candidates along digit ``f`` of the ``ns`` singletons listed in ``sl``, without
    grouping all of T: mark the singletons' labels-without-f (bitmap column 0), then one pass over T
    keeps, per marked entry, the smallest-labelled non-singleton (``tab[0]``) and singleton
    (``tab[1]``). A member of T whose digit f is 0 never matches a marked entry: it would be one layer
    below the singleton. ``tab``'s columns 2-3 (the stage's fallback rows) are left alone."""
    nk = 0
    for t in range(ns):
        xi = t_node[sl[t]]
        if _dig(xi, f, n, sh, pw) == 0:
            continue
        k = _key(xi, f, sh, pw)
        if not _bit(bm, k, 0):
            _set_bit(bm, k, 0)
            keys[nk] = k
            nk += 1
            tab[0, k] = -1
            tab[1, k] = -1
    if nk == 0:
        return
    for i in range(tn):
        k = _key(t_node[i], f, sh, pw)
        if _bit(bm, k, 0):
            c = single[i]
            cur = tab[c, k]
            if cur < 0 or t_node[i] < t_node[cur]:
                tab[c, k] = i
    for t in range(ns):
        i = sl[t]
        xi = t_node[i]
        if _dig(xi, f, n, sh, pw) == 0:
            continue
        k = _key(xi, f, sh, pw)
        a = tab[0, k]
        if a >= 0:
            packed = (t_node[a] << 32) | a
            if packed < bstay[i]:
                bstay[i] = packed
        b = tab[1, k]
        if b >= 0 and t_node[b] < xi:
            packed = (t_node[b] << 32) | b
            if packed < bsing[i]:
                bsing[i] = packed
    _clear(bm, keys, nk)


@njit(cache=True)
def _intra_stage(t_node, tn, l_node, l_row, single, n_multi, K, n, sh, pw, bm, tab, gid, w, counts, aux):
    """Every singleton moves to a one-hop neighbour in T: the smallest-labelled non-singleton, else the
    smallest singleton with a smaller label (ambiguity A3). Sets ``aux[i]`` to that position, or -1.

    Where the groups along a digit are known (``n_multi[f] >= 0``: the routing symbol's and the other
    candidates'), only groups with two or more members are visited; along the other digits (the
    routing symbols of earlier stages) :func:`_intra_probe` looks only at the singletons' groups."""
    keys = w[15]
    ms, mg, bstay, bsing, fst, sl = w[16], w[17], w[18], w[19], w[1], w[13]
    ns = 0
    for i in range(tn):
        bstay[i] = _BIG
        bsing[i] = _BIG
        fst[i] = -1
        sl[ns] = i
        ns += single[i]
    for f in range(K):
        multi = gid[K + f]
        nm = n_multi[f]
        if nm < 0:
            _intra_probe(f, t_node, tn, sl, ns, n, sh, pw, bm, tab, keys, single, bstay, bsing)
            continue
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
def _one_digit_pairs(s, K, n, sh, pw):
    """The sender pairs ``(a, b)``, ``a < b``, whose labels differ in exactly one digit ``d``: rows
    (a, b, d), in the order of (a, b). Relabelling keeps this relation, so it holds for every receiver of a
    shuffle. Per digit ``d`` the senders are sorted by their label without ``d`` (:func:`_key`): two distinct
    labels with the same key differ in ``d`` only, so the pairs come in O(m K log m + pairs), not O(m^2)."""
    m = s.shape[0]
    cap = 64
    out = np.empty((cap, 3), np.int64)
    c = 0
    keys = np.empty(m, np.int64)
    for d in range(K):
        for i in range(m):
            keys[i] = _key(s[i], d, sh, pw)
        order = np.argsort(keys, kind="mergesort")
        i = 0
        while i < m:
            j = i + 1
            while j < m and keys[order[j]] == keys[order[i]]:
                j += 1
            for u in range(i, j):
                for v in range(u + 1, j):
                    a = order[u]
                    b = order[v]
                    if s[a] == s[b]:
                        continue
                    if a > b:
                        a, b = b, a
                    if c == cap:
                        cap *= 2
                        bigger = np.empty((cap, 3), np.int64)
                        bigger[:c] = out[:c]
                        out = bigger
                    out[c, 0] = a
                    out[c, 1] = b
                    out[c, 2] = d
                    c += 1
            i = j
    rank = np.argsort(out[:c, 0] * m + out[:c, 1])
    res = np.empty((c, 3), np.int64)
    for t in range(c):
        res[t] = out[rank[t]]
    return res


@njit(cache=True)
def _top_stage_groups(pairs, lay, K, t_row, tn, ln, gid, n_multi):
    """The top stage's candidate sizes from the one-digit sender pairs, without grouping passes.

    At stage K, T is the senders with every digit non-zero (layer K; position p holds sender
    ``t_row[p] - 1``) and L those of layer K - 1. Along digit e, two members of T share a group iff
    they differ in digit e only (the groups are cliques of such pairs), and a group's target is a
    sender of L iff one of its members differs from that sender in digit e only. So the size of
    candidate e is ``|L| + |T| - (members that are not their group's first) - (groups that hit L)``,
    exactly what :func:`_group_pass` counts (no member of T has a zero digit: no fallbacks). Also
    fills what the passes leave for the intra-stage step: ``gid[e, i]`` (first member) for the
    members of groups of two or more, listed in ``gid[K + e]``, and their count in ``n_multi[e]``."""
    P = pairs.shape[0]
    sizes = np.full(K, ln + tn, np.int64)
    tpos = np.full(lay.shape[0], -1, np.int64)
    for p in range(tn):
        tpos[t_row[p] - 1] = p
    mark = np.empty((2, K, tn + 1), np.int64)
    for t in range(P):                      # reset the marks of every position a pair can touch
        d = pairs[t, 2]
        for q in range(2):
            i = pairs[t, q]
            if lay[i] == K:
                pi = tpos[i]
                mark[0, d, pi] = 0
                mark[1, d, pi] = 0
                gid[d, pi] = pi
    for e in range(K):
        n_multi[e] = 0
    for t in range(P):
        a = pairs[t, 0]
        b = pairs[t, 1]
        d = pairs[t, 2]
        if lay[a] == K and lay[b] == K:
            pa = tpos[a]
            pb = tpos[b]
            if pb < gid[d, pa]:
                gid[d, pa] = pb
            if pa < gid[d, pb]:
                gid[d, pb] = pa
            for pi in (pa, pb):
                if mark[0, d, pi] == 0:
                    mark[0, d, pi] = 1
                    gid[K + d, n_multi[d]] = pi
                    n_multi[d] += 1
    for e in range(K):
        multi = gid[K + e]
        for t in range(n_multi[e]):
            pi = multi[t]
            if gid[e, pi] != pi:
                sizes[e] -= 1
    for t in range(P):
        a = pairs[t, 0]
        b = pairs[t, 1]
        d = pairs[t, 2]
        if lay[a] == K and lay[b] == K - 1:
            i = a
        elif lay[b] == K and lay[a] == K - 1:
            i = b
        else:
            continue
        pi = tpos[i]
        rep = gid[d, pi] if mark[0, d, pi] == 1 else pi
        if mark[1, d, rep] == 0:
            mark[1, d, rep] = 1
            sizes[d] -= 1
    return sizes


@njit(cache=True)
def _tree_buffers(cap, nd):
    """One tree's rows of at most ``cap`` nodes (node, parent, level, sender) and :func:`_tree_flows`' scratch for
    ``nd`` ratios (order, kids, each node's sums): what every batch kernel allocates once and reuses per tree."""
    return (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.bool_),
            np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap * nd, np.float64),
            np.empty(cap * nd, np.float64))


@njit(cache=True)
def _irs_batch(receivers, senders, K, n, sh, pw, intra, deltas, bm, tab, traffic, root_out, nodes):
    m = senders.shape[0]
    pairs = _one_digit_pairs(senders, K, n, sh, pw)
    cap = 1 + m * K
    x = np.empty(m, np.int64)
    w = np.zeros((20, m + 1), np.int64)
    gid = np.zeros((2 * K, m + 1), np.int64)
    o_node, o_parent, o_level, o_sender, order, kids, tot, top = _tree_buffers(cap, deltas.shape[0])
    for b in range(receivers.shape[0]):
        _relabel(senders, receivers[b], K, n, sh, pw, x)
        rows = _irs_tree(x, K, n, sh, pw, intra, bm, tab, w, gid, pairs, o_node, o_parent, o_level, o_sender)
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


@njit(inline="always", cache=True)
def _pick_digit(h, xi, K, n, sh, dg):
    """The first digit of ``xi``'s path: the ``h % h'``-th of its ``h'`` non-zero digits, highest first, without a
    data-dependent branch (whether a digit is 0, and so a sender's layer, are coin flips to the branch predictor:
    a chain of constant divisors chosen by the layer cost more than one hardware division): the digits by shifts
    or by division by ``n`` (a constant where the caller passes one), the digit by a select."""
    v = xi
    lay = 0
    for d in range(K):
        if sh > 0:
            dd = (v >> (sh * d)) & (n - 1)
        else:
            q = v // n
            dd = v - q * n
            v = q
        dg[d] = dd
        lay += np.int64(dd != 0)
    pick = np.int64(h % np.uint64(lay))
    res = -1
    cnt = 0
    for d in range(K - 1, -1, -1):
        nz = np.int64(dg[d] != 0)
        res = d if (nz == 1) & (cnt == pick) else res
        cnt += nz
    return res


@njit(inline="always", cache=True)
def _first_dims_n(h0, senders, x, K, n, sh, out):
    dg = np.empty(K, np.int64)
    for i in range(x.shape[0]):
        h = _splitmix_step(h0, np.uint64(senders[i]))
        out[i] = _pick_digit(h, x[i], K, n, sh, dg)


@njit(cache=True)
def _first_dims(seed, r, senders, x, K, n, sh, pw, out):
    """The digit each path corrects first: the ``hash % h``-th non-zero digit, highest first
    (:func:`dcnlab.controller.aggregation.unicast.first_dimension`)."""
    h0 = _splitmix_step(np.uint64(0), np.uint64(seed))
    h0 = _splitmix_step(h0, np.uint64(r))
    if sh > 0:
        _first_dims_n(h0, senders, x, K, n, sh, out)
    elif n == 6:
        _first_dims_n(h0, senders, x, K, 6, 0, out)
    elif n == 3:
        _first_dims_n(h0, senders, x, K, 3, 0, out)
    elif n == 5:
        _first_dims_n(h0, senders, x, K, 5, 0, out)
    elif n == 7:
        _first_dims_n(h0, senders, x, K, 7, 0, out)
    else:
        _first_dims_n(h0, senders, x, K, n, 0, out)


@njit(cache=True)
def _unicast_tree(x, prio, first, K, n, sh, pw, ht, ctr, nx, o_node, o_parent, o_level, o_sender):
    """One unicast-based tree: the next hop of a server is that of the smallest-labelled sender whose
    path crosses it; the tree is everything reachable from the senders.

    Hash rows: stamp, label, (smallest sender label through it) * 16 + its next-hop digit, tree row.
    ``nx[q]`` (at least the table's size): the slot of row q's next hop on the path of its smallest
    sender (-1: the receiver), set by that sender's walk, so the second pass follows slots without
    hashing."""
    m = x.shape[0]
    bits = _bits_for((1 + m * K) * 3 // 4)
    s_hop = _stamp(ctr)
    own = o_level[1:1 + m]      # each sender's slot (rows never move), kept until the senders' rows are set
    for i in range(m):
        cur = x[i]
        d = first[i] + 1
        pq = -1                 # the previous server's slot, if this sender is (so far) its smallest
        for k in range(K):
            d = d - 1 if d > 0 else K - 1
            dd = _dig(cur, d, n, sh, pw)
            if dd == 0:
                continue
            q = _slot(ht, bits, s_hop, cur)
            if pq >= 0:
                nx[pq] = q
            if k == 0:
                own[i] = q
            code = (prio[i] << 4) | d
            if ht[q, 0] != s_hop:
                ht[q, 0] = s_hop
                ht[q, 1] = cur
                ht[q, 2] = code
                ht[q, 3] = -1
                pq = q
            elif code < ht[q, 2]:
                ht[q, 2] = code
                pq = q
            else:
                pq = -1
            cur -= dd * pw[d]
        if pq >= 0:
            nx[pq] = -1
    o_node[0] = 0
    o_parent[0] = -1
    o_level[0] = -1
    o_sender[0] = False
    for i in range(m):
        o_node[1 + i] = x[i]
        o_parent[1 + i] = -1
        o_sender[1 + i] = True
        ht[own[i], 3] = 1 + i
    rows = 1 + m
    for i in range(m):
        q = own[i]
        row = 1 + i
        while True:
            o_level[row] = ht[q, 2] & 15
            q = nx[q]
            if q < 0:
                o_parent[row] = 0
                break
            if ht[q, 3] >= 0:
                o_parent[row] = ht[q, 3]
                break
            ht[q, 3] = rows
            o_node[rows] = ht[q, 1]
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
    nx = np.empty(1 << _bits_for((1 + m * K) * 3 // 4), np.int32)
    x = np.empty(m, np.int64)
    first = np.empty(m, np.int64)
    o_node, o_parent, o_level, o_sender, order, kids, tot, top = _tree_buffers(cap, deltas.shape[0])
    for b in range(receivers.shape[0]):
        _relabel(senders, receivers[b], K, n, sh, pw, x)
        _first_dims(seed, receivers[b], senders, x, K, n, sh, pw, first)
        rows = _unicast_tree(x, senders, first, K, n, sh, pw, ht, ctr, nx, o_node, o_parent, o_level, o_sender)
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


@njit(inline="always", cache=True)
def _hamming(a, b, K, n, sh, pw, hm):
    """Hamming distance of two labels: with ``n = 2^sh``, OR each digit's bits of ``a ^ b`` into its
    lowest bit and count those (``hm``: :func:`_hmask`); else digit by digit."""
    if sh > 0:
        v = np.uint64(a ^ b)
        f = v
        for t in range(1, sh):
            f |= v >> np.uint64(t)
        return _popcount(f & hm)
    c = 0
    for d in range(K):
        if _dig(a, d, n, sh, pw) != _dig(b, d, n, sh, pw):
            c += 1
    return c


@njit(cache=True)
def _senders_mst(s, K, n, sh, pw):
    """Kruskal over all sender pairs in (distance, i, j) order; returns the edges (i, j, w) in that order.

    The distances of the ``m (m - 1) / 2`` pairs are computed once (one byte each); Kruskal then scans
    them once per distance, in (i, j) order, until the tree is complete (usually by distance 3 or 4
    on the papers' shuffles), so the pairs are never sorted or stored."""
    m = s.shape[0]
    hm = _hmask(sh)
    dist = np.empty(max(m * (m - 1) // 2, 1), np.uint8)
    t = 0
    for i in range(m):
        si = s[i]
        for j in range(i + 1, m):
            dist[t] = _hamming(si, s[j], K, n, sh, pw, hm)
            t += 1
    uf = np.arange(m)
    ea = np.empty(max(m - 1, 0), np.int64)
    eb = np.empty(max(m - 1, 0), np.int64)
    ew = np.empty(max(m - 1, 0), np.int64)
    got = 0
    for d in range(1, K + 1):
        if got == m - 1:
            break
        t = 0
        for i in range(m):
            if got == m - 1:
                break
            for j in range(i + 1, m):
                if dist[t] == d:
                    a = _find(uf, np.int64(i))
                    b = _find(uf, np.int64(j))
                    if a != b:
                        uf[a] = b
                        ea[got] = i
                        eb[got] = j
                        ew[got] = d
                        got += 1
                t += 1
    return ea[:got], eb[:got], ew[:got]


@njit(cache=True)
def _closure_mst(r, s, ea, eb, ew, K, n, sh, pw, hm, w):
    """KMB steps 1-2: the MST of the metric closure over the receiver (member 0) and the senders
    (members 1..m), by Kruskal over the receiver's edges and the senders' MST edges ``ea/eb/ew`` in
    (distance, i, j) order (the receiver's edges come first within a distance). Returns the number of
    edges ``got``; edge e is the receiver edge (0, ``w[3][e]``) when ``w[4][e]`` is -1, else the
    senders' MST edge ``w[4][e]``. Uses ``w[0..4]``."""
    m = s.shape[0]
    wr = w[0]
    cnt = np.zeros(K + 2, np.int64)
    for j in range(m):
        wr[j] = _hamming(r, s[j], K, n, sh, pw, hm)
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
    mj, mq = w[3], w[4]
    got = 0
    q = 0
    for d in range(1, K + 1):
        for t in range(cnt[d], cnt[d + 1]):
            j = byw[t] + 1
            a = _find(uf, np.int64(0))
            b = _find(uf, j)
            if a != b:
                uf[a] = b
                mj[got] = j
                mq[got] = -1
                got += 1
        while q < ea.shape[0] and ew[q] == d:
            a = _find(uf, ea[q] + 1)
            b = _find(uf, eb[q] + 1)
            if a != b:
                uf[a] = b
                mq[got] = q
                got += 1
            q += 1
        if got == m:
            break
    return got


@njit(cache=True)
def _kmb_tree(r, s, x, ea, eb, ew, K, n, sh, pw, ht, ctr, w, orient, o_node, o_parent, o_level, o_sender):
    """One KMB tree over the receiver (member 0) and the senders ``s`` (members 1..m, sorted labels).

    ``ea/eb/ew`` are the senders' MST edges in Kruskal order; ``x`` the relabelled senders. Returns the
    number of rows after pruning (rows: 0 the receiver, 1..m the senders, then Steiner servers). Without
    ``orient`` only that count is computed (the ``o_*`` arrays are not a tree)."""
    m = s.shape[0]
    # (1-2) MST of the metric closure (:func:`_closure_mst`), as member pairs (mi, mj)
    got = _closure_mst(r, s, ea, eb, ew, K, n, sh, pw, _hmask(sh), w)
    uf, mj, mi = w[2], w[3], w[4]
    for e in range(got):
        q = mi[e]
        if q < 0:
            mi[e] = 0
        else:
            mi[e] = ea[q] + 1
            mj[e] = eb[q] + 1
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


@njit(inline="always", cache=True)
def _glookup(gk, gv, bits, key):
    """Id of ``key`` in a static open-addressing table (keys -1: empty), or -1."""
    mask = (1 << bits) - 1
    i = ((key * 2654435761) & 0xFFFFFFFF) >> (32 - bits)
    while gk[i] >= 0:
        if gk[i] == key:
            return gv[i]
        i = (i + 1) & mask
    return -1


@njit(cache=True)
def _kmb_paths(s, ea, eb, K, n, sh, pw):
    """The receiver-independent part of every KMB tree of a shuffle: the path of each senders' MST edge.

    Relabelling is a digit-wise bijection, so the path from ``s[eb]`` to ``s[ea]`` (differing digits
    corrected highest first) visits the same servers, in real labels, for every receiver. Servers get
    ids: the senders ``0..m-1``, then the other servers of these paths in order of appearance.
    Returns (``start``, ``path``: the ids along edge q are ``path[start[q]:start[q+1]]``, the table
    keys and ids of every server, its log2 size, the number of ids)."""
    m = s.shape[0]
    E = ea.shape[0]
    cap = m + E * K + 1
    bits = _bits_for(cap)
    gk = np.full(1 << bits, -1, np.int64)
    gv = np.empty(1 << bits, np.int64)
    mask = (1 << bits) - 1
    for i in range(m):
        q = ((s[i] * 2654435761) & 0xFFFFFFFF) >> (32 - bits)
        while gk[q] >= 0:
            q = (q + 1) & mask
        gk[q] = s[i]
        gv[q] = i
    G = m
    start = np.empty(E + 1, np.int64)
    path = np.empty(E * (K + 1) + 1, np.int64)
    p = 0
    for e in range(E):
        start[e] = p
        cur = s[eb[e]]
        b = s[ea[e]]
        path[p] = eb[e]
        p += 1
        for d in range(K - 1, -1, -1):
            dc = _dig(cur, d, n, sh, pw)
            db = _dig(b, d, n, sh, pw)
            if dc == db:
                continue
            cur = cur + (db - dc) * pw[d]
            q = ((cur * 2654435761) & 0xFFFFFFFF) >> (32 - bits)
            while gk[q] >= 0 and gk[q] != cur:
                q = (q + 1) & mask
            if gk[q] < 0:
                gk[q] = cur
                gv[q] = G
                G += 1
            path[p] = gv[q]
            p += 1
    start[E] = p
    return start, path, gk, gv, bits, G


@njit(cache=True)
def _kmb_count(r, s, ea, eb, ew, start, path, gk, gv, gbits, G, K, n, sh, pw, hm, w, node_w, ex_lab, st):
    """Servers in the KMB tree of receiver ``r`` (steps of :func:`_kmb_tree` without building it), or -1
    when a Steiner leaf has to be pruned (the caller then builds the tree; rare).

    Steps 1-2 as in :func:`_kmb_tree`; steps 3-4 run on server ids: a senders' MST edge replays its
    path from :func:`_kmb_paths`, a receiver edge walks from the sender to ``r`` looking servers up in
    the shuffle's table (new ones are numbered from ``G + 1``; the receiver is id ``G`` unless it lies on
    a sender path). ``node_w``: (3, ids) work space, row 0 the stamp ``st`` of servers in the tree."""
    m = s.shape[0]
    got = _closure_mst(r, s, ea, eb, ew, K, n, sh, pw, hm, w)
    mj, mq = w[3], w[4]
    seen, nuf, deg = node_w[0], node_w[1], node_w[2]
    rid = _glookup(gk, gv, gbits, r)
    if rid < 0:
        rid = G
    for i in range(m):
        seen[i] = st
        nuf[i] = i
    seen[rid] = st
    nuf[rid] = rid
    count = 1 + m
    n_ex = 0
    made = w[5]           # the Steiner servers, in order of appearance
    for e in range(got):
        # ``ru`` is the root of the walk's component: no other union happens along one path, and a
        # server seen for the first time joins it directly (it is its own component before the hop)
        if mq[e] >= 0:
            qe = mq[e]
            ru = _find(nuf, path[start[qe]])
            u = path[start[qe]]
            for t in range(start[qe] + 1, start[qe + 1]):
                v = path[t]
                if seen[v] != st:
                    seen[v] = st
                    nuf[v] = ru
                    deg[v] = 1
                    deg[u] += 1
                    made[count - 1 - m] = v
                    count += 1
                else:
                    rb = _find(nuf, v)
                    if rb != ru:
                        nuf[ru] = rb
                        ru = rb
                        deg[u] += 1
                        deg[v] += 1
                u = v
            continue
        u = mj[e] - 1
        ru = _find(nuf, u)
        cur = s[u]
        for d in range(K - 1, -1, -1):
            dc = _dig(cur, d, n, sh, pw)
            db = _dig(r, d, n, sh, pw)
            if dc == db:
                continue
            cur = cur + (db - dc) * pw[d]
            if cur == r:
                v = rid
            else:
                v = _glookup(gk, gv, gbits, cur)
                if v < 0:
                    for t in range(n_ex):
                        if ex_lab[t] == cur:
                            v = G + 1 + t
                            break
                    if v < 0:
                        ex_lab[n_ex] = cur
                        v = G + 1 + n_ex
                        n_ex += 1
            if seen[v] != st:
                seen[v] = st
                nuf[v] = ru
                deg[v] = 1
                deg[u] += 1
                made[count - 1 - m] = v
                count += 1
            else:
                rb = _find(nuf, v)
                if rb != ru:
                    nuf[ru] = rb
                    ru = rb
                    deg[u] += 1
                    deg[v] += 1
            u = v
    # (5) a Steiner server (neither a sender nor the receiver) that is a leaf: prune in _kmb_tree.
    # Degrees of senders and of the receiver are never reset and never read.
    for t in range(count - 1 - m):
        if deg[made[t]] == 1:
            return -1
    return count


@njit(cache=True)
def _kmb_batch(receivers, s, ea, eb, ew, K, n, sh, pw, ht, ctr, nodes):
    m = s.shape[0]
    cap = 1 + m * K
    hm = _hmask(sh)
    start, path, gk, gv, gbits, G = _kmb_paths(s, ea, eb, K, n, sh, pw)
    node_w = np.zeros((3, G + 1 + (m + 1) * K), np.int64)
    ex_lab = np.empty((m + 1) * K, np.int64)
    w = np.empty((11, cap), np.int64)
    x = np.empty(0, np.int64)
    o_node = np.empty(0, np.int64)
    o_parent = np.empty(0, np.int64)
    o_level = np.empty(0, np.int64)
    o_sender = np.empty(0, np.bool_)
    for b in range(receivers.shape[0]):
        c = _kmb_count(receivers[b], s, ea, eb, ew, start, path, gk, gv, gbits, G, K, n, sh, pw, hm, w, node_w,
                       ex_lab, b + 1)
        if c < 0:
            if x.shape[0] == 0:
                x = np.empty(m, np.int64)
                o_node = np.empty(cap, np.int64)
                o_parent = np.empty(cap, np.int64)
                o_level = np.empty(cap, np.int64)
                o_sender = np.empty(cap, np.bool_)
            _relabel(s, receivers[b], K, n, sh, pw, x)
            c = _kmb_tree(receivers[b], s, x, ea, eb, ew, K, n, sh, pw, ht, ctr, w, False,
                          o_node, o_parent, o_level, o_sender)
        nodes[b] = c


# -- distinct links (a shuffle's detail) ----------------------------------------------------------------------

@njit(cache=True)
def _distinct(keys):
    """Distinct values among the non-negative ``keys``: an open-addressing set at most half full."""
    bits = _bits_for(keys.shape[0])
    mask = (1 << bits) - 1
    seen = np.full(1 << bits, -1, np.int64)
    c = 0
    for t in range(keys.shape[0]):
        k = keys[t]
        i = np.int64((np.uint64(k) * _SM_GOLDEN) >> np.uint64(64 - bits))
        while seen[i] >= 0 and seen[i] != k:
            i = (i + 1) & mask
        if seen[i] < 0:
            seen[i] = k
            c += 1
    return c


@njit(cache=True)
def _path_link_keys(receivers, senders, seed, K, n, sh, pw):
    """The links ``server * K + level`` (real labels) of every drawn unicast path from each sender to each
    receiver (:mod:`.unicast`: the first digit by :func:`_first_dims`, then the next lower ones, cyclically),
    both ends of every hop: what :func:`dcnlab.controller.aggregation.shuffle.step_link_keys` lists."""
    m = senders.shape[0]
    x = np.empty(m, np.int64)
    first = np.empty(m, np.int64)
    keys = np.empty(2 * receivers.shape[0] * m * K + 1, np.int64)
    c = 0
    for b in range(receivers.shape[0]):
        r = receivers[b]
        _relabel(senders, r, K, n, sh, pw, x)
        _first_dims(seed, r, senders, x, K, n, sh, pw, first)
        for i in range(m):
            cur = senders[i]
            d = first[i] + 1
            for _ in range(K):
                d = d - 1 if d > 0 else K - 1
                dc = _dig(cur, d, n, sh, pw)
                dr = _dig(r, d, n, sh, pw)
                if dc == dr:
                    continue
                nxt = cur + (dr - dc) * pw[d]
                keys[c] = cur * K + d
                keys[c + 1] = nxt * K + d
                c += 2
                cur = nxt
    return keys[:c]


def path_links(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, seed: int = 0) -> int:
    """Distinct links over the drawn unicast paths of every (sender, receiver) pair: no aggregation's subgraph
    (:func:`_path_link_keys`)."""
    K, n, sh, pw = _params(space)
    rec = np.ascontiguousarray(receivers, dtype=np.int64)
    snd = np.ascontiguousarray(senders, dtype=np.int64)
    return int(_distinct(_path_link_keys(rec, snd, np.uint64(seed), K, n, sh, pw)))


def distinct(keys: np.ndarray) -> int:
    """Distinct values among non-negative int64 ``keys``, compiled (no sort)."""
    return int(_distinct(np.ascontiguousarray(keys, dtype=np.int64)))


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


@njit(cache=True)
def _grow(a, need):
    """``a`` with room for at least ``need`` items (doubled, the items kept)."""
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def _forest_batch(algo, receivers, senders, seed, intra, ea, eb, ew, K, n, sh, pw, deltas, bm, tab, ht, ctr,
                  traffic, root_out, nodes):
    """Every tree of ``algo`` (0 IRS, 1 unicast, 2 KMB over sorted ``senders``) towards ``receivers``, as the
    columns of a :class:`Forest` (roots first, then each tree's rows but its root, in order; a root's children
    point at the root's row), with each tree's node count, traffic and root output per ratio (as the ``*_costs``
    kernels: the same trees, one build for both)."""
    m = senders.shape[0]
    B = receivers.shape[0]
    cap = 1 + m * K
    pairs = _one_digit_pairs(senders, K, n, sh, pw) if algo == 0 else np.empty((0, 3), np.int64)
    x = np.empty(m, np.int64)
    first = np.empty(m, np.int64)
    nx = np.empty(1 << _bits_for((1 + m * K) * 3 // 4), np.int32)
    o_node, o_parent, o_level, o_sender, order, kids, tot, top = _tree_buffers(cap, deltas.shape[0])
    size = B * (2 + 2 * m)
    f_node = np.zeros(size, np.int64)
    f_tree = np.empty(size, np.int64)
    f_parent = np.full(size, -1, np.int64)
    f_level = np.full(size, -1, np.int8)
    f_sender = np.zeros(size, np.bool_)
    for b in range(B):
        f_tree[b] = b
    base = B
    for b in range(B):
        r = receivers[b]
        _relabel(senders, r, K, n, sh, pw, x)
        if algo == 0:
            w = np.zeros((20, m + 1), np.int64)
            gid = np.zeros((2 * K, m + 1), np.int64)
            rows = _irs_tree(x, K, n, sh, pw, intra, bm, tab, w, gid, pairs, o_node, o_parent, o_level, o_sender)
        elif algo == 1:
            _first_dims(seed, r, senders, x, K, n, sh, pw, first)
            rows = _unicast_tree(x, senders, first, K, n, sh, pw, ht, ctr, nx, o_node, o_parent, o_level, o_sender)
        else:
            w = np.empty((11, cap), np.int64)
            rows = _kmb_tree(r, senders, x, ea, eb, ew, K, n, sh, pw, ht, ctr, w, True,
                             o_node, o_parent, o_level, o_sender)
        nodes[b] = rows
        _tree_flows(o_parent, o_sender, rows, deltas, traffic, root_out, order, kids, tot, top, b)
        need = base + rows - 1
        if need > f_node.shape[0]:
            f_node = _grow(f_node, need)
            f_tree = _grow(f_tree, need)
            f_parent = _grow(f_parent, need)
            f_level = _grow(f_level, need)
            f_sender = _grow(f_sender, need)
        for i in range(1, rows):
            t = base + i - 1
            f_node[t] = o_node[i]
            f_tree[t] = b
            p = o_parent[i]
            f_parent[t] = b if p == 0 else p - 1 + base
            f_level[t] = o_level[i]
            f_sender[t] = o_sender[i]
        base = need
    return f_node[:base], f_tree[:base], f_parent[:base], f_level[:base], f_sender[:base]


_ALGOS = {"irs": 0, "unicast": 1, "kmb": 2}


def forest_costs(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, algo: str, deltas=(0.0,),
                 seed: int = 0, intra_stage: bool = True) -> tuple[Forest, BatchCosts]:
    """The trees of ``algo`` (``irs``, ``unicast`` or ``kmb``) towards every receiver and, from the same build,
    what :func:`irs_costs` / :func:`unicast_costs` / :func:`kmb_costs` give (a shuffle's detail needs both)."""
    K, n, sh, pw = _params(space)
    rec, snd, d, traffic, root, nodes = _prepare(space, receivers, senders, deltas)
    ea = eb = ew = np.empty(0, np.int64)
    if algo == "kmb":
        snd = np.sort(snd)
        ea, eb, ew = _senders_mst(snd, K, n, sh, pw)
    sc = scratch(space, snd.shape[0])
    cols = _forest_batch(_ALGOS[algo], rec, snd, np.uint64(seed), intra_stage, ea, eb, ew, K, n, sh, pw, d,
                         sc.bits, sc.tab, sc.hash, sc.ctr, traffic, root, nodes)
    return Forest(space, rec, *cols), BatchCosts(tuple(d.tolist()), nodes, traffic, root)


def unrelabel(space: LabelSpace, x: np.ndarray, r: np.ndarray | int) -> np.ndarray:
    """:meth:`LabelSpace.unrelabel` of a 1-D array of labels ``x`` towards ``r`` (one receiver or one per label),
    compiled: the same labels, without numpy's digit arrays."""
    K, n, sh, pw = _params(space)
    x = np.ascontiguousarray(x, dtype=np.int64)
    rs = np.ascontiguousarray(np.broadcast_to(np.asarray(r, dtype=np.int64), x.shape))
    out = np.empty(x.shape[0], np.int64)
    _unrelabel(x, rs, K, n, sh, pw, out)
    return out


def irs_forest(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, intra_stage: bool = True) -> Forest:
    """The IRS trees themselves (same trees as :func:`dcnlab.controller.aggregation.irs.irs_forest`)."""
    return forest_costs(space, receivers, senders, "irs", intra_stage=intra_stage)[0]


def unicast_forest(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray, seed: int = 0) -> Forest:
    """The unicast-based trees (same trees as :func:`dcnlab.controller.aggregation.unicast.unicast_forest`)."""
    return forest_costs(space, receivers, senders, "unicast", seed=seed)[0]


def kmb_forest(space: LabelSpace, receivers: np.ndarray, senders: np.ndarray) -> Forest:
    """The KMB trees (same trees as :func:`dcnlab.controller.aggregation.steiner.kmb_reference`)."""
    return forest_costs(space, receivers, senders, "kmb")[0]


def warm_up() -> None:
    """Compile (or load from the on-disk cache) every kernel, on a tiny BCube of each digit kind, and M2's."""
    from dcnlab.controller.aggregation import mib_kernels

    mib_kernels.warm_up()
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
        unrelabel(sp, s, r[1])
        forest_costs(sp, r, s, "irs", (0.0, 0.5))
        forest_costs(sp, r, s, "unicast", (0.0, 0.5))
        forest_costs(sp, r, s, "kmb")
        path_links(sp, r, s)
        distinct(s)
