"""Broadcast forwarding state of a CIST, in the fabric's port numbers (for the P4 data plane).

A broadcast on tree T floods along T from whichever switch the source host hangs off (CISTs are independent
for every root, by the paper's definition, so the state is the same for every source). At switch u, a copy that arrived on
port ``in`` goes out on every *tree port* (a port whose link is an edge of T) and every *host port* of u,
except ``in`` itself. So the table of u is ``{in_port: out_ports}`` for in_port over u's tree ports and host
ports; copies arriving on any other port are not forwarded (they are not on this tree).

Decision (not in the paper, which has no data plane): hosts receive the copy of *every* tree, so a
receiver sees up to k copies and deduplicates by (source, sequence). A leaf of T (a switch
with one tree port) still delivers to its hosts; it just never forwards to another switch.
"""

from __future__ import annotations

from collections.abc import Mapping

from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.trees import CistTree

PortTable = dict[int, tuple[int, ...]]


def tree_ports(graph: SwitchGraph, tree: CistTree) -> dict[str, tuple[int, ...]]:
    """switch -> its ports on ``tree`` (ascending)."""
    ports: dict[str, list[int]] = {name: [] for name in graph.names}
    for u_name, v_name in tree.edges:
        u, v = graph.vertex(u_name), graph.vertex(v_name)
        try:
            ports[u_name].append(graph.port[(u, v)])
            ports[v_name].append(graph.port[(v, u)])
        except KeyError:
            raise ValueError(f"tree {tree.tree_id}: ({u_name}, {v_name}) is not a link of the fabric") from None
    return {name: tuple(sorted(p)) for name, p in ports.items()}


def broadcast_ports(graph: SwitchGraph, tree: CistTree, hosts: bool = True) -> dict[str, PortTable]:
    """Per switch, ``{in_port: out_ports}`` for a broadcast on ``tree``.

    ``in_port`` ranges over the switch's tree ports and (with ``hosts``) its host ports; ``out_ports`` are all
    tree and host ports but ``in_port``. With ``hosts=False`` only switch-to-switch forwarding is given."""
    on_tree = tree_ports(graph, tree)
    table: dict[str, PortTable] = {}
    for v, name in enumerate(graph.names):
        ports = set(on_tree[name]) | (set(graph.host_ports[v]) if hosts else set())
        table[name] = {p: tuple(sorted(ports - {p})) for p in sorted(ports)}
    return table


def all_broadcast_ports(graph: SwitchGraph, trees: tuple[CistTree, ...],
                        hosts: bool = True) -> Mapping[int, dict[str, PortTable]]:
    """tree id -> :func:`broadcast_ports` of that tree."""
    return {t.tree_id: broadcast_ports(graph, t, hosts) for t in trees}
