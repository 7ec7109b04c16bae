"""IRS/SRS (Guo et al., 003): readings of the Steiner baseline, the Fig. 5 averages and delta.

Headlines (the paper's §5.2-5.4 and abstract):

* ``003-steiner-bcube6``: Steiner-based saving 28.76%, 60x60 shuffles on BCube(6,k), k = 2..8, 100
  rounds (Fig. 4(a), Table 1). Readings: :data:`dcnlab.controller.aggregation.steiner_readings.READINGS`.
* ``003-steiner-bcube8``: Steiner-based saving 44.89%, m = n = 50..1500 on BCube(8,5) (Fig. 5); the
  same readings, averaged over the points by the reproduction's averaging rule (``DEFAULT_SETTING_003``), so the
  starred reading is the headline's figure.
* ``003-size-<method>``: SRS/incast/Steiner/unicast savings 55.33/55.29/44.89/34.46% over the same
  sweep; readings are the ways to average the curve: ``plain`` (each point the same),
  ``by-members`` (each point weighted by its m + n), ``by-traffic`` (pooled: one minus the sum of the
  method's traffic over the sum of no aggregation's, i.e. weighted by the traffic of the point; this
  is also, within 0.1 point, the average weighted by the flows m x n). :func:`fig5_curve` returns the whole
  curve (the paper's Fig. 5 has no recoverable values; only its averages are known).
* ``003-delta-250`` / ``003-delta-1000``: SRS saving with delta uniform on [0, 1], 28.78% and 45.05%
  (Fig. 6); readings: :data:`dcnlab.controller.aggregation.ratio_readings.READINGS`, plus
  ``vs-srs-no-agg`` (the curve's mean against SRS without aggregation, Fig. 7's baseline, instead of
  the existing method the text names).

The reading marked as the reproduction's follows ``aggregation_model.DEFAULT_SETTING_003`` (003's
pre-registered setting, :mod:`dcnlab.results.open_settings`). Members are drawn exactly as ``dcnlab reproduce aggregation`` draws them (same seeds per part, point
and round, at its default seed, :data:`SEED`), so the default readings reproduce its figures round for round.
Rounds and points are the reproduction's (``aggregation_model.plans``): 100 on BCube(6,k), 20 per point on
BCube(8,5) for the standard methods, 2 for the other Steiner readings (several Python-level trees per receiver),
the headline's for delta (below). ``quick``: ``reproduce aggregation --quick``'s plan, 3 rounds on BCube(6,k), points m = n = 50, 250,
500 with 1 round (``reproduce all --quick`` runs every point with more rounds, so there the quick readings preview
the headline's figure rather than equal it). Delta's readings run ``reproduce all``'s own points, rounds and seeds
(:func:`dcnlab.reproduce.aggregation.run_plans.aggregation_plans`, the rounds shared out among its seeds), quick and
full alike, so the starred delta reading is the headline's figure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from dcnlab.reproduce.aggregation.model import AVERAGES, average
from dcnlab.results.readings import Reading

SEED = 1
"""``dcnlab reproduce aggregation``'s default ``--seed``: the readings draw the members the headlines were measured
on, so the starred reading reproduces its headline's figure (same setting, seed, points and rounds)."""
PART = {"003-k": 0, "003-size": 1, "003-delta": 2}          # aggregation_model.PARTS indices (same draws)
PAPER_STEINER = {"bcube6": 28.76, "bcube8": 44.89}
PAPER_SIZE = {"srs": 55.33, "incast": 55.29, "kmb": 44.89, "unicast": 34.46}
PAPER_DELTA = {250: 28.78, 1000: 45.05}
METHODS = ("srs", "incast", "kmb", "unicast")
SHARED = "kmb-shuffle-tree"


def _draw(N: int, count: int, seed: Sequence[int]) -> np.ndarray:
    """The members of one round, as ``dcnlab.reproduce.aggregation.model`` draws them."""
    return np.random.default_rng(list(seed)).choice(N, size=count, replace=False)


