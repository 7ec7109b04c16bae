"""In-network aggregation trees for incasts and shuffles: IRS/SRS (Guo et al., paper 003) and M2 (Fang et al.,
paper 000); :mod:`dcnlab.results.papers` has the full references.

Public API:

* :func:`incast_tree` - one tree, m senders -> one receiver, as an :class:`AggregationTree`.
* :func:`shuffle_plan` - m senders x n receivers, as a :class:`ShufflePlan`.
* :func:`resolve` - server/host names -> validated members (clear :class:`UserError` otherwise).

BCube algorithms: ``irs`` (:mod:`.irs`), ``mib``/``mc``/``m2`` (:mod:`.mib`), ``unicast``
(:mod:`.unicast`), ``kmb`` (:mod:`.steiner`), ``optimal`` (:mod:`.optimal`). Fat-tree
(switch-centric, :mod:`.fattree`): ``updown``, ``unicast``, ``kmb``, ``optimal``. Shuffles:
``srs``, ``none`` (no aggregation), or any incast algorithm (the union of its trees; ``incast`` is
the union of IRS trees). The cost model is :mod:`.cost`; the paper-scale batch engines return
:class:`dcnlab.controller.aggregation.forest.Forest` objects instead of named trees. The model backend's
IRS, unicast and KMB trees come from :mod:`.engine` (numba), which builds exactly the trees of the
numpy references :mod:`.irs`, :mod:`.unicast` and :func:`.steiner.kmb_reference`
(``tests/test_aggregation_engine.py``); named KMB trees use the engine too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dcnlab.controller.aggregation import fattree as ft
from dcnlab.controller.aggregation.cost import check_delta, flows
from dcnlab.controller.aggregation.forest import Forest, InvalidTree
from dcnlab.controller.aggregation.irs import irs_forest
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.mib import m2_family
from dcnlab.controller.aggregation import optimal, registry
from dcnlab.controller.aggregation.optimal import bcube_hop_graph
from dcnlab.controller.aggregation.optimal_run import Deadline, solve_by
from dcnlab.controller.aggregation.shuffle import ReceiverGroup, srs_groups
from dcnlab.controller.aggregation.steiner import kmb_forest
from dcnlab.controller.aggregation.tree import AggregationTree, Hop, NodePlan, natural_sorted
from dcnlab.controller.aggregation.unicast import unicast_forest
from dcnlab.controller.registry import PluginError, is_reference
from dcnlab.topos.bcube import BCube
from dcnlab.topos.errors import UserError
from dcnlab.topos.inputs import quote
from dcnlab.topos.fattree import FatTree
from dcnlab.topos.model import Fabric, Role

BCUBE_ALGORITHMS = ("irs", "mib", "mc", "m2", "unicast", "kmb", "optimal")
FATTREE_ALGORITHMS = ft.ALGORITHMS
ALGORITHMS = tuple(dict.fromkeys(BCUBE_ALGORITHMS + FATTREE_ALGORITHMS))
SHUFFLE_ALGORITHMS = ("srs", "incast", "none", *ALGORITHMS)
OPTIMAL_MAX_SERVERS = 64
"""``optimal`` on BCube is offered up to this many servers (the issue's bound; HiGHS takes seconds)."""


class AggregationError(UserError):
    """Bad members or an algorithm that does not apply to the fabric."""


def algorithms_for(fabric: Fabric) -> tuple[str, ...]:
    if isinstance(fabric, BCube):
        return BCUBE_ALGORITHMS
    if isinstance(fabric, FatTree):
        return FATTREE_ALGORITHMS
    raise AggregationError(f"aggregation trees are defined for bcube and fattree fabrics, not {fabric.kind!r}")


def member_role(fabric: Fabric) -> Role:
    """BCube members are servers (``v<i>``); fat-tree members are hosts (``h<pod>_<edge>_<x>``)."""
    algorithms_for(fabric)
    return Role.SERVER if isinstance(fabric, BCube) else Role.HOST


def _check_name(fabric: Fabric, name: str, what: str) -> None:
    role = member_role(fabric)
    example = "v0 .. v%d" % (fabric.counts()[Role.SERVER] - 1) if role is Role.SERVER else "h0_0_0"
    try:
        node = fabric.node(name)
    except KeyError:
        raise AggregationError(f"{what} {quote(name)} is not a {role.value} of {fabric.spec}; valid: {example}") from None
    if node.role is not role:
        raise AggregationError(f"{what} {quote(name)} is a {node.role.value}; valid: a {role.value} ({example})")


def resolve(fabric: Fabric, receivers: Sequence[str], senders: Sequence[str]) -> None:
    """Raise :class:`AggregationError` unless the members are valid, distinct and disjoint."""
    if not senders:
        raise AggregationError("senders: at least one sender is needed")
    if not receivers:
        raise AggregationError("receivers: at least one receiver is needed")
    for r in receivers:
        _check_name(fabric, r, "receiver")
    for s in senders:
        _check_name(fabric, s, "sender")
    for what, names in (("senders", senders), ("receivers", receivers)):
        dup = [x for x, count in Counter(names).items() if count > 1]
        if dup:
            shown = ", ".join(dup[:10]) + (f" and {len(dup) - 10:,} more" if len(dup) > 10 else "")
            raise AggregationError(f"{what}: duplicate {shown}; each must appear once")
    both = natural_sorted(list(set(receivers) & set(senders)))
    if both:
        shown = ", ".join(both[:10]) + (f" and {len(both) - 10:,} more" if len(both) > 10 else "")
        raise AggregationError(f"{shown}: a receiver cannot also be a sender")


def _bcube_hop(fabric: BCube):
    """``path(child, parent)`` of a one-hop BCube server pair: ``(child, switch, parent)``.

    Plain integer arithmetic per hop: a shuffle asks for one path per hop of every tree (40,000 pairs of
    BCube(8,5) make 130,000 hops), and numpy's per-call overhead on scalars made this the plan's cost."""
    n = fabric.n
    levels = [(d, n ** d) for d in range(fabric.k, -1, -1)]        # the highest digit first

    def path(c: str, p: str) -> tuple[str, ...]:
        a, b = int(c[1:]), int(p[1:])
        for level, pw in levels:
            if (a // pw) % n != (b // pw) % n:
                return (c, fabric.switch_name(level, fabric.switch_of(a, level)), p)
        raise AggregationError(f"{c} -> {p} is not a hop of {fabric.spec}")
    return path


def _from_forest(fabric: BCube, forest: Forest, algorithm: str, delta: float, receiver: str,
                 senders: Sequence[str], info: dict[str, object]) -> AggregationTree:
    parent, _, _ = forest.parent_map(0)
    named = {f"v{c}": f"v{p}" for c, p in parent.items()}
    return AggregationTree.build(fabric.spec, algorithm, receiver, senders, named, _bcube_hop(fabric), delta,
                                 info=info)


def incast_tree(fabric: Fabric, receiver: str, senders: Sequence[str], algo: str, delta: float = 0.0,
                seed: int = 0, intra_stage: bool = True, time_limit: float = 300.0,
                deadline: Deadline | None = None, checked: bool = False) -> AggregationTree:
    """The ``algo`` aggregation tree from ``senders`` to ``receiver`` (names), measured at ``delta``.

    ``optimal`` ends by ``deadline`` (default: ``time_limit`` seconds from now): see :func:`optimal_tree`.
    ``checked``: the caller has checked these members with :func:`resolve` (a shuffle, once for all trees)."""
    delta = check_delta(delta)
    valid = algorithms_for(fabric)
    if algo not in valid:
        return plugin_tree(fabric, receiver, senders, algo, delta, seed, checked)
    if not checked:
        resolve(fabric, [receiver], senders)
    senders = list(senders)
    if algo == "optimal":
        return optimal_tree(fabric, receiver, senders, delta, seed, deadline or Deadline(time_limit))
    if isinstance(fabric, FatTree):
        return _fattree_tree(fabric, receiver, senders, algo, delta)
    assert isinstance(fabric, BCube)
    space = LabelSpace.of(fabric)
    r = int(receiver[1:])
    s = np.array([int(x[1:]) for x in senders], dtype=np.int64)
    info: dict[str, object] = {}
    if algo == "irs":
        forest, symbols = irs_forest(space, np.array([r]), np.zeros(s.shape[0], np.int64), s, intra_stage)
        info["routing_symbols"] = {f"e{j + 1}": int(e) for j, e in enumerate(symbols[0]) if e >= 0}
        info["intra_stage"] = intra_stage
    elif algo in ("mib", "mc", "m2"):
        forest = m2_family(space, r, s, algo)
    elif algo == "unicast":
        forest, _ = unicast_forest(space, np.array([r]), np.zeros(s.shape[0], np.int64), s, seed=seed)
        info["seed"] = seed
    else:
        assert algo == "kmb"
        forest = kmb_forest(space, r, s)
    return _from_forest(fabric, forest, algo, delta, receiver, senders, info)


def plugin_tree(fabric: Fabric, receiver: str, senders: Sequence[str], algo: str, delta: float = 0.0,
                seed: int = 0, checked: bool = False) -> AggregationTree:
    """The tree of a user's builder (:mod:`.registry`: an installed plug-in or a reference), validated."""
    def refuse() -> AggregationError:
        valid = list(algorithms_for(fabric)) + [p for p in registry.REGISTRY.plugins()
                                                if fabric.kind in registry.fabrics_of(registry.get(p))]
        return AggregationError(f"algorithm {quote(algo)} does not apply to {fabric.kind}; valid: "
                                f"{', '.join(valid)}, package.module:name or file.py:name")

    if not is_reference(algo) and algo not in registry.REGISTRY.plugins():
        raise refuse()
    a = registry.get(algo)
    if a.builtin or fabric.kind not in registry.fabrics_of(a):
        raise refuse()
    if not checked:
        resolve(fabric, [receiver], senders)
    parent = registry.plugin_parent(a, fabric, receiver, senders, seed)
    try:
        _check_parent(fabric, parent, receiver, senders)
        if isinstance(fabric, BCube):
            tree = AggregationTree.build(fabric.spec, a.name, receiver, list(senders), parent, _bcube_hop(fabric),
                                         delta)
        else:
            assert isinstance(fabric, FatTree)
            tree = _fattree_tree(fabric, receiver, list(senders), a.name, delta, parent)
            tree.check_fabric(fabric)
    except (InvalidTree, AggregationError) as e:
        raise PluginError(f"aggregation algorithm {a.name} on {fabric.spec}: not a valid tree: {e}") from None
    return tree


def _check_parent(fabric: Fabric, parent: Mapping[str, str], receiver: str, senders: Sequence[str]) -> None:
    """What a child -> parent map must be before it is measured: known nodes of the right role, no cycle,
    every sender reaching the receiver."""
    bcube = isinstance(fabric, BCube)
    for v in {*parent, *parent.values()}:
        try:
            node = fabric.node(v)
        except KeyError:
            raise InvalidTree(f"{quote(v)} is not a node of {fabric.spec}") from None
        if bcube and node.role is not Role.SERVER:
            raise InvalidTree(f"{v} is a {node.role.value}; on BCube only servers are tree nodes")
    if receiver in parent:
        raise InvalidTree(f"the receiver {receiver} has a parent ({parent[receiver]})")
    for s in senders:
        at, steps = s, 0
        while at != receiver:
            if at not in parent:
                raise InvalidTree(f"sender {s} does not reach the receiver {receiver} (stops at {at})")
            at, steps = parent[at], steps + 1
            if steps > len(parent):
                raise InvalidTree(f"a cycle through {s}")
    if bcube:
        for c, p in parent.items():
            if sum(a != b for a, b in zip(fabric.node(c).label, fabric.node(p).label)) != 1:
                raise InvalidTree(f"{c} -> {p} is not a hop of {fabric.spec} (their addresses differ in more "
                                  "than one digit)")


def _fattree_tree(fabric: FatTree, receiver: str, senders: list[str], algo: str, delta: float,
                  parent: dict[str, str] | None = None, info: dict[str, object] | None = None) -> AggregationTree:
    if parent is not None:
        pass
    elif algo == "updown":
        parent = ft.updown_tree(fabric, receiver, senders)
    elif algo == "unicast":
        parent = ft.unicast_tree(fabric, receiver, senders)
    else:
        assert algo == "kmb"
        parent = ft.kmb_tree(fabric, receiver, senders)
    return AggregationTree.build(fabric.spec, algo, receiver, senders, parent, lambda c, p: (c, p), delta,
                                 aggregates=lambda v: fabric.node(v).role is Role.SWITCH, info=info)


FALLBACKS = {"bcube": ("irs", "m2", "unicast"), "fattree": ("updown", "unicast")}
"""Heuristic trees that ``optimal`` falls back to (the cheapest) when the MILP gives none in time: the ones
whose time is linear in the senders (KMB is not, and its engine may first need compiling)."""


def optimal_tree(fabric: Fabric, receiver: str, senders: list[str], delta: float, seed: int,
                 deadline: Deadline) -> AggregationTree:
    """The MILP's tree, ended by ``deadline``: proven optimal, or the best tree found by then with its gap
    (``info``), or the cheapest of :data:`FALLBACKS` when the MILP gave no better tree in time."""
    if isinstance(fabric, BCube):
        if fabric.counts()[Role.SERVER] > OPTIMAL_MAX_SERVERS:
            raise AggregationError(f"optimal: {fabric.spec} has {fabric.counts()[Role.SERVER]} servers; valid: at "
                                   f"most {OPTIMAL_MAX_SERVERS} (e.g. bcube:n=4,k=2)")
        graph, relays = bcube_hop_graph(fabric.n, fabric.k), None
        name_of = {i: f"v{i}" for i in range(graph.nodes)}
    else:
        assert isinstance(fabric, FatTree)
        graph, relays, names = ft.hop_graph(fabric)
        name_of = dict(enumerate(names))
    index = {v: i for i, v in name_of.items()}
    root, members = index[receiver], [index[x] for x in senders]
    optimal.check_size(graph, root, members, delta, relays)          # a size error before any work
    heuristics = [incast_tree(fabric, receiver, senders, a, delta, seed) for a in FALLBACKS[fabric.kind]]
    best = min(heuristics, key=lambda t: t.cost)
    reserve = min(1.0, 0.05 + 0.05 * deadline.seconds)               # for the tree's measuring and printing
    attempt = solve_by(graph, root, members, delta, relays, deadline.end - reserve)
    opt = attempt.optimum
    info: dict[str, object] = {"time_limit": deadline.seconds}
    tree = None
    if opt is not None:
        parent = {name_of[c]: name_of[p] for c, p in opt.parent.items()}
        info.update(status=opt.status, solve_seconds=round(opt.seconds, 3))
        if isinstance(fabric, BCube):
            tree = AggregationTree.build(fabric.spec, "optimal", receiver, senders, parent, _bcube_hop(fabric), delta)
        else:
            tree = _fattree_tree(fabric, receiver, senders, "optimal", delta, parent)
        if opt.status != "optimal" and best.cost < tree.cost:
            info["milp_cost"] = tree.cost
            tree = None
    if tree is None:
        info.update(status=opt.status if opt is not None else "no MILP tree", fallback=best.algorithm)
        if attempt.why:
            info["why"] = attempt.why
        tree = best
    bound = opt.bound if opt is not None else None
    if opt is not None and opt.status == "optimal":
        info.update(gap=0.0, bound=tree.cost)
    else:
        info.update(gap=(tree.cost - bound) / tree.cost if bound is not None and tree.cost > 0 else None, bound=bound)
    return replace(tree, algorithm="optimal", info=info)


@dataclass(frozen=True)
class ShufflePlan:
    """A shuffle's subgraph: one tree per receiver (SRS: per group entry) and the totals."""

    topo: str
    algorithm: str
    senders: tuple[str, ...]
    receivers: tuple[str, ...]
    delta: float
    trees: dict[str, AggregationTree]
    """Tree carrying each receiver's flows: its own, or (SRS) its group entry's."""
    routes: dict[str, tuple[tuple[str, str], ...]]
    """Per receiver, every hop its flows take: the tree's edges plus (SRS) the forwarding hops."""
    cost: float
    links: int
    aggregators: tuple[str, ...]
    groups: tuple[ReceiverGroup, ...] = field(default=())

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "algorithm": self.algorithm, "topo": self.topo, "senders": list(self.senders),
            "receivers": list(self.receivers), "delta": self.delta,
            "trees": {r: [list(e) for e in self.routes[r]] for r in self.receivers},
            "cost": self.cost, "links": self.links, "aggregators": list(self.aggregators)}
        if self.groups:
            out["groups"] = [{"head": f"v{g.head}", "members": [f"v{x}" for x in g.members],
                              "entry": f"v{g.entry}", "entry_costs": list(g.entry_costs)} for g in self.groups]
        return out


def shuffle_plan(fabric: Fabric, receivers: Sequence[str], senders: Sequence[str], algo: str,
                 delta: float = 0.0, seed: int = 0, time_limit: float = 300.0,
                 deadline: Deadline | None = None,
                 progress: Callable[[int, int], None] | None = None) -> ShufflePlan:
    """The shuffle subgraph of ``algo`` (see :data:`SHUFFLE_ALGORITHMS`), measured at ``delta``.

    ``optimal`` trees share ``deadline`` (default: ``time_limit`` seconds from now): each gets an equal
    share of the time left when it starts. ``progress(done, total)`` is called after each tree built
    (the work is one tree per receiver, two for SRS at ``delta > 0``: linear in senders x receivers)."""
    delta = check_delta(delta)
    valid = tuple(a for a in SHUFFLE_ALGORITHMS if a in ("srs", "incast", "none") or a in algorithms_for(fabric))
    if isinstance(fabric, FatTree):
        valid = tuple(a for a in valid if a not in ("srs", "incast"))
    if algo not in valid and algo not in SHUFFLE_ALGORITHMS:
        if fabric.kind in registry.fabrics_of(registry.get(algo)):      # a plug-in: the union of its trees
            valid += (algo,)
    if algo not in valid:
        raise AggregationError(f"shuffle algorithm {quote(algo)} does not apply to {fabric.kind}; valid: {', '.join(valid)}")
    resolve(fabric, receivers, senders)
    tree_algo = {"incast": "irs", "none": "unicast", "srs": "irs"}.get(algo, algo)
    deadline = deadline or Deadline(time_limit)
    total = len(receivers) * (1 + (algo == "srs" and delta != 0.0) + (algo == "none" and isinstance(fabric, FatTree)))
    built = 0

    def tree(r: str, kind: str, at: float, share: int = 1) -> AggregationTree:
        nonlocal built
        t = incast_tree(fabric, r, senders, kind, at, seed, checked=True,
                        deadline=deadline.share(share) if kind == "optimal" else None)
        built += 1
        if progress is not None:
            progress(built, total)
        return t

    trees = {r: tree(r, tree_algo, delta, len(receivers) - i) for i, r in enumerate(receivers)}
    if algo == "none":
        return _no_aggregation(fabric, receivers, senders, delta, trees, seed, tree)
    if algo != "srs":
        return _union(fabric, algo, receivers, senders, delta, trees, {r: t.edges for r, t in trees.items()},
                      float(sum(t.cost for t in trees.values())))
    assert isinstance(fabric, BCube)
    space = LabelSpace.of(fabric)
    rec = np.array([int(r[1:]) for r in receivers], dtype=np.int64)
    zero = trees if delta == 0.0 else {r: tree(r, "irs", 0.0) for r in receivers}
    groups = srs_groups(space, rec, np.array([zero[r].cost for r in receivers]))
    routes: dict[str, tuple[tuple[str, str], ...]] = {}
    carried: dict[str, AggregationTree] = {}
    cost = 0.0
    for g in groups:
        entry = trees[f"v{g.entry}"]
        out = flows(entry.parent, entry.senders, delta)[entry.receiver]
        for member in g.members:
            path = [f"v{x}" for x in g.forward_path(space, member)]
            fwd = tuple(zip(path, path[1:]))
            routes[f"v{member}"] = entry.edges + fwd
            carried[f"v{member}"] = entry
            cost += entry.cost + 2.0 * len(fwd) * out
    hop = _bcube_hop(fabric)
    links = {frozenset(x) for t in {id(t): t for t in carried.values()}.values() for x in t.physical_links()}
    for r in receivers:
        for a, b in routes[r][len(carried[r].edges):]:
            p = hop(a, b)
            links |= {frozenset(x) for x in zip(p, p[1:])}
    aggs = natural_sorted(list({a for t in carried.values() for a in t.aggregators}))
    return ShufflePlan(fabric.spec, algo, tuple(senders), tuple(receivers), delta, carried, routes, cost,
                       len(links), tuple(aggs), tuple(groups))


def _union(fabric: Fabric, algo: str, receivers: Sequence[str], senders: Sequence[str], delta: float,
           trees: dict[str, AggregationTree], routes: dict[str, tuple[tuple[str, str], ...]],
           cost: float) -> ShufflePlan:
    links = {frozenset(x) for t in trees.values() for x in t.physical_links()}
    aggs = natural_sorted(list({a for t in trees.values() for a in t.aggregators}))
    return ShufflePlan(fabric.spec, algo, tuple(senders), tuple(receivers), delta, trees, routes, cost,
                       len(links), tuple(aggs))


def _no_aggregation(fabric: Fabric, receivers: Sequence[str], senders: Sequence[str], delta: float,
                    trees: dict[str, AggregationTree], seed: int,
                    tree: Callable[[str, str, float], AggregationTree]) -> ShufflePlan:
    """Every flow on its own drawn unicast path: cost and links of all paths, no aggregator."""
    plan = _union(fabric, "none", receivers, senders, delta, trees, {r: t.edges for r, t in trees.items()}, 0.0)
    if isinstance(fabric, BCube):
        from dcnlab.controller.aggregation.shuffle import count_distinct, step_link_keys

        space = LabelSpace.of(fabric)
        rec = np.array([int(r[1:]) for r in receivers], dtype=np.int64)
        s = np.array([int(x[1:]) for x in senders], dtype=np.int64)
        n, m = rec.shape[0], s.shape[0]
        _, steps = unicast_forest(space, rec, np.repeat(np.arange(n), m), np.tile(s, n), seed=seed)
        cost = float(steps.costs(n).sum())
        links = count_distinct(step_link_keys(space, steps, rec))
    else:  # fat-tree routing is per destination, so the unicast tree is the union of the paths
        cost = float(sum(tree(r, "unicast", 1.0).cost for r in receivers))
        links = plan.links
    return ShufflePlan(plan.topo, "none", plan.senders, plan.receivers, delta, plan.trees, plan.routes, cost,
                       links, ())


def _builtin(name: str) -> Callable[..., dict[str, str]]:
    def build(fabric: Fabric, receiver: str, senders: Sequence[str], seed: int = 0) -> dict[str, str]:
        return incast_tree(fabric, receiver, senders, name, seed=seed).parent
    build.__doc__ = f"dcnlab's {name} (:func:`incast_tree`) as a builder of the registry's interface."
    return build


for _name in registry.BUILTINS:
    registry.add_builtin(_name, _builtin(_name))

__all__ = ["ALGORITHMS", "BCUBE_ALGORITHMS", "FATTREE_ALGORITHMS", "SHUFFLE_ALGORITHMS", "AggregationError",
           "AggregationTree", "Forest", "Hop", "NodePlan", "ReceiverGroup", "ShufflePlan", "incast_tree",
           "resolve", "shuffle_plan", "algorithms_for", "member_role"]
