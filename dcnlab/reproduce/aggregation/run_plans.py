"""The model sweep's plans of ``dcnlab reproduce all`` (points and rounds per part, in each mode), which both the
reproduction (:mod:`dcnlab.reproduce.aggregation.reproduction`) and 000's readings
(:mod:`dcnlab.reproduce.aggregation.readings_000`) run, so the starred reading is the headline's figure."""

from __future__ import annotations

from typing import Any

from dcnlab.results.summary import MIN_SEEDS

SEEDS = MIN_SEEDS
"""How many seeds the model sweep runs in every mode: a verdict near an edge of its tolerance, or one a reading
decides, must hold at :data:`~dcnlab.results.summary.MIN_SEEDS` seeds (:func:`dcnlab.results.summary.verdict`).
A part's rounds are that many replications, seeds ``S, S+1, S+2`` (``S``: ``--seed``, default 1), the rounds
shared out among them (:func:`split`: 100 rounds are 34 + 33 + 33; a part of 2 rounds runs 2 seeds, of 1 round
one); the figures are over the pooled rounds, each seed's figure judged beside them
(:func:`dcnlab.results.summary.over_seeds`). So the seeds cost nothing: the rounds are the plan's."""

QUICK_ROUNDS = {"003-k": 100, "003-size": 5, "003-delta": 20, "000-k": 100, "000-size": 3}
"""Rounds per point of ``--quick`` (every point of the full run; the gap part keeps its own quick plan): the full
run's rounds where they are cheap (003-k, 003-delta and 000-k take seconds: their figures, spreads and verdicts are
the full run's), fewer in the two large sweeps (a wider spread there; where a verdict still differs from the full
run's, the report marks it, :func:`dcnlab.report.search_tables.mark_full_run`)."""


def aggregation_plans(mode: str) -> dict[str, Any]:
    """The parts' plans (:class:`~dcnlab.reproduce.aggregation.model.Plan`) of ``reproduce all`` in ``mode``."""
    from dcnlab.reproduce.aggregation import model as am

    full = am.plans(False, None)
    if mode == "full":
        return full
    if mode == "quick":
        out = {part: am.Plan(part, full[part].points, QUICK_ROUNDS[part]) for part in QUICK_ROUNDS}
        out["gap"] = am.plans(True, None)["gap"]
        return out
    return {"003-k": am.Plan("003-k", (2, 3), 1), "003-size": am.Plan("003-size", (50, 100), 1),
            "003-delta": am.Plan("003-delta", (250,), 1), "000-k": am.Plan("000-k", (2, 3), 1),
            "000-size": am.Plan("000-size", (100, 200), 1)}


def split(rounds: int, seeds: int = SEEDS) -> list[int]:
    """The rounds of each replication that make ``rounds`` in all: ``min(seeds, rounds)`` replications, the first
    ones one round more where it does not divide (``split(100) == [34, 33, 33]``, ``split(2) == [1, 1]``)."""
    r = max(1, int(rounds))
    s = min(seeds, r)
    return [r // s + (1 if i < r % s else 0) for i in range(s)]


def seed_rounds(seed: int | None, rounds: int, seeds: int = SEEDS) -> list[tuple[int, int]]:
    """``(seed, its rounds)`` of each replication of a part of ``rounds`` rounds with base seed ``seed`` (None: 1)."""
    base = 1 if seed is None else int(seed)
    return [(base + i, n) for i, n in enumerate(split(rounds, seeds))]
