"""Compile unicast forwarding state into P4 table entries of the base program (p4src/forwarding.p4).

A destination with one port becomes ``ipv4_host[dst] -> set_port(port)``. A destination
with equal-cost alternatives becomes ``ipv4_host[dst] -> set_ecmp(base, count)``, and the
members ``ecmp_member[base+i] -> set_port(port_i)`` go with it. A node shares one group
among all destinations with the same port tuple. The switch hashes the 5-tuple to pick
the member, so each flow stays on one path.
"""

from __future__ import annotations

from dataclasses import dataclass

from dcnlab.controller.routing.base import ForwardingState, Table
from dcnlab.controller.runtime.entities import TableEntry, Update
from dcnlab.topos.addressing import host_ip

HOST_TABLE = "DcnIngress.fwd.ipv4_host"
ECMP_TABLE = "DcnIngress.fwd.ecmp_member"
DST_FIELD = "hdr.ipv4.dstAddr"
ECMP_FIELD = "meta.ecmp_index"
SET_PORT = "DcnIngress.fwd.set_port"
SET_ECMP = "DcnIngress.fwd.set_ecmp"


@dataclass(frozen=True)
class NodeRules:
    hosts: list[TableEntry]
    ecmp: list[TableEntry]

    def inserts(self) -> list[Update]:
        # Members first, so no host entry ever points at a missing member.
        return [+e for e in self.ecmp] + [+e for e in self.hosts]


def node_rules(table: Table, ecmp: bool = True) -> NodeRules:
    hosts: list[TableEntry] = []
    members: list[TableEntry] = []
    groups: dict[tuple[int, ...], int] = {}
    for dst, ports in sorted(table.items()):
        ip = host_ip(dst)
        if len(ports) == 1 or not ecmp:
            hosts.append(TableEntry(HOST_TABLE, {DST_FIELD: ip}, SET_PORT, {"port": ports[0]}))
            continue
        base = groups.get(ports)
        if base is None:
            base = groups[ports] = len(members)
            members.extend(TableEntry(ECMP_TABLE, {ECMP_FIELD: base + i}, SET_PORT, {"port": p})
                           for i, p in enumerate(ports))
        hosts.append(TableEntry(HOST_TABLE, {DST_FIELD: ip}, SET_ECMP, {"base": base, "count": len(ports)}))
    return NodeRules(hosts, members)


def forwarding_updates(state: ForwardingState, ecmp: bool = True) -> dict[str, list[Update]]:
    return {node: node_rules(table, ecmp).inserts() for node, table in state}
