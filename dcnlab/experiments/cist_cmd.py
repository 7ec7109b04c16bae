"""CLI of the cist mechanism: ``dcnlab plan cist`` and ``dcnlab bench cist`` (issue 11 §2, §5).

``dcnlab plan cist --topo dragonfly:p=1,a=4,h=2 [--rule generic|algorithm3] [--json] [--plot FILE.png]
[--fail s0_2,s1_0-s2_3] [--adversary switch|link|mixed]`` prints the CIST-partition, the trees, their
diameters and the validation. ``--json`` prints exactly one object,
``{"parts": [[...]...], "trees": [[[u, v]...]...], "diameters": [...], "valid": true}``; with ``--fail`` or
``--adversary`` it has one more key, ``"failures"``, with the delivery of the CISTs and of a single BFS tree.

``dcnlab bench cist`` times construction plus validation of Dragonfly(a=16,h=8) for every arrangement
(goal <= 2 s each), and in its last columns the log-log slopes of the construction time against N
(Theorems 5-7; :mod:`dcnlab.experiments.cist_scaling`, the ``--quick`` sizes) of the case's arrangement.

``dcnlab reproduce cist [--emulate] [--quick] [--out DIR] [--json] [--workers N | --cluster ADDRESS]`` (issue 11 §4; the paper has
no experiments, so this reproduces its claims): on the model backend, for Dragonfly instances from D(4,2) to
D(16,8), the k = ⌊a/2⌋ CISTs are built and validated, random failures are swept (delivered fraction vs failed
elements, CISTs vs a single BFS tree; nothing may be lost with f <= k-1) and the adversary's k failures are
costed. The construction time is fitted against N (Theorems 5-7, O(N);
:mod:`dcnlab.experiments.cist_scaling`: ``scaling.png`` and ``scaling.json``, about 35 CPU seconds, 5 with
``--quick``). With ``--emulate`` it then runs the BMv2 experiment of :mod:`dcnlab.experiments.cist_dragonfly` on
Dragonfly(p=1,a=4,h=2) and, without ``--quick``, on Dragonfly(p=1,a=6,h=2). PNG and JSON go to ``--out``
(default ``results/cist``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcnlab.experiments.argtypes import exclusive, ranged, seed, workers
from dcnlab.experiments.errors import UserError
from dcnlab.experiments.outputs import image_file, output_dir, writing
from dcnlab.experiments.pool import add_cluster_option
from dcnlab.topos.model import Role

if TYPE_CHECKING:
    from dcnlab.controller.cist import CistPlan, Delivery, DragonflyPartition, Failures

BENCH_SPECS = tuple(f"dragonfly:p=1,a=16,h=8,arrangement={arr}" for arr in ("relative", "absolute", "circulant"))
BENCH_GOAL_SECONDS = 2.0
EDGES_SHOWN = 100
MAX_PLOTTED_SWITCHES = 3000
MAX_SWITCHES = 20_000
MAX_SWITCH_LINKS = 200_000
MAX_ELEMENTS = 2_000_000
ADVERSARY_CANDIDATES = 64
"""Pairs :func:`dcnlab.controller.cist.adversarial_failures` tries (its default)."""
MAX_ADVERSARY_WORK = 3_000_000_000
"""Nodes and links of the whole fabric, hosts included (the switch graph reads every link once)."""


# -- plan -----------------------------------------------------------------------------------------------
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
             f"trees       {plan.k} = ⌊a/2⌋, leaf rule {rule}, partition by {plan.partition.method}",
             "partition"]
    lines += [f"  V_{t}: {len(p):,} switches, {_format_members(plan.partition, t)}" for t, p in enumerate(plan.parts)]
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


def _failure_report(plan: CistPlan, args: argparse.Namespace, given: Failures | None
                    ) -> tuple[dict[str, Any], list[str]]:
    from dcnlab.controller.cist import adversarial_failures, delivery, single_tree

    baseline = single_tree(plan.graph)
    out: dict[str, Any] = {"single_tree_root": baseline.root}
    lines = []
    cases: list[tuple[str, Failures]] = []
    if given is not None:
        cases.append(("given", given))
    if args.adversary:
        attack = adversarial_failures(plan.graph, plan.trees, args.adversary)
        cases.append((f"adversary ({args.adversary}, cuts {attack.pair[0]}–{attack.pair[1]})", attack.failures))
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


def plot_plan(plan: CistPlan, fabric: Any, path: Path) -> None:
    """The switch graph in grey, each tree's links in its own colour, switches coloured by part (one panel
    per tree); switch names up to 100 switches, the legend under the panels."""
    if len(plan.graph) > MAX_PLOTTED_SWITCHES:
        raise UserError(f"--plot: {len(plan.graph)} switches; drawing is limited to {MAX_PLOTTED_SWITCHES}")
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    from dcnlab.experiments import plotcheck, plotstyle
    from dcnlab.topos.layout import layout

    plt = plotstyle.pyplot()
    pos = layout(fabric)
    g = plan.graph
    colours = plotstyle.colors(plan.k)
    cols = min(plan.k, 3)
    rows = -(-plan.k // cols)
    small = len(g) <= 100
    side = max(6.0, min(10.0, 0.11 * len(g))) if small else 6.0
    fig, axes = plt.subplots(rows, cols, figsize=(side * cols, side * rows + 1.0), squeeze=False,
                             layout="constrained")
    for ax in axes.flat[plan.k:]:
        ax.set_axis_off()
    for tree, ax in zip(plan.trees, axes.flat):
        ax.add_collection(LineCollection([(pos[g.names[u]], pos[g.names[v]]) for u, v in g.edges()],
                                         colors="#dddddd", linewidths=0.4, zorder=1))
        ax.add_collection(LineCollection([(pos[u], pos[v]) for u, v in tree.edges],
                                         colors=[colours[tree.tree_id]], linewidths=1.4, zorder=2))
        for t, part in enumerate(plan.parts):
            ax.scatter([pos[n][0] for n in part], [pos[n][1] for n in part], s=30 if small else 6,
                       c=[colours[t]], edgecolors="black" if t == tree.tree_id else "none", linewidths=0.6, zorder=3)
        ax.scatter(*pos[tree.root], s=140 if small else 40, marker="*", c="black", zorder=4)
        ax.set_title(f"tree {tree.tree_id}: diameter {tree.diameter}, internal switches = V_{tree.tree_id}")
        ax.set_axis_off()
        ax.set_aspect("equal")
        ax.autoscale()
        ax.margins(0.06)
    hidden = 0
    if small:
        for ax in axes.flat[:plan.k]:
            hidden = max(hidden, plotstyle.label_nodes(ax, pos, list(g.names), offset=4))
    handles = [Line2D([], [], marker="o", ls="-", color=colours[t], label=f"V_{t} and tree {t}'s links")
               for t in range(plan.k)]
    handles.append(Line2D([], [], marker="o", ls="none", color="white", markeredgecolor="black",
                          label="outlined: the panel's internal switches"))
    handles.append(Line2D([], [], marker="*", ls="", color="black", markersize=10, label="skeleton root"))
    handles.append(Line2D([], [], color="#dddddd", lw=1, label="other switch links"))
    plotstyle.legend_below(fig, handles, ncol=min(len(handles), 4), fontsize=9)
    fig.suptitle(f"{plan.k} CISTs of {plan.spec} ({'valid' if plan.validation.ok else 'INVALID'}), by the "
                 f"construction of {plotstyle.PAPERS['004']}"
                 + (f"\n({hidden} switch names left out where switches are drawn on top of each other)"
                    if hidden else ""))
    plotcheck.save(fig, path, dpi=120)


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


def _check_adversary_size(fabric: Any) -> None:
    """The adversary costs its candidate pairs one delivery count each, every ordered switch pair over
    every tree: refuse before planning when that exceeds :data:`MAX_ADVERSARY_WORK` (~10 s)."""
    from dcnlab.topos.limits import TooLarge

    n, k = fabric.counts().get(Role.SWITCH, 0), getattr(fabric, "a", 0) // 2
    work = ADVERSARY_CANDIDATES * n * n * k
    if work > MAX_ADVERSARY_WORK:
        raise TooLarge(f"--adversary on {fabric.spec}: {ADVERSARY_CANDIDATES} candidate pairs x {n:,}^2 switch pairs "
                       f"x {k} trees = {work:,}; plan cist handles at most {MAX_ADVERSARY_WORK:,} (e.g. "
                       f"dragonfly:p=1,a=16,h=8)")


def cmd_plan(args: argparse.Namespace) -> int:
    from dcnlab.controller.cist import SwitchGraph, cist_partition, parse_failures, plan_from_partition
    from dcnlab.topos.dragonfly import Dragonfly

    plot = image_file(args.plot, "--plot") if args.plot is not None else None
    fabric = cist_fabric(args.topo)
    if plot is not None and fabric.counts().get(Role.SWITCH, 0) > MAX_PLOTTED_SWITCHES:
        raise UserError(f"--plot: {fabric.spec} has {fabric.counts()[Role.SWITCH]:,} switches; drawing is limited "
                        f"to {MAX_PLOTTED_SWITCHES:,}")
    if args.adversary:
        _check_adversary_size(fabric)
    # --fail is checked against the switch graph before the partition, trees and validation are built
    graph = SwitchGraph.from_fabric(fabric) if isinstance(fabric, Dragonfly) else None
    given = parse_failures(args.fail, graph) if args.fail and graph is not None else None
    plan = plan_from_partition(fabric, cist_partition(fabric, graph), args.rule, graph)
    args.planned = ("cist", fabric, plan, given)     # for --view (dcnlab.view.wrap_plan)
    failures, failure_lines = _failure_report(plan, args, given) if (args.fail or args.adversary) else ({}, [])
    if plot is not None:
        with writing(plot, "--plot"):
            plot_plan(plan, fabric, plot)
        print(f"wrote {plot}", file=sys.stderr)
    if args.json:
        data = plan.to_json()
        if failures:
            data["failures"] = failures
        print(json.dumps(data))
    else:
        print(describe(plan, args.rule))
        for line in failure_lines:
            print(line)
    return 0 if plan.validation.ok else 1


# -- bench ----------------------------------------------------------------------------------------------
def bench_case(spec: str) -> dict[str, Any]:
    """Phase times of construction plus validation for one fabric (imports excluded)."""
    import time

    from dcnlab.controller.cist.graph import SwitchGraph
    from dcnlab.controller.cist.partition import cist_partition
    from dcnlab.controller.cist.trees import build_trees
    from dcnlab.controller.cist.validate import check_cists
    from dcnlab.topos.spec import parse_spec

    times: dict[str, float] = {}
    t0 = time.perf_counter()
    fabric = parse_spec(spec)
    graph = SwitchGraph.from_fabric(fabric)
    times["switch graph"] = time.perf_counter() - t0
    t = time.perf_counter()
    partition = cist_partition(fabric, graph)  # type: ignore[arg-type]
    times["partition (+ Araki check)"] = time.perf_counter() - t
    t = time.perf_counter()
    trees = build_trees(partition, graph)
    times["trees"] = time.perf_counter() - t
    t = time.perf_counter()
    validation = check_cists(graph.to_networkx(), partition.names(), [tr.edges for tr in trees])
    times["full validation"] = time.perf_counter() - t
    total = time.perf_counter() - t0
    return {"spec": spec, "switches": len(graph), "links": graph.num_edges(), "trees": len(trees),
            "diameters": [tr.diameter for tr in trees], "valid": validation.ok, "seconds": total, "phases": times}


def cmd_bench(args: argparse.Namespace) -> int:
    import networkx  # noqa: F401  (imports are not part of the measurement)
    import scipy.sparse.csgraph  # noqa: F401

    specs = args.spec or BENCH_SPECS
    fabrics = [cist_fabric(spec, "bench cist") for spec in specs]  # every case bounded before the first is timed
    results = []
    for spec in specs:
        runs = [bench_case(spec) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        best["runs_seconds"] = [r["seconds"] for r in runs]
        results.append(best)
    slopes = bench_slopes(sorted({str(getattr(f, "arrangement", "relative")) for f in fabrics}))
    for r, f in zip(results, fabrics):
        r["slope"] = slopes[str(getattr(f, "arrangement", "relative"))]
    if args.json:
        print(json.dumps(results))
        return 0
    from dcnlab.experiments.bench_cmd import verdict
    goal = f"<= {BENCH_GOAL_SECONDS:g} s, trees valid"
    width = len(verdict(False, goal))
    print(f"{'case':<46} {'switches':>8} {'trees':>5} {'best s':>7} {'worst s':>7}  {'verdict':<{width}}  {'A1/2':>4} "
          f"{'A3/tree':>7}  phases (best run)")
    for r in results:
        ok = verdict(r["seconds"] <= BENCH_GOAL_SECONDS and r["valid"], goal)
        phases = ", ".join(f"{k} {v:.2f}" for k, v in r["phases"].items())
        print(f"{r['spec']:<46} {r['switches']:>8,} {r['trees']:>5} {r['seconds']:7.2f} "
              f"{max(r['runs_seconds']):7.2f}  {ok:<{width}}  {r['slope']['partition']:4.2f} "
              f"{r['slope']['alg3_per_tree']:7.2f}  {phases}")
    from dcnlab.experiments import cist_scaling as cs
    print(f"A1/2, A3/tree: log-log slope of the time of Algorithm 1 or 2 (partition) and of Algorithm 3 per tree\n"
          f"  against N, the case's arrangement, balanced Dragonfly a = 2h, a = {', '.join(map(str, cs.QUICK_A))}\n"
          f"  (Theorems 5-7: O(N) is slope 1; at most {cs.SLOPE_THRESHOLD:g} counts)")
    return 0


def bench_slopes(arrangements: list[str]) -> dict[str, dict[str, float]]:
    """Per arrangement, ``{"partition", "alg3_per_tree", "alg3", "roots"}`` slopes of the quick scaling
    measurement (:func:`dcnlab.experiments.cist_scaling.measure`)."""
    from dcnlab.experiments import cist_scaling as cs

    data = cs.measure(True, arrangements=arrangements)
    out = {}
    for arr, f in data["fits"].items():
        out[arr] = {"partition": f["alg2" if "alg2" in f else "alg1"]["slope"]}
        out[arr].update({key: f[key]["slope"] for key in ("alg3_per_tree", "alg3", "roots")})
    return out


def add_plan_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cist", help="completely independent spanning trees of a Dragonfly (partition, trees, "
                                    "diameters, validation)")
    p.add_argument("--topo", required=True, metavar="SPEC", help="fabric spec, e.g. dragonfly:p=1,a=4,h=2")
    p.add_argument("--rule", choices=("generic", "algorithm3"), default="generic",
                   help="leaf rule: generic (any partition) or the corrected Algorithm 3 (relative/circulant)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", metavar="FILE.png", help="draw the trees (one panel per tree)")
    p.add_argument("--fail", metavar="LIST", help="failed switches and links, e.g. s0_2,s1_0-s2_3: report the "
                                                  "pairs a broadcast still reaches, CISTs vs a single BFS tree")
    p.add_argument("--adversary", choices=("switch", "link", "mixed"),
                   help="also choose k failures of this kind that cut a pair in every tree, and report the loss")
    p.set_defaults(func=cmd_plan)


def add_bench_parser(bsub: argparse._SubParsersAction) -> None:
    b = bsub.add_parser("cist", help=f"CIST construction + validation time, Dragonfly(a=16,h=8) "
                                     f"(goal <= {BENCH_GOAL_SECONDS:.0f} s), and the slope of construction time vs N")
    b.add_argument("--spec", action="append", help="fabric spec instead of the three Dragonfly(16,8) cases "
                                                   "(repeatable)")
    b.add_argument("--repeat", type=ranged(int, 1, 100), default=3, help="runs per case (best is reported)")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    b.set_defaults(func=cmd_bench)


# -- reproduce ------------------------------------------------------------------------------------------
MODEL_SPECS = ("dragonfly:p=1,a=4,h=2", "dragonfly:p=1,a=4,h=2,arrangement=absolute",
               "dragonfly:p=1,a=4,h=2,arrangement=circulant", "dragonfly:p=1,a=6,h=2", "dragonfly:p=1,a=8,h=4",
               "dragonfly:p=1,a=12,h=6", "dragonfly:p=1,a=16,h=8")
QUICK_MODEL_SPECS = MODEL_SPECS[:5]
SWEEP_EXTRA = 3
"""The random-failure sweep goes up to k + SWEEP_EXTRA failed elements."""


def model_cases(specs: Sequence[str], rounds: int, workers: int, seed: int, bar: Any,
                cluster: Any = None) -> list[dict[str, Any]]:
    """:func:`model_case` of every spec, in spec order. Locally one instance after another, each sweep on
    ``workers`` processes; on a Dask ``cluster`` (``--cluster``) one task per instance, as ``reproduce all``
    runs them (the rounds of one instance on one worker; the draws are seeded per round, so the results
    are the same either way)."""
    if cluster is None:
        cases = []
        for spec in specs:
            def rounds_done(done: int, total: int, spec: str = spec) -> None:
                bar.set_postfix(f"{spec}: round {done}/{total}")

            cases.append(model_case(spec, rounds, workers, seed, progress=rounds_done))
            bar.update()
        return cases
    from dcnlab.experiments.pool import run_all

    def done(j: int, _: object) -> None:
        bar.update()
        bar.set_postfix(specs[-1 - j])

    # the largest instances are listed last: submit them first, and give the results back in spec order
    return run_all(model_case, [(s, rounds, 1, seed) for s in reversed(specs)], cluster=cluster, done=done)[::-1]


def model_case(spec: str, rounds: int, workers: int, seed: int = 0,
               progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """CISTs of one instance: construction, validation, random-failure sweep and the adversary's k failures."""
    import time

    from dcnlab.controller.cist import adversarial_failures, delivery, failure_sweep, plan_cists, single_tree
    from dcnlab.topos.spec import parse_spec

    t0 = time.perf_counter()
    fabric = parse_spec(spec)
    plan = plan_cists(fabric)  # type: ignore[arg-type]
    built = time.perf_counter() - t0
    baseline = single_tree(plan.graph)
    sweep = failure_sweep(plan.graph, plan.trees, baseline, plan.k + SWEEP_EXTRA, rounds=rounds, kind="mixed",
                          seed=seed, workers=workers, progress=progress)
    adversary = {}
    for kind in ("switch", "link"):
        attack = adversarial_failures(plan.graph, plan.trees, kind, seed=seed)  # type: ignore[arg-type]
        one = delivery(plan.graph, [baseline], attack.failures)
        adversary[kind] = {"failed": sorted(str(attack.failures).split(",")), "cut_pair": list(attack.pair),
                           "pairs": attack.delivery.pairs, "cists_lost": attack.delivery.lost,
                           "single_lost": one.lost}
    return {"spec": fabric.spec, "switches": len(plan.graph), "links": plan.graph.num_edges(), "k": plan.k,
            "diameters": plan.diameters, "valid": plan.validation.ok, "build_seconds": built,
            "baseline_diameter": baseline.diameter,
            "no_loss_below_k": all(p.cist_min == 1.0 for p in sweep if p.failures <= plan.k - 1),
            "sweep": [{"failures": p.failures, "rounds": p.rounds, "cists_mean": p.cist_mean, "cists_min": p.cist_min,
                       "single_mean": p.single_mean, "single_min": p.single_min} for p in sweep],
            "adversary": adversary}


