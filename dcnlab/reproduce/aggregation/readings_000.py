"""M2 (Fang et al., 000): readings of "M2 saves about 19% vs IRS across sender counts".

The paper's abstract gives two figures from "small-scale experiments": M2 saves about 3% of
the network's data against IRS-based across network sizes (§5.2: 120 senders on BCube(6,k), k = 2..8,
100 runs) and about 19% across sender counts (§5.3: m = 100..4,000 on BCube(4,8)). The body never
quotes them; §5.3's text and Fig. 6 compare M2 only with unicast and the existing method, and Table 2
(shuffle+reduce time) has columns 1000, 1500, 2000 and 3000. The readings of "saves about 19% against
IRS-based across sender counts" (headline ``000-size-m2-vs-irs``):

* ``mean-of-points`` (pre-registered, ``DEFAULT_SETTING_000``): ``1 - M2 / IRS`` per point (mean traffic over the rounds), averaged
  over the 40 points, each the same;
* ``pooled``: ``1 - sum(M2) / sum(IRS)`` over all points (weighted by traffic);
* ``table-2-columns``: the mean over m = 1000, 1500, 2000, 3000 only;
* ``irs-no-intra`` / ``irs-intra``: against the other IRS than the reproduction's, without or with Guo et al.'s
  intra-stage step (Fang et al., §2.2, describes IRS-based as adjusting "the same dimension of the previous layer's
  nodes", and never mentions the step);
* ``vs-unicast``: against the unicast-based tree (what §5.3 and Fig. 6 actually compare M2 with);
* ``points-of-saving``: the difference of the two savings against no aggregation, in points
  (``saving(M2) - saving(IRS)``), instead of a relative reduction.

The same readings of the network-size figure (``000-k-m2-vs-irs``, 3%) are reported beside them, since
one reading should explain both (``table-1-columns``: k = 2..6, Table 1's columns).

The waiting-time headlines (``000-k-wait``, 2/3 shorter; ``000-size-wait``, 3/4 shorter; Tables 1 and 2,
whose values the text lacks) are read from the same rounds, over the tables' columns, in the models of
:mod:`dcnlab.controller.aggregation.waiting` (000 gives no model, so none is pre-registered: every model is
marked and its headline is not judged): ``link-bound`` (the busiest directed link's
units, no aggregation on primary BCubeRouting paths), ``link-bound-ecmp`` (no aggregation spread evenly
over the receiver's k+1 links, the best multipath case) and ``reduce-bound`` (the receiver's input).

Members are drawn as ``dcnlab reproduce aggregation`` draws them (same seeds: its default seed :data:`SEED` and
the next ones, the rounds shared out among :data:`run_plans.SEEDS` replications, :func:`run_plans.split`),
against the IRS it runs (``DEFAULT_SETTING_000``'s ``irs-baseline``), over its points and rounds
(``run_plans.aggregation_plans``: 100 on BCube(6,k), 10 per point on BCube(4,8)), so the starred reading is the
headline's figure. ``quick``: ``reproduce all --quick``'s plan (every point of the full run, fewer rounds on
BCube(4,8)), the run these readings are part of, so there too the starred reading is the headline's figure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from dcnlab.reproduce.aggregation import run_plans
from dcnlab.results.readings import Reading

SEED = 1
"""``dcnlab reproduce aggregation``'s default ``--seed``: the readings draw the members the headlines were measured
on, so the starred reading reproduces its headline's figure (same setting, seed, points and rounds)."""
PART = {"000-k": 3, "000-size": 4}                # aggregation_model.PARTS indices (same draws)
PAPER = {"000-size": 19.0, "000-k": 3.0}
ALGOS = ("m2", "irs", "irs-nointra", "unicast", "none")
TABLE_2 = (1000, 1500, 2000, 3000)
TABLE_1 = (2, 3, 4, 5, 6)


def _draw(N: int, count: int, seed: Sequence[int]) -> np.ndarray:
    return np.random.default_rng(list(seed)).choice(N, size=count, replace=False)


