"""Destination-based unicast routing: per forwarding node, destination host -> output ports.

A router returns, for one node, a table ``{dst host index: (primary port, ECMP alternatives...)}``.
The first port is the one a single-path data plane uses; the rest are equal-cost
alternatives for ECMP.  :mod:`dcnlab.controller.rules` compiles these tables into P4 table entries.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from dcnlab.topos.model import Fabric

Table = dict[int, tuple[int, ...]]


class RoutingError(RuntimeError):
    """A route loops, dead-ends or leaves the fabric."""


def rotate(options: list[int], start: int) -> tuple[int, ...]:
    """``options`` rotated so that index ``start`` (mod len) comes first: deterministic spreading."""
    s = start % len(options)
    return tuple(options[s:] + options[:s])


class Router(ABC):
    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric

    def table(self, node: str) -> Table:
        """Forwarding table of forwarding node ``node`` for every destination host."""
        return self.table_for(node, range(self.fabric.num_hosts()))

    def next_hops(self, node: str, dst: int) -> tuple[int, ...]:
        return self.table_for(node, [dst])[dst]

    @abstractmethod
    def table_for(self, node: str, dsts: Iterable[int]) -> Table:
        """Forwarding entries of ``node`` for the destination hosts ``dsts``."""

    def trace(self, src: int, dst: int, choice: int = 0) -> list[str]:
        """Node names from host ``src`` to host ``dst`` following ECMP option ``choice`` (mod #options)."""
        f = self.fabric
        path = [f.host_name(src)]
        node, _ = f.host_attachment(src)
        dst_name = f.host_name(dst)
        limit = 4 * (f.diameter() or 64) + 8
        while True:
            path.append(node)
            if len(path) > limit:
                raise RoutingError(f"route {path[0]} -> {dst_name} loops: {path[:12]}...")
            ports = self.next_hops(node, dst)
            if not ports:
                raise RoutingError(f"{node} has no route to {dst_name}")
            far = f.peer(node, ports[choice % len(ports)])
            if far is None:
                raise RoutingError(f"{node} routes {dst_name} to unwired port {ports[choice % len(ports)]}")
            node = far[0]
            if node == dst_name:
                path.append(node)
                return path
            if not f.node(node).forwards:
                raise RoutingError(f"route to {dst_name} reached the wrong host {node}")


@dataclass
class ForwardingState:
    """Per-node forwarding tables for a whole fabric."""

    tables: dict[str, Table] = field(default_factory=dict)

    def entries(self) -> int:
        return sum(len(t) for t in self.tables.values())

    def __iter__(self) -> Iterator[tuple[str, Table]]:
        return iter(self.tables.items())


def compute_forwarding(router: Router, nodes: Iterable[str] | None = None) -> ForwardingState:
    names = nodes if nodes is not None else (n.name for n in router.fabric.forwarding_nodes())
    return ForwardingState({name: router.table(name) for name in names})