def short_spec(spec: str) -> str:
    """``dragonfly:p=1,a=4,h=2,arrangement=absolute`` as ``D(1,4,2) absolute`` (the paper's D(p,a,h))."""
    params = dict(kv.split("=", 1) for kv in spec.removeprefix("dragonfly:").split(",") if "=" in kv)
    return f"D({params.get('p', '?')},{params.get('a', '?')},{params.get('h', '?')}) " \
           f"{params.get('arrangement', 'relative')}"


def plot_model(cases: list[dict[str, Any]], path: Path) -> None:
    """Delivered fraction vs random failed elements per instance, CISTs against a single BFS tree; the
    panels share their y-range, a dotted line marks k - 1 failures (Theorem 4: nothing lost up to there)."""
    from matplotlib.lines import Line2D

    from dcnlab.experiments import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    cols = min(4, len(cases))
    rows = -(-len(cases) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.6 * rows + 1.2), squeeze=False, sharey=True,
                             layout="constrained")
    for ax in axes.flat[len(cases):]:
        ax.set_axis_off()
    series = (("cists", "mean", "k CISTs, mean over draws", "tab:blue", "-", "o"),
              ("cists", "min", "k CISTs, worst draw", "tab:cyan", "--", "s"),
              ("single", "mean", "one BFS tree, mean over draws", "tab:red", "-", "^"),
              ("single", "min", "one BFS tree, worst draw", "tab:orange", "--", "v"))
    for ax, c in zip(axes.flat, cases):
        xs = [p["failures"] for p in c["sweep"]]
        for key, stat, label, colour, ls, marker in series:
            ax.plot(xs, [p[f"{key}_{stat}"] for p in c["sweep"]], color=colour, linestyle=ls, marker=marker,
                    markersize=5, markerfacecolor="none", label=label)
        ax.axvline(c["k"] - 1, color="grey", lw=1, ls=":")
        ax.set_title(f"{short_spec(c['spec'])}: {c['switches']} switches, k = {c['k']}", fontsize=9)
        ax.set_xlabel("random failed switches and links (count)", fontsize=8)
        ax.set_ylabel("delivered switch pairs (fraction)", fontsize=8)
        ax.set_ylim(0, 1.03)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
    handles = [Line2D([], [], color=colour, linestyle=ls,  # type: ignore[arg-type]
                      marker=marker, markerfacecolor="none", label=label) for _, _, label, colour, ls, marker in series]
    handles.append(Line2D([], [], color="grey", lw=1, ls=":", label="k - 1 failures (Theorem 4: nothing lost up to "
                                                                        "here)"))
    plotstyle.legend_below(fig, handles, ncol=3, fontsize=9)
    fig.suptitle(plotstyle.title("004", None, "broadcast over the k CISTs against one BFS tree under random "
                                 "failures (model)"))
    plotcheck.save(fig, path, dpi=120)


