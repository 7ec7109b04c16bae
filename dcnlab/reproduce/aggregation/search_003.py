"""The sensitivity run of 003's open settings (IRS/SRS shuffles, :mod:`dcnlab.report.search`).

The reproduction runs 003's pre-registered setting (:mod:`dcnlab.results.open_settings`, each value fixed from
003's text alone: one KMB tree per receiver (``kmb``), Fig. 6's curve averaged over δ (``curve-mean``), each point
of a sweep weighing the same (``plain``), aggregating servers counted once (``distinct``)). This module runs every
other admissible reading, one setting at a time with the rest pre-registered (:attr:`Search003.preregistered`):
the other Steiner-based trees of :mod:`dcnlab.controller.aggregation.steiner_readings`, the other readings of "δ
uniform on [0,1]" (:mod:`dcnlab.controller.aggregation.ratio_readings`), the averages ``by-members`` and
``by-traffic`` and the ``summed`` count (the readings 003's text rules out, :attr:`OpenSetting.contradicts`, never
run). A headline whose verdict changes under one of them depends on that setting (the headline table says so);
the counts are the pre-registered setting's. Random: the Steiner readings in random digit order and δ drawn per
job (each over the draws; draw ``d`` seeds the path order with ``round + 1000 (d - 1)`` and the δ draw with
``(seed, m, round, 99, d)``).

What runs (the note of the table says it too):

* the reproduction's rounds of parts ``003-k``, ``003-size`` and ``003-delta`` as ``reproduce aggregation``
  runs them (:func:`dcnlab.reproduce.aggregation.model._task`, seed 1, the same members round for
  round): every statement under the pre-registered readings, the averages and the counts;
* the other Steiner readings on the same members, fewer rounds (:data:`STEINER_ROUNDS`): 20 per k on
  BCube(6,k) (the reproduction: 100) and **one per point** on BCube(8,5) (every point m = n = 50..1500;
  the reproduction: 20): at hundreds of members a round's saving varies by tenths of a percent;
* the other δ readings, 3 rounds at m = n = 250 and 1000 (the reproduction's curve: 20).

A reading other than the pre-registered one is judged on its own rounds; the pre-registered one's figure is the
reproduction's. The statements are 003's headlines (:func:`dcnlab.reproduce.aggregation.headlines.aggregation`,
IRS/SRS (Guo et al.)).
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from dcnlab.results.summary import Headline

SEED = 1
"""``reproduce aggregation``'s default seed (the members of every round)."""
PARTS = ("003-k", "003-size", "003-delta")
STEINER_ROUNDS = {"003-k": 20, "003-size": 1}
QUICK_STEINER_ROUNDS = {"003-k": 3, "003-size": 1}
DELTA_ROUNDS, QUICK_DELTA_ROUNDS = 3, 1
RANDOM_STEINER = ("kmb-random-order", "kmb-random-order-member-agg")
DEFAULT_STEINER, DEFAULT_DELTA = "kmb", "curve-mean"
BASE = {"steiner-baseline": DEFAULT_STEINER, "delta-reading": DEFAULT_DELTA, "average": "plain", "counting": "distinct"}
"""The pre-registered setting (:mod:`dcnlab.results.open_settings`, a test checks it): the rounds of ``std`` tasks
are built with the engine's KMB trees (one per receiver) and the other Steiner readings are measured on the same
members."""


def plans(quick: bool) -> dict[str, Any]:
    from dcnlab.reproduce.aggregation import model as am

    p = am.plans(quick, None)
    return {part: p[part] for part in PARTS}


