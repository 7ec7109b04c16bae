"""Baselines of C-MR4LMS (Chen et al.): OpenSM-like, a single global broadcast tree, and MR4LMS-like.

All three run on the same level model and produce the same :class:`TreeRecord` trees as C-MR4LMS, so the
metrics compare like with like.  They only add groups (the reproduction needs nothing else).

**OpenSM-like** (the generic InfiniBand scheme, §4 item 1): every group gets its own table entry (its
MLID, used as the color), so the number of groups is bounded by the table size; beyond it new groups are
refused ("table full").  The root minimises the maximum hop count to the members.  In an up/down fat-tree
the minimisers are exactly the members' common ancestors on their lowest common level; like OpenSM,
which keeps the first switch with the smallest value while scanning its switch table, we take the first
of them in the fabric's node order (TN 0, top switch 0, L1 index 0).  The tree is the union of the
unique down-paths from that root.

**Global broadcast tree** (§4 item 2, Sunway's "global broadcast chain"): one tree over all terminals,
rooted at the first top switch of TN 0 with color 0, shared by every group: every group's packets flood
the whole fabric.

**MR4LMS-like** (§4 item 3, ref. [15]; the paper gives only an outline).  Decisions:

* Root candidates are the common ancestors on the members' lowest common level (all top switches when
  the members span CN groups, as the paper says), tried by increasing *load* — the number of trees rooted
  at that switch, ties in node order — so top switches are "used in turn" and few groups use only the
  leading TNs.
* *Build-then-color* while colors are plentiful (some color is still unused on every link): for each
  candidate root in load order build its tree and take the lowest color free on all of its links.
  *Color-then-build* once every color is in use somewhere: for each color in turn, take the first root in
  load order whose tree is free in that color.  Trees use any free color; terminal links count, so a
  terminal's groups get distinct colors.
* If no (root, color) works, the group is merged with the "similar" groups: those whose trees use, on the
  least-loaded root's tree, the color with the fewest such trees.  The merged trees are removed and the
  virtual group (union of members) is placed again from scratch; when that fails too it merges again.
  Merges therefore rebuild existing trees and may move their roots and colors — the instability the paper
  criticises — and their size can snowball.
* **Strict readings** (Chen et al., §4.3: the paper's MR4LMS keeps only 32 of 1,000 random groups at 4 ppn,
  C = 32, i.e. one tree per color; this baseline keeps about 520).  Two options, both off by default:

  - ``merge="same-color"``: no merging across colors.  A virtual group stays in the color it merged in;
    while its tree still conflicts there, it merges again with that color's trees on the least-loaded
    root's tree (the default, ``"any-color"``, places it again in any color).
  - ``scope="switch"``: one multicast table of C entries per *switch* (standard InfiniBand; in
    Chen et al. only C-MR4LMS's modified OpenSM keeps one table per port), so two trees of one color may not
    cross the same switch, even on different ports (the default, ``"link"``, lets them share a switch on
    disjoint ports, i.e. per-port tables).

  ``mr4lms-strict`` in :mod:`.planning` sets both.  The defaults stay: 001 describes MR4LMS only in
  outline (its ref. [15]); it never says that a merge fixes the color, and it gives per-port tables as
  the reason C-MR4LMS needed a modified OpenSM, not as a property of MR4LMS.  Both readings are measured
  beside the default by ``dcnlab.report.readings``.
* Per-link color use is a bit mask, and the masks of a candidate tree are combined per level (the L0
  up-links depend only on the L1 index, the L1 up-links on the TN, the top links on the top switch), so
  each candidate costs a few mask operations rather than a graph traversal.  The masks are one numpy array
  by link id (``uint64`` up to 64 colors, Python ints beyond), so that installing, removing and excluding a
  tree, and every top-level candidate at once, are array operations; so are the (link, color) owners a
  merge reads (an array up to 64 colors, a dict beyond; a freed pair's stale owner is never read: its bit is
  clear) and the member counts of a large virtual group (:func:`_shape`).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np

from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.tree import (
    TreeRecord,
    TreeState,
    add_counts,
    shape,
)
from dcnlab.topos.errors import UserError


class _Bulk:
    """Common bookkeeping of the bulk (add-only) planners."""

    def __init__(self, h: Hierarchy) -> None:
        self.h = h
        self._members: dict[int, frozenset[int]] = {}
        self._tree_of: dict[int, int] = {}
        self.refused: dict[int, str] = {}

    def _check_new(self, mgid: int, members: frozenset[int]) -> None:
        if mgid in self._members or mgid in self.refused:
            raise UserError(f"multicast: group with mgid {mgid} already exists")
        if not members:
            raise UserError(f"multicast: group {mgid} has no members")
        bad = [x for x in members if not 0 <= x < self.h.num_hosts]
        if bad:
            raise UserError(f"multicast: group {mgid}: terminal index {bad[0]} is out of range "
                            f"0..{self.h.num_hosts - 1}")

    def groups(self) -> dict[int, frozenset[int]]:
        return dict(self._members)

    def members(self, mgid: int) -> frozenset[int]:
        return self._members[mgid]

    def tree_id(self, mgid: int) -> int:
        return self._tree_of[mgid]


class OpenSMLike(_Bulk):
    """One table entry (MLID) per group, min-max-hop root, refusal when the table is full."""

    def __init__(self, h: Hierarchy, table_size: int) -> None:
        super().__init__(h)
        self.table_size = table_size
        self._trees: dict[int, TreeState] = {}

    def add_group(self, mgid: int, hosts: Iterable[int]) -> bool:
        members = frozenset(hosts)
        self._check_new(mgid, members)
        if len(self._trees) >= self.table_size:
            self.refused[mgid] = f"group {mgid}: multicast table full (all {self.table_size} entries in use)"
            return False
        mlid = len(self._trees)
        self._trees[mlid] = TreeState(self.h, mlid, mlid, 0, 0, dict.fromkeys(members, 1), (mgid,))
        self._members[mgid] = members
        self._tree_of[mgid] = mlid
        return True

    def trees(self) -> list[TreeRecord]:
        return [t.record() for t in self._trees.values()]


class GlobalTree(_Bulk):
    """Every group on one broadcast tree spanning all terminals."""

    def __init__(self, h: Hierarchy) -> None:
        super().__init__(h)
        self._tree: TreeState | None = None

    def add_group(self, mgid: int, hosts: Iterable[int]) -> bool:
        members = frozenset(hosts)
        self._check_new(mgid, members)
        if self._tree is None:
            self._tree = TreeState(self.h, 0, 0, 0, 0, dict.fromkeys(range(self.h.num_hosts), 1), ())
        self._tree.groups.add(mgid)
        self._members[mgid] = members
        self._tree_of[mgid] = 0
        return True

    def trees(self) -> list[TreeRecord]:
        return [self._tree.record()] if self._tree is not None else []


class MR4LMSLike(_Bulk):
    """Load-ordered roots, first-fit colors on link-disjoint trees, merging when nothing fits."""

    MERGES = ("any-color", "same-color")
    SCOPES = ("link", "switch")

    def __init__(self, h: Hierarchy, colors: int, merge: str = "any-color", scope: str = "link") -> None:
        super().__init__(h)
        if merge not in self.MERGES:
            raise UserError(f"multicast: MR4LMS merge={merge!r} is not valid; valid: {', '.join(self.MERGES)}")
        if scope not in self.SCOPES:
            raise UserError(f"multicast: MR4LMS scope={scope!r} is not valid; valid: {', '.join(self.SCOPES)}")
        self.merge, self.scope = merge, scope
        self._swmask: dict[str, int] = {}
        self._swowner: dict[tuple[str, int], int] = {}
        self._sw_of: dict[int, set[str]] = {}
        self._ends: dict[int, tuple[str, str]] = {}
        self.colors = colors
        self._full = (1 << colors) - 1
        self._arr = np.zeros(h.num_links, np.uint64 if colors <= 64 else object)
        """The colors in use on every link (bit masks by link id), kept by :meth:`_install`."""
        self._roots: dict[int, tuple[list[tuple[int, int]], dict[tuple[int, int], int], list[_Parts]]] = {}
        """Per root level (:meth:`_roots_at`): the candidates in node order, their indices, their up-link parts."""
        self._own = np.full((h.num_links, colors), -1, np.int32) if colors <= 64 else None
        self._owner: dict[int, int] = {}
        """The tree using (link, color): ``_own[link, color]``, or beyond 64 colors ``_owner[link * C + color]``;
        read only where the bit is set in :attr:`_arr`."""
        self._la: dict[int, np.ndarray] = {}
        """Every tree's links as an array (tree id -> link ids)."""
        self._trees: dict[int, TreeState] = {}
        """The trees by id; a tree's links are :attr:`_la`'s (its ``links`` stay empty)."""
        self._load: dict[tuple[int, int], np.ndarray] = {}
        """Per candidate class, the trees rooted at every candidate (in :meth:`_roots_at`'s node order)."""
        self._per_color = [0] * colors
        self._tids = itertools.count()
        self.merges = 0

    def trees(self) -> list[TreeRecord]:
        return [TreeRecord(t.tid, t.color, t.tnid, t.x, t.level, t.root_key, tuple(sorted(t.groups)),
                           frozenset(self._la[t.tid].tolist()), t.plane) for t in self._trees.values()]

    def add_group(self, mgid: int, hosts: Iterable[int]) -> bool:
        members = frozenset(hosts)
        self._check_new(mgid, members)
        self._members[mgid] = members
        self._place({mgid}, dict.fromkeys(members, 1), set())
        return True

    def _bit(self, color: int) -> Any:
        """``1 << color`` in :attr:`_arr`'s type (``np.uint64`` or a Python int)."""
        return np.uint64(1 << color) if self._arr.dtype != object else 1 << color

    # -- candidates --------------------------------------------------------------
    def _class(self, level: int, key: int) -> tuple[int, int]:
        """Root candidates at ``level`` shared by every virtual group with this key there."""
        return (level, 0 if level == self.h.top else key)

    def _roots_at(self, level: int) -> tuple[list[tuple[int, int]], dict[tuple[int, int], int], list[_Parts]]:
        """The common ancestors at ``level`` as (tnid, x) in node order, their indices, and per level below
        ``level`` the up-link parts of every candidate (cached): the up-links of a level depend only on the L1
        index (level 0), the TN (middle levels) or the top switch (the last level), so candidates share parts;
        ``(first, step, part)``: part ``i``'s up-link of key ``k`` is ``first[i] + k * step[i]``, candidate ``c``
        uses part ``part[c]``."""
        r = self._roots.get(level)
        if r is None:
            h = self.h
            if level == 0:
                cands = [(0, 0)]
            elif level == 1:
                cands = [(g * h.p, 0) for g in range(h.m)]
            elif level == h.top:
                cands = [(t, x) for t in range(h.num_tns) for x in range(h.w)]
            else:
                cands = [(t, 0) for t in range(h.num_tns)]
            parts: list[_Parts] = []
            for lv in range(level):
                seen: dict[tuple[int, ...], int] = {}
                ab: list[tuple[int, int]] = []
                which = []
                for tn, x in cands:
                    pk = (tn // h.p,) if lv == 0 else (tn,) if lv < h.top - 1 else (tn, x)
                    i = seen.get(pk)
                    if i is None:
                        i = seen[pk] = len(ab)
                        ab.append(h.affine(lv, tn, x))
                    which.append(i)
                parts.append((np.array([a for a, _ in ab], np.int64), np.array([b for _, b in ab], np.int64),
                              np.array(which, np.int64)))
            r = self._roots[level] = (cands, {c: i for i, c in enumerate(cands)}, parts)
        return r

    def _load_of(self, level: int, key: int) -> np.ndarray:
        """Trees rooted at every candidate of the class of (``level``, ``key``), in node order."""
        cls = self._class(level, key)
        load = self._load.get(cls)
        if load is None:
            load = self._load[cls] = np.zeros(len(self._roots_at(level)[0]), np.int64)
        return load

    def _root(self, tree: TreeState) -> tuple[tuple[int, int], tuple[int, int]]:
        h = self.h
        cand = (tree.tnid, tree.x) if tree.level == h.top else (h.tn_group(tree.tnid) * h.p, 0) \
            if tree.level == 1 else (tree.tnid if tree.level > 0 else 0, 0)
        return self._class(tree.level, tree.root_key), cand

    # -- placement -----------------------------------------------------------------
    def _ends_of(self, lk: int) -> tuple[str, str]:
        ends = self._ends.get(lk)
        if ends is None:
            up, _, lo, _ = self.h.link_ends(lk)
            ends = self._ends[lk] = (up, lo)
        return ends

    def _lower_switches(self, cnts: list[dict[int, int]], level: int, tn: int, x: int) -> set[str]:
        """The members' L0 switches (lower ends of the level-0 up-links, whatever the root)."""
        return {self._ends_of(lk)[1] for lk in self.h.uplinks(0, cnts[0], tn, x)}

    def _switch_ids(self, hosts: dict[int, int], cnts: list[dict[int, int]], level: int, tn: int,
                    x: int) -> set[str]:
        """``scope="switch"``: the switches the tree rooted at (tn, x) crosses: the members' L0 switches
        and the upper end of every up-link."""
        out = self._lower_switches(cnts, level, tn, x)
        for lv in range(level):
            out.update(self._ends_of(lk)[0] for lk in self.h.uplinks(lv, cnts[lv], tn, x))
        return out

    def _used(self, probe: _MaskProbe, sw: _SwitchProbe | None, cands: list[tuple[int, int]], i: int) -> int:
        """Colors in use on candidate i's tree (links; and switches with ``scope="switch"``)."""
        tn, x = cands[i]
        m = probe.tree_mask(tn, x)
        return m if sw is None else m | sw.tree_mask(tn, x)

    def _switch_mask(self, switches: set[str], excl: dict[str, int]) -> int:
        m = 0
        for sw in switches:
            m |= self._swmask.get(sw, 0) & ~excl.get(sw, 0)
        return m

    def _place(self, groups: set[int], hosts: dict[int, int], exclude: set[int]) -> None:
        h, C = self.h, self.colors
        fixed: int | None = None          # merge="same-color": the color a merged group is bound to
        strict_sw = self.scope == "switch"
        cnts, level = _shape(h, hosts)
        while True:
            key = next(iter(cnts[level])) if level < h.top else 0
            harr = np.fromiter(hosts, np.int64, len(hosts))
            probe = _MaskProbe(self, harr, cnts, level)
            cands, _, parts = self._roots_at(level)
            # candidates by increasing load, ties in node order (a stable sort); the first is the least loaded
            load = self._load_of(level, key) if level else None
            first = int(np.argmin(load)) if load is not None else 0
            sw_excl: dict[str, int] = {}
            if strict_sw:
                for tid in exclude:
                    bit = 1 << self._trees[tid].color
                    for sw in self._sw_of[tid]:
                        sw_excl[sw] = sw_excl.get(sw, 0) | bit
            swp = _SwitchProbe(self, cnts, level, cands[first], sw_excl) if strict_sw else None
            used = functools.partial(self._used, probe, swp, cands)
            found = None
            if fixed is not None:
                bit = 1 << fixed
                hit = next((i for i in _by_load(load) if not used(i) & bit), None)
                if hit is not None:
                    found = (*cands[hit], fixed)
            elif 0 in self._per_color:
                for i in _by_load(load):
                    free = ~used(i) & self._full
                    if free:
                        found = (*cands[i], (free & -free).bit_length() - 1)
                        break
            elif swp is None:
                # every candidate's colors at once; the lowest color free on some candidate, on the least
                # loaded such candidate (the first in node order among equals)
                masks_arr = probe.all_masks(parts, len(cands))
                free = ~int(np.bitwise_and.reduce(masks_arr)) & self._full
                if free:
                    color = (free & -free).bit_length() - 1
                    ok = np.flatnonzero((masks_arr & self._bit(color)) == 0)
                    hit = int(ok[np.argmin(load[ok])]) if load is not None else int(ok[0])
                    found = (*cands[hit], color)
            else:
                order = _by_load(load)
                masks = [used(i) for i in order]
                for color in range(C):
                    bit = 1 << color
                    hit = next((order[j] for j, m in enumerate(masks) if not m & bit), None)
                    if hit is not None:
                        found = (*cands[hit], color)
                        break
            if found is not None:
                self._install(groups, hosts, probe.links(harr, found[0], found[1]), exclude, cnts, level, *found)
                return
            # merge with the trees that use the least-contended color on the least-loaded root's tree
            tn, x = cands[first]
            per_color: list[set[int]] = [set() for _ in range(C)]
            own = self._owner
            la = probe.links(harr, tn, x)
            ms = probe.arr[la]
            m = _or(ms)
            while m:        # each color's owners, added in the links' order
                c = (m & -m).bit_length() - 1
                m &= m - 1
                sel = la[(ms & self._bit(c)) != 0]
                per_color[c].update(self._own[sel, c].tolist() if self._own is not None
                                    else map(own.__getitem__, (sel * C + c).tolist()))
            if strict_sw:
                for sw in self._switch_ids(hosts, cnts, level, tn, x):
                    m = self._swmask.get(sw, 0) & ~sw_excl.get(sw, 0)
                    while m:
                        c = (m & -m).bit_length() - 1
                        m &= m - 1
                        per_color[c].add(self._swowner[(sw, c)])
            if fixed is None:
                pick = min((c for c in range(C) if per_color[c]), key=lambda c: len(per_color[c]))
                if self.merge == "same-color":
                    fixed = pick
            else:
                pick = fixed
            conf = per_color[pick]
            self.merges += 1
            for tid in conf:       # the virtual group takes the tree's members; its colors no longer count
                tree = self._trees[tid]
                groups |= tree.groups
                add_counts(hosts, tree.hosts)
                for kc, tc in zip(cnts, tree.cnts):
                    add_counts(kc, tc)
                self._arr[self._la[tid]] &= ~self._bit(tree.color)
            level = next((lv for lv, kc in enumerate(cnts) if len(kc) == 1), h.top)
            exclude |= conf

    def _install(self, groups: set[int], hosts: dict[int, int], la: np.ndarray, exclude: set[int],
                 cnts: list[dict[int, int]], level: int, tn: int, x: int, color: int) -> None:
        """The tree of ``hosts`` rooted at (tn, x) in ``color`` (its links ``la``) replaces the trees ``exclude``
        (whose colors :meth:`_place` already cleared from :attr:`_arr`)."""
        h, C = self.h, self.colors
        for tid in exclude:
            old = self._trees.pop(tid)
            bit = 1 << old.color
            del self._la[tid]
            for sw in self._sw_of.pop(tid, ()):
                self._swmask[sw] &= ~bit
                del self._swowner[(sw, old.color)]
            cls, cand = self._root(old)
            if old.level:
                self._load[cls][self._roots_at(old.level)[1][cand]] -= 1
            self._per_color[old.color] -= 1
        tree = TreeState(h, next(self._tids), color, tn, x, hosts, groups, 0, (cnts, level, set()))
        self._trees[tree.tid] = tree
        bit = 1 << color
        self._la[tree.tid] = la
        self._arr[la] |= self._bit(color)
        if self._own is not None:
            self._own[la, color] = tree.tid
        else:
            self._owner.update(dict.fromkeys((la * C + color).tolist(), tree.tid))
        if self.scope == "switch":
            sws = self._switch_ids(hosts, cnts, level, tn, x)
            self._sw_of[tree.tid] = sws
            for sw in sws:
                self._swmask[sw] = self._swmask.get(sw, 0) | bit
                self._swowner[(sw, color)] = tree.tid
        self._per_color[color] += 1
        cls, cand = self._root(tree)
        if level:
            self._load[cls][self._roots_at(level)[1][cand]] += 1
        for mgid in groups:
            self._tree_of[mgid] = tree.tid


class _SwitchProbe:
    """``scope="switch"``: colors in use on the switches of candidate trees of one virtual group, ignoring the
    trees being merged into it; the members' L0 switches are the same for every root, the upper switches
    are cached per root part like :class:`_MaskProbe`'s links."""

    def __init__(self, owner: MR4LMSLike, cnts: list[dict[int, int]], level: int, first: tuple[int, int],
                 excl: dict[str, int]) -> None:
        self.owner, self.cnts, self.level, self.excl = owner, cnts, level, excl
        self.base = owner._switch_mask(owner._lower_switches(cnts, level, *first), excl)
        self.parts: dict[tuple[int, ...], int] = {}

    def tree_mask(self, tn: int, x: int) -> int:
        h, m = self.owner.h, self.base
        for lv in range(self.level):
            pk = (lv, tn // h.p) if lv == 0 else (lv, tn) if lv < h.top - 1 else (lv, tn, x)
            part = self.parts.get(pk)
            if part is None:
                ups = {self.owner._ends_of(lk)[0] for lk in h.uplinks(lv, self.cnts[lv], tn, x)}
                part = self.parts[pk] = self.owner._switch_mask(ups, self.excl)
            m |= part
        return m


def _shape(h: Hierarchy, hosts: dict[int, int]) -> tuple[list[dict[int, int]], int]:
    """:func:`~dcnlab.controller.multicast.tree.shape` of a member multiset, in numpy when it is large (the same
    dicts, keys in the order they first appear)."""
    if len(hosts) < 256:
        return shape(h, hosts)
    keys = np.fromiter(hosts, np.int64, len(hosts)) // h.t
    counts = np.fromiter(hosts.values(), np.int64, len(hosts))
    cnts: list[dict[int, int]] = []
    for d in (*h.divisors, 0):
        uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        order = np.argsort(first)
        keys = uniq[order]
        counts = np.bincount(inv.reshape(-1), weights=counts, minlength=len(uniq)).astype(np.int64)[order]
        cnts.append(dict(zip(keys.tolist(), counts.tolist())))
        if d:
            keys = keys // d
    return cnts, next((lv for lv, c in enumerate(cnts) if len(c) == 1), h.top)


_Parts = tuple[np.ndarray, np.ndarray, np.ndarray]
"""``(first, step, part)`` of one level's up-links over a root level's candidates (:meth:`MR4LMSLike._roots_at`)."""


def _by_load(load: np.ndarray | None) -> list[int]:
    """Candidate indices by increasing load, ties in node order (one candidate when there is no load)."""
    return np.argsort(load, kind="stable").tolist() if load is not None else [0]


def _or(masks: np.ndarray) -> int:
    """OR of an array of color masks (0 when empty)."""
    return int(np.bitwise_or.reduce(masks)) if len(masks) else 0


class _MaskProbe:
    """Colors in use on candidate trees of one virtual group, ignoring the trees being merged into it:
    :attr:`arr` is the owner's masks by link id, from which :meth:`MR4LMSLike._place` cleared those trees' colors."""

    SMALL = 8
    """Below this many keys a level's part is ORed in Python (a numpy call costs more)."""

    def __init__(self, owner: MR4LMSLike, hosts: np.ndarray, cnts: list[dict[int, int]], level: int) -> None:
        """``hosts``: the members' terminals (their links) as an array."""
        self.h, self.cnts, self.level = owner.h, cnts, level
        self.arr = arr = owner._arr
        self.base = _or(arr[hosts])     # the terminal links' colors
        self.parts: dict[tuple[int, ...], int] = {}
        self._keys: dict[int, np.ndarray] = {}

    def links(self, hosts: np.ndarray, tn: int, x: int) -> np.ndarray:
        """Every link of the tree rooted at (tn, x) (:func:`~dcnlab.controller.multicast.tree.tree_links` as an
        array): the terminal links ``hosts``, then each level's up-links."""
        h = self.h
        out = [hosts]
        for lv in range(self.level):
            first, step = h.affine(lv, tn, x)
            out.append(first + self.keys(lv) * step)
        return np.concatenate(out)

    def keys(self, lv: int) -> np.ndarray:
        """The members' keys at level ``lv`` as an array (cached)."""
        keys = self._keys.get(lv)
        if keys is None:
            keys = self._keys[lv] = np.fromiter(self.cnts[lv], np.int64, len(self.cnts[lv]))
        return keys

    def tree_mask(self, tn: int, x: int) -> int:
        """OR of the color masks of the tree rooted at (tn, x): per level, the up-links depend only on the
        L1 index (level 0), the TN (middle levels) or the top switch (last level), so parts are cached."""
        h, m = self.h, self.base
        for lv in range(self.level):
            pk = (lv, tn // h.p) if lv == 0 else (lv, tn) if lv < h.top - 1 else (lv, tn, x)
            part = self.parts.get(pk)
            if part is None:
                part = self.parts[pk] = self._part(lv, tn, x)
            m |= part
        return m

    def all_masks(self, parts: list[_Parts], n: int) -> np.ndarray:
        """:meth:`tree_mask` of all ``n`` candidates at once (in node order; ``parts`` from
        :meth:`MR4LMSLike._roots_at`): per level, the up-links of every distinct part in one numpy gather from
        :attr:`arr` and one OR-reduction.  Same values as :meth:`tree_mask`."""
        arr = self.arr
        masks = np.full(n, self.base, arr.dtype)
        for lv, (first, step, which) in enumerate(parts):
            keys = self.keys(lv)
            part = np.bitwise_or.reduce(arr[first[:, None] + keys[None, :] * step[:, None]], axis=1)
            masks |= part if len(part) == n else part[which]
        return masks

    def _part(self, lv: int, tn: int, x: int) -> int:
        """OR of the masks of the level-``lv`` up-links of the tree rooted at (tn, x): the hot loop of MR4LMS
        placement (a few keys in Python, many in one numpy gather)."""
        first, step = self.h.affine(lv, tn, x)
        keys = self.cnts[lv]
        if len(keys) < self.SMALL:
            item = self.arr.item
            part = 0
            for k in keys:
                part |= item(first + k * step)
            return part
        return _or(self.arr[first + self.keys(lv) * step])
