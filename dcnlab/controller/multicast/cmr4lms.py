"""C-MR4LMS: customised multicast routing for fat-trees with a limited multicast table: C-MR4LMS (Chen et al.),
Algorithms 1-3.

Algorithm 1 (tree construction): the MGID fixes the color and the root TN (formula (3),
:mod:`dcnlab.controller.multicast.mapping`); the root is the members' lowest common ancestor on that spanning
tree (L0, the tree's L1 in the CN, its L2 for one CN group, else a top switch); the tree is the union of
the members' unique paths up to it; it is accepted if its color is free on every link, terminal links
included (step 2).  Algorithm 2 (merge): collect every tree that uses ``color`` on a link of the
tentative tree and merge their groups with the new one into a virtual group.  Algorithm 3 combines them
and updates link owners and tables.

Two variants when the root is on the top level (the paper's C-MR4LMS-fixed and -dynamic):

* **fixed** — always the first top switch of TN ``tnid``.  Every tree of a spanning tree is then a
  connected subtree of one fixed tree, so the merged tree contains every merged tree (Lemma 1) and is free
  of conflicts after one merge (Theorem 2).  The invariant tests check both.
* **dynamic** — every top switch of the TN is a candidate.  **Decision** (the paper leaves load, order and
  retry open): candidates are tried by increasing *load* (the number of groups whose trees are rooted at
  that switch; ties by position, the formula's root first) and the first conflict-free one wins; if none
  is, the merge uses the candidate whose tentative tree conflicts with the fewest trees, and the virtual
  group is placed again from scratch — a further merge follows when that fails (the paper's Fig. 7
  "second merge").  A merge may move the root, so merged groups' routes may change (the paper says so of the dynamic variant).
  ``scope="group"`` (an extension, default on the k-ary fat-tree where a TN is a single core) also
  offers the top switches of the other TNs of the same TN group: for the tree's color no other spanning
  tree uses that TN group's links, so any of them is conflict-free towards other spanning trees.

Further decisions on points the paper leaves open:

* **Links of the merged groups are free** when Algorithm 1 runs again for the virtual group (the paper does not say whether they count as used).
* **Terminal-link conflict with a group on another spanning tree** (same color, other TN group; the paper does not handle it):
  merging would move the existing group's root to another TN, which the MGID layers (Theorem 3) exist to
  prevent.  Such a group (or join) is **refused** with a message naming the terminal and the groups; it is
  never merged across spanning trees.  Patterns from :mod:`dcnlab.controller.multicast.workload` use MGID
  layers, so they never hit this.
* **Leave** (the paper describes no leave or split): a member that leaves is removed from its group and the shared tree shrinks to the
  members that remain (only links are removed; the root may move down).  Merged groups are never split
  again: splitting would need new conflict checks and would change routes of groups that did nothing.
  A group whose last member leaves is removed.
* **Join** of one member is incremental: only the links it adds are checked; if one is taken, the group's
  virtual group (its tree's groups plus the new member) goes through Algorithms 2 and 1 again.
* "Root unchanged by a merge" (fixed variant) holds for the spanning tree's root: the merged tree is on
  the same (color, TN, top switch), and the old root lies on it (it may move *up* the same spanning tree,
  e.g. from an L1 to the L3 when a CN-local group merges with a wider one).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from dcnlab.controller.multicast.hierarchy import FatTreeHierarchy, Hierarchy
from dcnlab.controller.multicast.mapping import SptMapping
from dcnlab.controller.multicast.tree import (EntryChange, Owner, TreeRecord, TreeState, add_counts, entry_changes,
                                       shape)
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

VARIANTS = ("fixed", "dynamic")
SCOPES = ("tn", "group")

LinkOp = tuple[int, int, "int | None", "int | None"]
"""``(link, color, tree before, tree after)``."""
_Ops = dict[tuple[int, int], tuple["int | None", "int | None"]]


@dataclass(frozen=True)
class Change:
    """What one add/remove/join/leave did.

    ``trees_before`` are the trees it replaced or shrank, ``tree_after`` the group's tree afterwards (None if
    the group is gone or the request was refused).  ``link_ops`` lists every (link, color) whose owner
    changed; ``entries`` the replication entries that changed (only if the planner tracks entries)."""

    op: str
    mgid: int
    host: int | None = None
    accepted: bool = True
    reason: str = ""
    merged: tuple[int, ...] = ()
    """MGIDs that now share the group's tree and did not before."""
    trees_before: tuple[int, ...] = ()
    tree_after: int | None = None
    merge_rounds: int = 0
    link_ops: tuple[LinkOp, ...] = ()
    entries: tuple[EntryChange, ...] = field(default=(), repr=False)