def _task(n: int, k: int, m: int, seed: tuple[int, ...]) -> dict[str, float]:
    """Traffic of M2, IRS (with and without the intra-stage step), unicast and none for one incast."""
    from dcnlab.controller.aggregation import engine
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.controller.aggregation.mib import m2_family
    from dcnlab.controller.aggregation.waiting import busiest_link, none_busiest

    space = LabelSpace(n, k)
    pick = _draw(space.N, m + 1, seed)
    r, s = pick[:1], pick[1:]
    m2 = m2_family(space, int(r[0]), s, "m2")
    return {"m2": float(m2.costs()[0]),
            "irs": float(engine.irs_costs(space, r, s).traffic[0, 0]),
            "irs-nointra": float(engine.irs_costs(space, r, s, intra_stage=False).traffic[0, 0]),
            "unicast": float(engine.unicast_costs(space, r, s, seed=int(seed[-1])).traffic[0, 0]),
            "none": float(2 * space.layer(space.relabel(s, int(r[0]))).sum()),
            # the waiting-time readings (:mod:`dcnlab.controller.aggregation.waiting`)
            "busiest:m2": float(busiest_link(m2)[0]),
            "busiest:none": float(none_busiest(space, int(r[0]), s)),
            "busiest:none-ecmp": float(none_busiest(space, int(r[0]), s, spread=True)),
            "input:m2": float(m2.receiver_input()[0]), "input:none": float(m)}


@lru_cache(maxsize=4)
def _sweep(part: str, quick: bool, workers: int) -> tuple[dict[int, dict[str, float]], float, int, str]:
    """Mean traffic per point and algorithm, the wall time, the rounds and what ran (fabric, senders, points)."""
    from dcnlab.controller.aggregation import engine
    from dcnlab.sweep.pool import run_all

    plan = run_plans.aggregation_plans("quick" if quick else "full")[part]    # reproduce all's points and rounds
    points, rounds = tuple(plan.points), plan.rounds
    n, k_of = (6, None) if part == "000-k" else (4, 8)
    tasks = [(n, (p if k_of is None else k_of), (120 if k_of is None else p), (sd, PART[part], p, rnd))
             for p in sorted(points, reverse=True) for sd, each in run_plans.seed_rounds(SEED, rounds)
             for rnd in range(each)]
    t0 = time.perf_counter()
    res = run_all(_task, tasks, workers, warm=engine.warm_up)
    wall = time.perf_counter() - t0
    acc: dict[int, list[dict[str, float]]] = {}
    for t, r in zip(tasks, res):
        acc.setdefault(t[3][2], []).append(r)
    mean = {p: {a: float(np.mean([r[a] for r in acc[p]])) for a in acc[p][0]} for p in points}
    pts = sorted(acc)
    ks, ms = sorted({t[1] for t in tasks}), sorted({t[2] for t in tasks})
    ran = (f"{ms[0]} senders, BCube({n},k), k={_span(ks)}" if len(ms) == 1 else
           f"BCube({n},{ks[0]}), m={_span(ms)}" if len(ks) == 1 else f"BCube({n},k), k={_span(ks)}, m={_span(ms)}")
    return mean, wall, rounds, f"{ran} ({len(pts)} points)"


def _span(xs: Sequence[int]) -> str:
    return f"{xs[0]}" if len(xs) == 1 else f"{xs[0]}..{xs[-1]}"


def _relative(mean: dict[int, dict[str, float]], points: Sequence[int], base: str) -> float:
    return 100 * float(np.mean([1 - mean[p]["m2"] / mean[p][base] for p in points]))


