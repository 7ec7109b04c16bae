"""The cost of the CIST construction against the number of switches N, counted in interpreter instructions:
Dragonfly CISTs (Bian et al., Computer Science 2022, 49(11), §3.5, Theorems 5-7: "Algorithms 1-3 run in O(N),
N the number of vertices"), judged by ``dcnlab reproduce cist`` whatever the machine's load.

**The cost.** The number of Python bytecode instructions a step executes (``sys.settrace`` with opcode events):
deterministic and independent of the machine's load, unlike the CPU time of
:mod:`dcnlab.reproduce.cist.scaling` (kept beside it as a figure in the full run). A call into a C built-in
(``set(part)``, ``tuple * g``) counts as one instruction whatever it does; the steps call none that is more than
linear in its input (they sort nothing), and the time figure would show one that is.

**The steps** (per arrangement): ``alg1`` / ``alg2``, the partition up to its vertex lists (Algorithm 1 in our
closed form for relative and circulant, our label construction for absolute, as the paper's Algorithm 2 cannot be
recovered); ``alg3``, Algorithm 3 (corrected): all k = ⌊a/2⌋ trees, skeletons and leaves, each skeleton rooted at
its part's first switch (the paper roots nothing; our choice of a centre, which shortens the trees, is not counted). Theorem 7 is judged on Algorithm 3's **total**:
its proof ("it checks the edges of every vertex of every group") runs nothing in parallel; per tree is the
sensitivity reading (Theorem 5's proof does call the ⌊a/2⌋ iterations of Algorithm 1 parallel).

**The sizes** (open setting ``004/timing-sizes``, pre-registered in :mod:`dcnlab.results.open_settings`): N is
the only variable of the claim, so O(N) must hold however N grows; three families, each over at least three
sizes from N ≥ 100: ``a=2h`` (a and h grow together), ``a=8`` (h grows, k fixed) and ``h=2`` (a grows).

**The test against N log N** (no allowance): per step, arrangement and family, the least-squares slope of the
cost per switch, cost/N, against log2 N, as a share of the mean cost/N: the growth of cost/N per doubling of N
(percent). O(N) means cost/N stays bounded, so its growth is at most 0 (lower-order terms make it fall); an
N log N cost grows by its N log N share every doubling. A statement about every step, arrangement and family,
judged at its worst. Both models, cost = c·N + d and cost = c·N·log2 N + d, are fitted too and their R² reported.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ARRANGEMENTS = ("relative", "absolute", "circulant")
FAMILIES: dict[str, tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]] = {
    "a=2h": (((8, 4), (12, 6), (16, 8)), ((20, 10), (24, 12), (28, 14), (32, 16))),
    "a=8": (((8, 2), (8, 4), (8, 8), (8, 16)), ((8, 32),)),
    "h=2": (((8, 2), (16, 2), (32, 2)), ((64, 2),)),
}
"""family -> ((a, h) of ``--quick``, (a, h) the full run adds). h is even everywhere: the circulant arrangement
needs it."""
PRE_REGISTERED_FAMILIES = ("a=2h", "a=8", "h=2")
"""The families judged (open setting 004/timing-sizes); any one alone is a sensitivity reading."""
STEP_NAMES = {"alg1": "Algorithm 1", "alg2": "Algorithm 2", "alg3": "Algorithm 3 (all k trees)"}

Construction = Callable[[str, int, int], Callable[[], Any]]
"""``(arrangement, a, h) -> step``: a partition step (Algorithm 1 or 2) made ready to run, its graph built."""


def count_instructions(fn: Callable[[], Any]) -> int:
    """Bytecode instructions ``fn()`` executes, in every Python frame it opens (module docstring). A tracer
    already set (a debugger, coverage) is put back afterwards.

    On Python 3.12+ ``sys.settrace`` runs on ``sys.monitoring``: ``f_trace_opcodes`` set at a frame's call event
    instruments its code object from the next call (or generator resume) on, so a function's first traced call
    gave no opcode events (3.13: 269 instructions, then 2,494 on every later run of the same step). ``fn`` is
    therefore run once traced and uncounted first (a warm-up; the steps have no side effects), and counted on
    the second run, where every code object it reaches is instrumented."""
    if sys.version_info >= (3, 12):
        _traced(fn)
    return _traced(fn)


def _traced(fn: Callable[[], Any]) -> int:
    """The opcode events of one traced run of ``fn()``."""
    n = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal n
        if event == "call":
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
        elif event == "opcode":
            n += 1
        return tracer

    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(before)
    return n


def paper_partition(arrangement: str, a: int, h: int) -> Callable[[], Any]:
    """The partition step of the reproduction: Algorithm 1 (relative, circulant) or our label construction
    (absolute), up to the parts' vertex lists (Algorithms 1-2's output V[0..k-1])."""
    from dcnlab.controller.cist.partition import absolute_partition, pair_partition

    g = a * h + 1

    def partition() -> Any:
        part = absolute_partition(a, h) if arrangement == "absolute" else pair_partition(a, g)
        part.vertex_parts()
        return part
    return partition


def instance_counts(arrangement: str, a: int, h: int, partition: Construction = paper_partition) -> dict[str, Any]:
    """The instructions of each step on Dragonfly(p=1, a, h, arrangement) (its graph built uncounted)."""
    import dataclasses

    from dcnlab.controller.cist.graph import SwitchGraph
    from dcnlab.controller.cist.trees import tree_edges
    from dcnlab.topos.spec import parse_spec

    fabric = parse_spec(f"dragonfly:p=1,a={a},h={h},arrangement={arrangement}")
    graph = dataclasses.replace(SwitchGraph.from_fabric(fabric), port={})
    step = partition(arrangement, a, h)
    part = step()
    roots = [vs[0] for vs in part.vertex_parts()]    # any root: a BFS skeleton scans the same links from each
    edges = tree_edges(part, graph, roots)
    if any(len(e) != len(graph) - 1 for e in edges):      # a guard that what is counted builds trees
        raise RuntimeError(f"{fabric.spec}: Algorithm 3 gave {[len(e) for e in edges]} edges per tree, "
                           f"not N - 1 = {len(graph) - 1}")
    name = "alg2" if arrangement == "absolute" else "alg1"
    return {"arrangement": arrangement, "a": a, "h": h, "switches": len(graph), "links": graph.num_edges(), "k": part.k,
            "instructions": {name: count_instructions(step),
                             "alg3": count_instructions(lambda: tree_edges(part, graph, roots))}}


def growth(ns: Sequence[float], costs: Sequence[float]) -> float:
    """Growth of cost/N per doubling of N, percent of the mean cost/N (least-squares slope on log2 N)."""
    if len(ns) < 3 or len(set(ns)) < 2:
        raise ValueError(f"the growth of cost/N needs at least 3 sizes at 2 distinct N or more; got {len(ns)}")
    xs = [math.log2(n) for n in ns]
    ys = [c / n for n, c in zip(ns, costs)]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return 100.0 * slope / my


def r2_of(model: Sequence[float], costs: Sequence[float]) -> float:
    """R² of the least-squares line costs = c·model + d."""
    n = len(costs)
    mx, my = sum(model) / n, sum(costs) / n
    sxx = sum((x - mx) ** 2 for x in model)
    c = sum((x - mx) * (y - my) for x, y in zip(model, costs)) / sxx
    ss_res = sum((y - (my + c * (x - mx))) ** 2 for x, y in zip(model, costs))
    ss_tot = sum((y - my) ** 2 for y in costs)
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0


def series(points: Sequence[Mapping[str, Any]], per_tree: bool = False) -> dict[str, dict[str, Any]]:
    """``{"<step> <arrangement>, <family>": {"N": [...], "cost": [...], "growth", "r2_linear", "r2_nlogn",
    "growth_per_link"}}`` (the last: cost per link |E| at the largest N against the smallest, percent: a
    diagnostic of the O(|E|) bound);
    ``per_tree``: Algorithm 3's cost divided by k (the sensitivity reading)."""
    raw: dict[str, tuple[list[float], list[float], list[float]]] = {}
    for p in sorted(points, key=lambda p: p["switches"]):
        for step, cost in p["instructions"].items():
            if per_tree and step != "alg3":
                continue
            key = f"{'Algorithm 3 per tree' if per_tree else STEP_NAMES[step]} {p['arrangement']}, {p['family']}"
            ns, cs, es = raw.setdefault(key, ([], [], []))
            ns.append(float(p["switches"]))
            es.append(float(p["links"]))
            cs.append(cost / p["k"] if per_tree else float(cost))
    return {key: {"N": ns, "cost": cs, "growth": growth(ns, cs), "r2_linear": r2_of(ns, cs),
                  "r2_nlogn": r2_of([n * math.log2(n) for n in ns], cs),
                  "growth_per_link": 100.0 * (cs[-1] / es[-1]) / (cs[0] / es[0]) - 100.0}
            for key, (ns, cs, es) in raw.items()}