def _lost_share(attack: dict[str, Any]) -> str:
    """``CISTs/single`` percent of the pairs an adversary's failures cut."""
    pairs = max(int(attack["pairs"]), 1)
    return f"{100 * attack['cists_lost'] / pairs:.1f}/{100 * attack['single_lost'] / pairs:.1f}"


def model_lines(cases: list[dict[str, Any]]) -> list[str]:
    """:func:`model_table` as lines."""
    return model_table(cases).splitlines()


def model_table(cases: list[dict[str, Any]]) -> str:
    """The model table: one row per instance, the checks of Theorem 4 (valid CISTs, nothing lost with up to
    k - 1 random failures: both exact) and the adversary's k failures."""
    from dcnlab.experiments.tables import DEVIATES, REPRODUCED, Column
    from dcnlab.experiments.tables import table as format_table

    rows = []
    for c in cases:
        sw, ln = c["adversary"]["switch"], c["adversary"]["link"]
        lost = "0" if c["no_loss_below_k"] else "SOME"
        why = ", ".join(w for w, bad in (("invalid", not c["valid"]), ("lost", not c["no_loss_below_k"])) if bad)
        rows.append((short_spec(c["spec"]), f"{c['switches']:,}", c["k"], ", ".join(map(str, c["diameters"])), lost,
                     _lost_share(sw), _lost_share(ln),
                     f"{DEVIATES} ({why})" if why else REPRODUCED))
    table = format_table(
        [Column("Dragonfly"), Column("switches", "count", ">"), Column("k", "trees", ">"),
         Column("diameters", "hops", wrap=True, min_width=9), Column("f<k lost", "pairs", ">"),
         Column("adv. switch", "% lost", ">"), Column("adv. link", "% lost", ">"),
         Column("verdict", "exact")], rows,
        title="Bian et al. (CISTs on Dragonfly), Theorem 4 (the paper has no experiments): k = floor(a/2) CISTs; "
              "nothing lost with up to k - 1 failed switches or links",
        notes=["f<k lost: switch pairs lost in the random sweep with at most k - 1 failures (Theorem 4: 0); "
               "adv.: an adversary fails k switches (links); the share of pairs lost by the k CISTs / by one BFS "
               "tree; verdict (exact): reproduced when the trees are valid CISTs (checked) and 0 pairs are lost."])
    return table