def _steiner_task(n: int, k: int, m: int, seed: tuple[int, ...], names: tuple[str, ...],
                  standard: bool) -> dict[str, Any]:
    """One round: traffic of every Steiner reading (and the standard methods) plus no aggregation."""
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.shuffle import no_aggregation_cost, shuffle_costs
    from dcnlab.controller.aggregation.steiner_readings import steiner_costs

    space = LabelSpace(n, k)
    pick = _draw(space.N, 2 * m, seed)
    receivers, senders = pick[:m], pick[m:]
    out: dict[str, Any] = {"none": no_aggregation_cost(space, senders, receivers), "steiner": {}, "seconds": {}}
    for name in names:
        t0 = time.perf_counter()
        out["steiner"][name] = float(steiner_costs(space, senders, receivers, name, seed=int(seed[-1])).traffic.sum())
        out["seconds"][name] = time.perf_counter() - t0
    if standard:
        c = shuffle_costs(space, senders, receivers, (0.0,), (*METHODS, "none"), seed=int(seed[-1]))
        out["standard"] = {mth: float(c.traffic[mth][0]) for mth in METHODS}
    return out


def _delta_task(m: int, rnd: int, draws: int, seed: int = SEED) -> dict[str, Any]:
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.ratio_readings import (
        CURVE,
        READINGS,
        saving,
        srs_subgraph,
        srs_traffic,
    )

    space = LabelSpace(8, 5)
    pick = _draw(space.N, 2 * m, (seed, PART["003-delta"], m, rnd))
    sub = srs_subgraph(space, pick[m:], pick[:m])
    depth = sub.forest.depth()
    rng = np.random.default_rng([seed, m, rnd, 99])
    out: dict[str, Any] = {"saving": {}, "seconds": {}, "fabric": f"BCube({space.n},{space.k})"}
    t0 = time.perf_counter()
    rows = sub.forest.node.shape[0]
    curve = [srs_traffic(sub, np.full(rows, d), depth) for d in CURVE]
    out["seconds"]["curve-mean"] = time.perf_counter() - t0

    def mean_saving(base: float) -> float:
        ys = [1.0 - t / base for t in curve]
        return float(sum((CURVE[i + 1] - CURVE[i]) * (ys[i] + ys[i + 1]) / 2 for i in range(len(CURVE) - 1)))

    out["saving"]["curve-mean"] = [mean_saving(sub.none)]
    # against SRS without aggregation (Fig. 7's "SRS-based shuffle (no agg.)") instead of the existing method
    out["saving"]["vs-srs-no-agg"] = [mean_saving(curve[-1])]
    for name in READINGS:
        if name == "curve-mean":
            continue
        t0 = time.perf_counter()
        reps = draws if name == "per-job" else 1
        out["saving"][name] = [saving(sub, name, rng, seed=rnd, depth=depth) for _ in range(reps)]
        out["seconds"][name] = time.perf_counter() - t0
    return out


def _run(tasks: list[tuple], workers: int) -> list[Any]:
    """``task[0](*task[1:])`` for every task, in order (:func:`dcnlab.sweep.pool.run_all`: local processes,
    or the Dask cluster of ``reproduce all --cluster``)."""
    from dcnlab.sweep.pool import run_all

    return run_all(_call, tasks, workers, warm=_warm)


def _call(fn: Any, *args: Any) -> Any:
    return fn(*args)


def _warm() -> None:
    """The engine's kernels and the readings' (compiled or loaded once per process)."""
    from dcnlab.controller.aggregation import engine

    engine.warm_up()
    _warm_readings()


def _warm_readings() -> None:
    """Compile (or load) the readings' numba kernel before workers start."""
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.steiner_readings import steiner_costs

    steiner_costs(LabelSpace(3, 1), np.array([1, 5]), np.array([0]))


# -- the measurements (cached per process: readings() and fig5_curve() share them) -------------------------

@lru_cache(maxsize=4)
def _bcube6(quick: bool, workers: int) -> tuple[dict[str, float], dict[str, float], float, int, str]:
    from dcnlab.controller.aggregation.steiner_readings import READINGS

    from dcnlab.reproduce.aggregation.model import plans

    from dcnlab.reproduce.aggregation.run_plans import seed_rounds

    rounds = plans(quick, None)["003-k"].rounds         # the reproduction's (3 quick, 100), shared among its seeds
    names = tuple(READINGS)
    tasks = [(_steiner_task, 6, k, 60, (sd, PART["003-k"], k, rnd), names, False)
             for k in range(2, 9) for sd, each in seed_rounds(SEED, rounds) for rnd in range(each)]
    t0 = time.perf_counter()
    res = _run(tasks, workers)
    wall = time.perf_counter() - t0
    per_k: dict[int, list[dict[str, Any]]] = {}
    for task, r in zip(tasks, res):
        per_k.setdefault(task[2], []).append(r)
    saving = {name: 100 * float(np.mean([np.mean([1 - r["steiner"][name] / r["none"] for r in rs])
                                          for rs in per_k.values()])) for name in names}
    secs = {name: float(sum(r["seconds"][name] for r in res)) for name in names}
    (n,), (m,), ks = {t[1] for t in tasks}, {t[3] for t in tasks}, sorted(per_k)
    return saving, secs, wall, rounds, f"{m}x{m} on BCube({n},k), k={ks[0]}..{ks[-1]}"


