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

What runs (the note of the table says it too), every round at the seed ``reproduce all`` gives it: a part's rounds
are shared out among the seeds 1, 2 and 3 (:mod:`~.search_seeds`; 100 rounds are 34 + 33 + 33), the figures are
over the pooled rounds and each seed's figure is judged beside them (:func:`dcnlab.results.summary.over_seeds`),
as the headlines are:

* ``reproduce all``'s rounds of parts ``003-k``, ``003-size`` and ``003-delta``
  (:func:`dcnlab.reproduce.aggregation.model._task`: 100 per k, 20 per m = n, 20 per δ curve; ``--quick`` its
  quick plan): every statement under the pre-registered readings, the averages and the counts; so the
  pre-registered row of every headline is the headline's figure (same setting, seeds, points and rounds);
* the other Steiner readings on the same members, fewer rounds (:data:`STEINER_ROUNDS`): 20 per k on
  BCube(6,k) (7 + 7 + 6 over the seeds; the reproduction: 100) and **one per point** on BCube(8,5) (every point
  m = n = 50..1500, at seed 1 alone: a round is shared out like the reproduction's, and one round is one seed's;
  the reproduction: 20): at hundreds of members a round's saving varies by tenths of a percent;
* the other δ readings, 3 rounds at m = n = 250 and 1000 (one per seed; the reproduction's curve: 20).

A reading other than the pre-registered one is judged on its own rounds; the pre-registered one's figure is the
reproduction's. The statements are 003's headlines (Guo et al., IRS/SRS:
:func:`dcnlab.reproduce.aggregation.headlines.aggregation`).
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from dcnlab.reproduce.aggregation import search_seeds
from dcnlab.results.summary import Headline

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
    """``reproduce all``'s plans of 003's parts (points and rounds)."""
    return search_seeds.plans(PARTS, quick)


def _members(part: str, point: int, rnd: int, seed: int = search_seeds.SEED) -> tuple[Any, np.ndarray, np.ndarray]:
    """The space, senders and receivers of one round, drawn as ``aggregation_model._task`` draws them."""
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.reproduce.aggregation import model as am

    n, k, m = {"003-k": (6, point, 60), "003-size": (8, 5, point), "003-delta": (8, 5, point)}[part]
    space = LabelSpace(n, k)
    pick = am._draw(space.N, 2 * m, (seed, am.PARTS.index(part), int(point), rnd))
    return space, pick[m:], pick[:m]


def steiner_round(part: str, point: int, rnd: int, seed: int, reading: str, draw: int) -> dict[str, float]:
    """One Steiner reading on one round: its traffic, and (BCube(6,k)) its distinct aggregating servers."""
    from dcnlab.controller.aggregation.steiner_readings import steiner_costs

    space, senders, receivers = _members(part, point, rnd, seed)
    detail = part == "003-k"
    c = steiner_costs(space, senders, receivers, reading, seed=rnd + 1000 * (draw - 1), detail=detail)
    out = {"traffic": float(c.traffic.sum())}
    if detail:
        out["aggregators"] = float(c.aggregator_servers or 0)
        out["aggregators_summed"] = float(c.aggregators.sum())
    return out


def delta_round(m: int, rnd: int, seed: int, draw: int) -> dict[str, float]:
    """The δ readings on one round of 003-delta (draw 1: every reading; later draws: the random one)."""
    from dcnlab.controller.aggregation.ratio_readings import (
        READINGS,
        saving,
        srs_subgraph,
    )

    space, senders, receivers = _members("003-delta", m, rnd, seed)
    sub = srs_subgraph(space, senders, receivers)
    depth = sub.forest.depth()
    names = [n for n in READINGS if n != DEFAULT_DELTA and (draw == 1 or n == "per-job")]
    return {n: saving(sub, n, np.random.default_rng([seed, m, rnd, 99, draw]), seed=rnd, depth=depth) for n in names}


def _t(task: Hashable) -> tuple[Any, ...]:
    return tuple(task)  # type: ignore[arg-type]


def _mean(xs: list[float]) -> float:
    vals = [x for x in xs if np.isfinite(x)]
    return float(np.mean(vals)) if vals else float("nan")


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
        """``("std", part, point, round, seed, quick)``: every round of ``reproduce all``'s parts; a Steiner or δ
        reading's own rounds, ``("steiner", part, point, round, seed, reading, draw)``, ``("delta", m, round, seed,
        draw)``."""
        pl = plans(quick)
        out: list[Hashable] = [("std", part, int(pt), r, sd, quick) for part, p in pl.items()
                               for sd, r in search_seeds.seeded(p.rounds) for pt in p.points]
        steiner = setting["steiner-baseline"]
        if steiner != DEFAULT_STEINER:
            d = draw if steiner in RANDOM_STEINER else 1
            rounds = QUICK_STEINER_ROUNDS if quick else STEINER_ROUNDS
            out += [("steiner", part, int(pt), r, sd, steiner, d) for part in ("003-k", "003-size")
                    for pt in pl[part].points for sd, r in search_seeds.seeded(rounds[part])]
        delta = setting["delta-reading"]
        if delta not in (DEFAULT_DELTA, "vs-srs-no-agg"):
            d = draw if delta == "per-job" else 1
            out += [("delta", int(m), r, sd, d) for m in pl["003-delta"].points
                    for sd, r in search_seeds.seeded(QUICK_DELTA_ROUNDS if quick else DELTA_ROUNDS)]
        return out

    def run(self, task: Hashable) -> Any:
        t = _t(task)
        if t[0] == "std":
            from dcnlab.reproduce.aggregation import model as am

            res = am._task(t[1], t[2], t[3], t[4], DEFAULT_STEINER)[3]
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

    def _summaries(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any],
                   seed: int | None = None) -> dict[str, Any]:
        """``reproduce aggregation``'s summaries of the three parts under ``setting``, over the pooled rounds
        (``seed`` None) or one seed's rounds alone (a part without a round at ``seed`` left out)."""
        from dcnlab.reproduce.aggregation import model as am
        from dcnlab.results.spread import se

        quick = any(_t(t)[0] == "std" and _t(t)[5] for t in results)
        pl = plans(quick)
        std = {_t(t)[1:5]: r for t, r in results.items() if _t(t)[0] == "std"}
        steiner, delta = setting["steiner-baseline"], setting["delta-reading"]
        base = dict(setting, **{"steiner-baseline": DEFAULT_STEINER,
                                "delta-reading": delta if delta in ("curve-mean", "vs-srs-no-agg") else DEFAULT_DELTA})

        def mine(rounds: int) -> list[tuple[int, int]]:
            """(seed, round) of ``rounds`` rounds, as the reproduction pools them, at ``seed`` alone if given."""
            return [(sd, r) for sd, r in search_seeds.seeded(rounds) if seed in (None, sd)]

        out: dict[str, Any] = {}
        for part, p in pl.items():
            if not mine(p.rounds):
                continue
            rows = [{"point": pt, "round": r, "result": dict(std[(part, int(pt), r, sd)], seconds=0.0)}
                    for pt in p.points for sd, r in mine(p.rounds)]
            out[part] = am.summarise(part, rows, p.points, base)
            out[part]["rounds"] = len(mine(p.rounds))
            out[part]["setting"] = dict(setting)
        # Steiner: the reading's savings, aggregators and rounds on its own rounds (the same members as std's), each
        # round's figures in the place of its std round (NaN where the reading has no round), so that a figure's
        # spread pairs the reading with its own round's other methods
        if steiner != DEFAULT_STEINER:
            d = draw if steiner in RANDOM_STEINER else 1
            agg = "aggregators_summed" if setting.get("counting") == "summed" else "aggregators"
            for part in ("003-k", "003-size"):
                if part not in out:
                    continue
                order = mine(pl[part].rounds)
                for pt, v in out[part]["points"].items():
                    got = {(sd, r): g for sd, r in order
                           if (g := results.get(("steiner", part, int(pt), r, sd, steiner, d))) is not None}
                    none = {(sd, r): std[(part, int(pt), r, sd)]["traffic"]["none"][0] for sd, r in got}
                    v["saving"]["kmb"] = 100 * _mean([1 - g["traffic"] / none[sr] for sr, g in got.items()])
                    v["traffic"]["kmb"] = _mean([g["traffic"] for g in got.values()])
                    rd = v["rounds"]
                    rd["traffic"]["kmb"] = [got[sr]["traffic"] if sr in got else float("nan") for sr in order]
                    if part == "003-k":
                        for name in ("aggregators", "aggregators_summed"):
                            rd[name]["kmb"] = [got[sr].get(name, float("nan")) if sr in got else float("nan")
                                               for sr in order]
                        v["aggregators"]["kmb"] = _mean(rd[agg]["kmb"])
                overall, ses = am.shuffle_overall(part, out[part]["points"], setting)
                out[part]["overall"].update(overall)
                out[part]["overall_se"].update(ses)
        # δ: the other readings of "δ uniform", each on its own rounds (against the existing method)
        pd = out.get("003-delta")
        if pd is not None and delta not in (DEFAULT_DELTA, "vs-srs-no-agg"):
            d = draw if delta == "per-job" else 1
            for m in pd["points"]:
                dgot = [100 * g[delta] for sd, r in mine(QUICK_DELTA_ROUNDS if quick else DELTA_ROUNDS)
                        if (g := results.get(("delta", int(m), r, sd, d))) is not None]
                pd["overall"][f"srs@{m}"], pd["overall_se"][f"srs@{m}"] = _mean(dgot), se(dgot)
                pd["rounds"] = len(dgot)        # the reading's rounds, not the curve's
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
        """003's headlines under ``setting``, over the pooled rounds and judged beside each seed's."""
        from unittest import mock

        from dcnlab.reproduce.aggregation import headlines

        self._fixed_headlines()

        def build(seed: int | None) -> list[Headline]:
            parts = self._summaries(setting, draw, results, seed)
            with mock.patch.object(headlines, "_bloom_003", self._fixed_headlines):
                heads = headlines.aggregation(parts, None, _worked(), sensitivity=False)
            return [h for h in heads if h.seed == "003"]

        seeds = sorted({_t(t)[4] for t in results if _t(t)[0] == "std"})
        return search_seeds.replicated(build, seeds)

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        pl = plans(quick)
        sr = QUICK_STEINER_ROUNDS if quick else STEINER_ROUNDS
        dr = QUICK_DELTA_ROUNDS if quick else DELTA_ROUNDS
        size = pl["003-size"].points
        return {"note": (search_seeds.note(pl) + "; they judge the pre-registered readings (kmb, curve-mean, plain, "
                         "distinct), the other averages and counts, the figures over the pooled rounds and each "
                         "seed's judged beside them, as the headlines are (the pre-registered row is the headline's "
                         "figure); the other Steiner readings ran on the same members at a reduced scale, "
                         f"{search_seeds.shared(sr['003-k'])} per k on BCube(6,k) and "
                         f"{search_seeds.shared(sr['003-size'])} per point on BCube(8,5) (all {len(size)} points), "
                         f"the other δ readings {search_seeds.shared(dr)} per size: the Steiner readings at the "
                         "reproduction's 20 rounds per point would take hours of CPU")}


@lru_cache(maxsize=1)
def _worked() -> dict[str, Any]:
    from dcnlab.reproduce.aggregation import headlines

    return headlines.bcube41_examples()