def cmd_reproduce(args: argparse.Namespace) -> int:
    from dcnlab.experiments.progress import Progress

    if args.emulate:    # before the model sweep and before --out is touched
        from dcnlab.experiments import preflight
        preflight.require("dcnlab reproduce cist --emulate")
        # gRPC logs an INFO line on every fork while its threads run (each restarted switch, each CLI)
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    exclusive(args, "--workers", "--cluster", why="the cluster's workers run the model")
    out = output_dir(args.out, "--out")
    specs = QUICK_MODEL_SPECS if args.quick else MODEL_SPECS
    rounds = 5 if args.quick else 20
    from dcnlab.experiments import pool

    with pool.connect(args.cluster) as cluster:     # before the work: an unreachable scheduler fails at once
        with Progress(len(specs), "model instances", unit="instance") as bar:
            cases = model_cases(specs, rounds, args.workers or os.cpu_count() or 1, args.seed, bar, cluster)
        where = pool.describe(args.workers, cluster)
    with writing(out, "--out"):
        plot_model(cases, out / "model-sweep.png")
        (out / "model.json").write_text(json.dumps(cases, indent=1))
    ok = all(c["valid"] and c["no_loss_below_k"] for c in cases)
    lines = model_lines(cases) + [f"model on {where}; wrote {out / 'model-sweep.png'} and {out / 'model.json'}"]
    from dcnlab.experiments.cist_scaling import plan_size
    with Progress(plan_size(args.quick), "construction time vs N", unit="instance") as bar:
        def timed(name: str) -> None:
            bar.update()
            bar.set_postfix(name)

        scaling, scaling_files = scaling_outputs(out, args.quick, timed)
    lines += [""] + scaling_lines(scaling) + [f"wrote {' and '.join(map(str, scaling_files))}"]
    emulations = []
    if args.emulate:
        from dcnlab.experiments import cist_dragonfly as exp

        configs = [exp.SMALL] if args.quick else [exp.SMALL, exp.LARGE]
        if args.quick:
            configs = [exp.quick(c) for c in configs]
        for cfg in configs:
            result = exp.run_experiment(cfg, progress=lambda m: print(f"  {m}", file=sys.stderr, flush=True))
            with writing(out, "--out"):
                png, js = exp.write_outputs(result, out)
            emulations.append(result.to_json())
            ok = ok and result.ok
            lines += [""] + result.summary_lines() + [f"wrote {png} and {js}"]
    lines.append(f"wrote {write_summary(out, cases, emulations if args.emulate else None, args.quick)}")
    if args.json:
        print(json.dumps({"model": cases, "scaling": scaling, "emulation": emulations, "ok": ok}))
    else:
        print("\n".join(lines))
    return 0 if ok else 1


