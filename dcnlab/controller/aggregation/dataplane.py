"""Aggregation trees in the P4 data plane: trees -> ``agg_route`` entries and slot ranges.

The program is ``p4src/aggregation.p4`` (its header comment is the protocol); the host side is
:mod:`dcnlab.traffic.aggregation_agent`. This module turns an :class:`~dcnlab.controller.aggregation.AggregationTree`
(or every tree of a :class:`~dcnlab.controller.aggregation.ShufflePlan`) into one :class:`TreeProgram` per tree,
using only the trees' public view (``parent``, ``hops``, ``senders``, :meth:`AggregationTree.port_plan`)
and the fabric's own port numbers, and installs and removes them through the P4Runtime controller.

What each node of a tree does (``agg_route``, key: job, tree, result bit, ingress port):

* **Aggregating nodes** are the tree's ``aggregate`` nodes that forward (BCube servers, fat-tree switches;
  IRS/SRS (Guo et al.), §4.1: a server with more than one input caches and merges), plus the *final* node ``F``: the
  receiver itself when it forwards (a BCube server: the papers' receiver aggregates what reaches it), else
  the forwarding node just below it (on a fat-tree, the receiver host's edge switch), even with a single
  input. Every in-port of an aggregating node (its host's port too, when its own data is an input) gets
  ``agg_aggregate`` with the node's slot range, the bitmap of its inputs and where the aggregate goes.
  ``F`` marks its aggregate *result* and sends it to the receiving host, so a host receives exactly one
  stream per tree, of final aggregates.
* **Every other forwarding node of the tree** (BCube switches ``w*``, relays, servers whose only input is
  their host) gets ``agg_forward`` per in-port towards its parent.
* **Inputs and contributor ids.** An aggregating node numbers its inputs 0..k-1: its own data first, then
  its children in natural name order (at most 32). A chunk carries the id it has at the next aggregating
  node up: a sender's host puts in the id of the flow it starts (its own data's id when its server
  aggregates, else the id of the child through which its flow arrives), and an aggregating node rewrites
  the id of its aggregate on the way out (``out_id``).
* **SRS** (003 §3.3): the flows of a group member travel the entry's tree (a tree id of their own, per
  member), ``F`` is the entry, and the entry's result goes on along ``routes[member]`` past the tree, one
  or two server hops, as *results* (key result = 1), which never collide with the tree's own entries at
  a head or member the entry tree also crosses.
* **No aggregation** (003's "existing method", ``none``): the trees of the plan (unicast trees) are
  installed with every node forwarding; the receiving host merges the m streams itself (contributor id =
  sender index). The chunks follow explicit entries rather than unicast routing so every flow takes its
  drawn path and the link bytes are exactly those of the model.
* **Slots.** Each aggregating node gives each tree a range of ``slots`` cells (a power of two; chunk c uses
  ``base + (c mod slots)``) from a per-node first-fit pool sized like the program's ``AGG_SLOTS``; a
  host may keep at most ``slots`` chunks of a tree in flight (the agents' window), so a slot is never
  needed by two live chunks.
* **Job ids** are 1..65535 (16 bits on the wire), tree ids 0..65535. A removed job's slots go back to the
  pool but its registers are not cleared (P4Runtime cannot write BMv2 registers, and Thrift would cost a
  CLI run per node and job): the slot's tag (job, chunk) makes the next job that uses the slot start
  over. A job id must therefore never be reused on a running fabric (a reused id would find its own old
  tags and take its new chunks for stale ones): :class:`AggregationDataplane` hands out rising ids, one
  installer per fabric, and refuses to go past 65535.

Decisions where the papers are silent (they have no data plane): the aggregate of one chunk is emitted when
every input has contributed (no timeout flush; the buffer-limit flush of M2 (Fang et al.), §4.2, has no counterpart: the
receiver's retransmission requests complete a stuck slot instead); hosts of BCube servers inject at their
server; flows to different receivers are never merged (different key partitions, IRS/SRS (Guo et al.), §3.3).
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from dcnlab.controller.aggregation import AggregationError, AggregationTree, ShufflePlan
from dcnlab.controller.runtime.entities import TableEntry, Update
from dcnlab.topos.model import Fabric, Role

log = logging.getLogger(__name__)

AGG_UDP_PORT = 7702
"""UDP destination port of aggregation chunks (``UDP_PORT_AGG`` in p4src/headers.p4)."""
VALUES = 16
"""32-bit values per chunk (``AGG_VALUES``)."""
MAX_INPUTS = 32
"""Inputs of one aggregating node (bits of the slot bitmap)."""
MAX_ID = 0xFFFF
DEFAULT_SLOTS = 64
DEFAULT_CAPACITY = 1024
"""Slots per node when the program is compiled with its default ``AGG_SLOTS``."""

ROUTE_TABLE = "DcnIngress.agg.agg_route"
AGGREGATE = "DcnIngress.agg.agg_aggregate"
FORWARD = "DcnIngress.agg.agg_forward"
PACKETS_COUNTER = "DcnIngress.agg.agg_packets"
PORT_IN_COUNTER = "DcnIngress.agg.agg_port_in"
PORT_OUT_COUNTER = "DcnIngress.agg.agg_port_out"
"""Both count aggregation frames at index ``2 * port + retx`` (retx 0: the trees' own traffic)."""
OUTCOMES = ("added", "emitted", "duplicate", "stale", "malformed", "forwarded", "unmatched", "saturated",
            "dropped")
"""``agg_packets`` counter index -> outcome (``AGG_*`` constants of p4src/aggregation.p4)."""

Link = tuple[str, str]
"""A directed physical link (from node, to node)."""


class Writer(Protocol):
    """What the installer needs of :class:`dcnlab.controller.runtime.controller.Controller`."""

    def write(self, updates: Mapping[str, Sequence[Update]]) -> None: ...


# -- slots -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SlotRange:
    base: int
    size: int

    @property
    def mask(self) -> int:
        return self.size - 1


class SlotPool:
    """First-fit allocation of slot ranges, per node, out of ``capacity`` slots each."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"slot capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._used: dict[str, list[SlotRange]] = defaultdict(list)

    def allocate(self, node: str, size: int) -> SlotRange:
        if size < 1 or size & (size - 1):
            raise AggregationError(f"slots={size}: valid: a power of two, 1..{self.capacity}")
        used = sorted(self._used[node], key=lambda r: r.base)
        start = 0
        for r in used:
            if r.base - start >= size:
                break
            start = r.base + r.size
        if start + size > self.capacity:
            raise AggregationError(f"{node}: no {size} free aggregation slots left ({self.free(node)} of "
                                   f"{self.capacity} free); use fewer slots per tree or compile with a larger "
                                   f"AGG_SLOTS")
        rng = SlotRange(start, size)
        self._used[node].append(rng)
        return rng

    def release(self, node: str, rng: SlotRange) -> None:
        self._used[node].remove(rng)

    def free(self, node: str) -> int:
        return self.capacity - sum(r.size for r in self._used[node])


# -- programs ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RouteRule:
    """One ``agg_route`` entry."""

    node: str
    job: int
    tree: int
    result: int
    in_port: int
    port: int
    slots: SlotRange | None = None
    """None: ``agg_forward``; else ``agg_aggregate`` over this range."""
    expected: int = 0
    out_id: int = 0
    final: bool = False

    def entry(self) -> TableEntry:
        match = {"hdr.agg.job": self.job, "hdr.agg.tree": self.tree, "hdr.agg.result": self.result,
                 "std.ingress_port": self.in_port}
        if self.slots is None:
            return TableEntry(ROUTE_TABLE, match, FORWARD, {"port": self.port})
        return TableEntry(ROUTE_TABLE, match, AGGREGATE,
                          {"slot_base": self.slots.base, "slot_mask": self.slots.mask,
                           "expected_bitmap": self.expected, "out_id": self.out_id,
                           "is_final": int(self.final), "port": self.port})


@dataclass(frozen=True)
class TreeProgram:
    """One tree of one job, compiled: its entries, what its senders put in their chunks, what crosses links."""

    job: int
    tree: int
    receiver: str
    """The member this tree delivers to (an SRS member may differ from the tree's root, the entry)."""
    receiver_host: str
    rules: tuple[RouteRule, ...]
    contributors: Mapping[str, int]
    """Sender host -> the contributor id its chunks carry."""
    host_inputs: int
    """0: the receiving host gets final aggregates (results); m: it merges m raw streams itself."""
    slots: int
    """Slot range size at every aggregating node (0: nothing aggregates): the hosts' window bound."""
    link_units: Mapping[Link, int]
    """Streams of chunks that cross each directed link (host links included)."""
    model_links: frozenset[Link]
    """The directed links the model's cost counts (the tree's hops and SRS forwarding hops)."""
    aggregators: tuple[str, ...]

    def model_units(self) -> int:
        return sum(u for link, u in self.link_units.items() if link in self.model_links)


@dataclass(frozen=True)
class JobProgram:
    job: int
    algorithm: str
    topo: str
    trees: tuple[TreeProgram, ...]
    model_cost: float
    """The model's cost of the job's trees (units: one sender's data to one receiver)."""
    in_network: bool

    def rules(self) -> list[RouteRule]:
        return [r for t in self.trees for r in t.rules]

    def inserts(self) -> dict[str, list[Update]]:
        out: dict[str, list[Update]] = defaultdict(list)
        for r in self.rules():
            out[r.node].append(+r.entry())
        return dict(out)

    def deletes(self) -> dict[str, list[Update]]:
        out: dict[str, list[Update]] = defaultdict(list)
        for r in self.rules():
            out[r.node].append(-r.entry())
        return dict(out)

    def link_units(self) -> Counter[Link]:
        total: Counter[Link] = Counter()
        for t in self.trees:
            total.update(t.link_units)
        return total

    def model_links(self) -> frozenset[Link]:
        return frozenset().union(*(t.model_links for t in self.trees))

    def model_units(self) -> int:
        return sum(t.model_units() for t in self.trees)

    def switches(self) -> list[str]:
        return sorted({r.node for r in self.rules()})


# -- compilation -----------------------------------------------------------------------------------------------
def _natural(name: str) -> tuple:
    out: list[tuple[int, int | str]] = []
    num = ""
    for ch in name + "\0":
        if ch.isdigit():
            num += ch
            continue
        if num:
            out.append((0, int(num)))
            num = ""
        if ch != "\0":
            out.append((1, ch))
    return tuple(out)


def _port(fabric: Fabric, a: str, b: str) -> int:
    for p in range(fabric.node(a).ports):
        far = fabric.peer(a, p)
        if far is not None and far[0] == b:
            return p
    raise AggregationError(f"no link {a}-{b} in {fabric.spec}")


def _via(fabric: Fabric, a: str, b: str) -> tuple[str, ...]:
    """Physical nodes of the hop a -> b: direct, or through the one node both are linked to (a BCube switch)."""
    near = {}
    for p in range(fabric.node(a).ports):
        far = fabric.peer(a, p)
        if far is None:
            continue
        if far[0] == b:
            return (a, b)
        near[far[0]] = p
    for p in range(fabric.node(b).ports):
        far = fabric.peer(b, p)
        if far is not None and far[0] in near and fabric.node(far[0]).role is Role.SWITCH:
            return (a, far[0], b)
    raise AggregationError(f"{a} and {b} are neither linked nor share a switch in {fabric.spec}")


class _Hosts:
    """Host of a member: a BCube server's host, or the member itself when it is a host."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.at: dict[str, tuple[str, int]] = {}
        self.addr: dict[str, tuple[str, str]] = {}
        for h in fabric.hosts():
            self.at.setdefault(h.node, (h.name, h.node_port))
            self.addr[h.name] = (h.ip, h.mac)

    def of(self, member: str) -> str:
        if not self.fabric.node(member).forwards:
            return member
        if member not in self.at:
            raise AggregationError(f"{member} has no host in {self.fabric.spec}")
        return self.at[member][0]

    def port(self, member: str) -> int:
        return self.at[member][1]


class _RuleSet:
    def __init__(self, tree_desc: str) -> None:
        self.desc = tree_desc
        self.rules: dict[tuple[str, int, int], RouteRule] = {}

    def add(self, rule: RouteRule) -> None:
        key = (rule.node, rule.result, rule.in_port)
        old = self.rules.get(key)
        if old is not None and old != rule:
            raise AggregationError(f"{self.desc}: {rule.node} port {rule.in_port} would need two actions "
                                   f"({old.port} and {rule.port})")
        self.rules[key] = rule


def compile_tree(fabric: Fabric, tree: AggregationTree, job: int, tree_id: int, pool: SlotPool,
                 slots: int = DEFAULT_SLOTS, aggregate: bool = True, deliver_to: str | None = None,
                 forward: Sequence[str] = ()) -> TreeProgram:
    """Compile one tree. ``deliver_to``/``forward`` (SRS): the member the result is for and the server path
    from the tree's root to it; ``aggregate=False``: every node forwards, the receiving host merges."""
    if not 1 <= job <= MAX_ID or not 0 <= tree_id <= MAX_ID:
        raise AggregationError(f"job {job} / tree {tree_id}: valid: job 1..{MAX_ID}, tree 0..{MAX_ID}")
    hosts = _Hosts(fabric)
    plans = tree.port_plan(fabric)
    root = tree.receiver
    member = deliver_to or root
    forward = list(forward) or [root]
    if forward[0] != root or forward[-1] != member:
        raise AggregationError(f"forward path {forward} must lead from {root} to {member}")
    parent = tree.parent
    children: dict[str, list[str]] = defaultdict(list)
    for c, p in parent.items():
        children[p].append(c)
    for kids in children.values():
        kids.sort(key=_natural)
    senders = list(tree.senders)
    is_sender = set(senders)
    forwards = {v: fabric.node(v).forwards for v in {*tree.nodes, *plans, *forward}}
    desc = f"job {job} tree {tree_id} ({tree.algorithm} -> {member})"
    rules = _RuleSet(desc)

    # the final node and the aggregating set
    if forwards[root]:
        final = root
    else:
        kids = children.get(root, [])
        if len(kids) != 1 or not forwards[kids[0]]:
            raise AggregationError(f"{desc}: the receiver {root} needs exactly one forwarding node below it")
        final = kids[0]
    if aggregate:
        agg = {v for v, p in plans.items() if p.role == "aggregate" and forwards[v]} | {final}
    else:
        agg = set()
    inputs: dict[str, list[str]] = {}
    for a in agg:
        ins = (["<own>"] if a in is_sender else []) + children.get(a, [])
        if len(ins) > MAX_INPUTS:
            raise AggregationError(f"{desc}: {a} merges {len(ins)} inputs; valid: at most {MAX_INPUTS}")
        inputs[a] = ins

    def upward_id(x: str) -> int:
        """Contributor id of the stream x emits, at the first aggregating node above x."""
        while True:
            p = parent[x]
            if p in agg:
                return inputs[p].index(x)
            x = p

    contributors: dict[str, int] = {}
    for i, s in enumerate(senders):
        if not aggregate:
            cid = i
        elif s in agg:
            cid = inputs[s].index("<own>")
        else:
            cid = upward_id(s)
        contributors[hosts.of(s)] = cid
    if not aggregate and len(senders) > 256:
        raise AggregationError(f"{desc}: {len(senders)} senders; the 8-bit contributor id allows 256")

    # where each forwarding node sends: its parent, or for the root the first forwarding hop / its host
    fwd_hops = [_via(fabric, a, b) for a, b in zip(forward, forward[1:])]

    def out_port(x: str) -> int:
        if x != root:
            return plans[x].out_ports[0]
        if fwd_hops:
            return _port(fabric, root, fwd_hops[0][1])
        return hosts.port(root)

    streams: dict[str, int] = {}   # streams of chunks each node emits

    def emitted(x: str) -> int:
        if x not in streams:
            streams[x] = 1 if x in agg else (x in is_sender) + sum(emitted(c) for c in children.get(x, []))
        return streams[x]

    ranges: dict[str, SlotRange] = {}
    try:
        for a in sorted(agg, key=_natural):
            ranges[a] = pool.allocate(a, slots)
    except AggregationError:
        for a, r in ranges.items():
            pool.release(a, r)
        raise
    for x, plan in sorted(plans.items()):
        if not forwards[x]:
            continue
        if plan.role == "switch":
            for i, o in zip(plan.in_ports, plan.out_ports):
                rules.add(RouteRule(x, job, tree_id, 0, i, o))
            continue
        in_ports = set(plan.in_ports)
        if x in is_sender and forwards[x]:
            in_ports.add(hosts.port(x))
        port = out_port(x)
        for i in sorted(in_ports):
            if x in agg:
                rules.add(RouteRule(x, job, tree_id, 0, i, port, ranges[x], (1 << len(inputs[x])) - 1,
                                    0 if x == final else upward_id(x), x == final))
            else:
                rules.add(RouteRule(x, job, tree_id, 0, i, port))

    # SRS: results on from the entry (root) to the member
    for n, hop in enumerate(fwd_hops):
        for k in range(1, len(hop)):
            here, prev = hop[k], hop[k - 1]
            if k < len(hop) - 1:
                nxt = hop[k + 1]
            elif n + 1 < len(fwd_hops):
                nxt = fwd_hops[n + 1][1]
            else:
                rules.add(RouteRule(here, job, tree_id, 1, _port(fabric, here, prev), hosts.port(here)))
                continue
            rules.add(RouteRule(here, job, tree_id, 1, _port(fabric, here, prev), _port(fabric, here, nxt)))

    # what crosses each directed link
    units: Counter[Link] = Counter()
    model: set[Link] = set()
    for h in tree.hops:
        for a, b in zip(h.path, h.path[1:]):
            units[(a, b)] += emitted(h.child)
            model.add((a, b))
    root_out = emitted(root) if forwards[root] else 0
    for hop in fwd_hops:
        for a, b in zip(hop, hop[1:]):
            units[(a, b)] += root_out
            model.add((a, b))
    for s in senders:
        if forwards[s]:                                   # a BCube sender's host feeds its server
            units[(hosts.of(s), s)] += 1
    if forwards[member]:
        units[(member, hosts.of(member))] += emitted(root) if member == root else root_out
    return TreeProgram(job, tree_id, member, hosts.of(member), tuple(rules.rules.values()), contributors,
                       0 if aggregate else len(senders), slots if agg else 0, dict(units), frozenset(model),
                       tuple(sorted(agg, key=_natural)))


def compile_incast(fabric: Fabric, tree: AggregationTree, job: int, pool: SlotPool | None = None,
                   slots: int = DEFAULT_SLOTS, aggregate: bool = True, tree_id: int = 0) -> JobProgram:
    """One incast tree as a job (``aggregate=False``: the no-aggregation baseline on the same tree)."""
    prog = compile_tree(fabric, tree, job, tree_id, pool or SlotPool(), slots, aggregate)
    cost = tree.cost if aggregate else float(prog.model_units())
    return JobProgram(job, tree.algorithm if aggregate else "none", tree.topo, (prog,), cost, aggregate)


def compile_shuffle(fabric: Fabric, plan: ShufflePlan, job: int, pool: SlotPool | None = None,
                    slots: int = DEFAULT_SLOTS) -> JobProgram:
    """Every receiver's tree of a shuffle plan; tree id = the receiver's index in ``plan.receivers``.
    ``plan.algorithm == "none"`` installs the plan's (unicast) trees without aggregation."""
    pool = pool or SlotPool()
    aggregate = plan.algorithm != "none"
    programs: list[TreeProgram] = []
    try:
        for i, r in enumerate(plan.receivers):
            tree = plan.trees[r]
            route = plan.routes[r]
            extra = route[len(tree.edges):]
            path = [tree.receiver] + [b for _, b in extra]
            programs.append(compile_tree(fabric, tree, job, i, pool, slots, aggregate, deliver_to=r, forward=path))
    except AggregationError:
        release(pool, programs)
        raise
    return JobProgram(job, plan.algorithm, plan.topo, tuple(programs), plan.cost, aggregate)


def release(pool: SlotPool, programs: Iterable[TreeProgram]) -> None:
    for t in programs:
        done: set[str] = set()
        for r in t.rules:
            if r.slots is not None and r.node not in done:
                pool.release(r.node, r.slots)
                done.add(r.node)


# -- installation ---------------------------------------------------------------------------------------------
@dataclass
class AggregationDataplane:
    """Installs and removes jobs on a running fabric; allocates job ids (rising, never reused: see the
    module docstring) and slots. Use one per running fabric; ``first_job`` lets a second one start above
    the ids the first has used."""

    fabric: Fabric
    writer: Writer
    capacity: int = DEFAULT_CAPACITY
    first_job: int = 1
    pool: SlotPool = field(init=False)
    installed: dict[int, JobProgram] = field(default_factory=dict, init=False)
    _next_job: int = field(default=1, init=False)

    def __post_init__(self) -> None:
        if not 1 <= self.first_job <= MAX_ID:
            raise AggregationError(f"first_job={self.first_job}: valid: 1..{MAX_ID}")
        self.pool = SlotPool(self.capacity)
        self._next_job = self.first_job

    def new_job(self) -> int:
        if self._next_job > MAX_ID:
            raise AggregationError(f"all {MAX_ID} job ids of this fabric are used; job ids are never reused on "
                                   f"a running fabric (bring it up again)")
        self._next_job += 1
        return self._next_job - 1

    def incast(self, tree: AggregationTree, slots: int = DEFAULT_SLOTS, aggregate: bool = True) -> JobProgram:
        return self.install(compile_incast(self.fabric, tree, self.new_job(), self.pool, slots, aggregate))

    def shuffle(self, plan: ShufflePlan, slots: int = DEFAULT_SLOTS) -> JobProgram:
        return self.install(compile_shuffle(self.fabric, plan, self.new_job(), self.pool, slots))

    def install(self, program: JobProgram) -> JobProgram:
        try:
            self.writer.write(program.inserts())
        except BaseException:
            release(self.pool, program.trees)
            raise
        self.installed[program.job] = program
        log.info("aggregation job %d (%s): %d entries on %d nodes", program.job, program.algorithm,
                 len(program.rules()), len(program.switches()))
        return program

    def remove(self, job: int) -> None:
        program = self.installed.pop(job)
        try:
            self.writer.write(program.deletes())
        finally:
            release(self.pool, program.trees)
        log.info("aggregation job %d removed", job)


__all__ = ["AGG_UDP_PORT", "AggregationDataplane", "JobProgram", "RouteRule", "SlotPool", "SlotRange",
           "TreeProgram", "VALUES", "compile_incast", "compile_shuffle", "compile_tree"]