def _members(part: str, point: int, rnd: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """The space, senders and receivers of one round, drawn as ``aggregation_model._task`` draws them."""
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.reproduce.aggregation import model as am

    n, k, m = {"003-k": (6, point, 60), "003-size": (8, 5, point), "003-delta": (8, 5, point)}[part]
    space = LabelSpace(n, k)
    pick = am._draw(space.N, 2 * m, (SEED, am.PARTS.index(part), int(point), rnd))
    return space, pick[m:], pick[:m]


def steiner_round(part: str, point: int, rnd: int, reading: str, draw: int) -> dict[str, float]:
    """One Steiner reading on one round: its traffic, and (BCube(6,k)) its distinct aggregating servers."""
    from dcnlab.controller.aggregation.steiner_readings import steiner_costs

    space, senders, receivers = _members(part, point, rnd)
    detail = part == "003-k"
    c = steiner_costs(space, senders, receivers, reading, seed=rnd + 1000 * (draw - 1), detail=detail)
    out = {"traffic": float(c.traffic.sum())}
    if detail:
        out["aggregators"] = float(c.aggregator_servers or 0)
        out["aggregators_summed"] = float(c.aggregators.sum())
    return out


def delta_round(m: int, rnd: int, draw: int) -> dict[str, float]:
    """The δ readings on one round of 003-delta (draw 1: every reading; later draws: the random one)."""
    from dcnlab.controller.aggregation.ratio_readings import (
        READINGS,
        saving,
        srs_subgraph,
    )

    space, senders, receivers = _members("003-delta", m, rnd)
    sub = srs_subgraph(space, senders, receivers)
    depth = sub.forest.depth()
    names = [n for n in READINGS if n != DEFAULT_DELTA and (draw == 1 or n == "per-job")]
    return {n: saving(sub, n, np.random.default_rng([SEED, m, rnd, 99, draw]), seed=rnd, depth=depth) for n in names}


def _t(task: Hashable) -> tuple[Any, ...]:
    return tuple(task)  # type: ignore[arg-type]


def _mean(xs: list[float]) -> float:
    return float(np.mean(xs)) if xs else float("nan")


class Search003:
    paper = "003"
    preregistered = True
    """The setting is 003's pre-registered one; the others run as sensitivity readings (never chosen by a count)."""

    def __init__(self) -> None:
        self._fixed: list[Headline] | None = None

    @staticmethod
    def warm() -> None:
        from dcnlab.reproduce.aggregation.readings_003 import _warm

        _warm()

    def is_random(self, setting: Mapping[str, str]) -> bool:
        return setting["steiner-baseline"] in RANDOM_STEINER or setting["delta-reading"] == "per-job"

    def tasks(self, setting: Mapping[str, str], draw: int, quick: bool) -> list[Hashable]:
        out: list[Hashable] = [("std", part, int(pt), r, quick) for part, p in plans(quick).items()
                               for pt in p.points for r in range(p.rounds)]
        steiner = setting["steiner-baseline"]
        if steiner != DEFAULT_STEINER:
            d = draw if steiner in RANDOM_STEINER else 1
            rounds = QUICK_STEINER_ROUNDS if quick else STEINER_ROUNDS
            out += [("steiner", part, int(pt), r, steiner, d) for part in ("003-k", "003-size")
                    for pt in plans(quick)[part].points for r in range(rounds[part])]
        delta = setting["delta-reading"]
        if delta not in (DEFAULT_DELTA, "vs-srs-no-agg"):
            d = draw if delta == "per-job" else 1
            out += [("delta", int(m), r, d) for m in plans(quick)["003-delta"].points
                    for r in range(QUICK_DELTA_ROUNDS if quick else DELTA_ROUNDS)]
        return out

    def run(self, task: Hashable) -> Any:
        t = _t(task)
        if t[0] == "std":
            from dcnlab.reproduce.aggregation import model as am

            res = am._task(t[1], t[2], t[3], SEED, DEFAULT_STEINER)[3]
            return {k: v for k, v in res.items() if k not in ("seconds", "cpu_seconds")}
        if t[0] == "steiner":
            return steiner_round(*t[1:])
        return delta_round(*t[1:])

    def seconds(self, task: Hashable) -> float:
        t = _t(task)
        if t[0] == "delta":
            return 12.0 * (t[1] / 1000) ** 2
        if t[0] == "steiner":
            return 0.03 if t[1] == "003-k" else 2.7 * (t[2] / 1500) ** 2
        return {"003-k": 0.07, "003-size": 1.2 * (t[2] / 1500) ** 2, "003-delta": 1.2 * (t[2] / 1000) ** 2}[t[1]]

    def _summaries(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> dict[str, Any]:
        """``reproduce aggregation``'s summaries of the three parts under ``setting``."""
        from dcnlab.reproduce.aggregation import model as am
        from dcnlab.results.spread import se

        quick = any(_t(t)[0] == "std" and _t(t)[4] for t in results)
        pl = plans(quick)
        std = {_t(t)[1:4]: r for t, r in results.items() if _t(t)[0] == "std"}
        steiner, delta = setting["steiner-baseline"], setting["delta-reading"]
        base = dict(setting, **{"steiner-baseline": DEFAULT_STEINER,
                                "delta-reading": delta if delta in ("curve-mean", "vs-srs-no-agg") else DEFAULT_DELTA})
        out: dict[str, Any] = {}
        for part, p in pl.items():
            rows = [{"point": pt, "round": r, "result": dict(std[(part, int(pt), r)], seconds=0.0)} for pt in p.points
                    for r in range(p.rounds)]
            out[part] = am.summarise(part, rows, p.points, base)
            out[part]["rounds"] = p.rounds
            out[part]["setting"] = dict(setting)
        # Steiner: the reading's savings, aggregators and rounds on its own rounds (the same members as std's first)
        if steiner != DEFAULT_STEINER:
            d = draw if steiner in RANDOM_STEINER else 1
            agg = "aggregators_summed" if setting.get("counting") == "summed" else "aggregators"
            for part in ("003-k", "003-size"):
                for pt, v in out[part]["points"].items():
                    got = [(r, results[("steiner", part, int(pt), r, steiner, d)]) for r in range(pl[part].rounds)
                           if ("steiner", part, int(pt), r, steiner, d) in results]
                    v["saving"]["kmb"] = 100 * _mean([1 - g["traffic"] / std[(part, int(pt), r)]["traffic"]["none"][0]
                                                      for r, g in got])
                    v["traffic"]["kmb"] = _mean([g["traffic"] for _, g in got])
                    rd = v["rounds"]
                    rd["traffic"]["kmb"] = [g["traffic"] for _, g in got]
                    if part == "003-k":
                        for key in ("aggregators", "aggregators_summed"):
                            rd[key]["kmb"] = [g.get(key, float("nan")) for _, g in got]
                        v["aggregators"]["kmb"] = _mean(rd[agg]["kmb"])
                overall, ses = am.shuffle_overall(part, out[part]["points"], setting)
                out[part]["overall"].update(overall)
                out[part]["overall_se"].update(ses)
        # δ: the other readings of "δ uniform", each on its own rounds (against the existing method)
        pd = out["003-delta"]
        if delta not in (DEFAULT_DELTA, "vs-srs-no-agg"):
            d = draw if delta == "per-job" else 1
            for m in pd["points"]:
                dgot = [100 * results[("delta", int(m), r, d)][delta] for r in range(DELTA_ROUNDS)
                        if ("delta", int(m), r, d) in results]
                pd["overall"][f"srs@{m}"], pd["overall_se"][f"srs@{m}"] = _mean(dgot), se(dgot)
        return out

    def _fixed_headlines(self) -> list[Headline]:
        """The statements no setting changes that cost time to build (Table 2's Bloom filters: a Monte Carlo)."""
        if self._fixed is None:
            from dcnlab.reproduce.aggregation.headlines import (
                _bloom_003,  # before headlines() patches it
            )

            self._fixed = _bloom_003()
        return copy.deepcopy(self._fixed)

    def headlines(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> list[Headline]:
        from unittest import mock

        from dcnlab.reproduce.aggregation import headlines

        parts = self._summaries(setting, draw, results)
        self._fixed_headlines()
        with mock.patch.object(headlines, "_bloom_003", self._fixed_headlines):
            heads = headlines.aggregation(parts, None, _worked(), sensitivity=False)
        return [h for h in heads if h.seed == "003"]

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        pl = plans(quick)
        sr = QUICK_STEINER_ROUNDS if quick else STEINER_ROUNDS
        dr = QUICK_DELTA_ROUNDS if quick else DELTA_ROUNDS
        size = pl["003-size"].points
        return {"note": (f"the reproduction's rounds (seed {SEED}; BCube(6,k) {pl['003-k'].rounds} per k, BCube(8,5) "
                         f"m = n = {size[0]}..{size[-1]} ({len(size)} points) {pl['003-size'].rounds} per point, δ "
                         f"{pl['003-delta'].rounds} per size) judge the pre-registered readings (kmb, curve-mean, "
                         f"plain, distinct), the other averages and counts; the other Steiner readings ran on the same members at a reduced scale, "
                         f"{sr['003-k']} rounds per k on BCube(6,k) and {sr['003-size']} per point on BCube(8,5) "
                         f"(all {len(size)} points), the other δ readings {dr} rounds per size: the Steiner readings "
                         f"at the reproduction's 20 rounds per point would take hours of CPU")}


@lru_cache(maxsize=1)
def _worked() -> dict[str, Any]:
    from dcnlab.reproduce.aggregation import headlines

    return headlines.bcube41_examples()