NO_EMULATION = "not asked for (dcnlab reproduce cist --emulate also runs the BMv2 experiment)"


def scaling_outputs(out: Path, quick: bool, say: Callable[[str], None] | None = None
                    ) -> tuple[dict[str, Any], list[Path]]:
    """Theorems 5-7: time the construction over the balanced Dragonfly sizes
    (:func:`dcnlab.experiments.cist_scaling.measure`), write ``scaling.png`` and ``scaling.json`` into ``out``
    (which :func:`write_summary` reads); (the measurement, the files)."""
    from dcnlab.experiments import cist_scaling

    data = cist_scaling.measure(quick, progress=say)
    with writing(out, "--out"):
        return data, cist_scaling.write_outputs(data, out)


def scaling_lines(data: dict[str, Any]) -> list[str]:
    """The slopes as a few lines of text."""
    from dcnlab.experiments import cist_scaling as cs

    ns = sorted({int(p["switches"]) for p in data["points"]})
    verdict = "O(N) reproduced" if data["slope"] is not None and data["slope"] <= data["threshold"] else "DEVIATES"
    lines = [f"Theorems 5-7 (O(N)): log-log slope of construction time vs N (± standard error), balanced Dragonfly "
             f"a = 2h, N = {ns[0]:,}..{ns[-1]:,}; {data['statistic']}"]
    lines += [f"  {line}" for line in cs.algorithm_lines(data)]
    lines.append("  per arrangement:")
    for arr, f in data["fits"].items():
        part = "alg2" if "alg2" in f else "alg1"
        lines.append(f"    {arr:<9}  Algorithm {part[-1]} {cs.slope_text(f, part)}, Algorithm 3 per tree "
                     f"{cs.slope_text(f, 'alg3_per_tree')} (all k trees {cs.slope_text(f, 'alg3')}), skeleton roots "
                     f"{cs.slope_text(f, 'roots')}")
    lines.append(f"  largest judged slope {data['slope']:.2f} ({data['slope_of']}); at most {data['threshold']:g}: "
                 f"{verdict}")
    return lines


