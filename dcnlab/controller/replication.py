"""Compile replication on trees into switch state of ``p4src/multicast.p4``.

Both tree mechanisms (C-MR4LMS multicast, :mod:`dcnlab.controller.multicast`, and CIST broadcast,
:mod:`dcnlab.controller.cist`) describe what a switch does with a tree packet as a map
``(ingress port, kind, tree) -> out-ports``. Here that becomes

* one PRE multicast group per distinct out-port set of the switch (groups are local to a switch,
  so a switch shares one group among every key with the same out-ports),
* one ``tree_replicate`` entry per key, pointing at its group, and
* one ``tree_host_port`` entry per host port that a tree reaches, which gives the copy leaving
  there the host's own addresses (so the host receives a plain unicast UDP datagram).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dcnlab.controller.runtime.entities import MulticastGroup, TableEntry, Update

REPLICATE_TABLE = "DcnIngress.mcast.tree_replicate"
HOST_PORT_TABLE = "DcnEgress.trees.tree_host_port"
KIND_MULTICAST = 1
KIND_BROADCAST = 2
REPLICA_INSTANCE = 1


@dataclass(frozen=True)
class TreeKey:
    in_port: int
    kind: int
    tree: int


@dataclass(frozen=True)
class SwitchReplication:
    """One switch's tree state, as entities (groups first: entries point at them)."""

    groups: list[MulticastGroup]
    entries: list[TableEntry]
    host_ports: list[TableEntry]

    def inserts(self) -> list[Update]:
        return [+g for g in self.groups] + [+e for e in self.host_ports] + [+e for e in self.entries]

    def deletes(self) -> list[Update]:
        return [-e for e in self.entries] + [-e for e in self.host_ports] + [-g for g in self.groups]


def switch_replication(rules: Mapping[TreeKey, Iterable[int]], host_ports: Mapping[int, tuple[str, str]] | None = None,
                       first_group: int = 1) -> SwitchReplication:
    """``rules``: key -> out-ports; ``host_ports``: port -> (host MAC, host IP) for ports facing hosts.

    A key whose out-port set is empty gets no entry (the default action drops)."""
    group_of: dict[frozenset[int], int] = {}
    groups: list[MulticastGroup] = []
    entries: list[TableEntry] = []
    for key in sorted(rules, key=lambda k: (k.in_port, k.kind, k.tree)):
        ports = frozenset(rules[key])
        if not ports:
            continue
        if key.in_port in ports:
            raise ValueError(f"tree rule {key} sends back out of its ingress port")
        gid = group_of.get(ports)
        if gid is None:
            gid = group_of[ports] = first_group + len(groups)
            groups.append(MulticastGroup(gid, tuple((p, REPLICA_INSTANCE) for p in sorted(ports))))
        entries.append(TableEntry(REPLICATE_TABLE, {"std.ingress_port": key.in_port, "hdr.tree.kind": key.kind,
                                                    "hdr.tree.tree": key.tree},
                                  "DcnIngress.mcast.replicate", {"mcast_grp": gid}))
    used = {p for ports in group_of for p in ports}
    hp = [TableEntry(HOST_PORT_TABLE, {"std.egress_port": port}, "DcnEgress.trees.to_host", {"mac": mac, "ip": ip})
          for port, (mac, ip) in sorted((host_ports or {}).items()) if port in used]
    return SwitchReplication(groups, entries, hp)