def _size_points(quick: bool) -> tuple[int, ...]:
    from dcnlab.reproduce.aggregation.model import plans

    return tuple(plans(quick, None)["003-size"].points)


@lru_cache(maxsize=4)
def _bcube8(quick: bool, workers: int) -> dict[str, Any]:
    from dcnlab.controller.aggregation.steiner_readings import READINGS

    from dcnlab.reproduce.aggregation.model import plans

    points = _size_points(quick)
    rounds, steiner_rounds = plans(quick, None)["003-size"].rounds, (1 if quick else 2)
    names = tuple(n for n in READINGS if n != "kmb")      # "kmb" is the standard method's own figure
    from dcnlab.reproduce.aggregation.run_plans import seed_rounds

    # the reproduction's rounds shared among its seeds; the Steiner readings on the first seed's first rounds
    tasks = [(_steiner_task, 8, 5, m, (sd, PART["003-size"], m, rnd),
              names if sd == SEED and rnd < steiner_rounds else (), True)
             for m in sorted(points, reverse=True) for sd, each in seed_rounds(SEED, rounds) for rnd in range(each)]
    t0 = time.perf_counter()
    res = _run(tasks, workers)
    wall = time.perf_counter() - t0
    rows: dict[int, list[dict[str, Any]]] = {m: [] for m in points}
    for task, r in zip(tasks, res):
        rows[task[3]].append(r)
    curve: dict[str, list[float]] = {}
    traffic: dict[str, list[float]] = {}
    for mth in METHODS:
        curve[mth] = [100 * float(np.mean([1 - r["standard"][mth] / r["none"] for r in rows[m]])) for m in points]
        traffic[mth] = [float(np.mean([r["standard"][mth] for r in rows[m]])) for m in points]
    for name in names:
        rs = {m: [r for r in rows[m] if name in r["steiner"]] for m in points}
        curve[name] = [100 * float(np.mean([1 - r["steiner"][name] / r["none"] for r in rs[m]])) for m in points]
        traffic[name] = [float(np.mean([r["steiner"][name] for r in rs[m]])) for m in points]
    traffic["none"] = [float(np.mean([r["none"] for r in rows[m]])) for m in points]
    secs = {name: float(sum(r["seconds"].get(name, 0.0) for r in res)) for name in names}
    (n, k), = {t[1:3] for t in tasks}
    return {"points": points, "curve": curve, "traffic": traffic, "seconds": secs, "wall": wall,
            "rounds": rounds, "steiner_rounds": steiner_rounds, "fabric": f"BCube({n},{k})"}


def fig5_curve(quick: bool, workers: int) -> dict[str, Any]:
    """The BCube(8,5) sweep: points (m = n), saving curves (percent) and mean traffic per method and
    Steiner reading, plus no aggregation's traffic."""
    return _bcube8(quick, workers)


@lru_cache(maxsize=4)
def _delta(quick: bool, workers: int) -> dict[int, dict[str, Any]]:
    from dcnlab.reproduce.aggregation import run_plans

    plan = run_plans.aggregation_plans("quick" if quick else "full")["003-delta"]     # reproduce all's
    points, rounds = tuple(plan.points), plan.rounds
    tasks = [(_delta_task, m, rnd, 4, sd) for m in points for sd, each in run_plans.seed_rounds(SEED, rounds)
             for rnd in range(each)]
    t0 = time.perf_counter()
    res = _run(tasks, workers)
    wall = time.perf_counter() - t0
    out: dict[int, dict[str, Any]] = {}
    for task, r in zip(tasks, res):
        d = out.setdefault(task[1], {"saving": {}, "seconds": {}, "rounds": rounds, "wall": wall,
                                     "fabric": r["fabric"]})
        for name, v in r["saving"].items():
            d["saving"].setdefault(name, []).extend(v)
        for name, v in r["seconds"].items():
            d["seconds"][name] = d["seconds"].get(name, 0.0) + v
    return out