def write_summary(out: Path, cases: list[dict[str, Any]] | None, emulations: list[dict[str, Any]] | None,
                  quick: bool, why: str = "") -> Path:
    """``summary.json``: the headlines of 004 (:func:`dcnlab.experiments.headlines.cist`), with the
    construction-time measurement of ``out/scaling.json`` when :func:`scaling_outputs` wrote one."""
    from dcnlab.experiments import cist_scaling, headlines, summary

    if emulations is not None and not why:
        why = "ran on BMv2: broadcasts under failures on " + ", ".join(e["spec"] for e in emulations)
    scaling = cist_scaling.load(out)
    with writing(out, "--out"):
        return summary.write(out / "summary.json", ("004",), headlines.cist(cases, emulations, scaling=scaling),
                             emulations is not None, why or NO_EMULATION, mechanism="cist", quick=quick)


def add_reproduce_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cist", help="CISTs on Dragonfly: broadcast that survives k-1 failures (model sweep; "
                                    "--emulate for the BMv2 experiment)")
    p.add_argument("--emulate", action="store_true", help="also run the BMv2 experiment (root, p4c and BMv2): "
                                                          "Dragonfly(1,4,2), and Dragonfly(1,6,2) unless --quick")
    p.add_argument("--quick", action="store_true", help="fewer instances and rounds; a shorter emulation")
    p.add_argument("--out", default="results/cist", metavar="DIR", help="output directory for PNG and JSON")
    p.add_argument("--workers", type=workers(), default=None,
                   help="model processes (default: every core)")
    add_cluster_option(p, "model instances (one task per Dragonfly)")
    p.add_argument("--seed", type=seed(), default=0, help="seed of the failure draws")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(func=cmd_reproduce)
