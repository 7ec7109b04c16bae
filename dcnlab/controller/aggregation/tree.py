"""Aggregation trees as plain typed data: hops child -> parent over named fabric nodes.

An :class:`AggregationTree` is what the rest of dcnlab consumes (CLI, plots, and later the P4
compiler). A *hop* joins two nodes that may aggregate (BCube servers; fat-tree switches and the
hosts at the ends) and lists the physical nodes it crosses: ``(v5, w5, v1)`` for a BCube server hop
through switch ``w5``, ``(e0_0, a0_1)`` for a fat-tree link. The tree validates itself on
construction (one parent per node, no cycle, every sender reaches the receiver, every hop a real
path in the fabric) and carries its cost, active links and aggregating nodes
(:mod:`dcnlab.controller.aggregation.cost`). :meth:`AggregationTree.port_plan` turns it into per-node port
sets using the fabric's own port numbers (``fabric.peer``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from dcnlab.controller.aggregation.cost import flows, inputs_count
from dcnlab.controller.aggregation.forest import InvalidTree
from dcnlab.topos.model import Fabric


@dataclass(frozen=True)
class Hop:
    child: str
    parent: str
    path: tuple[str, ...]
    """Physical nodes from ``child`` to ``parent`` inclusive."""

    @property
    def links(self) -> int:
        return len(self.path) - 1


@dataclass(frozen=True)
class NodePlan:
    """What one node does for one tree, in the fabric's port numbers.

    ``role``: ``aggregate`` (merge ``expected`` flows, own data included, then send on
    ``out_ports[0]``), ``sender`` (send its own data), ``relay`` (one arriving flow: forward),
    ``switch`` (a node inside hops that cannot aggregate: forward ``in_ports[i]`` to
    ``out_ports[i]``), ``receiver`` (deliver). ``in_ports`` has one entry per arriving flow (a port
    repeats when two children share it). Own data comes from the node's host."""

    node: str
    role: str
    in_ports: tuple[int, ...]
    out_ports: tuple[int, ...]
    expected: int
    own_data: bool


