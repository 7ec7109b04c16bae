"""Paper-scale reproduction of 003 (SRS shuffles) and 000 (M2 incasts) on the model backend.

Parts (``dcnlab reproduce aggregation --only ...``):

* ``003-k``: 60x60 shuffles on BCube(6,k), k = 2..8 (003 §5.2, Fig. 4, Table 1).
* ``003-size``: shuffles m = n = 50..1500 on BCube(8,5) (003 §5.3, Fig. 5).
* ``003-delta``: m = n = 250 and 1000 on BCube(8,5), aggregation ratio 0..1 (003 §5.4, Fig. 6).
* ``000-k``: incasts of 120 senders on BCube(6,k), k = 2..8 (000 §5.1-5.2, Fig. 5; Table 1's columns 2..6 are the
  other reading of :data:`DEFAULT_SETTING_000`).
* ``000-size``: incasts of 100..4000 senders on BCube(4,8) (000 §5.3, Fig. 6).
* ``gap``: every heuristic against the exact optimum (MILP) on BCubes of at most 64 servers.

Choices: members are drawn uniformly without replacement, receivers and senders disjoint. The
"saving" of a method is ``1 - traffic / traffic without aggregation`` per round, averaged over the
rounds of a point and then over the points of a part by the paper's one averaging rule (each point the same, or
pooled; :data:`DEFAULT_SETTING_003`, :data:`DEFAULT_SETTING_000`). Every figure carries its standard error over the
rounds (``overall_se``; each point keeps its rounds, :mod:`dcnlab.results.spread`). With delta uniform on [0, 1] (003 §5.4) the saving is the
mean of the saving curve over delta, by the trapezoid rule on 21 points. Every round has its own
seed ``(seed, part, point, round)``, so results do not depend on the number of workers.

Rounds per point: 100 where the papers say so (003 Fig. 4 / Table 1, 000 §5.2); the papers give no count
for the size and ratio sweeps, where we run 20 rounds per point (003-size, 003-delta) and 10 (000-size,
40 points of up to 4,000 senders): at hundreds of members per round the per-round savings vary by
tenths of a percent, and ``--rounds`` overrides every count. ``dcnlab bench aggregation`` times the
m = n = 1,500 point at the full 100 rounds.

IRS-, unicast- and KMB-based trees come from the compiled engine
(:mod:`dcnlab.controller.aggregation.engine`, the same trees as the reference implementations); it is
compiled (or loaded from numba's on-disk cache) once in the parent by :func:`engine.warm_up` before
the process pool starts, so that workers only load cached kernels, or once in every worker process of a
Dask cluster (``--cluster``; :mod:`dcnlab.sweep.pool`). M2, MIB and MC are numpy
(:mod:`dcnlab.controller.aggregation.mib`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

PARTS = ("003-k", "003-size", "003-delta", "000-k", "000-size", "gap")
GAP_SPACES = ((4, 1), (4, 2), (8, 1), (2, 5))
GAP_SIZES = (4, 8, 16, 32)
SHUFFLE_METHODS = ("srs", "incast", "kmb", "unicast")
INCAST_METHODS = ("m2", "irs", "mib", "mc", "unicast")
DELTAS = tuple(i / 20 for i in range(21))
WAIT_COLUMNS = {"000-k": (2, 3, 4, 5, 6), "000-size": (1000, 1500, 2000, 3000)}
"""000 Tables 1 and 2 (shuffle+reduce waiting time; values missing): their columns."""

PAPER = {
    "003-k": {"srs": 32.87, "incast": 32.69, "kmb": 28.76, "unicast": 17.64},
    "003-size": {"srs": 55.33, "incast": 55.29, "kmb": 44.89, "unicast": 34.46},
    "003-delta": {"srs@250": 28.78, "srs@1000": 45.05},
    "000-k": {"m2 vs irs": 3.0, "m2 wait vs none": 100 * 2 / 3},
    "000-size": {"m2 vs irs": 19.0, "m2 wait vs none": 75.0},
    "gap": {},
}
"""Saving vs no aggregation (003) or M2's data reduction vs IRS-based (000), in percent."""
def _preregistered(paper: str) -> dict[str, str]:
    from dcnlab.results.open_settings import searched

    return {o.name: o.candidates[0] for o in searched(paper)}


