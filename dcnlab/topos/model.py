"""Typed fabric model: nodes, numbered ports, links, hosts and their addresses.

A :class:`Fabric` is *lazy*: builders keep only their parameters and compute
nodes, links and neighbours from labels, so a BCube(8,5) with 262,144 servers
costs nothing until someone iterates it.  Counts come from closed formulas.
``materialize()`` turns any fabric into explicit lists for small instances and
for JSON round-trips.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from dcnlab.topos.addressing import host_ip, host_mac
from dcnlab.topos.numbers import MAX_DIGITS, UINT


def parse_name(name: str, shapes: dict[str, tuple[int, ...]], sep: str = "") -> tuple[str, tuple[int, ...]]:
    """Split ``<kind><sep><n0>_<n1>...`` (e.g. ``e3_1``, ``l2_5_0`` with sep "_") into (kind, numbers).

    ``shapes`` maps each kind to the exclusive upper bound of each number. Raise ``KeyError(name)``
    unless the name is canonical and in range."""
    for kind, shape in shapes.items():
        prefix = kind + sep
        if not name.startswith(prefix):
            continue
        parts = name[len(prefix):].split("_")
        if not all(UINT.fullmatch(x) and len(x) <= MAX_DIGITS for x in parts):
            break
        nums = tuple(int(x) for x in parts)
        if len(nums) == len(shape) and all(0 <= v < m for v, m in zip(nums, shape)) \
                and name == prefix + "_".join(str(v) for v in nums):
            return kind, nums
        break
    raise KeyError(name)


class Role(str, enum.Enum):
    """What a node is. ``server`` nodes forward *and* host an application
    (BCube servers, modelled on the ServerSwitch NIC)."""

    HOST = "host"
    SWITCH = "switch"
    SERVER = "server"


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    role: Role
    label: tuple[int, ...]
    ports: int
    layer: str = ""
    """Fabric-specific tier: ``edge``/``agg``/``core``, ``L0``..``L3``, ``router``, ``level1``…"""

    @property
    def forwards(self) -> bool:
        return self.role is not Role.HOST


@dataclass(frozen=True, slots=True)
class Link:
    a: str
    a_port: int
    b: str
    b_port: int


@dataclass(frozen=True, slots=True)
class HostInfo:
    """A host, its addresses and the forwarding node and port it hangs off."""

    name: str
    index: int
    ip: str
    mac: str
    node: str
    node_port: int


class Fabric(ABC):
    """Common interface of every fabric (lazy, label based)."""

    kind: str = ""

    @property
    @abstractmethod
    def params(self) -> dict[str, int | str]: ...

    @property
    def spec(self) -> str:
        return self.kind + ":" + ",".join(f"{k}={v}" for k, v in self.params.items())

    # -- counts (closed formulas; no iteration) -------------------------------
    @abstractmethod
    def counts(self) -> dict[Role, int]: ...

    @abstractmethod
    def num_links(self) -> int: ...

    def num_hosts(self) -> int:
        return self.counts().get(Role.HOST, 0)

    def diameter(self) -> int | None:
        """Longest shortest path, in links, between two endpoints (hosts; BCube: servers)."""
        return None

    # -- enumeration ----------------------------------------------------------
    @abstractmethod
    def nodes(self) -> Iterator[Node]:
        """All nodes in a deterministic order: forwarding nodes, then hosts."""

    @abstractmethod
    def node(self, name: str) -> Node:
        """The node called ``name``; ``KeyError`` if there is none."""

    @abstractmethod
    def peer(self, name: str, port: int) -> tuple[str, int] | None:
        """The (node, port) at the far end of ``name``'s ``port``; None if unwired."""

    @abstractmethod
    def host_name(self, index: int) -> str: ...

    @abstractmethod
    def host_attachment(self, index: int) -> tuple[str, int]:
        """Forwarding node and its port that host ``index`` attaches to."""

    @abstractmethod
    def links(self) -> Iterator[Link]:
        """Every link once, in a deterministic order."""

    def forwarding_nodes(self) -> Iterator[Node]:
        return (n for n in self.nodes() if n.forwards)

    def host(self, index: int) -> HostInfo:
        n = self.num_hosts()
        if not 0 <= index < n:
            raise IndexError(f"host index {index} out of range 0..{n - 1}")
        node, port = self.host_attachment(index)
        return HostInfo(self.host_name(index), index, host_ip(index), host_mac(index), node, port)

    def hosts(self) -> Iterator[HostInfo]:
        return (self.host(i) for i in range(self.num_hosts()))

    def materialize(self) -> MaterializedFabric:
        return MaterializedFabric(self.kind, dict(self.params), list(self.nodes()), list(self.links()),
                                  list(self.hosts()), self.diameter())


@dataclass
class MaterializedFabric(Fabric):
    """An explicit fabric: lists of nodes and links (small instances, JSON imports)."""

    kind_: str
    params_: dict[str, int | str]
    node_list: list[Node]
    link_list: list[Link]
    host_list: list[HostInfo]
    diameter_: int | None = None
    _by_name: dict[str, Node] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.kind = self.kind_
        self._by_name = {n.name: n for n in self.node_list}

    @property
    def params(self) -> dict[str, int | str]:
        return self.params_

    @cached_property
    def _peers(self) -> dict[tuple[str, int], tuple[str, int]]:
        peers: dict[tuple[str, int], tuple[str, int]] = {}
        for link in self.link_list:
            peers[(link.a, link.a_port)] = (link.b, link.b_port)
            peers[(link.b, link.b_port)] = (link.a, link.a_port)
        return peers

    def counts(self) -> dict[Role, int]:
        c = Counter(n.role for n in self.node_list)
        return {r: c[r] for r in Role if c[r]}

    def num_links(self) -> int:
        return len(self.link_list)

    def diameter(self) -> int | None:
        return self.diameter_

    def nodes(self) -> Iterator[Node]:
        return iter(self.node_list)

    def links(self) -> Iterator[Link]:
        return iter(self.link_list)

    def node(self, name: str) -> Node:
        return self._by_name[name]

    def peer(self, name: str, port: int) -> tuple[str, int] | None:
        return self._peers.get((name, port))

    def host_name(self, index: int) -> str:
        return self.host_list[index].name

    def host_attachment(self, index: int) -> tuple[str, int]:
        h = self.host_list[index]
        return h.node, h.node_port

    def host(self, index: int) -> HostInfo:
        return self.host_list[index]

    def hosts(self) -> Iterator[HostInfo]:
        return iter(self.host_list)