@dataclass(frozen=True)
class AggregationTree:
    topo: str
    algorithm: str
    receiver: str
    senders: tuple[str, ...]
    hops: tuple[Hop, ...]
    delta: float
    cost: float
    links: int
    aggregators: tuple[str, ...]
    receiver_input: float
    info: Mapping[str, object] = field(default_factory=dict, compare=False)
    """Algorithm details worth printing (IRS routing symbols, SRS entry, solver status...)."""

    def __post_init__(self) -> None:
        self.validate()

    # -- views -------------------------------------------------------------------
    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        return tuple((h.child, h.parent) for h in self.hops)

    @property
    def parent(self) -> dict[str, str]:
        return {h.child: h.parent for h in self.hops}

    @property
    def nodes(self) -> tuple[str, ...]:
        """Aggregation-level nodes (hop ends), receiver first."""
        seen = dict.fromkeys([self.receiver, *self.senders])
        for h in self.hops:
            seen.setdefault(h.child)
            seen.setdefault(h.parent)
        return tuple(seen)

    def physical_links(self) -> set[frozenset[str]]:
        return {frozenset(p) for h in self.hops for p in zip(h.path, h.path[1:])}

    # -- checks --------------------------------------------------------------------
    def validate(self) -> None:
        """Raise :class:`InvalidTree` unless this is a tree reaching the receiver from every sender."""
        parent: dict[str, str] = {}
        for h in self.hops:
            if h.child in parent:
                raise InvalidTree(f"{h.child} has two parents ({parent[h.child]}, {h.parent})")
            if len(h.path) < 2 or h.path[0] != h.child or h.path[-1] != h.parent:
                raise InvalidTree(f"hop {h.child}->{h.parent} has a bad path {h.path}")
            parent[h.child] = h.parent
        if self.receiver in parent:
            raise InvalidTree(f"the receiver {self.receiver} has a parent")
        if len(set(self.senders)) != len(self.senders) or self.receiver in self.senders:
            raise InvalidTree("senders must be distinct and differ from the receiver")
        for start in [*parent, *self.senders]:
            node, steps = start, 0
            while node != self.receiver:
                if node not in parent:
                    raise InvalidTree(f"{start} does not reach the receiver {self.receiver} (stops at {node})")
                node, steps = parent[node], steps + 1
                if steps > len(parent):
                    raise InvalidTree(f"cycle through {start}")

    def check_fabric(self, fabric: Fabric) -> None:
        """Raise :class:`InvalidTree` unless every hop follows real links of ``fabric``."""
        for h in self.hops:
            for a, b in zip(h.path, h.path[1:]):
                if not any((fabric.peer(a, p) or ("",))[0] == b for p in range(fabric.node(a).ports)):
                    raise InvalidTree(f"hop {h.child}->{h.parent}: no link {a}-{b} in {fabric.spec}")

    # -- data-plane view -------------------------------------------------------------
    def port_plan(self, fabric: Fabric) -> dict[str, NodePlan]:
        """Per node of the tree (hop ends and the switches in between): ports and role."""
        def port(a: str, b: str) -> int:
            for p in range(fabric.node(a).ports):
                far = fabric.peer(a, p)
                if far is not None and far[0] == b:
                    return p
            raise InvalidTree(f"no link {a}-{b} in {fabric.spec}")

        ins: dict[str, list[int]] = {}
        outs: dict[str, list[int]] = {}
        for h in self.hops:
            for a, b in zip(h.path, h.path[1:]):
                outs.setdefault(a, []).append(port(a, b))
                ins.setdefault(b, []).append(port(b, a))
        ends = set(self.nodes)
        senders = set(self.senders)
        plans: dict[str, NodePlan] = {}
        for node in set(ins) | set(outs):
            i, o = tuple(ins.get(node, ())), tuple(outs.get(node, ()))
            if node not in ends:
                plans[node] = NodePlan(node, "switch", i, o, len(i), False)
                continue
            own = node in senders
            expected = len(i) + own
            role = ("receiver" if node == self.receiver else "aggregate" if expected >= 2
                    else "sender" if own else "relay")
            plans[node] = NodePlan(node, role, i, o, expected, own)
        return plans

    def to_json(self) -> dict[str, object]:
        return {"algorithm": self.algorithm, "topo": self.topo, "receiver": self.receiver,
                "senders": list(self.senders), "delta": self.delta,
                "edges": [[c, p] for c, p in self.edges], "cost": self.cost, "links": self.links,
                "aggregators": list(self.aggregators), "receiver_input": self.receiver_input,
                "info": {k: v for k, v in self.info.items()}}

    # -- construction -------------------------------------------------------------------
    @classmethod
    def build(cls, topo: str, algorithm: str, receiver: str, senders: Sequence[str],
              parent: Mapping[str, str], path: Callable[[str, str], tuple[str, ...]], delta: float,
              aggregates: Callable[[str], bool] = lambda _: True,
              info: Mapping[str, object] | None = None) -> AggregationTree:
        """Measure a child -> parent map under the cost model and freeze it.

        ``path(child, parent)`` gives the physical nodes of a hop; nodes strictly inside a path
        never aggregate (BCube switches). ``aggregates(node)`` says whether a hop end may merge."""
        hops = tuple(Hop(c, p, path(c, p)) for c, p in sorted(parent.items(), key=lambda cp: _natural(cp[0])))
        size = flows(parent, senders, delta, {v: aggregates(v) for v in {*parent, *parent.values()}})
        cost = float(sum(size[h.child] * h.links for h in hops))
        inputs = inputs_count(parent, senders)
        aggregators = tuple(sorted((v for v, c in inputs.items() if c >= 2 and v != receiver and aggregates(v)),
                                   key=_natural))
        arriving = float(sum(size[h.child] for h in hops if h.parent == receiver))
        links = len({frozenset(p) for h in hops for p in zip(h.path, h.path[1:])})
        return cls(topo, algorithm, receiver, tuple(senders), hops, float(delta), cost, links, aggregators,
                   arriving, dict(info or {}))


@lru_cache(maxsize=1 << 16)
def _natural(name: str) -> tuple[object, ...]:
    """Sort key that orders v2 before v10 and h0_1_0 before h0_10_0 (cached: a shuffle sorts the same
    members once per tree)."""
    out: list[object] = []
    num = ""
    for ch in name:
        if ch.isdigit():
            num += ch
            continue
        if num:
            out.append(int(num))
            num = ""
        out.append(ch)
    if num:
        out.append(int(num))
    return tuple((0, v) if isinstance(v, int) else (1, v) for v in out)


def natural_sorted(names: Sequence[str]) -> list[str]:
    return sorted(names, key=_natural)


def count_roles(plans: Mapping[str, NodePlan]) -> Counter[str]:
    return Counter(p.role for p in plans.values())