DEFAULT_SETTING_000 = _preregistered("000")
"""000's open settings (:mod:`dcnlab.results.open_settings`) as the reproduction runs them: the pre-registered
reading of each, fixed from 000's text alone before any result (IRS as 000 describes it, each point of a sweep
weighing the same, every sender count m = 100..4000, the setup's k = 2..8; the sentences and arguments are in
``open_settings``, a test checks that they are the same). ``irs-baseline`` picks the IRS trees the headlines compare
M2 with (both readings are scored every round, :func:`_incast_round`); ``k-sweep`` the points of 000-k;
``average`` is 000's one averaging rule (:func:`incast_overall`) and ``sender-sweep`` the points averaged. Every
other reading runs as a sensitivity reading (``dcnlab reproduce search 000``, ``search_tables/000.json``). The
waiting time's model is no setting: 000 gives none, so its model rows are not judged."""
DEFAULT_SETTING_003 = _preregistered("003")
"""003's open settings (:mod:`dcnlab.results.open_settings`) as the reproduction runs them: the pre-registered
reading of each, fixed from 003's text alone before any result (a test checks that they are the same).
``steiner-baseline``: the Steiner-based trees, one KMB tree per receiver as 003 §5.1 says
(:mod:`dcnlab.controller.aggregation.steiner_readings`; :func:`_shuffle_round` builds them); ``delta-reading``:
Fig. 6's curve averaged over δ, against the existing method (§5.4); ``average``: 003's one averaging rule, each
point the same, Fig. 4(a) and Fig. 5 alike (:func:`shuffle_overall`); ``counting``: aggregating servers as distinct
servers. Every other reading runs as a sensitivity reading (``dcnlab reproduce search 003``,
``search_tables/003.json``)."""
K_POINTS_000 = tuple(range(2, 7)) if DEFAULT_SETTING_000["k-sweep"] == "2..6" else tuple(range(2, 9))


@dataclass(frozen=True)
class Plan:
    part: str
    points: tuple[Any, ...]
    rounds: int


def plans(quick: bool, rounds: int | None) -> dict[str, Plan]:
    def r(default: int, q: int) -> int:
        return rounds if rounds is not None else (q if quick else default)
    sizes = (50, 250, 500) if quick else tuple(range(50, 1501, 50))
    return {
        "003-k": Plan("003-k", tuple(range(2, 9)), r(100, 3)),
        "003-size": Plan("003-size", sizes, r(20, 1)),
        "003-delta": Plan("003-delta", (250,) if quick else (250, 1000), r(20, 1)),
        "000-k": Plan("000-k", K_POINTS_000, r(100, 5)),
        "000-size": Plan("000-size", (100, 1000, 2000) if quick else tuple(range(100, 4001, 100)), r(10, 1)),
        "gap": Plan("gap", tuple(i * 100 + m for i in range(len(GAP_SPACES)) for m in GAP_SIZES
                                 if m < GAP_SPACES[i][0] ** (GAP_SPACES[i][1] + 1) and (m <= 16 or not quick)),
                    r(10, 1)),
    }


# -- one round of each part (runs in a worker process) -----------------------------------------------

def _draw(N: int, count: int, seed: Sequence[int]):
    import numpy as np
    return np.random.default_rng(list(seed)).choice(N, size=count, replace=False)