def readings(quick: bool, workers: int) -> list[Reading]:
    """Every reading of 003's deviating headlines (see the module doc)."""
    from dcnlab.controller.aggregation.ratio_readings import READINGS as DELTA
    from dcnlab.controller.aggregation.steiner_readings import READINGS
    from dcnlab.reproduce.aggregation.model import DEFAULT_SETTING_003 as CHOSEN

    from dcnlab.results.open_settings import settings

    DEFAULT, HOW = CHOSEN["steiner-baseline"], CHOSEN["average"]     # the reproduction's (pre-registered)
    rule = {o.name: o for o in settings("003")}

    def ruled_out(setting: str, name: str) -> str:
        return rule[setting].contradiction(name) or "" if setting in rule and name in rule[setting].values else ""

    workers = max(1, workers or os.cpu_count() or 1)
    out: list[Reading] = []
    s6, secs6, wall6, rounds6, ran6 = _bcube6(quick, workers)
    setting6 = f"{ran6}, {rounds6} rounds; {wall6:.0f} s wall"
    for name, r in READINGS.items():
        out.append(Reading("003-steiner-bcube6", name, r.description, s6[name], PAPER_STEINER["bcube6"], "%",
                           name == DEFAULT, setting6, secs6[name], contradicts=ruled_out("steiner-baseline", name)))
    b8 = _bcube8(quick, workers)
    pts = b8["points"]
    setting8 = (f"{b8['fabric']}, m=n={pts[0]}..{pts[-1]} ({len(pts)} points), {b8['steiner_rounds']} rounds "
                f"(Steiner readings) / {b8['rounds']} (methods); {b8['wall']:.0f} s wall")
    for name, r in READINGS.items():
        key = "kmb" if name == "kmb" else name
        val = average(pts, b8["curve"][key], b8["traffic"][key], b8["traffic"]["none"], HOW)
        out.append(Reading("003-steiner-bcube8", name, r.description, val, PAPER_STEINER["bcube8"], "%",
                           name == DEFAULT, setting8, b8["seconds"].get(name, 0.0),
                           contradicts=ruled_out("steiner-baseline", name)))
    names = {"srs": "SRS", "incast": "incast-based", "kmb": "Steiner-based (KMB)", "unicast": "unicast-based"}
    for mth in METHODS:
        for how, desc in AVERAGES.items():
            val = average(pts, b8["curve"][mth], b8["traffic"][mth], b8["traffic"]["none"], how)
            out.append(Reading(f"003-size-{mth}", how, f"{names[mth]}: {desc}", val, PAPER_SIZE[mth], "%",
                               how == HOW and (mth != "kmb" or DEFAULT == "kmb"), setting8))
        if mth == "kmb":            # the chosen Steiner reading (else the shared tree), under each averaging
            other = DEFAULT if DEFAULT != "kmb" else SHARED
            for how, desc in AVERAGES.items():
                val = average(pts, b8["curve"][other], b8["traffic"][other], b8["traffic"]["none"], how)
                out.append(Reading("003-size-kmb", f"{how}/{other}", f"{READINGS[other].description}: {desc}",
                                   val, PAPER_SIZE[mth], "%", how == HOW and DEFAULT == other, setting8,
                                   contradicts=ruled_out("steiner-baseline", other)))
    dl = _delta(quick, workers)
    for m, d in dl.items():
        setting = f"SRS, m=n={m} on {d['fabric']}, {d['rounds']} rounds; {d['wall']:.0f} s wall"
        for name in (*DELTA, "vs-srs-no-agg"):
            desc = DELTA.get(name, "curve mean, saving against SRS without aggregation (Fig. 7's baseline)")
            out.append(Reading(f"003-delta-{m}", name, desc, 100 * float(np.mean(d["saving"][name])),
                               PAPER_DELTA[m], "%", name == CHOSEN["delta-reading"], setting,
                               d["seconds"].get(name, 0.0), contradicts=ruled_out("delta-reading", name)))
    return out
