"""Construction time of the CISTs against the number of switches N: Dragonfly CISTs (Bian et al.),
Theorems 5-7 ("Algorithms 1-3
run in O(N)"), measured by ``dcnlab reproduce cist`` and ``dcnlab bench cist``.

**What is timed** (imports, building the fabric and its switch graph, and validation are not), per instance,
in CPU seconds of this process (:func:`time.process_time`, not wall-clock time: on shared cores the time the
scheduler gives to other processes — a compiler, the other workers of ``reproduce all`` — is not counted):

* ``alg1`` / ``alg2`` — the partition: Algorithm 1 (relative and circulant; our closed form of it,
  :func:`~dcnlab.controller.cist.partition.pair_partition`) or Algorithm 2 (absolute; our label
  construction, :func:`~dcnlab.controller.cist.partition.absolute_partition`), each up to the parts as vertex
  lists (``vertex_parts()``), which is the algorithms' output V[0..k-1].
* ``alg3`` — Algorithm 3 (corrected, :func:`~dcnlab.controller.cist.trees.tree_edges`): the k trees' edges,
  skeletons and leaves, given the skeleton roots.
* ``roots`` — our choice of each skeleton's root (a centre of G[V_t]; not in the paper, which roots nothing),
  :func:`~dcnlab.controller.cist.trees.skeleton_roots`. Reported, not judged.

**Sizes.** The balanced Dragonfly a = 2h (Kim et al.'s recommended shape) for a = 8, 12, 16, ... (a multiple
of 4, so that h is even and the circulant arrangement exists), all three arrangements: N = a(ah+1) = 264 ...
The paper's N is the only size parameter, but N = a(ah+1) cannot grow with a and h fixed; a = 2h grows both.
a = 4 (N = 36) is left out: there the fixed cost of the calls (tens of microseconds) dominates and would
flatten the fitted slope, i.e. make O(N) look better than it is.

**Repetitions.** Each function is called once untimed (warm-up: lazy imports, caches, and a check that
Algorithm 3 gives k trees of N-1 edges), then timed in up to ``reps`` runs, each run a batch of calls lasting
at least :data:`MIN_BATCH_SECONDS` so that the timer's resolution does not matter, with the garbage collector
off as :mod:`timeit` does. The runs are **interleaved**: round-robin over every step of every instance, so that
a slow phase of the shared machine (seconds of another process's memory traffic) falls on every size alike
instead of tilting the slope. A step gets no further runs once it has :data:`MIN_RUNS` runs and they have
taken :data:`STEP_BUDGET_SECONDS` (:data:`QUICK_BUDGET_SECONDS` with ``--quick``; only the root choice and
Algorithm 3 at the largest sizes); a root choice whose warm-up call alone took that long is timed by that call
(the absolute arrangement's all-pairs shortest paths at the largest sizes; reported, not judged). The figure
is the **minimum** over the runs, per call: noise on a shared machine only ever adds time, so the minimum is
the best estimate of the cost of the code itself (the :mod:`timeit` documentation's advice); the median is
kept in the JSON too.

**Fit.** Per algorithm, one least-squares line of log10(seconds) on log10(N) over every arrangement it runs
on, with one intercept per arrangement and a common slope (:func:`fit_pooled`, ``numpy.linalg.lstsq``): the
slope and its standard error. Algorithm 1 pools relative and circulant, Algorithm 3 all three. Judging one
pooled slope per algorithm, not the largest of six per-arrangement slopes, keeps the maximum of several noisy
estimates from biasing the verdict upwards. Per arrangement, ``numpy.polyfit`` (degree 1, with its
covariance) gives the slopes shown in the plot's panels. O(N) is slope 1.

**Not a verdict.** CPU time depends on the machine and its load (Python's per-element cost also grows with the
working set as the trees' edge tuples leave the CPU caches), so these slopes are a figure shown beside the
verdict, in the full run only; Theorems 5-7 are judged on interpreter instructions, which no load changes
(:mod:`dcnlab.reproduce.cist.opcount`). :data:`SLOPE_THRESHOLD` is what ``dcnlab bench cist`` prints beside its
slopes, not a tolerance of the report.
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARRANGEMENTS = ("relative", "absolute", "circulant")
FULL_A = (8, 12, 16, 20, 24, 28, 32)
"""a of the full run (h = a/2): N = 264 ... 16,416 switches, 1.8 decades."""
QUICK_A = (8, 12, 16, 20)
"""a of ``--quick`` (h = a/2): N = 264 ... 4,020 switches, 1.2 decades; a few seconds."""
FULL_REPS = 25
QUICK_REPS = 10
MIN_BATCH_SECONDS = 0.005
"""Each timed run repeats the call until it has taken at least this long."""
MIN_RUNS = 3
"""Every step gets at least this many runs, whatever its budget (fewer runs would bias the minimum upwards at
the largest sizes, and so the slope); only a root choice timed by its warm-up call has one."""
STEP_BUDGET_SECONDS = 0.25
"""No further runs of a step once its runs have taken this long (and it has :data:`MIN_RUNS`); ``--quick``:
:data:`QUICK_BUDGET_SECONDS`."""
QUICK_BUDGET_SECONDS = 0.1
SLOPE_THRESHOLD = 1.15
"""What ``dcnlab bench cist`` prints beside its slopes (module docstring: not a tolerance of the report)."""
STEPS = ("alg1", "alg2", "alg3", "roots")
STEP_NAMES = {"alg1": "Algorithm 1 (partition)", "alg2": "Algorithm 2 (partition)",
              "alg3": "Algorithm 3 (trees)", "roots": "skeleton roots (ours, not in the paper)"}


@dataclass(frozen=True)
class Fit:
    """Least-squares line log10(seconds) = intercept + slope·log10(N)."""

    slope: float
    stderr: float
    intercept: float
    r2: float
    points: int

    def predict(self, n: float) -> float:
        """Seconds the line gives at ``n`` switches."""
        return float(10 ** (self.intercept + self.slope * math.log10(n)))

    def to_json(self) -> dict[str, Any]:
        return {"slope": self.slope, "stderr": self.stderr, "intercept": self.intercept, "r2": self.r2,
                "points": self.points}


def fit_loglog(ns: Sequence[float], seconds: Sequence[float]) -> Fit:
    """The log-log least-squares line (``numpy.polyfit`` with its covariance: the slope's standard error);
    needs 3 points or more with N > 0 and seconds > 0, at 2 distinct N or more (two points give no error)."""
    import numpy as np

    pts = [(n, s) for n, s in zip(ns, seconds) if n > 0 and s > 0 and math.isfinite(s) and math.isfinite(n)]
    if len(pts) < 3 or len({n for n, _ in pts}) < 2:
        raise ValueError(f"a log-log fit needs at least 3 points with positive N and time, at 2 distinct N or "
                         f"more; got {len(pts)}")
    x = np.log10([n for n, _ in pts])
    y = np.log10([s for _, s in pts])
    (slope, intercept), cov = np.polyfit(x, y, 1, cov=True)
    ss_res = float(((y - (intercept + slope * x)) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    return Fit(float(slope), float(math.sqrt(max(cov[0][0], 0.0))), float(intercept), r2, len(pts))


def fit_pooled(groups: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> dict[str, Any]:
    """One slope for several series (log10 seconds = intercept_group + slope·log10 N; least squares over all
    points, ``numpy.linalg.lstsq``): the slope of one algorithm over the arrangements it runs on, with its
    standard error from the residuals (n - 1 - groups degrees of freedom). With one group it is
    :func:`fit_loglog`. ``{"slope", "stderr", "intercepts": {group: b}, "r2", "points"}``."""
    import numpy as np

    rows = [(g, math.log10(n), math.log10(t)) for g, (ns, ts) in groups.items() for n, t in zip(ns, ts)
            if n > 0 and t > 0 and math.isfinite(n) and math.isfinite(t)]
    names = sorted({g for g, _, _ in rows})
    dof = len(rows) - 1 - len(names)
    if not names or dof < 1 or len({x for _, x, _ in rows}) < 2:
        raise ValueError(f"a pooled log-log fit needs at least {len(names) + 2} points with positive N and time, "
                         f"at 2 distinct N or more; got {len(rows)}")
    x = np.array([[xv] + [1.0 if g == name else 0.0 for name in names] for g, xv, _ in rows])
    y = np.array([yv for _, _, yv in rows])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    ss_res = float(resid @ resid)
    cov = np.linalg.inv(x.T @ x) * (ss_res / dof)
    centred = y - np.array([np.mean([yv for g2, _, yv in rows if g2 == g]) for g, _, _ in rows])
    ss_tot = float(centred @ centred)
    return {"slope": float(coef[0]), "stderr": float(math.sqrt(max(cov[0, 0], 0.0))),
            "intercepts": {name: float(b) for name, b in zip(names, coef[1:])},
            "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0, "points": len(rows)}


class _Timer:
    """Batched runs of one function (module docstring, Repetitions): CPU seconds per call of each run."""

    def __init__(self, fn: Callable[[], Any], reps: int, budget: float) -> None:
        self.fn, self.reps, self.budget = fn, reps, budget
        t = time.process_time()
        fn()
        first = time.process_time() - t
        self.number = max(1, math.ceil(MIN_BATCH_SECONDS / max(first, 1e-9)))
        self.per_call: list[float] = [first] if self.number == 1 else []
        self.spent = sum(self.per_call)

    @classmethod
    def single(cls, seconds: float) -> _Timer:
        """A step timed by one call made elsewhere (no further runs)."""
        timer = cls(lambda: None, 1, 0.0)
        timer.per_call, timer.spent = [seconds], seconds
        return timer

    @property
    def finished(self) -> bool:
        runs = len(self.per_call)
        return runs >= self.reps or (runs >= min(MIN_RUNS, self.reps) and self.spent >= self.budget)

    def run(self) -> None:
        fn = self.fn
        t = time.process_time()
        for _ in range(self.number):
            fn()
        run = time.process_time() - t
        self.spent += run
        self.per_call.append(run / self.number)

    def result(self) -> dict[str, float]:
        import statistics

        return {"min": min(self.per_call), "median": statistics.median(self.per_call), "runs": len(self.per_call),
                "calls": self.number}


def _run_interleaved(timers: Sequence[_Timer]) -> None:
    """Run the timers round-robin, one run each per round, until each has its runs or has used its budget;
    the garbage collector off (as :mod:`timeit`)."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        while True:
            pending = [t for t in timers if not t.finished]
            if not pending:
                return
            for t in pending:
                t.run()
    finally:
        if was:
            gc.enable()


def time_call(fn: Callable[[], Any], reps: int, budget: float = STEP_BUDGET_SECONDS) -> dict[str, float]:
    """CPU seconds per call of ``fn``: ``{"min", "median", "runs", "calls"}`` over up to ``reps`` runs, each a
    batch of ``calls`` calls lasting at least :data:`MIN_BATCH_SECONDS`, the garbage collector off; no further
    run once the runs have taken ``budget`` seconds. The first call sizes the batch (and is the first run when
    it alone lasts :data:`MIN_BATCH_SECONDS`); the caller warms ``fn`` up before (module docstring)."""
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    timer = _Timer(fn, reps, budget)
    _run_interleaved([timer])
    return timer.result()


@dataclass
class _Instance:
    """One balanced Dragonfly, built and warmed up, with a timer per step."""

    arrangement: str
    a: int
    switches: int
    links: int
    k: int
    timers: dict[str, _Timer]

    def to_json(self) -> dict[str, Any]:
        res = {step: t.result() for step, t in self.timers.items()}
        return {"arrangement": self.arrangement, "a": self.a, "h": self.a // 2, "switches": self.switches,
                "links": self.links, "k": self.k, "seconds": {s: r["min"] for s, r in res.items()},
                "median_seconds": {s: r["median"] for s, r in res.items()},
                "calls_per_run": {s: r["calls"] for s, r in res.items()},
                "runs": {s: r["runs"] for s, r in res.items()}}


def _instance(arrangement: str, a: int, reps: int, budget: float) -> _Instance:
    """Dragonfly(p=1, a, h=a/2) and its switch graph (built untimed), every step warmed up, a timer per step."""
    import dataclasses

    import scipy.sparse.csgraph  # noqa: F401  (skeleton_roots imports it on first use; not part of any timing)

    from dcnlab.controller.cist.graph import SwitchGraph
    from dcnlab.controller.cist.partition import absolute_partition, pair_partition
    from dcnlab.controller.cist.trees import skeleton_roots, tree_edges
    from dcnlab.topos.spec import parse_spec

    h = a // 2
    fabric = parse_spec(f"dragonfly:p=1,a={a},h={h},arrangement={arrangement}")
    # the construction reads the adjacency only: drop the port numbers (most of a large graph's memory)
    graph = dataclasses.replace(SwitchGraph.from_fabric(fabric), port={})
    g = a * h + 1                                   # groups
    step = "alg2" if arrangement == "absolute" else "alg1"

    def partition() -> Any:
        part = absolute_partition(a, h) if arrangement == "absolute" else pair_partition(a, g)
        part.vertex_parts()
        return part

    part = partition()
    t = time.process_time()
    roots = skeleton_roots(part, graph)
    roots_first = time.process_time() - t
    edges = tree_edges(part, graph, roots)
    if any(len(e) != len(graph) - 1 for e in edges):      # not a validation: a guard that the timing is of trees
        raise RuntimeError(f"{fabric.spec}: Algorithm 3 gave {[len(e) for e in edges]} edges per tree, "
                           f"not N - 1 = {len(graph) - 1}")
    del edges
    # the calls above were the warm-up; a root choice that alone took the budget is not repeated (runs = 1)
    timers = {step: _Timer(partition, reps, budget),
              "roots": (_Timer.single(roots_first) if roots_first >= budget
                        else _Timer(lambda: skeleton_roots(part, graph), reps, budget)),
              "alg3": _Timer(lambda: tree_edges(part, graph, roots), reps, budget)}
    return _Instance(arrangement, a, len(graph), graph.num_edges(), part.k, timers)


def measure_point(arrangement: str, a: int, reps: int, budget: float = STEP_BUDGET_SECONDS) -> dict[str, Any]:
    """The timed steps of one balanced instance Dragonfly(p=1, a, h=a/2), on its own (module docstring)."""
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    inst = _instance(arrangement, a, reps, budget)
    _run_interleaved(list(inst.timers.values()))
    return inst.to_json()


def series(points: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """Per arrangement, ``{"N": [...], step: [...], "alg3_per_tree": [...]}`` in the order of N."""
    out: dict[str, dict[str, list[float]]] = {}
    for p in sorted(points, key=lambda p: (p["arrangement"], p["switches"])):
        s = out.setdefault(p["arrangement"], {"N": []})
        s["N"].append(float(p["switches"]))
        for step, sec in p["seconds"].items():
            s.setdefault(step, []).append(float(sec))
        s.setdefault("alg3_per_tree", []).append(float(p["seconds"]["alg3"]) / int(p["k"]))
    return out


ALGORITHMS: dict[str, tuple[str, tuple[str, ...], bool]] = {
    "Algorithm 1": ("alg1", ("relative", "circulant"), True),
    "Algorithm 2": ("alg2", ("absolute",), True),
    "Algorithm 3 per tree": ("alg3_per_tree", ARRANGEMENTS, True),
    "Algorithm 3, all k trees": ("alg3", ARRANGEMENTS, False),
    "skeleton roots (ours)": ("roots", ARRANGEMENTS, False)}
"""name -> (series, the arrangements it runs on, judged?): one pooled slope per algorithm (:func:`fit_pooled`),
the headline judging the largest of the judged ones (module docstring)."""


def fits(points: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{arrangement: {series: fit JSON}}`` for every series of :func:`series`."""
    return {arr: {key: fit_loglog(s["N"], vals).to_json() for key, vals in s.items() if key != "N"}
            for arr, s in series(points).items()}


def algorithm_fits(points: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{algorithm: pooled fit JSON + {"series", "arrangements", "judged"}}`` for the algorithms of
    :data:`ALGORITHMS` that ``points`` cover."""
    by_arr = series(points)
    out = {}
    for name, (key, arrs, judged) in ALGORITHMS.items():
        groups = {arr: (by_arr[arr]["N"], by_arr[arr][key]) for arr in arrs if arr in by_arr and key in by_arr[arr]}
        if groups:
            out[name] = fit_pooled(groups) | {"series": key, "arrangements": sorted(groups), "judged": judged}
    return out


def judged_slope(algorithms: Mapping[str, Mapping[str, Any]]) -> tuple[float, str] | None:
    """(largest judged slope, the algorithm it belongs to), or None without fits."""
    found = [(f["slope"], name) for name, f in algorithms.items() if f.get("judged")]
    return max(found) if found else None


def measure(quick: bool, arrangements: Sequence[str] = ARRANGEMENTS, a_values: Sequence[int] | None = None,
            reps: int | None = None, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The whole measurement as JSON: plan, points, fits, the judged slope (module docstring): every instance
    is built first, then the timed runs go round-robin over all of them. ``progress`` is called after each
    instance is built, with its name."""
    a_values = tuple(a_values or (QUICK_A if quick else FULL_A))
    reps = reps or (QUICK_REPS if quick else FULL_REPS)
    if reps < 1:
        raise ValueError(f"reps must be at least 1, got {reps}")
    budget = QUICK_BUDGET_SECONDS if quick else STEP_BUDGET_SECONDS
    t0 = time.perf_counter()
    instances = []
    for arr in arrangements:
        for a in a_values:
            instances.append(_instance(arr, a, reps, budget))
            if progress:
                progress(f"{arr} a={a}")
    _run_interleaved([t for inst in instances for t in inst.timers.values()])
    return result_json([inst.to_json() for inst in instances], reps, quick, time.perf_counter() - t0, budget)


def result_json(points: Sequence[Mapping[str, Any]], reps: int, quick: bool, wall: float = 0.0,
                budget: float = STEP_BUDGET_SECONDS) -> dict[str, Any]:
    """``scaling.json``: the points, their fits and the judged slope against :data:`SLOPE_THRESHOLD`."""
    fitted = fits(points)
    algorithms = algorithm_fits(points)
    judged = judged_slope(algorithms)
    return {"what": "CIST construction time vs switches N (Bian et al., Theorems 5-7)",
            "family": "balanced Dragonfly(p=1, a, h=a/2)", "a": sorted({int(p["a"]) for p in points}),
            "timed": {"alg1": "pair_partition + vertex_parts (Algorithm 1, relative and circulant)",
                      "alg2": "absolute_partition + vertex_parts (Algorithm 2, absolute)",
                      "alg3": "tree_edges: the k trees' skeletons and leaves (Algorithm 3)",
                      "roots": "skeleton_roots: a centre of each G[V_t] (ours, not in the paper)",
                      "excluded": "imports, fabric and switch-graph building, validation"},
            "statistic": f"minimum over up to {reps} runs (at least {min(MIN_RUNS, reps)}, fewer once a step's "
                         f"runs took {budget:g} s) of a batch of calls lasting >= {MIN_BATCH_SECONDS * 1e3:g} ms, "
                         f"after an untimed warm-up call, runs interleaved round-robin over all instances, garbage "
                         f"collector off; CPU seconds (time.process_time) per call",
            "fitted": "per algorithm: least squares of log10(seconds) on log10(N) over the arrangements it runs on, "
                      "one slope and an intercept per arrangement (numpy.linalg.lstsq; stderr from the residuals); "
                      "per arrangement: numpy.polyfit, degree 1",
            "reps": reps, "quick": quick, "wall_seconds": wall, "load_average": list(os.getloadavg()),
            "points": list(points), "algorithms": algorithms, "fits": fitted,
            "threshold": SLOPE_THRESHOLD, "slope": judged[0] if judged else None,
            "slope_of": judged[1] if judged else None}


def slope_text(fitted: Mapping[str, Mapping[str, Any]], key: str) -> str:
    f = fitted.get(key)
    return "n/a" if f is None else f"{f['slope']:.2f}±{f['stderr']:.2f}"


def algorithm_lines(data: Mapping[str, Any]) -> list[str]:
    """``Algorithm 1 0.97±0.01 (relative, circulant)``, one per algorithm, judged ones first."""
    algs = data["algorithms"]
    order = sorted(algs, key=lambda n: (not algs[n]["judged"], list(ALGORITHMS).index(n)))
    return [f"{name} {algs[name]['slope']:.2f}±{algs[name]['stderr']:.2f} ({', '.join(algs[name]['arrangements'])}"
            f"{'' if algs[name]['judged'] else '; reported, not judged'})" for name in order]


def reading(data: Mapping[str, Any]) -> str:
    """The headline's reading: every slope, what was timed, how."""
    fitted = data["fits"]
    parts = []
    for arr in ARRANGEMENTS:
        f = fitted.get(arr)
        if not f:
            continue
        alg = "Algorithm 2" if "alg2" in f else "Algorithm 1"
        parts.append(f"{arr} {alg} {slope_text(f, 'alg2' if 'alg2' in f else 'alg1')}, Algorithm 3 per tree "
                     f"{slope_text(f, 'alg3_per_tree')}")
    ns = sorted({int(p["switches"]) for p in data["points"]})
    return (f"log-log slope of construction time against N (±standard error), balanced Dragonfly a = 2h, "
            f"a = {', '.join(map(str, data['a']))} (N = {ns[0]:,}..{ns[-1]:,}), one slope per algorithm over "
            f"its arrangements: {'; '.join(algorithm_lines(data))}; per arrangement: {'; '.join(parts)}. Judged: "
            f"Algorithms 1 and 2 in total, Algorithm 3 per tree (the paper's argument is per part; all k trees "
            f"are k(N-1) edges, k ∝ N^(1/3) here, so their total goes as N^(4/3)); at most {data['threshold']:g} "
            f"counts as O(N) (above 1 for cache effects and timer noise). Timed: the partition up to its vertex "
            f"lists, the trees' edges; not graph building nor validation; {data['statistic']}. Skeleton roots (a "
            f"centre per part, ours) are reported, not judged")


# -- plot ------------------------------------------------------------------------------------------------------
PLOT_SERIES = (("alg1", "partition: Algorithm 1 (relative, circulant) or 2 (absolute)", "tab:blue", "o"),
               ("alg3_per_tree", "Algorithm 3, per tree (judged)", "tab:orange", "s"),
               ("alg3", "Algorithm 3, all k trees (reported)", "tab:green", "^"),
               ("roots", "skeleton roots, a centre per part (ours; reported)", "tab:purple", "D"))

SHORT = {"alg1": "A1", "alg2": "A2", "alg3_per_tree": "A3/tree", "alg3": "A3 all", "roots": "roots"}


def plot(data: Mapping[str, Any], path: Path) -> Path:
    """Time against N on log-log axes, one panel per arrangement: measured points (markers), their fitted
    lines (dashed, same colour) and a slope-1 reference (dotted grey) through the judged Algorithm 3 line's
    first point; the legend under the panels."""
    from matplotlib.lines import Line2D

    from dcnlab.figures import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    by_arr = series(data["points"])
    arrs = [a for a in ARRANGEMENTS if a in by_arr]
    fig, axes = plt.subplots(1, len(arrs), figsize=(5.0 * len(arrs), 5.2), squeeze=False, layout="constrained")
    # one y-range for all panels (the same quantity side by side), each panel with its own tick labels
    values = [v for arr in arrs for key, vals in by_arr[arr].items() if key != "N" for v in vals if v > 0]
    ylim = (min(values) / 2, max(values) * 2) if values else (1e-6, 1.0)
    for ax, arr in zip(axes.flat, arrs):
        s, f = by_arr[arr], data["fits"][arr]
        ns = s["N"]
        slopes = []
        for key, label, colour, marker in PLOT_SERIES:
            k = "alg2" if key == "alg1" and "alg2" in s else key
            if k not in s:
                continue
            ax.plot(ns, s[k], ls="none", marker=marker, markersize=6, markerfacecolor="none", color=colour,
                    label=label)
            ax.plot([ns[0], ns[-1]], [Fit(**f[k]).predict(ns[0]), Fit(**f[k]).predict(ns[-1])], ls="--",
                    color=colour, lw=1.2, label="_fit")
            slopes.append(f"{SHORT[k]} {f[k]['slope']:.2f}")
        ref = Fit(1.0, 0.0, f["alg3_per_tree"]["intercept"] + (f["alg3_per_tree"]["slope"] - 1.0)
                  * math.log10(ns[0]), 1.0, 2)
        ax.plot([ns[0], ns[-1]], [ref.predict(ns[0]), ref.predict(ns[-1])], ls=":", color="grey", lw=1.2,
                label="slope 1 (O(N)), through the Algorithm 3 per-tree fit at the smallest N")
        plotstyle.log_scale(ax, "x")
        plotstyle.log_scale(ax, "y")
        ax.set_ylim(*ylim)
        ax.set_xlabel("switches N (count, log scale)")
        ax.set_ylabel("construction time (s, log scale)")
        ax.set_title(f"{arr} arrangement; fitted slopes:\n" + ", ".join(slopes), fontsize=9)
        ax.grid(alpha=0.3, which="major")
    handles = [Line2D([], [], ls="--", marker=m, markerfacecolor="none", color=c, label=lab)
               for _, lab, c, m in PLOT_SERIES]
    handles.append(Line2D([], [], ls=":", color="grey",
                          label="slope 1 (O(N)), through the Algorithm 3 per-tree fit at the smallest N"))
    plotstyle.legend_below(fig, handles, ncol=2, fontsize=9)
    algs = data["algorithms"]
    pooled = ", ".join(f"{name} {algs[name]['slope']:.2f}" for name in ALGORITHMS
                       if name in algs and algs[name]["judged"])
    fig.suptitle(plotstyle.title("004", "Theorems 5–7", f"construction time vs N, balanced Dragonfly a = 2h; "
                                 f"markers: minimum of up to {data['reps']} runs, dashed: log-log fit")
                 + f"\nslope per algorithm over its arrangements (judged, O(N) up to {data['threshold']:g}): {pooled}")
    plotcheck.save(fig, path, dpi=110)
    return path


def write_outputs(data: Mapping[str, Any], out: Path) -> list[Path]:
    """``scaling.json`` and ``scaling.png`` in ``out``."""
    import json

    js = out / "scaling.json"
    js.write_text(json.dumps(data, indent=1))
    return [plot(data, out / "scaling.png"), js]


def load(out: Path) -> dict[str, Any] | None:
    """``out/scaling.json`` when it exists (and parses), else None."""
    import json

    try:
        return json.loads((out / "scaling.json").read_text())
    except (OSError, ValueError):
        return None


def plan_size(quick: bool, arrangements: Sequence[str] = ARRANGEMENTS) -> int:
    """How many instances :func:`measure` times."""
    return len(arrangements) * len(QUICK_A if quick else FULL_A)


__all__ = ["ALGORITHMS", "ARRANGEMENTS", "FULL_A", "Fit", "QUICK_A", "SLOPE_THRESHOLD", "algorithm_fits",
           "algorithm_lines", "fit_loglog", "fit_pooled", "fits", "judged_slope", "load", "measure", "measure_point",
           "plan_size", "plot", "reading", "result_json", "series", "time_call", "write_outputs"]