def measure(quick: bool, families: Sequence[str] = PRE_REGISTERED_FAMILIES,
            arrangements: Sequence[str] = ARRANGEMENTS, partition: Construction = paper_partition,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every instance of every family counted (``partition``: the construction counted as Algorithms 1-2; a
    falsifier passes a wrong one), the growth of each series and the worst: ``operations`` of ``scaling.json``."""
    points = []
    done: dict[tuple[str, int, int], dict[str, Any]] = {}
    for family in families:
        quick_sizes, more = FAMILIES[family]
        for a, h in quick_sizes + (() if quick else more):
            for arr in arrangements:
                if (arr, a, h) not in done:
                    done[(arr, a, h)] = instance_counts(arr, a, h, partition)
                    if progress:
                        progress(f"{arr} a={a} h={h}")
                points.append(done[(arr, a, h)] | {"family": family})
    return result(points, {f: [list(x) for x in FAMILIES[f][0] + (() if quick else FAMILIES[f][1])]
                           for f in families}, quick)


def result(points: Sequence[Mapping[str, Any]], families: Mapping[str, Any], quick: bool) -> dict[str, Any]:
    """``operations`` of ``scaling.json`` from counted ``points`` (:func:`instance_counts` with ``family``)."""
    judged = series(points)
    worst = max(judged, key=lambda key: judged[key]["growth"])
    return {"what": "interpreter instructions of the CIST construction vs switches N (Bian et al., Theorems 5-7)",
            "cost": "Python bytecode instructions executed (sys.settrace opcode events); a C built-in call is one",
            "families": dict(families), "quick": quick, "python": ".".join(map(str, sys.version_info[:3])),
            "points": list(points), "series": judged, "per_tree": series(points, per_tree=True), "worst": worst,
            "growth": judged[worst]["growth"]}


READINGS = {"timing-sizes": ("every-family", "a=2h", "a=8", "h=2"), "alg3-cost": ("total", "per-tree")}
"""The readings of the open settings 004/timing-sizes and 004/alg3-cost (:mod:`dcnlab.results.open_settings`):
the first of each is pre-registered, the others are the sensitivity table's."""


def sensitivity(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Theorems 5-7 under every pair of readings (size family × Algorithm 3 total or per tree): the worst series,
    its growth and the verdict by the same rule (at most 0% per doubling); the pre-registered pair first."""
    from dcnlab.results.summary import verdict

    rows = []
    for fam in READINGS["timing-sizes"]:
        for cost in READINGS["alg3-cost"]:
            got = {k: f["growth"] for k, f in data["series"].items()
                   if (fam == "every-family" or k.endswith(f", {fam}")) and not (cost == "per-tree" and
                                                                               k.startswith("Algorithm 3"))}
            if cost == "per-tree":
                got |= {k: f["growth"] for k, f in data["per_tree"].items()
                        if fam == "every-family" or k.endswith(f", {fam}")}
            if not got:
                continue
            worst = max(got, key=got.__getitem__)
            rows.append({"timing-sizes": fam, "alg3-cost": cost, "worst": worst, "growth": got[worst],
                         "verdict": verdict("trend", 0.0, got[worst], "at most", 0.0)})
    return rows


def plan_size(quick: bool, families: Sequence[str] = PRE_REGISTERED_FAMILIES,
              arrangements: Sequence[str] = ARRANGEMENTS) -> int:
    """How many instances :func:`measure` counts."""
    sizes = {s for f in families for s in FAMILIES[f][0] + (() if quick else FAMILIES[f][1])}
    return len(sizes) * len(arrangements)


def lines(data: Mapping[str, Any]) -> list[str]:
    """The series as text, the worst first."""
    s = data["series"]
    order = sorted(s, key=lambda key: -s[key]["growth"])
    out = [f"Theorems 5-7 (O(N)), counted in interpreter instructions: growth of cost/N per doubling of N (O(N): "
           f"at most 0; R² of c·N+d / c·N·log N+d), families {', '.join(data['families'])}"]
    for key in order:
        f = s[key]
        out.append(f"  {key:<44} {f['growth']:+6.1f}%  N {int(f['N'][0]):,}..{int(f['N'][-1]):,}  "
                   f"R² {f['r2_linear']:.4f} / {f['r2_nlogn']:.4f}  cost/|E| {f['growth_per_link']:+.0f}%")
    out.append("  sensitivity (open settings 004/timing-sizes × 004/alg3-cost; the first row pre-registered):")
    out += [f"    {r['timing-sizes']:<13} {r['alg3-cost']:<9} worst {r['worst']:<48} {r['growth']:+6.1f}%  {r['verdict']}"
            for r in sensitivity(data)]
    return out


def plot(data: Mapping[str, Any], path: Path) -> Path:
    """cost/N against N (log x), one panel per family, one line per step and arrangement."""
    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    fams = list(data["families"])
    fig, axes = plt.subplots(1, len(fams), figsize=(5.0 * len(fams), 5.8), squeeze=False, layout="constrained")
    per_switch = [c / n for f in data["series"].values() for n, c in zip(f["N"], f["cost"])]
    for ax, fam in zip(axes.flat, fams):
        keys = [key for key in data["series"] if key.endswith(f", {fam}")]
        for key, style in zip(keys, plotstyle.series_styles(len(keys))):
            f = data["series"][key]
            ax.plot(f["N"], [c / n for n, c in zip(f["N"], f["cost"])], **style,
                    label=f"{key.removesuffix(f', {fam}')} ({f['growth']:+.1f}%/doubling)")
        plotstyle.log_scale(ax, "x")
        ax.set_xlabel("switches N (count, log scale)")
        ax.set_ylabel("instructions per switch (count)")
        ax.set_title(f"family {fam}", fontsize=9)
        plotstyle.log_scale(ax, "y")
        ax.set_ylim(min(per_switch) / 1.3, max(per_switch) * 1.3)     # one y-range: the panels are compared
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, frameon=False)
    fig.suptitle(plotstyle.title("004", "Theorems 5–7", "instructions per switch vs N; O(N): flat or falling")
                 + "\n(relative and circulant coincide: the same closed-form partition and leaf rule)")
    plotcheck.save(fig, path, dpi=110)
    return path


__all__ = ["ARRANGEMENTS", "FAMILIES", "PRE_REGISTERED_FAMILIES", "count_instructions", "growth", "instance_counts",
           "READINGS", "lines", "measure", "paper_partition", "plan_size", "plot", "r2_of", "result", "sensitivity",
           "series"]
