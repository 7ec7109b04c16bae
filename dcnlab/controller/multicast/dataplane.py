"""C-MR4LMS in the P4 data plane: groups' trees -> per-port replication state, installed incrementally, with
failover to the dual tree: C-MR4LMS (Chen et al.), Definitions 3-4, Algorithm 3 and the fault-tolerant trees (Fig. 5).

**The per-port multicast table.**  The paper's switch keeps one multicast table per input port, of C entries
(colors); entry ``(in port, color)`` is a bitmap of out-ports (Def. 4).  Here that table is the
``tree_replicate`` table of ``p4src/multicast.p4`` restricted to kind 1: key ``(ingress port, kind = 1, tree =
color)`` → a PRE multicast group whose replicas are the out-ports (:mod:`dcnlab.controller.replication` compiles the
``{TreeKey: out-ports}`` map of a switch into groups and entries; a switch shares one PRE group between every
key with the same out-port set).  The out-ports of ``(x, c)`` at switch s are the ports of s on the tree that
holds color c on port x, minus x (flood along the tree, never back).  **Table limit.**  BMv2 has
no per-port table size (and ``simple_switch_grpc`` has no ``--max-mc-groups`` option), so the limit of C
entries per port is the controller's: colors are ``0..C-1`` by construction (formula (3)), every compiled
switch is checked to hold at most C multicast entries per ingress port (:class:`TableLimitError`), and the
shim bounds C <= 256 (8-bit ``tree``) and MGIDs < 65,536 (16-bit ``group``).

**What a packet carries, and how it selects a tree.**  A sender puts the group's MGID and color in the shim
(kind 1, tree = color, group = MGID); the color never changes for a group (formula (3) depends on the MGID
only, and merges keep it), so a host learns it once, when it joins (:meth:`MulticastDataplane.color`).
Switches look only at ``(ingress port, color)``.  In dual mode (:mod:`dcnlab.controller.multicast.dual`) both trees
of a group have the *same* color (formula (4)), and above L0 they are link-disjoint, so the up-port a copy
travels on identifies its tree at every switch.  The only entries where the two trees meet are the
``(member's terminal port, color)`` entries at the members' L0 switches: **the edge switch chooses the
tree(s)** — the entry's out-ports are the local members' ports plus the up-port of every *fed* tree.
Hosts are never told about failures; the controller switches a group by rewriting only those edge entries.

**Feeding policy** (the paper leaves it open: it does not say how L0 feeds the two trees):

* ``both`` (default; the paper's Fig. 5, "packets are sent over both trees"): the edge entry feeds both trees, every remote member gets
  two copies and drops the second (by (MGID, source, sequence)); one failed link is transparent — no message
  is lost however slow the controller is.
* ``primary``: the edge entry feeds the first tree only; the second is installed as a hot standby (its
  entries from up-ports are in place), so failover is one rewrite of edge entries, and messages sent during
  detection and failover are lost to members behind the cut.

**Failover.**  When a link fails (:meth:`MulticastDataplane.link_down`, called by whatever notices it: the
experiment's ``ip monitor`` watcher), every tree that uses it is *broken*; the edge entries of the members
of a broken tree stop feeding it (``both``: they feed the healthy tree only; ``primary``: they switch to the
second tree).  If both trees of a group are broken (or there is no second tree: single-tree mode, a failed
terminal link), the edge keeps feeding all of them: partial delivery beats none.  Failover writes only the
edge entries of the affected trees' members (plus any PRE group a new out-port set needs);
:class:`FailoverStats` gives its compute and write times.  :meth:`MulticastDataplane.link_up` undoes it.
Joins, leaves and merges on a broken tree keep its members on the healthy tree.

**Incremental installation** (groups are installed and removed as jobs join and leave): every
operation goes to the C-MR4LMS planner (Algorithms 1–3, incremental join and leave), whose
:class:`~dcnlab.controller.multicast.cmr4lms.Change` lists the (link, color) pairs whose owner changed; only the
switches at their ends (and, while links are down, the edges of the changed trees) are recompiled, and only
the entities that differ are written.  PRE group ids are kept for out-port sets that stay; a new set gets a
fresh id.  Writes go in three rounds over all touched switches, so that no entry ever points at a missing
group: (1) new PRE groups and host-port rewrites, (2) ``tree_replicate`` inserts, modifies and deletes,
(3) deletes of groups and host-port rewrites no longer used.

**PRE group ids** of multicast are ``1..16383`` per switch; CIST broadcast (kind 2) uses ``16384..`` (see
:mod:`dcnlab.controller.cist.dataplane`), so the two mechanisms never collide in the PRE.  Both mechanisms would
insert ``tree_host_port`` entries for the same host ports if they ran on one switch at the same time; that is
not supported (the experiments run one mechanism per fabric).

**Who may send.**  A sender must be a member of the group (MPI: the root of a collective is in the
communicator): its terminal port's entry for the color is what puts the packet on the group's tree.  A
non-member's packet finds no entry (dropped) or, worse, the entry of another group of that color, so
:meth:`MulticastDataplane.predicted_copies` refuses non-member senders.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from dcnlab.controller.multicast.cmr4lms import CMR4LMS, Change
from dcnlab.controller.multicast.dual import DualChange, DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.layers import MAX_MGID  # the shim's ``group`` field is 16 bits
from dcnlab.controller.multicast.tree import TreeRecord
from dcnlab.controller.replication import (KIND_MULTICAST, REPLICA_INSTANCE, SwitchReplication, TreeKey,
                                    switch_replication)
from dcnlab.controller.runtime.entities import MulticastGroup, TableEntry, Update
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

FEEDS = ("both", "primary")
GROUP_FIRST = 1
GROUP_LAST = 0x3FFF
"""Multicast PRE group ids per switch: 1..16383 (CIST broadcast starts at 16384)."""
MAX_COLORS = 256
"""The shim's ``tree`` field is 8 bits."""