def _shuffle_round(n: int, k: int, m: int, seed: Sequence[int], deltas: Sequence[float],
                   methods: Sequence[str], detail: bool, steiner: str = "kmb",
                   plugins: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """One shuffle's costs; the Steiner-based method ("kmb") under the reading ``steiner``
    (:mod:`dcnlab.controller.aggregation.steiner_readings`; ``kmb``: the engine's KMB trees, the same).
    ``plugins``: ``(name, reference)`` of user builders, each run as one incast tree per receiver on the same
    draw and measured by :func:`~dcnlab.controller.aggregation.shuffle.shuffle_costs` beside the built-ins
    (:func:`dcnlab.reproduce.aggregation.plugins.shuffle_forest`); the seconds of building their trees are
    ``plugin_seconds``, not ``seconds``."""
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.shuffle import shuffle_costs
    from dcnlab.controller.aggregation.steiner_readings import steiner_costs

    space = LabelSpace(n, k)
    pick = _draw(space.N, 2 * m, seed)
    forests, built = {}, {}
    if plugins:
        from dcnlab.reproduce.aggregation.plugins import shuffle_forest
        for name, ref in plugins:
            t0 = time.perf_counter()
            forests[name] = shuffle_forest(space, pick[:m].tolist(), pick[m:].tolist(), ref, int(seed[-1]))
            built[name] = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    other = steiner != "kmb" and "kmb" in methods
    c = shuffle_costs(space, pick[m:], pick[:m], deltas, (*(x for x in methods if not (other and x == "kmb")), "none"),
                      seed=int(seed[-1]), detail=detail, forests=forests)
    if other:   # Steiner-based trees of another reading, at delta = 0 only (as the engine's KMB)
        t = steiner_costs(space, pick[m:], pick[:m], steiner, seed=int(seed[-1]), detail=detail)
        c.traffic["kmb"] = [float(t.traffic.sum()) if d == 0.0 else float("nan") for d in deltas]
        if detail:
            c.links["kmb"], c.aggregators["kmb"] = int(t.links or 0), int(t.aggregator_servers or 0)
            c.aggregators_summed["kmb"] = int(t.aggregators.sum())
    out = {"traffic": c.traffic, "links": c.links, "aggregators": c.aggregators,
           "aggregators_summed": c.aggregators_summed,
           "receiver_input": c.receiver_input, "seconds": time.perf_counter() - t0,
           "cpu_seconds": time.process_time() - c0}
    if built:
        out["plugin_seconds"] = built
    return out


def score_forest(forest: Any, out: dict[str, Any], algo: str, m: int) -> None:
    """The 000 figures of one incast tree ``forest`` as ``algo``'s entries of ``out`` (:func:`_incast_round`):
    the one scorer of the papers' trees and a plug-in's."""
    from dcnlab.controller.aggregation.waiting import busiest_link

    out["traffic"][algo] = float(forest.costs()[0])
    out["links"][algo] = int(forest.links()[0])
    out["aggregators"][algo] = int(forest.aggregators()[0])
    out["new_servers"][algo] = int(forest.sizes()[0]) - 1 - m
    out["busiest"][algo] = int(busiest_link(forest)[0])
    out["receiver_input"][algo] = float(forest.receiver_input()[0])


def _incast_round(n: int, k: int, m: int, seed: Sequence[int], plugins: Sequence[tuple[str, str]] = ()
                  ) -> dict[str, Any]:
    """One incast; ``plugins``: ``(name, reference)`` of user builders run on the same draw
    (:mod:`dcnlab.reproduce.aggregation.plugins`)."""
    from dcnlab.controller.aggregation import engine
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.mib import m2_family_timed
    from dcnlab.controller.aggregation.waiting import none_busiest

    space = LabelSpace(n, k)
    pick = _draw(space.N, m + 1, seed)
    r, s = int(pick[0]), pick[1:]
    irs = {name: engine.irs_forest(space, pick[:1], s, intra_stage=name == "irs-intra") for name in IRS_READINGS}
    chosen = next(name for name, value in IRS_READINGS.items() if value == DEFAULT_SETTING_000["irs-baseline"])
    forests = {"irs": irs[chosen], "unicast": engine.unicast_forest(space, pick[:1], s, seed=int(seed[-1]))}
    seconds = {}
    for algo, (f, sec) in m2_family_timed(space, r, s, ("m2", "mib", "mc")).items():    # M2 and MIB share a step
        forests[algo], seconds[algo] = f, sec
    if plugins:
        from dcnlab.reproduce.aggregation.plugins import plugin_forest
        for name, ref in plugins:
            t0 = time.perf_counter()
            forests[name] = plugin_forest(space, r, s.tolist(), ref, int(seed[-1]))
            seconds[name] = time.perf_counter() - t0
    out: dict[str, Any] = {"traffic": {}, "links": {}, "aggregators": {}, "new_servers": {}, "seconds": seconds,
                           "busiest": {}, "receiver_input": {}}
    for algo, f in forests.items():
        score_forest(f, out, algo, m)
    out["traffic"]["none"] = float(2 * space.layer(space.relabel(s, r)).sum())
    primary, ecmp = (float(none_busiest(space, r, s, spread=spread)) for spread in (False, True))
    out["busiest"]["none"] = primary       # the link-bound model's (WAIT_MODELS: the paper states none)
    out["receiver_input"]["none"] = float(m)
    variants: dict[str, Any] = {key: {} for key in out if key != "seconds"}
    for name, f in irs.items():         # both readings of 000's IRS, and no aggregation spread over the links
        score_forest(f, variants, name, m)
    variants["busiest"].update({"none-primary": primary, "none-ecmp": ecmp})
    out["variants"] = variants
    return out


def _gap_round(n: int, k: int, m: int, seed: Sequence[int], plugins: Sequence[tuple[str, str]] = ()
               ) -> dict[str, Any]:
    import numpy as np

    from dcnlab.controller.aggregation import engine
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.mib import m2_family
    from dcnlab.controller.aggregation.optimal import bcube_hop_graph, solve

    space = LabelSpace(n, k)
    pick = _draw(space.N, m + 1, seed)
    r, s = int(pick[0]), pick[1:]
    ra = np.array([r])
    t0 = time.perf_counter()
    opt = solve(bcube_hop_graph(n, k), r, s.tolist()).cost
    cost = {"optimal": opt, "irs": float(engine.irs_costs(space, ra, s).traffic[0, 0]),
            "irs-nointra": float(engine.irs_costs(space, ra, s, intra_stage=False).traffic[0, 0]),
            "unicast": float(engine.unicast_costs(space, ra, s, seed=int(seed[-1])).traffic[0, 0]),
            "kmb": float(2 * (engine.kmb_costs(space, ra, s)[0] - 1)),
            **{a: float(m2_family(space, r, s, a).costs()[0]) for a in ("m2", "mib", "mc")}}
    if plugins:
        from dcnlab.reproduce.aggregation.plugins import plugin_forest
        for name, ref in plugins:     # Forest.costs: the cost of M2's trees above
            cost[name] = float(plugin_forest(space, r, s.tolist(), ref, int(seed[-1])).costs()[0])
    return {"traffic": cost, "seconds": time.perf_counter() - t0}


def _task(part: str, point: Any, rnd: int, seed: int, steiner: str | None = None,
          plugins: Sequence[tuple[str, str]] = ()) -> tuple[str, Any, int, dict[str, Any]]:
    """One round of ``part``; ``steiner``: the Steiner-based reading (default: :data:`DEFAULT_SETTING_003`'s);
    ``plugins``: ``(name, reference)`` of user tree builders, run in the parts
    :data:`dcnlab.reproduce.aggregation.plugins.PARTS` (in a shuffle, one incast tree per receiver)."""
    sd = (seed, PARTS.index(part), int(point), rnd)
    steiner = steiner or DEFAULT_SETTING_003["steiner-baseline"]
    if part == "003-k":
        res = _shuffle_round(6, int(point), 60, sd, (0.0,), SHUFFLE_METHODS, True, steiner, plugins)
    elif part == "003-size":
        res = _shuffle_round(8, 5, int(point), sd, (0.0,), SHUFFLE_METHODS, False, steiner, plugins)
    elif part == "003-delta":
        res = _shuffle_round(8, 5, int(point), sd, DELTAS, ("srs", "unicast"), False)
    elif part == "000-k":
        res = _incast_round(6, int(point), 120, sd, plugins)
    elif part == "000-size":
        res = _incast_round(4, 8, int(point), sd, plugins)
    else:
        n, k = GAP_SPACES[int(point) // 100]
        res = _gap_round(n, k, int(point) % 100, sd, plugins)
    return part, point, rnd, res


# -- driver ----------------------------------------------------------------------------------------------

def run_tasks(tasks: list[tuple[str, Any, int, int]], workers: int | None, progress: bool = True,
              cluster: Any = None) -> list[tuple[str, Any, int, dict[str, Any]]]:
    """Run rounds (largest first) with a progress bar on stderr; the results in the order of ``tasks``.

    They run on ``workers`` local processes or on a Dask ``cluster`` (:func:`dcnlab.sweep.pool.fan_out`,
    default: the enclosing ``with Cluster(...)``); the engine's kernels are compiled (or loaded) first, here
    before the local pool forks, or once in every worker of the cluster."""
    from dcnlab.controller.aggregation import engine
    from dcnlab.sweep.pool import fan_out
    from dcnlab.sweep.progress import Progress

    order = sorted(range(len(tasks)), key=lambda i: -_weight(tasks[i][0], tasks[i][1]))
    out: list[Any] = [None] * len(tasks)
    with Progress(len(tasks), "aggregation rounds", unit="round", enabled=progress) as bar:
        for j, res in fan_out(_task, [tasks[i] for i in order], workers, cluster, warm=engine.warm_up):
            out[order[j]] = res
            bar.update()
    return out


def _weight(part: str, point: Any) -> float:
    p = float(point)
    return {"003-k": 3600.0 * p, "003-size": p * p, "003-delta": 21 * p * p, "000-k": 120.0 * p,
            "gap": 2000.0 * (p % 100)}.get(part, 50 * p)


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def summarise(part: str, rows: list[dict[str, Any]], points: Sequence[Any],
              setting: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Per point and overall means, savings in percent, and each overall figure's standard error over the rounds
    (``overall_se``, :mod:`dcnlab.results.spread`; every point keeps its rounds under ``rounds``). ``setting``:
    the paper's open settings (default :data:`DEFAULT_SETTING_003` for the 003 parts, :data:`DEFAULT_SETTING_000`
    for the 000 parts): one averaging rule for every figure of the paper, how 003 counts aggregating servers, how
    Fig. 6's curve becomes one saving, which IRS 000 compares with."""
    setting = dict(setting or (DEFAULT_SETTING_000 if part.startswith("000") else DEFAULT_SETTING_003))
    by_point: dict[Any, list[dict[str, Any]]] = {p: [] for p in points}
    for row in rows:
        by_point[row["point"]].append(row["result"])
    per_point: dict[str, Any] = {}
    if part in ("003-k", "003-size"):
        mine = shuffle_plugins(next(iter(by_point.values()))[0]["traffic"])
        methods = (*SHUFFLE_METHODS, *mine)
        counting = setting.get("counting", "distinct")
        for p, rs in by_point.items():
            detail = {key: rs[0].get(key) or {} for key in ("links", "aggregators", "aggregators_summed",
                                                            "receiver_input")}
            rounds: dict[str, dict[str, list[float]]] = {
                "traffic": {mth: [r["traffic"][mth][0] for r in rs] for mth in (*methods, "none")}}
            for key, first in detail.items():
                if first:
                    rounds[key] = {mth: [r[key][mth] for r in rs] for mth in first}
            agg_key = "aggregators_summed" if counting == "summed" and "aggregators_summed" in rounds else "aggregators"
            per_point[str(p)] = {
                "saving": {mth: 100 * _mean([1 - r["traffic"][mth][0] / r["traffic"]["none"][0] for r in rs])
                           for mth in methods},
                "traffic": {mth: _mean(xs) for mth, xs in rounds["traffic"].items()},
                "links": {mth: _mean(xs) for mth, xs in rounds.get("links", {}).items()},
                "aggregators": {mth: _mean(xs) for mth, xs in rounds.get(agg_key, {}).items()},
                "receiver_input": {mth: _mean(xs) for mth, xs in rounds.get("receiver_input", {}).items()},
                "seconds": _mean([r["seconds"] for r in rs]), "rounds": rounds}
            if mine:    # a user's builder (plugins.py): below SRS per round, as the savings; its trees' build time
                per_point[str(p)]["below_srs"] = {
                    a: 100 * _mean([1 - r["traffic"][a][0] / r["traffic"]["srs"][0] for r in rs]) for a in mine}
                per_point[str(p)]["plugin_seconds"] = {a: _mean([r["plugin_seconds"][a] for r in rs]) for a in mine}
        overall, overall_se = shuffle_overall(part, per_point, setting, mine)
    elif part == "gap":
        overall, overall_se = {}, {}
        for p, rs in by_point.items():
            n, k = GAP_SPACES[int(p) // 100]
            ratio = {a: _mean([r["traffic"][a] / r["traffic"]["optimal"] for r in rs])
                     for a in rs[0]["traffic"] if a != "optimal"}
            per_point[f"BCube({n},{k}) m={int(p) % 100}"] = {
                "ratio_to_optimum": ratio,
                "m2_worse_than_irs": _mean([float(r["traffic"]["m2"] > r["traffic"]["irs"]) for r in rs]),
                "m2_optimal": _mean([float(r["traffic"]["m2"] == r["traffic"]["optimal"]) for r in rs]),
                "seconds": _mean([r["seconds"] for r in rs])}
        algos = per_point[next(iter(per_point))]["ratio_to_optimum"]
        for a in algos:
            overall[f"{a} / optimum (mean ratio)"] = _mean([v["ratio_to_optimum"][a] for v in per_point.values()])
        overall["m2 worse than irs (share of rounds, %)"] = 100 * _mean(
            [v["m2_worse_than_irs"] for v in per_point.values()])
        overall["m2 optimal (share of rounds, %)"] = 100 * _mean([v["m2_optimal"] for v in per_point.values()])
    elif part == "003-delta":
        for p, rs in by_point.items():
            curves = {mth: [_mean([1 - r["traffic"][mth][i] / r["traffic"]["none"][i] for r in rs])
                            for i in range(len(DELTAS))] for mth in ("srs", "unicast")}
            traffic = {mth: [_mean([r["traffic"][mth][i] for r in rs]) for i in range(len(DELTAS))]
                       for mth in ("srs", "unicast", "none")}
            rounds = {"curve_mean": {
                **{mth: [100 * _trapezoid(DELTAS, [1 - r["traffic"][mth][i] / r["traffic"]["none"][i]
                                                   for i in range(len(DELTAS))]) for r in rs]
                   for mth in ("srs", "unicast")},
                "srs-vs-srs-no-agg": [100 * _trapezoid(DELTAS, [1 - r["traffic"]["srs"][i] / r["traffic"]["srs"][-1]
                                                                for i in range(len(DELTAS))]) for r in rs]},
                "traffic_at_1": {mth: [r["traffic"][mth][-1] for r in rs] for mth in ("srs", "unicast", "none")}}
            per_point[str(p)] = {"deltas": list(DELTAS), "saving_curve": curves, "traffic": traffic,
                                 "seconds": _mean([r["seconds"] for r in rs]), "rounds": rounds}
        overall, overall_se = delta_overall(per_point, setting)
    else:
        keys = ("traffic", "links", "aggregators", "new_servers", "busiest", "receiver_input")
        for p, rs in by_point.items():
            pp: dict[str, Any] = {key: {mth: _mean([r[key][mth] for r in rs]) for mth in rs[0][key]}
                                  for key in keys if key in rs[0]}
            rounds = {key: {mth: [r[key][mth] for r in rs] for mth in rs[0][key]} for key in keys if key in rs[0]}
            if "variants" in rs[0]:     # both IRS readings and both no-aggregation link models, every round
                pp["variants"] = {key: {mth: _mean([r["variants"][key][mth] for r in rs]) for mth in per}
                                  for key, per in rs[0]["variants"].items()}
                for key, per in rs[0]["variants"].items():
                    rounds.setdefault(key, {}).update({mth: [r["variants"][key][mth] for r in rs] for mth in per})
            pp["m2_worse_than_irs"] = _mean([float(r["traffic"]["m2"] > r["traffic"]["irs"]) for r in rs])
            pp["seconds"] = {a: _mean([r["seconds"][a] for r in rs]) for a in rs[0]["seconds"]}
            pp["rounds"] = rounds
            per_point[str(p)] = pp
        overall, overall_se = incast_overall(part, per_point, setting, plugin_names(rs[0]["traffic"]))
    out = {"points": per_point, "overall": overall, "overall_se": overall_se, "paper": PAPER[part]}
    if part != "gap":
        out["setting"] = dict(setting)
    return out


def _saving_figure(pts: Sequence[str], how: str, weights: Sequence[float], method: str, base: str = "none"
                   ) -> Callable[[Callable[[str, str, str], float]], float]:
    """A saving (percent) of ``method`` against ``base`` averaged over ``pts`` by the rule ``how``
    (:data:`AVERAGES`), as a function of a getter of the points' traffic (:mod:`dcnlab.results.spread`)."""
    def figure(get: Callable[[str, str, str], float]) -> float:
        t = [get(p, "traffic", method) for p in pts]
        b = [get(p, "traffic", base) for p in pts]
        if how == "by-traffic":
            return 100 * (1 - sum(t) / sum(b))
        c = [100 * (1 - x / y) for x, y in zip(t, b)]
        return sum(ci * w for ci, w in zip(c, weights)) / sum(weights)
    return figure


def shuffle_overall(part: str, per_point: Mapping[str, Any], setting: Mapping[str, str], mine: Sequence[str] = ()
                    ) -> tuple[dict[str, float], dict[str, float | None]]:
    """The savings of 003-k or 003-size averaged by the paper's one rule (``setting["average"]``: every "on
    average" of 003, Fig. 4(a) and Fig. 5 alike), and their standard errors over the rounds."""
    from dcnlab.results.spread import Rounds

    how = setting.get("average", "plain")
    pts = list(per_point)
    vals = list(per_point.values())
    members = [float(60 if part == "003-k" else int(p)) for p in pts]     # m = n per point
    rounds = Rounds(per_point)
    overall: dict[str, float] = {}
    ses: dict[str, float | None] = {}
    for mth in (*SHUFFLE_METHODS, *mine):
        overall[mth] = average(members, [v["saving"][mth] for v in vals], [v["traffic"][mth] for v in vals],
                               [v["traffic"]["none"] for v in vals], how)
        ses[mth] = rounds.se(_saving_figure(pts, how, _weights(how, members), mth))
    for a in mine:      # a plug-in: averaged as the built-ins' savings (and below SRS's traffic)
        overall[f"{a} saving vs none"], ses[f"{a} saving vs none"] = overall.pop(a), ses.pop(a)
        overall[f"{a} vs srs"] = average(members, [v["below_srs"][a] for v in vals], [v["traffic"][a] for v in vals],
                                         [v["traffic"]["srs"] for v in vals], how)
        ses[f"{a} vs srs"] = rounds.se(_saving_figure(pts, how, _weights(how, members), a, "srs"))
    return overall, ses


def _weights(how: str, members: Sequence[float]) -> list[float]:
    return [2 * m for m in members] if how == "by-members" else [1.0] * len(members)


def delta_overall(per_point: Mapping[str, Any], setting: Mapping[str, str]
                  ) -> tuple[dict[str, float], dict[str, float | None]]:
    """Fig. 6's curves as one saving per size (δ uniform on [0, 1]: the trapezoid mean of the curve), against the
    existing method (``curve-mean``) or, the reading 003 §5.4 rules out, against SRS without aggregation."""
    from dcnlab.results.spread import se

    reading = setting.get("delta-reading", "curve-mean")
    if reading not in ("curve-mean", "vs-srs-no-agg"):
        raise ValueError(f"003 delta reading {reading!r}: the reproduction reads curve-mean or vs-srs-no-agg (the "
                         "others are measured by dcnlab.results.readings)")
    overall: dict[str, float] = {}
    ses: dict[str, float | None] = {}
    for p, v in per_point.items():
        for mth, ys in v["saving_curve"].items():
            overall[f"{mth}@{p}"] = 100 * _trapezoid(DELTAS, ys)
            ses[f"{mth}@{p}"] = se(v["rounds"]["curve_mean"][mth])
        if reading == "vs-srs-no-agg":
            xs = v["rounds"]["curve_mean"]["srs-vs-srs-no-agg"]
            overall[f"srs@{p}"], ses[f"srs@{p}"] = _mean(xs), se(xs)
    return overall, ses


def incast_overall(part: str, per_point: Mapping[str, Any], setting: Mapping[str, str], mine: Sequence[str] = ()
                   ) -> tuple[dict[str, float], dict[str, float | None]]:
    """000's figures over the sweep, averaged by its one rule (``setting["average"]``: each point the same, or
    pooled over the points), with their standard errors over the rounds. ``m2 vs irs`` is against the IRS of
    ``setting["irs-baseline"]``; ``m2 vs irs/<reading>`` against each reading; ``m2 wait vs none/<model>`` the
    waiting time under each of the three models (000 states none, :data:`WAIT_MODELS`)."""
    from dcnlab.results.spread import Rounds

    pooled = setting.get("average", "mean-of-points") == "pooled"
    pts = list(per_point)
    rounds = Rounds(per_point)

    def below(a: str, b: str, key: str = "traffic", cols: Sequence[str] | None = None
              ) -> Callable[[Callable[[str, str, str], float]], float]:
        use = list(cols) if cols is not None else pts

        def figure(get: Callable[[str, str, str], float]) -> float:
            xa, xb = [get(p, key, a) for p in use], [get(p, key, b) for p in use]
            if pooled:
                return 100 * (1 - sum(xa) / sum(xb))
            return 100 * _mean([1 - x / y for x, y in zip(xa, xb)])
        return figure

    def mean_get(p: str, key: str, mth: str) -> float:
        v = per_point[p]
        return v[key][mth] if mth in v.get(key, {}) else v["variants"][key][mth]

    figures: dict[str, Callable[[Callable[[str, str, str], float]], float]] = {
        "m2 vs irs": below("m2", "irs"), "m2 vs unicast": below("m2", "unicast"),
        "m2 saving vs none": below("m2", "none"), "irs saving vs none": below("irs", "none")}
    variants = per_point[pts[0]].get("variants", {})
    for name in IRS_READINGS:
        if name in variants.get("traffic", {}):
            figures[f"m2 vs irs/{IRS_READINGS[name]}"] = below("m2", name)
    if "busiest" in per_point[pts[0]]:      # 000's waiting time over the table's columns, under every model
        cols = [str(c) for c in WAIT_COLUMNS[part] if str(c) in per_point] or pts
        for model, (key, none) in WAIT_MODELS.items():
            if none == "none" or none in variants.get(key, {}):
                figures[f"m2 wait vs none/{model}"] = below("m2", none, key, cols)
    for a in mine:      # a user's builder beside M2 (plugins.py)
        for base in ("irs", "m2", "unicast"):
            figures[f"{a} vs {base}"] = below(a, base)
        figures[f"{a} saving vs none"] = below(a, "none")
    overall = {name: fig(mean_get) for name, fig in figures.items()}
    ses = {name: rounds.se(fig) for name, fig in figures.items()}
    overall["m2 worse than irs (share of rounds)"] = 100 * _mean([v["m2_worse_than_irs"] for v in per_point.values()])
    return overall, ses


IRS_READINGS = {"irs-nointra": "no-intra", "irs-intra": "intra"}
"""000's two readings of its IRS-based baseline (:data:`DEFAULT_SETTING_000`'s ``irs-baseline``), by their names in
a round's ``variants``."""
WAIT_MODELS = {"link-bound": ("busiest", "none-primary"), "link-bound-ecmp": ("busiest", "none-ecmp"),
               "reduce-bound": ("receiver_input", "none")}
"""000's shuffle+reduce waiting time, which the paper gives no model for (its Tables 1 and 2 have no values): each
model as (the key measured, no aggregation's entry); the headline shows every model's figure
(:mod:`dcnlab.controller.aggregation.waiting`)."""


def shuffle_plugins(methods: Any) -> list[str]:
    """The user's builders among a shuffle round's ``methods`` (keys beside :data:`SHUFFLE_NAMES`'s)."""
    return [a for a in methods if a not in SHUFFLE_NAMES]


def plugin_names(methods: Any) -> list[str]:
    """The user's builders among an incast round's ``methods`` (keys beside :data:`INCAST_NAMES`'s)."""
    return [a for a in methods if a not in INCAST_NAMES and a != "optimal"]


def _trapezoid(xs: Sequence[float], ys: Sequence[float]) -> float:
    return sum((xs[i + 1] - xs[i]) * (ys[i] + ys[i + 1]) / 2 for i in range(len(xs) - 1)) / (xs[-1] - xs[0])


SHUFFLE_NAMES = {"srs": "SRS", "incast": "incast-based (IRS)", "kmb": "Steiner (KMB)", "unicast": "unicast-based",
                 "none": "no aggregation"}


INCAST_NAMES = {"m2": "M2-based", "irs": "IRS-based", "mib": "MIB-based", "mc": "MC-based", "unicast": "unicast-based",
                "none": "no aggregation (existing)", "kmb": "Steiner (KMB)", "irs-nointra": "IRS, no intra-stage step"}

FIGURES = {"003-k": "Guo Fig. 4(a)", "003-size": "Guo Fig. 5", "003-delta": "Guo Fig. 6", "000-k": "Fang Fig. 5",
           "000-size": "Fang Fig. 6", "gap": "optimum gap"}
"""The table's first column: the paper's figure each part reproduces (``gap``: no figure in the papers)."""


def _measure(part: str, key: str) -> tuple[str, str]:
    """(measure in words, unit) of one ``overall`` key; a plug-in by its short name (:func:`plugins.label`)."""
    from dcnlab.reproduce.aggregation.plugins import label

    if part in ("003-k", "003-size"):
        if key.endswith(" vs srs"):
            return f"{label(key.removesuffix(' vs srs'))} traffic below SRS", "%"
        if key.endswith(" saving vs none"):
            return f"traffic saving, {label(key.removesuffix(' saving vs none'))}", "%"
        return f"traffic saving, {SHUFFLE_NAMES[key]}", "%"
    if part == "003-delta":
        m, p = key.split("@")
        return f"mean saving over δ, {SHUFFLE_NAMES[m]}, m=n={p}", "%"
    if part == "gap":
        if key.endswith(" / optimum (mean ratio)"):
            a = key.removesuffix(" / optimum (mean ratio)")
            return f"cost / optimum, {INCAST_NAMES.get(a) or label(a)}", "ratio"
        return {"m2 worse than irs (share of rounds, %)": ("rounds where M2 costs more than IRS", "%"),
                "m2 optimal (share of rounds, %)": ("rounds where M2 is optimal", "%")}.get(key, (key, ""))
    for base, words in (("irs", "IRS-based"), ("m2", "M2-based"), ("unicast", "unicast-based")):
        if key.endswith(f" vs {base}") and not key.startswith("m2 vs"):
            return f"{label(key.removesuffix(f' vs {base}'))} traffic below {words}", "%"
    if key.endswith(" saving vs none") and key not in ("m2 saving vs none", "irs saving vs none"):
        return f"{label(key.removesuffix(' saving vs none'))} traffic saving vs none", "%"
    return {"m2 vs irs": ("M2 traffic below IRS-based", "%"),
            "m2 vs unicast": ("M2 traffic below unicast-based", "%"),
            "m2 saving vs none": ("M2 traffic saving vs none", "%"),
            "irs saving vs none": ("IRS traffic saving vs none", "%"),
            "m2 worse than irs (share of rounds)": ("rounds where M2 costs more than IRS", "%"),
            }.get(key, _wait_measure(part, key))


def _wait_measure(part: str, key: str) -> tuple[str, str]:
    if key.startswith("m2 wait vs none/"):
        return (f"shuffle+reduce wait shorter with M2 than none ({key.split('/')[1]} model, Table "
                f"{1 if part == '000-k' else 2} columns)", "%")
    if key.startswith("m2 vs irs/"):
        return f"M2 traffic below IRS-based ({key.split('/')[1]})", "%"
    return key, ""


def table(results: dict[str, Any]) -> str:
    """Our figure beside the paper's, with the tolerance and the verdict of the reports' rule (a percentage
    within ±3 points); rows without a paper figure are ours only."""
    from dcnlab.results.summary import quantile
    from dcnlab.results.tables import Column, number, verdict
    from dcnlab.results.tables import table as format_table

    rows = []
    for part, res in results.items():
        for key, ours in res["overall"].items():
            paper = res["paper"].get(key.split("/")[0] if key.startswith("m2 wait vs none/") else key)
            measure, unit = _measure(part, key)
            se = (res.get("overall_se") or {}).get(key)
            n = res.get("rounds")
            tol, ok = verdict("percent" if unit == "%" else "ratio", ours, paper, spread=se, n=n)
            figure = FIGURES.get(part, part)
            if part == "003-delta":
                figure += {"250": "(a)", "1000": "(b)"}.get(key.split("@")[-1], "")
            rows.append((figure, measure, unit, number(ours), "" if se is None else number(quantile(n) * se),
                         number(paper), tol, ok))
    parts = ", ".join(f"{p} = {FIGURES[p]}" for p in results if p in FIGURES)
    return format_table(
        [Column("figure"), Column("measure", wrap=True), Column("unit"), Column("ours", align=">"),
         Column("±95%", align=">"), Column("paper", align=">"), Column("tolerance"), Column("verdict")], rows,
        label_columns=2,
        notes=["Guo: Guo et al. (IRS/SRS); Fang: Fang et al. (M2). ±95%: Student's t standard errors over the rounds. "
               "Verdict: a percentage within ±3 points of the paper's, a ratio within 10%, over the whole 95% "
               "interval (across an edge: unstable); '-': the paper gives no figure.", f"--only parts: {parts}"])


def collect(parts: Sequence[str], pl: dict[str, Plan], done: list[tuple[str, Any, int, dict[str, Any]]]
            ) -> dict[str, Any]:
    """The results of the rounds ``done`` (from :func:`run_tasks`), per part: :func:`summarise` and the rounds."""
    results: dict[str, Any] = {}
    for part in parts:
        rows = [{"point": p, "round": r, "result": res} for (pt, p, r, res) in done if pt == part]
        results[part] = summarise(part, rows, pl[part].points)
        results[part]["rounds"] = pl[part].rounds
    return results


# -- benchmark -----------------------------------------------------------------------------------------


def dataplane_missing(tools: Sequence[str] = ("simple_switch_grpc", "p4c")) -> list[str]:
    """Why BMv2 runs (the benchmark's node, ``--emulate``) cannot happen here (empty: they can);
    :func:`dcnlab.emu.preflight.problems`."""
    from dcnlab.emu import preflight

    return preflight.problems(tools, root=True)


AVERAGES = {"plain": "each point weighs the same",
            "by-members": "each point weighted by its members m + n",
            "by-traffic": "pooled: 1 - sum(traffic) / sum(no aggregation), i.e. weighted by traffic"}


def average(points: Sequence[float], curve: Sequence[float], traffic: Sequence[float], none: Sequence[float],
            how: str) -> float:
    """One of :data:`AVERAGES` of a saving curve (percent) over the sweep's points."""
    import numpy as np

    m = np.asarray(points, dtype=float)
    c = np.asarray(curve, dtype=float)
    if how == "plain":
        return float(c.mean())
    if how == "by-members":
        return float((c * 2 * m).sum() / (2 * m).sum())
    if how == "by-traffic":
        return 100 * (1 - float(np.sum(traffic)) / float(np.sum(none)))
    raise ValueError(f"average {how!r}; valid: {', '.join(AVERAGES)}")