class Refusal(Exception):
    """Internal: a group cannot be placed (terminal conflict with another spanning tree)."""


@dataclass
class _Placement:
    """Where Algorithms 1+2 put a virtual group = the ``base`` tree's members plus ``rest``."""

    tnid: int
    x: int
    base: int | None
    rest: dict[int, int]
    rest_cnts: list[dict[int, int]]
    groups: set[int]
    exclude: set[int]
    rounds: int
    links: list[int] | set[int]
    """Links added to ``base`` if ``extends``, else every link of the new tree."""
    extends: bool
    level: int


class CMR4LMS:
    """C-MR4LMS on one fabric, one tree plane; groups come and go incrementally (Algorithm 3 per group)."""

    def __init__(self, h: Hierarchy, colors: int, variant: str = "fixed", scope: str | None = None,
                 plane: int | None = None, track_entries: bool = False, record_ops: bool = True) -> None:
        """``record_ops`` fills :attr:`Change.link_ops` (needed by ``track_entries`` and by a controller that
        applies changes); bulk planning turns it off."""
        if variant not in VARIANTS:
            raise UserError(f"multicast: variant {variant!r} is unknown; valid: {', '.join(VARIANTS)}")
        scope = scope or ("group" if isinstance(h, FatTreeHierarchy) else "tn")
        if scope not in SCOPES:
            raise UserError(f"multicast: dynamic scope {scope!r} is unknown; valid: {', '.join(SCOPES)}")
        self.h, self.colors, self.variant, self.scope = h, colors, variant, scope
        self.mapping = SptMapping(colors, h.m, h.p, plane)
        self.plane = plane or 0
        self.track_entries = track_entries
        self.record_ops = record_ops or track_entries
        self._own: dict[int, dict[int, int]] = {}
        """Per color in use, the tree using each link (link id -> tree id); empty when no tree is left."""
        self._trees: dict[int, TreeState] = {}
        self._members: dict[int, set[int]] = {}
        self._tree_of: dict[int, int] = {}
        self._load: dict[tuple[int, int, int, int], int] = {}
        self._tids = itertools.count(self.plane, 2) if plane is not None else itertools.count()
        self.refused: dict[int, str] = {}

    # -- queries ----------------------------------------------------------------
    @property
    def _owner(self) -> dict[int, int]:
        """Every (link, color)'s tree as one dict by ``link * colors + color`` (a copy, for checks)."""
        C = self.colors
        return {lk * C + c: t for c, own in self._own.items() for lk, t in own.items()}

    def owner(self, link: int, color: int) -> int | None:
        return self._own.get(color, {}).get(link)

    def groups(self) -> dict[int, frozenset[int]]:
        return {g: frozenset(m) for g, m in self._members.items()}

    def members(self, mgid: int) -> frozenset[int]:
        return frozenset(self._members[mgid])

    def tree_id(self, mgid: int) -> int:
        return self._tree_of[mgid]

    def tree(self, tid: int) -> TreeRecord:
        return self._trees[tid].record()

    def group_tree(self, mgid: int) -> TreeRecord:
        return self._trees[self._tree_of[mgid]].record()

    def trees(self) -> list[TreeRecord]:
        return [t.record() for t in self._trees.values()]

    # -- operations ---------------------------------------------------------------
    def add_group(self, mgid: int, hosts: Iterable[int], op: str = "add") -> Change:
        """Algorithm 3 for a new group."""
        members = set(hosts)
        self._check_new(mgid, members)
        color, tnid = self.mapping.color_tnid(mgid)
        try:
            pl = self._settle(None, dict.fromkeys(members, 1), {mgid}, color, tnid, None)
        except Refusal as e:
            self.refused[mgid] = str(e)
            return Change(op, mgid, accepted=False, reason=str(e))
        self.refused.pop(mgid, None)
        self._members[mgid] = members
        return self._apply(op, mgid, None, pl, color)

    def remove_group(self, mgid: int) -> Change:
        tree = self._tree(mgid)
        ops: _Ops = {}
        self._unload(tree)
        for host in self._members.pop(mgid):
            self._release(tree, tree.remove_host(self.h, host), ops)
        tree.groups.discard(mgid)
        del self._tree_of[mgid]
        after: int | None = tree.tid
        if not tree.groups:
            del self._trees[tree.tid]
            after = None
        else:
            self._reload(tree)
        return self._change("remove", mgid, None, ops, trees_before=(tree.tid,), tree_after=after)

    def join(self, mgid: int, host: int) -> Change:
        """Terminal ``host`` joins group ``mgid`` (creating it if new)."""
        self._check_host(host, f"group {mgid}")
        if mgid not in self._members:
            return self.add_group(mgid, [host], "join")
        if host in self._members[mgid]:
            return Change("join", mgid, host, tree_after=self._tree_of[mgid])
        tree = self._trees[self._tree_of[mgid]]
        added, _ = tree.links_if_added(self.h, host)
        own = self._own.get(tree.color, {})
        clash = any(own.get(lk, tree.tid) != tree.tid for lk in added)
        if not clash:
            ops: _Ops = {}
            self._unload(tree)
            self._claim(tree.tid, tree.color, tree.add_host(self.h, host), ops)
            self._reload(tree)
            self._members[mgid].add(host)
            return self._change("join", mgid, host, ops, trees_before=(tree.tid,), tree_after=tree.tid)
        _, tnid = self.mapping.color_tnid(mgid)
        try:
            pl = self._settle(tree.tid, {host: 1}, set(tree.groups), tree.color, tnid, (tree.tnid, tree.x))
        except Refusal as e:
            return Change("join", mgid, host, accepted=False, reason=str(e), tree_after=tree.tid)
        self._members[mgid].add(host)
        return self._apply("join", mgid, host, pl, tree.color)

    def leave(self, mgid: int, host: int) -> Change:
        """Terminal ``host`` leaves group ``mgid``; the group disappears with its last member."""
        tree = self._tree(mgid)
        if host not in self._members[mgid]:
            raise UserError(f"multicast: {self.h.host_name(host)} is not a member of group {mgid}")
        if len(self._members[mgid]) == 1:
            ch = self.remove_group(mgid)
            return Change("leave", mgid, host, merged=(), trees_before=ch.trees_before, tree_after=None,
                          link_ops=ch.link_ops, entries=ch.entries)
        ops: _Ops = {}
        self._unload(tree)
        self._release(tree, tree.remove_host(self.h, host), ops)
        self._reload(tree)
        self._members[mgid].discard(host)
        return self._change("leave", mgid, host, ops, trees_before=(tree.tid,), tree_after=tree.tid)

    # -- Algorithms 1 and 2 -------------------------------------------------------
    def _candidates(self, level: int, key: int, tnid: int,
                    prefer: tuple[int, int] | None) -> list[tuple[int, int]]:
        """Root choices (tnid, x) for a virtual group whose root level is ``level`` (key ``key`` there)."""
        h = self.h
        if self.variant == "fixed":
            return [(tnid, 0)]
        if level == h.top:
            cands = h.top_candidates(tnid, self.scope)
        elif level >= 2 and self.scope == "group":
            cands = [(t, 0) for t, x in h.top_candidates(tnid, "group") if x == 0]
        else:
            return [prefer or (tnid, 0)]
        load = self._load
        top = level == h.top
        ranked = sorted(((t, x) != prefer, load.get((level, 0, t, x) if top else (level, key, t, 0), 0), i)
                        for i, (t, x) in enumerate(cands))
        return [cands[i] for _, _, i in ranked]

    def _settle(self, base: int | None, rest: dict[int, int], groups: set[int], color: int, tnid: int,
                prefer: tuple[int, int] | None) -> _Placement:
        """Algorithms 1+2 for the virtual group made of tree ``base`` (whose links count as free) plus the
        memberships ``rest``: try the root candidates; if all conflict, merge the conflicting trees (Alg. 2)
        into the virtual group and try again.  Nothing is changed until :meth:`_apply`.

        The largest tree of the virtual group stays the base, so a merge that keeps the base's root only
        looks at the links it adds; other roots are checked per level (:class:`_Probe`)."""
        h, trees = self.h, self._trees
        exclude = {base} if base is not None else set()
        rest_cnts, _ = shape(h, rest)
        g = h.tn_group(tnid)
        rounds = 0
        while True:
            b = trees[base] if base is not None else None
            new: list[set[int]] | None = None
            keys: list[set[int]] | list[dict[int, int]]
            if b is not None:
                added, level, new = b.extension(h, rest, rest_cnts)
                keys = [c.keys() | n for c, n in zip(b.cnts, new)]
            else:
                keys, added = rest_cnts, []
                level = next((lv for lv, c in enumerate(rest_cnts) if len(c) == 1), h.top)
            key = next(iter(keys[level])) if level < h.top else 0
            probe = _Probe(self, rest, keys, new, level, color, exclude, b)
            best: tuple[tuple[int, int], set[int]] | None = None
            for tn, x in self._candidates(level, key, tnid, prefer):
                extends = b is not None and (tn, x) == (b.tnid, b.x)
                conf = probe.owners(added) if extends else probe.conflicts(tn, x)
                if not conf:
                    links = added if extends else probe.links(rest.keys() | (b.hosts.keys() if b else set()), tn, x)
                    return _Placement(tn, x, base, rest, rest_cnts, groups, exclude, rounds, links, extends, level)
                if best is None or len(conf) < len(best[1]):
                    best = ((tn, x), conf)
            assert best is not None
            prefer, conf = best
            cross = sorted(t for t in conf if trees[t].g != g)
            if cross:
                raise Refusal(self._cross_message(min(groups), rest, cross, color, g))
            rounds += 1
            parts = sorted(conf | exclude & {base}, key=lambda t: -len(trees[t].links))
            base = parts[0]
            for tid in parts[1:]:
                add_counts(rest, trees[tid].hosts)
                for rc, c in zip(rest_cnts, trees[tid].cnts):
                    add_counts(rc, c)
            for tid in conf:
                groups |= trees[tid].groups
            exclude |= conf

    def _cross_message(self, mgid: int, rest: dict[int, int], cross: list[int], color: int, g: int) -> str:
        other = self._trees[cross[0]]
        shared = sorted(set(other.hosts) & set(rest))
        where = self.h.host_name(shared[0]) if shared else "a member"
        return (f"group {mgid}: terminal {where} is already in group(s) {sorted(other.groups)} with color {color} "
                f"on another spanning tree (TN group {other.g}, not {g}); groups sharing a terminal need MGIDs "
                f"from different MGID layers")

    # -- state updates ------------------------------------------------------------
    def _apply(self, op: str, mgid: int, host: int | None, pl: _Placement, color: int) -> Change:
        """Install a placement: the base tree (if any) keeps its id and becomes the group's tree, so only
        links whose owner changes are touched; the other merged trees disappear."""
        ops: _Ops = {}
        trees, h = self._trees, self.h
        before = tuple(sorted(pl.exclude))
        mates_before = {mgid}
        for tid in before:
            if mgid in trees[tid].groups:
                mates_before = set(trees[tid].groups)
        if pl.base is None:
            links = pl.links if isinstance(pl.links, set) else set(pl.links)
            tree = TreeState(h, next(self._tids), color, pl.tnid, pl.x, pl.rest, pl.groups, self.plane,
                             (pl.rest_cnts, pl.level, links))
            trees[tree.tid] = tree
            claim: Iterable[int] = links
        else:
            tree = trees[pl.base]
            self._unload(tree)
            if pl.extends:
                claim = pl.links
                tree.absorb(pl.rest, pl.rest_cnts, pl.groups, pl.links, pl.level)
            else:
                new = pl.links if isinstance(pl.links, set) else set(pl.links)
                self._release(tree, tree.links - new, ops)
                claim = new - tree.links
                tree.absorb(pl.rest, pl.rest_cnts, pl.groups, (), pl.level)
                tree.links, tree.tnid, tree.x, tree.g = new, pl.tnid, pl.x, h.tn_group(pl.tnid)
        for tid in before:
            if tid != tree.tid:
                old = trees.pop(tid)
                self._unload(old)
                self._release(old, old.links - tree.links, ops)
        self._claim(tree.tid, color, claim, ops)
        self._reload(tree)
        for m in tree.groups:
            self._tree_of[m] = tree.tid
        merged = tuple(sorted(tree.groups - mates_before))
        if merged:
            log.debug("group %d: merged with %s (rounds=%d)", mgid, merged, pl.rounds)
        return self._change(op, mgid, host, ops, trees_before=before, tree_after=tree.tid, merged=merged,
                            rounds=pl.rounds)

    def _claim(self, tid: int, color: int, links: Iterable[int], ops: _Ops) -> None:
        own = self._own.setdefault(color, {})
        if not self.record_ops:
            own.update(dict.fromkeys(links, tid))
            return
        for lk in links:
            prev = ops.get((lk, color), (own.get(lk), None))[0]
            own[lk] = tid
            ops[(lk, color)] = (prev, tid)

    def _release(self, tree: TreeState, links: Iterable[int], ops: _Ops) -> None:
        color = tree.color
        own = self._own.get(color, {})
        record = self.record_ops
        for lk in links:
            if record:
                ops[(lk, color)] = (ops.get((lk, color), (own.get(lk), None))[0], None)
            del own[lk]
        if not own:
            self._own.pop(color, None)

    def _rid(self, level: int, key: int, tnid: int, x: int) -> tuple[int, int, int, int]:
        """Identity of a root switch, for the dynamic variant's load."""
        return (level, 0, tnid, x) if level == self.h.top else (level, key, tnid, 0)

    def _root_id(self, tree: TreeState) -> tuple[int, int, int, int]:
        return self._rid(tree.level, tree.root_key, tree.tnid, tree.x)

    def _unload(self, tree: TreeState) -> None:
        if self.variant == "dynamic" and tree.hosts:
            rid = self._root_id(tree)
            self._load[rid] -= len(tree.groups)

    def _reload(self, tree: TreeState) -> None:
        if self.variant == "dynamic":
            rid = self._root_id(tree)
            self._load[rid] = self._load.get(rid, 0) + len(tree.groups)

    def _change(self, op: str, mgid: int, host: int | None,
                ops: _Ops, trees_before: tuple[int, ...] = (),
                tree_after: int | None = None, merged: tuple[int, ...] = (), rounds: int = 0) -> Change:
        link_ops = tuple((lk, c, a, b) for (lk, c), (a, b) in ops.items() if a != b)
        entries: tuple[EntryChange, ...] = ()
        if self.track_entries:
            entries = entry_changes(self.h, [(lk, c) for lk, c, _, _ in link_ops], [self.before_owner(ops)],
                                    [self.owner])
        return Change(op, mgid, host, True, "", merged, trees_before, tree_after, rounds, link_ops, entries)

    def before_owner(self, ops: _Ops) -> Owner:
        """Owner lookup of the state before ``ops`` were applied."""
        def own(link: int, color: int) -> int | None:
            hit = ops.get((link, color))
            return hit[0] if hit is not None else self.owner(link, color)
        return own

    # -- validation -----------------------------------------------------------------
    def _tree(self, mgid: int) -> TreeState:
        if mgid not in self._tree_of:
            raise UserError(f"multicast: no group with mgid {mgid}")
        return self._trees[self._tree_of[mgid]]

    def _check_host(self, host: int, what: str) -> None:
        if not 0 <= host < self.h.num_hosts:
            raise UserError(f"multicast: {what}: terminal index {host} is out of range 0..{self.h.num_hosts - 1}")

    def _check_new(self, mgid: int, members: set[int]) -> None:
        if mgid < 0:
            raise UserError(f"multicast: mgid {mgid} is negative; valid: mgid >= 0")
        if mgid in self._members:
            raise UserError(f"multicast: group with mgid {mgid} already exists")
        if not members:
            raise UserError(f"multicast: group {mgid} has no members")
        if min(members) < 0 or max(members) >= self.h.num_hosts:
            bad = min(members) if min(members) < 0 else max(members)
            self._check_host(bad, f"group {mgid}")


