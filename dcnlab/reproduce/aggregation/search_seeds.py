"""The seeds of 000's and 003's sensitivity runs (:mod:`~.search_000`, :mod:`~.search_003`), as ``dcnlab reproduce
all`` uses them (:mod:`dcnlab.reproduce.aggregation.run_plans`): a part's rounds are shared out among the seeds
``S, S+1, S+2`` (100 rounds are 34 + 33 + 33), the figures are over the pooled rounds and each seed's figure is
judged beside them (:func:`dcnlab.results.summary.over_seeds`). A searcher that draws its rounds and judges its
headlines this way gives, under the pre-registered setting, the headlines' own figures."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dcnlab.reproduce.aggregation import run_plans
from dcnlab.results.summary import Headline, over_seeds

SEED = 1
"""``reproduce all``'s base seed (no ``--seed``): its seeds are 1, 2 and 3."""


def plans(parts: Sequence[str], quick: bool) -> dict[str, Any]:
    """``reproduce all``'s plans of ``parts`` (points and rounds) in its quick or full mode."""
    p = run_plans.aggregation_plans("quick" if quick else "full")
    return {part: p[part] for part in parts}


def seeded(rounds: int) -> list[tuple[int, int]]:
    """``(seed, round)`` of each of ``rounds`` rounds shared out among the seeds (:func:`run_plans.seed_rounds`),
    in the order ``reproduce all`` pools them (the first seed's rounds first)."""
    return [(sd, r) for sd, each in run_plans.seed_rounds(SEED, rounds) for r in range(each)]


def replicated(build: Callable[[int | None], list[Headline]], seeds: Sequence[int]) -> list[Headline]:
    """The headlines over the pooled rounds (``build(None)``), each judged beside every seed's own
    (``build(seed)``: the same headlines from that seed's rounds alone), as ``reproduce all`` judges them."""
    pooled = build(None)
    if len(seeds) < 2:
        return pooled
    return over_seeds(pooled, {str(sd): build(sd) for sd in seeds})


def shared(rounds: int) -> str:
    """``100 rounds (34 + 33 + 33 at seeds 1-3)``: how ``rounds`` are shared out among the seeds."""
    each = run_plans.seed_rounds(SEED, rounds)
    seeds = f"seed {each[0][0]}" if len(each) == 1 else f"seeds {each[0][0]}-{each[-1][0]}"
    split = " + ".join(str(n) for _, n in each)
    return f"{rounds} round{'s' if rounds != 1 else ''}" + (f" ({split} at {seeds})" if len(each) > 1 else f" (at {seeds})")


def note(pl: dict[str, Any]) -> str:
    """What ran of ``reproduce all``'s plans ``pl``: each part's points and rounds per point, shared among the seeds."""
    def pts(points: Sequence[Any]) -> str:
        if len(points) > 3:
            return f"{points[0]}..{points[-1]} ({len(points)} points)"
        return ", ".join(str(x) for x in points)

    return "reproduce all's rounds: " + "; ".join(f"{part} at {pts(p.points)}, {shared(p.rounds)} per point"
                                                  for part, p in pl.items())
