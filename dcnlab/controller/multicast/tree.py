"""Multicast trees on a fat-tree: incremental shape, typed snapshots, and per-port replication tables.

A multicast tree (MCT, C-MR4LMS (Chen et al.), Definition 3) of a member set on the tree rooted at ``(tnid, x)`` is the union of
the members' unique up-paths, cut at the members' lowest common level (Algorithm 1's root rules: one L0 →
that L0; one CN → the tree's L1 there; one CN group → its L2; otherwise the top switch).  It is therefore
kept as counts of member keys per level (:class:`TreeState`): adding or removing a member touches only
the links whose key count goes 0 ↔ 1, plus the links of a level the root climbs to or leaves.

The data plane (:mod:`~dcnlab.controller.multicast.dataplane`) replicates by ``(switch, ingress port, color)``: a
tree crossing a switch on
ports P installs, for every ingress port x in P, the out-port set P \\ {x} (flood along the tree, never
back).  :func:`port_tables` computes these entries in the fabric's port numbers.  When two trees share a
port with the same color (only the two trees of one group in dual mode, at the L0 ports of the group's
members), the entry is the union of both trees' out-ports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from dcnlab.controller.multicast.hierarchy import Hierarchy


def shape(h: Hierarchy, hosts: Iterable[int] | Mapping[int, int]) -> tuple[list[dict[int, int]], int]:
    """Member-key counts per level below the top, and the root level (lowest level with a single key)."""
    c0: dict[int, int] = {}
    t = h.t
    if isinstance(hosts, Mapping):
        for host, n in hosts.items():
            k = host // t
            c0[k] = c0.get(k, 0) + n
    else:
        for host in hosts:
            k = host // t
            c0[k] = c0.get(k, 0) + 1
    cnts = [c0]
    for d in h.divisors:
        nxt: dict[int, int] = {}
        for k, n in cnts[-1].items():
            kk = k // d
            nxt[kk] = nxt.get(kk, 0) + n
        cnts.append(nxt)
    level = next((lv for lv, c in enumerate(cnts) if len(c) == 1), h.top)
    return cnts, level


def add_counts(dst: dict[int, int], src: Mapping[int, int]) -> None:
    """``dst += src`` for count dicts; the common keys are the only ones touched in Python."""
    common = src.keys() & dst.keys()
    saved = {k: dst[k] for k in common}
    dst.update(src)
    for k, n in saved.items():
        dst[k] += n


def key_counts(h: Hierarchy, host: int) -> list[dict[int, int]]:
    """The per-level key counts of a single membership of ``host``."""
    k = host // h.t
    out = [{k: 1}]
    for d in h.divisors:
        k //= d
        out.append({k: 1})
    return out


def tree_links(h: Hierarchy, hosts: Iterable[int], cnts: list[dict[int, int]], level: int, tnid: int,
               x: int) -> set[int]:
    """Terminal links of ``hosts`` plus the up-links of every key below the root level."""
    links = set(hosts)
    for lv in range(level):
        links.update(h.uplinks(lv, cnts[lv], tnid, x))
    return links


class TreeState:
    """A mutable tree: its groups, member multiset (a terminal in two merged groups counts twice), key
    counts, root level and link set.  Internal to the planners; results are :class:`TreeRecord`."""

    __slots__ = ("tid", "color", "g", "tnid", "x", "plane", "groups", "hosts", "cnts", "level", "links")

    def __init__(self, h: Hierarchy, tid: int, color: int, tnid: int, x: int, hosts: Mapping[int, int],
                 groups: Iterable[int], plane: int = 0,
                 shaped: tuple[list[dict[int, int]], int, set[int]] | None = None) -> None:
        """``shaped`` = (key counts, root level, links) when the caller has computed them for ``hosts``; the
        tree then takes ``hosts`` over without copying it."""
        self.tid, self.color, self.tnid, self.x, self.plane = tid, color, tnid, x, plane
        self.g = h.tn_group(tnid)
        self.groups = set(groups)
        self.hosts = hosts if shaped is not None and isinstance(hosts, dict) else dict(hosts)
        if shaped is None:
            cnts, level = shape(h, self.hosts)
            shaped = cnts, level, tree_links(h, self.hosts, cnts, level, tnid, x)
        self.cnts, self.level, self.links = shaped

    @property
    def root_key(self) -> int:
        return next(iter(self.cnts[self.level])) if self.level < len(self.cnts) else 0

    def _keys(self, h: Hierarchy, host: int) -> list[int]:
        keys = [host // h.t]
        for d in h.divisors:
            keys.append(keys[-1] // d)
        return keys

    def extension(self, h: Hierarchy, rest: Mapping[int, int],
                  rest_cnts: list[dict[int, int]]) -> tuple[list[int], int, list[set[int]]]:
        """What adding the memberships ``rest`` (key counts ``rest_cnts``) would do with the same root (no
        mutation): the links it adds, the new root level, and the new keys per level."""
        cnts = self.cnts
        new = [rc.keys() - c.keys() for c, rc in zip(cnts, rest_cnts)]
        level = next((lv for lv, c in enumerate(cnts) if len(c) + len(new[lv]) == 1), h.top)
        added = list(rest.keys() - self.hosts.keys())
        tn, x = self.tnid, self.x
        for lv in range(level):
            added.extend(h.uplinks(lv, new[lv], tn, x))
            if lv >= self.level:
                added.extend(h.uplinks(lv, cnts[lv], tn, x))
        return added, level, new

    def absorb(self, rest: Mapping[int, int], rest_cnts: list[dict[int, int]], groups: Iterable[int],
               added: Iterable[int], level: int) -> None:
        """Apply an :meth:`extension` (``added`` and ``level`` as it returned them)."""
        add_counts(self.hosts, rest)
        for c, rc in zip(self.cnts, rest_cnts):
            add_counts(c, rc)
        self.level = level
        self.links.update(added)
        self.groups.update(groups)

    def links_if_added(self, h: Hierarchy, host: int) -> tuple[list[int], int]:
        """Links a new membership of ``host`` would add, and the new root level (no mutation)."""
        added, level, _ = self.extension(h, {host: 1}, key_counts(h, host))
        return added, level

    def add_host(self, h: Hierarchy, host: int) -> list[int]:
        one = key_counts(h, host)
        added, level, _ = self.extension(h, {host: 1}, one)
        self.absorb({host: 1}, one, (), added, level)
        return added

    def remove_host(self, h: Hierarchy, host: int) -> list[int]:
        """Drop one membership of ``host``; return the links that leave the tree."""
        removed = []
        if self.hosts[host] == 1:
            del self.hosts[host]
            removed.append(host)
        else:
            self.hosts[host] -= 1
        dropped = []
        for lv, k in enumerate(self._keys(h, host)):
            c = self.cnts[lv]
            if c[k] == 1:
                del c[k]
                dropped.append(k)
            else:
                c[k] -= 1
                dropped.append(-1)
        old = self.level
        if self.hosts:
            self.level = next((lv for lv, c in enumerate(self.cnts) if len(c) == 1), h.top)
        for lv in range(old):
            if dropped[lv] >= 0:
                removed.append(h.uplink(lv, dropped[lv], self.tnid, self.x))
            if lv >= self.level:
                removed.extend(h.uplinks(lv, self.cnts[lv], self.tnid, self.x))
        self.links.difference_update(removed)
        return removed

    def record(self) -> TreeRecord:
        return TreeRecord(self.tid, self.color, self.tnid, self.x, self.level, self.root_key,
                          tuple(sorted(self.groups)), frozenset(self.links), self.plane)


@dataclass(frozen=True)
class TreeRecord:
    """A multicast tree as data: color, root (level, key, TN, top switch), its groups and link ids."""

    tid: int
    color: int
    tnid: int
    x: int
    level: int
    root_key: int
    groups: tuple[int, ...]
    links: frozenset[int]
    plane: int = 0

    @property
    def tfi(self) -> int:
        return len(self.groups)

    def root(self, h: Hierarchy) -> str:
        return h.node_name(self.level, self.root_key, self.tnid, self.x)

    def directed_links(self, h: Hierarchy) -> list[tuple[str, str]]:
        """``(parent, child)`` node names, parent towards the root (links of a tree always point down)."""
        return [(u, d) for u, _, d, _ in (h.link_ends(lk) for lk in sorted(self.links))]

    def switch_ports(self, h: Hierarchy) -> dict[str, set[int]]:
        """Ports of every switch on the tree (fabric port numbers)."""
        ports: dict[str, set[int]] = {}
        for lk in self.links:
            u, up, d, dp = h.link_ends(lk)
            ports.setdefault(u, set()).add(up)
            if lk >= h.num_hosts:
                ports.setdefault(d, set()).add(dp)
        return ports


Table = dict[tuple[int, int], frozenset[int]]
"""``(ingress port, color) -> out-ports`` of one switch."""


def port_tables(h: Hierarchy, trees: Iterable[TreeRecord]) -> dict[str, Table]:
    """Per switch, the replication entries of all ``trees`` (see the module docstring)."""
    tables: dict[str, dict[tuple[int, int], set[int]]] = {}
    for tr in trees:
        for sw, ports in tr.switch_ports(h).items():
            tab = tables.setdefault(sw, {})
            for pin in ports:
                tab.setdefault((pin, tr.color), set()).update(ports - {pin})
    return {sw: {k: frozenset(v) for k, v in tab.items()} for sw, tab in tables.items()}


@dataclass(frozen=True)
class EntryChange:
    """One replication entry that a join, leave or merge changes. ``None`` means "no entry"."""

    switch: str
    in_port: int
    color: int
    before: frozenset[int] | None
    after: frozenset[int] | None


Owner = Callable[[int, int], "int | None"]
"""``(link, color) -> tree id`` occupying it (one lookup per tree plane)."""


def switch_entries(h: Hierarchy, switch: str, color: int, owners: Iterable[Owner]) -> dict[int, frozenset[int]]:
    """``in_port -> out-ports`` of ``switch`` for ``color`` given the link owners of each plane."""
    plinks = h.port_links(switch)
    out: dict[int, set[int]] = {}
    for own in owners:
        by_tree: dict[int, set[int]] = {}
        for port, lk in plinks:
            tid = own(lk, color)
            if tid is not None:
                by_tree.setdefault(tid, set()).add(port)
        for ports in by_tree.values():
            for pin in ports:
                out.setdefault(pin, set()).update(ports - {pin})
    return {k: frozenset(v) for k, v in out.items()}


def entry_changes(h: Hierarchy, touched: Iterable[tuple[int, int]], before: list[Owner],
                  after: list[Owner]) -> tuple[EntryChange, ...]:
    """Entries that differ between two owner states on the switches at the ends of the touched (link, color)s."""
    keys: set[tuple[str, int]] = set()
    for lk, color in touched:
        u, _, d, _ = h.link_ends(lk)
        keys.add((u, color))
        if lk >= h.num_hosts:
            keys.add((d, color))
    changes = []
    for sw, color in sorted(keys):
        old = switch_entries(h, sw, color, before)
        new = switch_entries(h, sw, color, after)
        for port in sorted(old.keys() | new.keys()):
            a, b = old.get(port), new.get(port)
            if a != b:
                changes.append(EntryChange(sw, port, color, a, b))
    return tuple(changes)