Rules = dict[TreeKey, frozenset[int]]


class Writer(Protocol):
    """What the installer needs of :class:`dcnlab.controller.runtime.controller.Controller`."""

    def write(self, updates: Mapping[str, Sequence[Update]]) -> None: ...


class TableLimitError(ValueError):
    """A switch port would need more than C multicast entries (cannot happen with colors 0..C-1)."""


@dataclass(frozen=True)
class OpStats:
    """What one add/remove/join/leave did to the planner and the switches."""

    op: str
    mgid: int
    host: str | None
    accepted: bool
    reason: str
    merged: tuple[int, ...]
    """MGIDs that now share the group's (first) tree and did not before."""
    switches: int
    """Switches written."""
    updates: int
    groups_added: int
    groups_deleted: int
    entries_changed: int
    compute_seconds: float
    """Planner + recompilation of the touched switches + diff."""
    write_seconds: float


@dataclass(frozen=True)
class FailoverStats:
    """What one link failure (or repair) made the controller do."""

    link: tuple[str, str]
    """(upper node, lower node) of the link."""
    down: bool
    trees: tuple[tuple[int, int], ...]
    """(plane, tree id) of every tree that became broken (or healthy again)."""
    groups: tuple[int, ...]
    """MGIDs whose edge entries now feed another tree set."""
    switches: int
    updates: int
    compute_seconds: float
    """Wall-clock time to find the broken trees and recompile their edge switches."""
    write_seconds: float
    switched_seconds: float
    """From the call until the edge entries were rewritten (rounds 1 and 2: traffic is switched)."""
    compute_cpu_seconds: float = 0.0
    """CPU time of the computation (the wall-clock time also counts waiting for a busy CPU)."""

    @property
    def seconds(self) -> float:
        return self.compute_seconds + self.write_seconds


@dataclass
class _Installed:
    """What the controller has written to one switch (its multicast part)."""

    rules: Rules = field(default_factory=dict)
    groups: dict[frozenset[int], int] = field(default_factory=dict)
    """out-port set -> PRE group id."""
    entries: dict[TreeKey, TableEntry] = field(default_factory=dict)
    host_ports: dict[int, TableEntry] = field(default_factory=dict)

    def replication(self) -> SwitchReplication:
        groups = [MulticastGroup(gid, tuple((p, REPLICA_INSTANCE) for p in sorted(ports)))
                  for ports, gid in sorted(self.groups.items(), key=lambda kv: kv[1])]
        return SwitchReplication(groups, [self.entries[k] for k in sorted(self.entries, key=_key_order)],
                                 [self.host_ports[p] for p in sorted(self.host_ports)])


