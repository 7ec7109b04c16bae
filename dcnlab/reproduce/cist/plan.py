"""What ``dcnlab plan cist`` computes: the fabric refused before anything is built when it is too large, the
CIST-partition and trees described in text, and the delivery of the CISTs and of a single BFS tree under
given or adversarial failures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dcnlab.topos.model import Role

if TYPE_CHECKING:
    from dcnlab.controller.cist import CistPlan, Delivery, DragonflyPartition, Failures


EDGES_SHOWN = 100


MAX_SWITCHES = 20_000


MAX_SWITCH_LINKS = 200_000


MAX_ELEMENTS = 2_000_000


ADVERSARY_CANDIDATES = 64
"""Pairs :func:`dcnlab.controller.cist.adversarial_failures` tries (its default)."""


MAX_ADVERSARY_WORK = 3_000_000_000
"""Nodes and links of the whole fabric, hosts included (the switch graph reads every link once)."""


def _format_members(partition: DragonflyPartition, t: int) -> str:
    rows = [partition.members(t, i) for i in range(partition.g)]
    if all(r == rows[0] for r in rows):
        return "routers {" + ",".join(map(str, rows[0])) + "} of every group"
    runs: list[tuple[int, int, tuple[int, ...]]] = []  # (first group, last group, routers)
    for i, r in enumerate(rows):
        if runs and runs[-1][2] == r and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i, r)
        else:
            runs.append((i, i, r))
    return " ".join(f"g{lo}{'' if lo == hi else f'-{hi}'}:{{{','.join(map(str, r))}}}" for lo, hi, r in runs)


def describe(plan: CistPlan, rule: str) -> str:
    g = plan.graph
    lines = [f"fabric      {plan.spec}",
             f"switches    {len(g):,} (hosts excluded), {g.num_edges():,} switch links",
             (f"trees       {plan.k} = ⌊a/2⌋, leaf rule {rule}, partition by {plan.partition.method}"
              if plan.partition is not None else f"trees       {plan.k}, by the plug-in {rule}"),
             "partition" if plan.partition is not None else "internal switches of each tree"]
    if plan.partition is not None:
        lines += [f"  V_{t}: {len(p):,} switches, {_format_members(plan.partition, t)}"
                  for t, p in enumerate(plan.parts)]
    else:
        lines += [f"  V_{t}: {len(p):,} switches" for t, p in enumerate(plan.parts)]
    for tree in plan.trees:
        lines.append(f"tree {tree.tree_id}: root {tree.root}, {len(tree.edges):,} edges, diameter {tree.diameter}, "
                     f"{len(tree.internal()):,} internal switches")
        edges = tree.undirected_edges()
        if len(edges) <= EDGES_SHOWN:
            for i in range(0, len(edges), 8):
                lines.append("  " + " ".join(f"{u}-{v}" for u, v in edges[i:i + 8]))
        else:
            lines.append(f"  ({len(edges):,} edges; --json lists them all)")
    lines.append("diameters   " + " ".join(map(str, plan.diameters)))
    v = plan.validation
    lines.append(f"valid       {'yes' if v.ok else 'NO'}: " + "; ".join(v.checks))
    lines += [f"  problem: {p}" for p in v.problems]
    return "\n".join(lines)


def _delivery_json(d: Delivery) -> dict[str, Any]:
    return {"pairs": d.pairs, "delivered": d.delivered, "lost": d.lost, "min_intact_trees": d.min_intact,
            "lost_pairs": [list(p) for p in d.lost_pairs]}


def failure_report(plan: CistPlan, adversary: Any, given: Failures | None
                    ) -> tuple[dict[str, Any], list[str]]:
    from dcnlab.controller.cist import adversarial_failures, delivery, single_tree

    baseline = single_tree(plan.graph)
    out: dict[str, Any] = {"single_tree_root": baseline.root}
    lines = []
    cases: list[tuple[str, Failures]] = []
    if given is not None:
        cases.append(("given", given))
    if adversary:
        attack = adversarial_failures(plan.graph, plan.trees, adversary)
        cases.append((f"adversary ({adversary}, cuts {attack.pair[0]}–{attack.pair[1]})", attack.failures))
    for label, fails in cases:
        cist, one = delivery(plan.graph, plan.trees, fails), delivery(plan.graph, [baseline], fails)
        key = "given" if label == "given" else "adversary"
        out[key] = {"failed": str(fails).split(","), "cists": _delivery_json(cist), "single_tree": _delivery_json(one)}
        lines.append(f"failures    {label}: {fails}")
        lines.append(f"  {plan.k} CISTs:      {cist.delivered:,}/{cist.pairs:,} (source, destination) pairs "
                     f"delivered, {cist.lost:,} lost, min intact trees {cist.min_intact}")
        lines.append(f"  single tree: {one.delivered:,}/{one.pairs:,} delivered, {one.lost:,} lost "
                     f"(BFS tree from {baseline.root})")
    return out, lines


def cist_fabric(spec: str, what: str = "plan cist") -> Any:
    """The fabric of ``spec``, refused before anything is built when the switch graph is larger than
    :data:`MAX_SWITCHES` switches or :data:`MAX_SWITCH_LINKS` switch links (construction and
    validation take about 45 µs per switch link: ~10 s at the limit)."""
    from dcnlab.topos.limits import SizeLimit, TooLarge
    from dcnlab.topos.model import Role
    from dcnlab.topos.spec import parse_spec

    fabric = parse_spec(spec, SizeLimit(f"{what} handles", switches=MAX_SWITCHES, elements=MAX_ELEMENTS))
    hosts = fabric.counts().get(Role.HOST, 0)
    links = fabric.num_links() - hosts        # every host hangs off one switch by one link
    if links > MAX_SWITCH_LINKS:
        raise TooLarge(f"{fabric.spec} has {links:,} switch links; {what} handles at most {MAX_SWITCH_LINKS:,} "
                       f"(e.g. dragonfly:p=1,a=24,h=12)")
    return fabric


def check_adversary_size(fabric: Any) -> None:
    """The adversary costs its candidate pairs one delivery count each, every ordered switch pair over
    every tree: refuse before planning when that exceeds :data:`MAX_ADVERSARY_WORK` (~10 s)."""
    from dcnlab.topos.limits import TooLarge

    n, k = fabric.counts().get(Role.SWITCH, 0), getattr(fabric, "a", 0) // 2
    work = ADVERSARY_CANDIDATES * n * n * k
    if work > MAX_ADVERSARY_WORK:
        raise TooLarge(f"--adversary on {fabric.spec}: {ADVERSARY_CANDIDATES} candidate pairs x {n:,}^2 switch pairs "
                       f"x {k} trees = {work:,}; plan cist handles at most {MAX_ADVERSARY_WORK:,} (e.g. "
                       f"dragonfly:p=1,a=16,h=8)")