def _values(mean: dict[int, dict[str, float]], columns: Sequence[int],
            irs: str = "irs") -> dict[str, tuple[float, str]]:
    """The readings against the IRS the reproduction runs (``irs``: ``irs`` with 003's intra-stage step,
    ``irs-nointra`` as 000 describes it), and the other IRS as a reading of its own."""
    pts = list(mean)
    cols = [p for p in columns if p in mean]
    other = "irs" if irs == "irs-nointra" else "irs-nointra"
    return {
        "mean-of-points": (_relative(mean, pts, irs), "1 - M2/IRS per point, points averaged equally"),
        "pooled": (100 * (1 - sum(mean[p]["m2"] for p in pts) / sum(mean[p][irs] for p in pts)),
                   "1 - sum(M2)/sum(IRS) over all points (traffic-weighted)"),
        "columns": (_relative(mean, cols, irs) if cols else float("nan"), ""),
        ("irs-intra" if other == "irs" else "irs-no-intra"): (
            _relative(mean, pts, other), "against IRS with 003's intra-stage step (000 never mentions it)"
            if other == "irs" else "against IRS without 003's intra-stage step (000 describes IRS without it)"),
        "vs-unicast": (_relative(mean, pts, "unicast"), "against unicast-based (what §5.3 / Fig. 6 compare M2 with)"),
        "points-of-saving": (100 * float(np.mean([(mean[p]["irs"] - mean[p]["m2"]) / mean[p]["none"] for p in pts])),
                             "saving(M2) - saving(IRS) against no aggregation, in points"),
    }


WAIT_PAPER = {"000-k": 100 * 2 / 3, "000-size": 75.0}
"""000's abstract: shuffle+reduce wait about 2/3 shorter across network sizes, 3/4 across sender counts."""


def _wait_values(mean: dict[int, dict[str, float]], columns: Sequence[int]) -> dict[str, tuple[float, str]]:
    """The waiting-time readings over the table's columns (Table 1: k = 2..6; Table 2: 1000..3000 senders)."""
    cols = [p for p in columns if p in mean] or list(mean)

    def saved(a: str, b: str) -> float:
        return 100 * float(np.mean([1 - mean[p][a] / mean[p][b] for p in cols]))

    return {
        "link-bound": (saved("busiest:m2", "busiest:none"),
                       "1 - busiest link (M2) / busiest link (none, primary BCubeRouting paths)"),
        "link-bound-ecmp": (saved("busiest:m2", "busiest:none-ecmp"),
                            "as link-bound, no aggregation spread evenly over the receiver's k+1 links"),
        "reduce-bound": (saved("input:m2", "input:none"),
                         "1 - data arriving at the receiver (M2) / (none): the reducer's input bounds the wait"),
    }


def readings(quick: bool, workers: int) -> list[Reading]:
    from dcnlab.reproduce.aggregation.model import (
        DEFAULT_SETTING_000 as chosen,  # 000's pre-registered setting (open_settings)
    )

    workers = max(1, workers or os.cpu_count() or 1)
    out: list[Reading] = []
    for part, columns, table, var in (("000-size", TABLE_2, 2, "m"), ("000-k", TABLE_1, 1, "k")):
        mean, wall, rounds, ran = _sweep(part, quick, workers)
        setting = f"{ran}, {rounds} rounds; {wall:.0f} s wall"
        cols = [p for p in columns if p in mean]
        absent = [p for p in columns if p not in mean]
        col_desc = (f"mean over {var} = {', '.join(map(str, cols)) or 'none'} (Table {table}'s columns"
                    + (f"; {', '.join(map(str, absent))} not run)" if absent else ")"))
        irs = "irs-nointra" if chosen["irs-baseline"] == "no-intra" else "irs"
        for name, (value, desc) in _values(mean, columns, irs).items():
            if name == "columns":
                name, desc = f"table-{table}-columns", col_desc
            default = ("table-1-columns" if part == "000-k" and chosen["k-sweep"] == "2..6" else
                       "table-2-columns" if part == "000-size" and chosen["sender-sweep"] == "table-2" else
                       chosen["average"])
            out.append(Reading(f"{part}-m2-vs-irs", name, desc, value, PAPER[part], "%", name == default, setting))
        over = (f"; over {var} = {', '.join(map(str, cols))} (Table {table}'s columns"
                + (f"; {', '.join(map(str, absent))} not run)" if absent else ")") if cols
                else f"; over every {var} run (none of Table {table}'s columns ran)")
        for name, (value, desc) in _wait_values(mean, columns).items():
            out.append(Reading(f"{part}-wait", name, desc + over + " (000 gives no model: the headline shows every "
                               "model's figure)", value, WAIT_PAPER[part], "%", True, setting))
    return out