def _key_order(k: TreeKey) -> tuple[int, int, int]:
    return k.in_port, k.kind, k.tree


@dataclass
class _Diff:
    rounds: list[dict[str, list[Update]]]
    groups_added: int = 0
    groups_deleted: int = 0
    entries_changed: int = 0

    @property
    def updates(self) -> int:
        return sum(len(u) for r in self.rounds for u in r.values())

    @property
    def switches(self) -> int:
        return len({sw for r in self.rounds for sw in r})


def host_addresses(h: Hierarchy) -> dict[str, dict[int, tuple[str, str]]]:
    """switch -> {host port: (host MAC, host IP)} for the egress rewrite of copies that leave to hosts."""
    out: dict[str, dict[int, tuple[str, str]]] = {}
    for info in h.fabric.hosts():
        out.setdefault(info.node, {})[info.node_port] = (info.mac, info.ip)
    return out


class MulticastDataplane:
    """C-MR4LMS groups on the switches of one emulated fat-tree, kept in step with joins, leaves and failures.

    ``controller`` is the run's :class:`~dcnlab.controller.runtime.controller.Controller` (``net.controller``); it
    remembers what was written, so a restarted switch gets its multicast state back on reconnect."""

    def __init__(self, controller: Writer, h: Hierarchy, colors: int, variant: str = "fixed", dual: bool = True,
                 feed: str = "both", scope: str | None = None, planner: Any = None) -> None:
        """``planner``: another router instead of C-MR4LMS, one plane, groups added only
        (:class:`dcnlab.controller.multicast.registry.RouterPlanner`); ``variant``, ``dual`` and ``scope`` then
        do not apply."""
        if not 1 <= colors <= MAX_COLORS:
            raise UserError(f"multicast data plane: colors={colors} is out of range; valid: 1..{MAX_COLORS} "
                            f"(the shim's tree field has 8 bits)")
        if feed not in FEEDS:
            raise UserError(f"multicast data plane: feed {feed!r} is unknown; valid: {', '.join(FEEDS)}")
        self.controller = controller
        self.h = h
        self.colors = colors
        self.dual = dual
        self.feed = feed
        self.planner: CMR4LMS | DualCMR4LMS
        self.planes: tuple[CMR4LMS, ...]
        if planner is not None:
            self.dual = False
            self.planner = planner
            self.planes = (planner,)
        elif dual:
            self.planner = DualCMR4LMS(h, colors, variant, scope, record_ops=True)
            self.planes = self.planner.planes
        else:
            self.planner = CMR4LMS(h, colors, variant, scope, record_ops=True)
            self.planes = (self.planner,)
        self.hosts = host_addresses(h)
        self.failed: set[int] = set()
        self._broken: list[set[int]] = [set() for _ in self.planes]
        self._installed: dict[str, _Installed] = {}
        self._port_link: dict[str, dict[int, int]] = {}
        self._lock = threading.RLock()

    # -- queries --------------------------------------------------------------------------------------------
    def host_index(self, host: str | int) -> int:
        return host if isinstance(host, int) else self.h.host_index(host)

    def groups(self) -> dict[int, frozenset[int]]:
        return self.planner.groups()

    def members(self, mgid: int) -> list[str]:
        return [self.h.host_name(x) for x in sorted(self.planner.members(mgid))]

    def color(self, mgid: int) -> int:
        """The color a sender puts in the shim for ``mgid`` (fixed by the MGID, formula (3))."""
        return self.planes[0].mapping.color_tnid(mgid)[0]

    def group_trees(self, mgid: int) -> tuple[TreeRecord, ...]:
        """The group's tree in each plane (one tree, or the two of dual mode)."""
        return tuple(p.group_tree(mgid) for p in self.planes)

    def trees(self) -> list[TreeRecord]:
        return self.planner.trees()

    def fed_planes(self, mgid: int) -> tuple[int, ...]:
        """The planes whose tree the group's senders feed (from their edge entries)."""
        return self._fed(tuple(p.tree_id(mgid) for p in self.planes))

    def broken_trees(self) -> list[tuple[int, int]]:
        return sorted((k, t) for k, ts in enumerate(self._broken) for t in ts)

    def installed(self) -> dict[str, SwitchReplication]:
        """What has been written, per switch (switches without multicast state are left out)."""
        with self._lock:
            return {sw: inst.replication() for sw, inst in sorted(self._installed.items())
                    if inst.entries or inst.groups or inst.host_ports}

    def installed_rules(self) -> dict[str, Rules]:
        with self._lock:
            return {sw: dict(inst.rules) for sw, inst in sorted(self._installed.items()) if inst.rules}

    # -- the per-port tables --------------------------------------------------------------------------------
    def _links_of(self, switch: str) -> dict[int, int]:
        pl = self._port_link.get(switch)
        if pl is None:
            pl = self._port_link[switch] = dict(self.h.port_links(switch))
        return pl

    def _fed(self, owners: Sequence[int | None]) -> tuple[int, ...]:
        """Planes an edge entry feeds, given the tree owning the member's terminal link in each plane."""
        have = [k for k, t in enumerate(owners) if t is not None]
        healthy = [k for k in have if owners[k] not in self._broken[k]]
        if self.feed == "primary":
            return (healthy[0],) if healthy else tuple(have[:1])
        return tuple(healthy) if healthy else tuple(have)

    def rules(self, switch: str) -> Rules:
        """``(in port, 1, color) -> out-ports`` of ``switch`` from the planner's current trees and the feed."""
        plinks = self._links_of(switch)
        nh = self.h.num_hosts
        out: dict[TreeKey, set[int]] = {}
        for color in range(self.colors):
            by_tree: list[dict[int, set[int]]] = []
            owners_at: dict[int, list[int | None]] = {}
            for k, plane in enumerate(self.planes):
                trees: dict[int, set[int]] = {}
                for port, lk in plinks.items():
                    tid = plane.owner(lk, color)
                    if tid is not None:
                        trees.setdefault(tid, set()).add(port)
                    if lk < nh:
                        owners_at.setdefault(port, [None] * len(self.planes))[k] = tid
                by_tree.append(trees)
            for trees in by_tree:
                for ports in trees.values():
                    for pin in ports:
                        if plinks[pin] >= nh:
                            out.setdefault(TreeKey(pin, KIND_MULTICAST, color), set()).update(ports - {pin})
            for pin, owners in owners_at.items():
                if all(t is None for t in owners):
                    continue
                outs = out.setdefault(TreeKey(pin, KIND_MULTICAST, color), set())
                for k in self._fed(owners):
                    t = owners[k]
                    if t is not None:
                        outs.update(by_tree[k][t] - {pin})
        rules = {key: frozenset(ports) for key, ports in out.items() if ports}
        self._check_limit(switch, rules)
        return rules

    def _check_limit(self, switch: str, rules: Rules) -> None:
        per_port = Counter(k.in_port for k in rules)
        for port, n in per_port.items():
            if n > self.colors:
                raise TableLimitError(f"{switch} port {port}: {n} multicast entries exceed the table of "
                                      f"C={self.colors} entries per port")

    def compile(self, switch: str) -> SwitchReplication:
        """``switch``'s multicast state from scratch (group ids from 1, as :mod:`dcnlab.controller.replication` numbers
        them); what the incremental state must equal up to group numbering."""
        return switch_replication(self.rules(switch), self.hosts.get(switch, {}), first_group=GROUP_FIRST)

    def verify(self) -> list[str]:
        """Differences between what was written incrementally and a from-scratch compilation of every switch
        (empty if they agree): rules, entries pointing at groups with exactly their out-ports, no PRE group
        or host-port rewrite left unused."""
        problems = []
        with self._lock:
            for sw in sorted(set(self._installed) | set(self._switches())):
                inst = self._installed.get(sw, _Installed())
                want = self.rules(sw)
                if inst.rules != want:
                    extra = {k: v for k, v in inst.rules.items() if want.get(k) != v}
                    missing = {k: v for k, v in want.items() if inst.rules.get(k) != v}
                    problems.append(f"{sw}: installed rules differ: have {extra}, want {missing}")
                by_id = {gid: ports for ports, gid in inst.groups.items()}
                for key, entry in inst.entries.items():
                    ports = by_id.get(dict(entry.params)["mcast_grp"])
                    if ports != want.get(key):
                        problems.append(f"{sw}: entry {key} points at group with ports {ports}, want {want.get(key)}")
                if set(inst.groups) != set(want.values()):
                    problems.append(f"{sw}: PRE groups {sorted(map(sorted, inst.groups))} but rules use "
                                    f"{sorted(map(sorted, set(want.values())))}")
                used = {p for ports in want.values() for p in ports} & set(self.hosts.get(sw, {}))
                if set(inst.host_ports) != used:
                    problems.append(f"{sw}: host-port rewrites on {sorted(inst.host_ports)}, want {sorted(used)}")
        return problems

    def _switches(self) -> set[str]:
        """Every switch some current tree crosses."""
        out: set[str] = set()
        for tree in self.trees():
            out.update(tree.switch_ports(self.h))
        return out

    # -- diffs and writes -----------------------------------------------------------------------------------
    def _diff(self, switches: Iterable[str]) -> tuple[_Diff, dict[str, _Installed]]:
        """The three write rounds that bring ``switches`` to their current rules, and their new records."""
        rounds: list[dict[str, list[Update]]] = [{}, {}, {}]
        diff = _Diff(rounds)
        new_state: dict[str, _Installed] = {}
        for sw in sorted(set(switches)):
            old = self._installed.get(sw, _Installed())
            rules = self.rules(sw)
            if rules == old.rules:
                continue
            rep = switch_replication(rules, self.hosts.get(sw, {}), first_group=GROUP_FIRST)
            ports_of = {g.mgid: frozenset(p for p, _ in g.replicas) for g in rep.groups}
            taken = set(old.groups.values())
            groups: dict[frozenset[int], int] = {}
            r1: list[Update] = []
            for ports in sorted(ports_of.values(), key=sorted):
                gid = old.groups.get(ports)
                if gid is None:
                    gid = self._free_id(sw, taken)
                    taken.add(gid)
                    r1.append(+MulticastGroup(gid, tuple((p, REPLICA_INSTANCE) for p in sorted(ports))))
                    diff.groups_added += 1
                groups[ports] = gid
            host_ports = {dict(e.match)["std.egress_port"]: e for e in rep.host_ports}
            r1 += [+e for p, e in sorted(host_ports.items()) if p not in old.host_ports]
            entries: dict[TreeKey, TableEntry] = {}
            r2: list[Update] = []
            for e in rep.entries:
                m = dict(e.match)
                key = TreeKey(m["std.ingress_port"], m["hdr.tree.kind"], m["hdr.tree.tree"])
                e = replace(e, params={"mcast_grp": groups[ports_of[dict(e.params)["mcast_grp"]]]})
                entries[key] = e
                before = old.entries.get(key)
                if before is None:
                    r2.append(+e)
                elif before != e:
                    r2.append(~e)
            r2 += [-e for k, e in sorted(old.entries.items(), key=lambda kv: _key_order(kv[0])) if k not in entries]
            diff.entries_changed += len(r2)
            r3: list[Update] = [-e for p, e in sorted(old.host_ports.items()) if p not in host_ports]
            gone = [(gid, ports) for ports, gid in old.groups.items() if ports not in groups]
            r3 += [-MulticastGroup(gid, tuple((p, REPLICA_INSTANCE) for p in sorted(ports)))
                   for gid, ports in sorted(gone)]
            diff.groups_deleted += len(gone)
            for r, ups in zip(rounds, (r1, r2, r3)):
                if ups:
                    r[sw] = ups
            new_state[sw] = _Installed(rules, groups, entries, host_ports)
        return diff, new_state

    @staticmethod
    def _free_id(sw: str, taken: set[int]) -> int:
        for gid in range(GROUP_FIRST, GROUP_LAST + 1):
            if gid not in taken:
                return gid
        raise TableLimitError(f"{sw}: all {GROUP_LAST} multicast PRE group ids are in use")

    def _write(self, diff: _Diff, new_state: dict[str, _Installed]) -> tuple[float, float]:
        """Write the rounds; returns (seconds until round 2 was acknowledged, seconds in all)."""
        t0 = time.perf_counter()
        switched = 0.0
        for i, updates in enumerate(diff.rounds):
            if updates:
                self.controller.write(updates)
            if i == 1:
                switched = time.perf_counter() - t0
        self._installed.update(new_state)
        return switched, time.perf_counter() - t0

    def sync(self, switches: Iterable[str] | None = None) -> OpStats:
        """Bring ``switches`` (default: every switch with state or on a tree) to the current rules."""
        with self._lock:
            t0 = time.perf_counter()
            names = set(switches) if switches is not None else set(self._installed) | self._switches()
            diff, state = self._diff(names)
            compute = time.perf_counter() - t0
            _, wrote = self._write(diff, state)
            return OpStats("sync", -1, None, True, "", (), diff.switches, diff.updates, diff.groups_added,
                           diff.groups_deleted, diff.entries_changed, compute, wrote)

    # -- group operations -----------------------------------------------------------------------------------
    def _touched(self, ch: Change | DualChange) -> set[str]:
        changes = [ch.primary, ch.backup] if isinstance(ch, DualChange) else [ch]
        out: set[str] = set()
        h = self.h
        for c in changes:
            if c is None:
                continue
            for lk, _, _, _ in c.link_ops:
                u, _, d, _ = h.link_ends(lk)
                out.add(u)
                if lk >= h.num_hosts:
                    out.add(d)
        if self.failed:
            self._refresh_broken()
            for k, c in enumerate(changes):
                if c is not None and c.tree_after is not None:
                    out.update(self._edges(self.planes[k].tree(c.tree_after)))
        return out

    def _edges(self, tree: TreeRecord) -> set[str]:
        """The L0 switches of a tree's members (where its edge entries are)."""
        return {self.h.link_ends(lk)[0] for lk in tree.links if lk < self.h.num_hosts}

    def _refresh_broken(self) -> None:
        failed = self.failed
        self._broken = [{t.tid for t in plane.trees() if t.links & failed} if failed else set()
                        for plane in self.planes]

    def _apply(self, op: str, mgid: int, host: str | None, ch: Change | DualChange, t0: float) -> OpStats:
        primary = ch.primary if isinstance(ch, DualChange) else ch
        accepted = ch.accepted
        reason = ""
        if not accepted:
            reason = primary.reason or (ch.backup.reason if isinstance(ch, DualChange) and ch.backup else "")
        if isinstance(ch, DualChange) and not ch.accepted and ch.backup is not None and not ch.backup.accepted:
            # plane 0 was changed and then undone without reporting its link operations: resync everything
            touched = set(self._installed) | self._switches()
            if self.failed:
                self._refresh_broken()
        else:
            touched = self._touched(ch)
        diff, state = self._diff(touched)
        compute = time.perf_counter() - t0
        _, wrote = self._write(diff, state)
        stats = OpStats(op, mgid, host, accepted, reason, primary.merged, diff.switches, diff.updates,
                        diff.groups_added, diff.groups_deleted, diff.entries_changed, compute, wrote)
        log.info("multicast %s %d%s: %s, %d update(s) on %d switch(es)%s", op, mgid, f" {host}" if host else "",
                 "accepted" if accepted else f"refused ({reason})", stats.updates, stats.switches,
                 f", merged with {list(primary.merged)}" if primary.merged else "")
        return stats

    def _check_mgid(self, mgid: int) -> None:
        if not 0 <= mgid <= MAX_MGID:
            raise UserError(f"multicast data plane: mgid {mgid} is out of range; valid: 0..{MAX_MGID} "
                            f"(the shim's group field has 16 bits)")

    def add_group(self, mgid: int, members: Iterable[str | int]) -> OpStats:
        """Algorithm 3 for a new group, then its switches' entries."""
        self._check_mgid(mgid)
        hosts = [self.host_index(m) for m in members]
        with self._lock:
            t0 = time.perf_counter()
            return self._apply("add", mgid, None, self.planner.add_group(mgid, hosts), t0)

    def remove_group(self, mgid: int) -> OpStats:
        with self._lock:
            t0 = time.perf_counter()
            return self._apply("remove", mgid, None, self.planner.remove_group(mgid), t0)

    def join(self, mgid: int, host: str | int) -> OpStats:
        self._check_mgid(mgid)
        x = self.host_index(host)
        with self._lock:
            t0 = time.perf_counter()
            return self._apply("join", mgid, self.h.host_name(x), self.planner.join(mgid, x), t0)

    def leave(self, mgid: int, host: str | int) -> OpStats:
        x = self.host_index(host)
        with self._lock:
            t0 = time.perf_counter()
            return self._apply("leave", mgid, self.h.host_name(x), self.planner.leave(mgid, x), t0)

    # -- failures -------------------------------------------------------------------------------------------
    def link_id(self, switch: str, port: int) -> int:
        """The link id of ``switch``'s ``port``; :class:`UserError` if it is not a wired port of a switch."""
        try:
            return self._links_of(switch)[port]
        except KeyError:
            raise UserError(f"multicast data plane: {switch} port {port} is not a wired switch port") from None

    def port_down(self, switch: str, port: int) -> FailoverStats | None:
        """The link on ``switch``'s ``port`` failed (None if it was already known to be down)."""
        return self._set_link(self.link_id(switch, port), down=True)

    def port_up(self, switch: str, port: int) -> FailoverStats | None:
        return self._set_link(self.link_id(switch, port), down=False)

    def link_down(self, link: int) -> FailoverStats | None:
        return self._set_link(link, down=True)

    def link_up(self, link: int) -> FailoverStats | None:
        return self._set_link(link, down=False)

    def _set_link(self, link: int, down: bool) -> FailoverStats | None:
        with self._lock:
            t0, c0 = time.perf_counter(), time.thread_time()
            if (link in self.failed) == down:
                return None
            if down:
                self.failed.add(link)
            else:
                self.failed.discard(link)
            before = [set(b) for b in self._broken]
            self._refresh_broken()
            changed: list[tuple[int, int]] = []
            touched: set[str] = set()
            groups: set[int] = set()
            for k, plane in enumerate(self.planes):
                for tid in sorted(before[k] ^ self._broken[k]):
                    changed.append((k, tid))
                    tree = plane.tree(tid)
                    touched |= self._edges(tree)
                    groups.update(tree.groups)
            diff, state = self._diff(touched)
            compute, cpu = time.perf_counter() - t0, time.thread_time() - c0
            switched, wrote = self._write(diff, state)
            u, _, d, _ = self.h.link_ends(link)
            stats = FailoverStats((u, d), down, tuple(changed), tuple(sorted(groups)), diff.switches, diff.updates,
                                  compute, wrote, compute + switched, cpu)
            log.info("link %s-%s %s: %d tree(s), groups %s moved; %d update(s) on %d switch(es) in %.1f ms",
                     u, d, "down" if down else "up", len(changed), list(stats.groups), stats.updates,
                     stats.switches, 1e3 * stats.seconds)
            return stats

    # -- the model's prediction -----------------------------------------------------------------------------
    def predicted_copies(self, sender: str | int, mgid: int) -> Counter[tuple[str, str]]:
        """Packets per directed link ``(from node, to node)`` for one message of ``mgid`` sent by ``sender``,
        from the group's trees alone (not from the compiled entries): the sender's frame crosses its terminal
        link once; each fed tree is flooded away from the sender's L0 (every link once, in the direction
        away from it); the sender's L0 replicates the union of the fed trees' ports once, so a local member
        gets one copy, not one per tree."""
        x = self.host_index(sender)
        h = self.h
        color = self.color(mgid)
        if x not in self.planner.members(mgid):
            raise ValueError(f"{h.host_name(x)} is not a member of group {mgid}; only members send")
        owners = [plane.owner(x, color) for plane in self.planes]
        top, _, me, _ = h.link_ends(x)
        counts: Counter[tuple[str, str]] = Counter({(me, top): 1})
        local: set[str] = set()
        for k in self._fed(owners):
            tid = owners[k]
            if tid is None:
                continue
            adj: dict[str, list[tuple[str, int]]] = {}
            for lk in self.planes[k].tree(tid).links:
                u, _, d, _ = h.link_ends(lk)
                adj.setdefault(u, []).append((d, lk))
                adj.setdefault(d, []).append((u, lk))
            seen = {top, me}
            queue = deque([top])
            while queue:
                node = queue.popleft()
                for nxt, lk in adj.get(node, ()):
                    if nxt in seen:
                        continue
                    seen.add(nxt)
                    if lk < h.num_hosts and node == top:
                        local.add(nxt)
                    else:
                        counts[(node, nxt)] += 1
                    queue.append(nxt)
        for y in local:
            counts[(top, y)] = 1
        return counts
