"""Fault-tolerant dual trees of C-MR4LMS (Chen et al.), Fig. 5, formula (4).

Every group gets two trees, one from each half of the m spanning trees of its color
(:func:`dcnlab.controller.multicast.mapping.dual_mappings`); senders use both, receivers drop the duplicate, so
one failed link is transparent (the controller may also move a group to its other tree).  Each half is
an independent C-MR4LMS plane with its own merging; the planes use disjoint L1 indices and hence
disjoint TNs, so **the two trees of a group are link-disjoint above L0** (tested).

Decisions on what the paper leaves open (the per-port tables in dual mode, L0, groups inside one L0 or one CN):

* **At L0** both trees share the members' terminal links with the same color.  The replication entry of
  a member's port is the union of both trees' out-ports (the packet enters both trees); an entry of an
  up-port belongs to that port's tree only, so a copy never crosses into the other tree.
* **Groups under one L0** have no links above L0: both "trees" are the same terminal links, and no
  redundancy is possible (a terminal link has no alternative anyway).
* **Groups inside one CN** get two L1 roots, L1(c, g1) and L1(c, g2), so they are protected too.
* A group refused by one plane (a terminal conflict across spanning trees) is removed from the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dcnlab.controller.multicast.cmr4lms import CMR4LMS, Change
from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.tree import EntryChange, TreeRecord, entry_changes


@dataclass(frozen=True)
class DualChange:
    primary: Change
    backup: Change | None
    entries: tuple[EntryChange, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.primary.accepted and (self.backup is None or self.backup.accepted)


class DualCMR4LMS:
    """Two C-MR4LMS planes (formula (4)); the same operations as :class:`CMR4LMS`, applied to both."""

    def __init__(self, h: Hierarchy, colors: int, variant: str = "fixed", scope: str | None = None,
                 track_entries: bool = False, record_ops: bool = True) -> None:
        self.h = h
        rec = record_ops or track_entries
        self.planes = (CMR4LMS(h, colors, variant, scope, plane=0, record_ops=rec),
                       CMR4LMS(h, colors, variant, scope, plane=1, record_ops=rec))
        self.track_entries = track_entries

    @property
    def refused(self) -> dict[int, str]:
        return self.planes[0].refused

    def groups(self) -> dict[int, frozenset[int]]:
        return self.planes[0].groups()

    def members(self, mgid: int) -> frozenset[int]:
        return self.planes[0].members(mgid)

    def tree_id(self, mgid: int) -> int:
        return self.planes[0].tree_id(mgid)

    def backup_id(self, mgid: int) -> int:
        return self.planes[1].tree_id(mgid)

    def group_trees(self, mgid: int) -> tuple[TreeRecord, TreeRecord]:
        return self.planes[0].group_tree(mgid), self.planes[1].group_tree(mgid)

    def trees(self) -> list[TreeRecord]:
        return self.planes[0].trees() + self.planes[1].trees()

    def add_group(self, mgid: int, hosts: Iterable[int]) -> DualChange:
        members = list(hosts)
        a = self.planes[0].add_group(mgid, members)
        if not a.accepted:
            return DualChange(a, None)
        b = self.planes[1].add_group(mgid, members)
        if not b.accepted:
            undo = self.planes[0].remove_group(mgid)
            self.planes[0].refused[mgid] = b.reason
            return DualChange(Change("add", mgid, accepted=False, reason=b.reason, link_ops=()), b,
                              self._entries([a, undo], [b]))
        return DualChange(a, b, self._entries([a], [b]))

    def remove_group(self, mgid: int) -> DualChange:
        a, b = self.planes[0].remove_group(mgid), self.planes[1].remove_group(mgid)
        return DualChange(a, b, self._entries([a], [b]))

    def join(self, mgid: int, host: int) -> DualChange:
        a = self.planes[0].join(mgid, host)
        if not a.accepted:
            return DualChange(a, None)
        b = self.planes[1].join(mgid, host)
        if not b.accepted:
            undo = self.planes[0].leave(mgid, host)
            return DualChange(Change("join", mgid, host, accepted=False, reason=b.reason), b,
                              self._entries([a, undo], [b]))
        return DualChange(a, b, self._entries([a], [b]))

    def leave(self, mgid: int, host: int) -> DualChange:
        a, b = self.planes[0].leave(mgid, host), self.planes[1].leave(mgid, host)
        return DualChange(a, b, self._entries([a], [b]))

    def _entries(self, a_changes: list[Change], b_changes: list[Change]) -> tuple[EntryChange, ...]:
        """Entry changes over both planes (the L0 member ports combine the two trees)."""
        if not self.track_entries:
            return ()

        def fold(changes: list[Change]) -> dict[tuple[int, int], tuple[int | None, int | None]]:
            ops: dict[tuple[int, int], tuple[int | None, int | None]] = {}
            for ch in changes:
                for lk, c, before, after in ch.link_ops:
                    ops[(lk, c)] = (ops.get((lk, c), (before, None))[0], after)
            return ops

        pa, pb = self.planes
        ops_a, ops_b = fold(a_changes), fold(b_changes)
        return entry_changes(self.h, set(ops_a) | set(ops_b), [pa.before_owner(ops_a), pb.before_owner(ops_b)],
                             [pa.owner, pb.owner])