class _Probe:
    """Trees (other than ``exclude``) that hold ``color`` on candidate trees of one virtual group.

    A candidate's links split into the new terminal links (shared by every candidate), the up-links below the
    last level (they depend only on the TN: the L1 index for L0 up-links, the TN above) and the last level
    (on the top switch); owners are looked up once per part.  Where a part coincides with a part of the base
    tree (same dependency, below the base's root), the base's own keys are skipped: their links belong to
    the base."""

    def __init__(self, planner: CMR4LMS, rest: dict[int, int], keys: list[set[int]] | list[dict[int, int]],
                 new: list[set[int]] | None, level: int, color: int, exclude: set[int],
                 base: TreeState | None) -> None:
        self.h, self.keys, self.new, self.level, self.exclude = planner.h, keys, new, level, exclude
        self.color, self.own = color, planner._own.get(color, {})
        self.base = base
        self.last = planner.h.top - 1
        self.term = self.owners(rest)
        self.lower: dict[int, set[int]] = {}
        self.parts: dict[tuple[int, int], set[int]] = {}
        self.full: dict[tuple[int, int, int], list[int]] = {}

    def owners(self, links: Iterable[int]) -> set[int]:
        out: set[int | None] = set(map(self.own.get, links))
        out.discard(None)
        out -= self.exclude
        return out  # type: ignore[return-value]

    def _part(self, lv: int, tn: int, x: int) -> set[int]:
        b, h = self.base, self.h
        shared = b is not None and lv < b.level and self.new is not None and (
            tn // h.p == b.tnid // h.p if lv == 0 else tn == b.tnid if lv < self.last else (tn, x) == (b.tnid, b.x))
        if shared:
            return self.owners(h.uplinks(lv, self.new[lv], tn, x))  # type: ignore[index]
        links = self.full[(lv, tn, x)] = h.uplinks(lv, self.keys[lv], tn, x)
        return self.owners(links)

    def conflicts(self, tn: int, x: int) -> set[int]:
        out = self.lower.get(tn)
        if out is None:
            out = set(self.term)
            for lv in range(min(self.level, self.last)):
                out |= self._part(lv, tn, 0)
            self.lower[tn] = out
        if self.level <= self.last:
            return out
        part = self.parts.get((tn, x))
        if part is None:
            part = self.parts[(tn, x)] = self._part(self.last, tn, x)
        return out | part

    def links(self, hosts: Iterable[int], tn: int, x: int) -> set[int]:
        """Every link of the candidate (tn, x) whose terminals are ``hosts``."""
        out = set(hosts)
        for lv in range(self.level):
            xx = x if lv == self.last else 0
            cached = self.full.get((lv, tn, xx))
            out.update(cached if cached is not None else self.h.uplinks(lv, self.keys[lv], tn, xx))
        return out
