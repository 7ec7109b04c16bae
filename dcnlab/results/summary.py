"""Headlines: one record per figure a paper states, with ours beside it and a verdict by one rule for every paper.

Every ``dcnlab reproduce <mechanism>`` and ``dcnlab reproduce all`` write ``summary.json``::

    {"seed": ["000", "003"], "mechanism": "aggregation", "quick": false,
     "headlines": [{"seed": "003", "statement": "...", "paper": 32.87, "model": 35.75, "emulation": null,
                    "spread": 0.21, "spread_of": "100 rounds", "interval": [35.34, 36.16],
                    "unit": "%", "tolerance": "±3 points", "verdict": "deviates", "reading": "...",
                    "plot": "003-k-saving.png", "kind": "percent", ...}, ...],
     "emulation": {"ran": false, "why": "..."}}

``seed`` is the paper id ("000".."004"), ``plot`` a PNG path relative to the directory of the
``summary.json`` (or null). The verdicts are named in :mod:`dcnlab.results.goals` (with the legend the report
prints). A headline declares its *kind*, and :func:`verdict` is the rule:

* ``percent``: reproduced when ours is within ±3 percentage points of the paper's figure;
* ``ratio``: reproduced when ours is within 10% of the paper's figure (relative to the paper's);
* ``count``: reproduced when ours equals the paper's figure exactly;
* ``trend``: reproduced when ours lies in the stated direction (``up``: above, ``down``: below,
  ``at least``, ``at most``) of the reference (the paper's figure when there is no other); "below" is strict,
  so a tie is not "the fewest";
* a percent, ratio or count that states a direction (e.g. "M2 saves about 3% of IRS's data": above 0) is
  reproduced only inside its tolerance *and* in that direction (0% is not "about 3% less"); one that misses its
  tolerance but still lies in the direction is a ``trend``; otherwise it ``deviates``;
* a trend over a sweep ("rise with k", "grow with m") is the least-squares slope over every point with its
  standard error (:func:`dcnlab.results.spread.slope`), never the last point minus the first;
* with no figure of ours the verdict is ``not run`` and ``reading`` says why.

Noise. A figure that comes from random draws carries its spread (``spread``: the standard error of the mean over
``spread_of``, e.g. 20 rounds; ``spread_n``: that count) and its 95% interval (``interval``: figure ± t standard
errors, t Student's 97.5% quantile with ``spread_n - 1`` degrees of freedom, :func:`quantile`: 4.30 for 3 rounds,
2.78 for 5 draws, 1.98 for 100; 1.96 where the count is unknown). The rule is applied to the interval: a percent,
ratio or count whose interval straddles an edge of its tolerance is ``unstable``; a trend (or a miss judged by
its direction) whose interval contains its reference is ``flat``. Two more rules guard the verdicts that a few
rounds could flip:

* **seeds**: a verdict whose figure lies within :data:`EDGE_SES` (2) standard errors of an edge of its tolerance
  or of its reference (:func:`near_edge`), or one a reading of an open setting decides (``depends_on``), holds
  only when it is the same at :data:`MIN_SEEDS` (3) seeds or more (``seeds``: the figure per seed), else it is
  ``unstable`` (``stability`` says why). A figure with no randomness is exempt (:func:`deterministic`): one with no
  spread and no rounds (``spread`` None, ``spread_of`` empty: a deterministic model such as 002's fluid model or
  004's counts; ``1 round`` of a random model is not one) whose seeds, where run, all gave the same figure is
  that figure at every seed, so it holds over 3 seeds by construction; its ``depends_on`` still tells the reader
  that a reading decides it;
* **draws**: a figure that is the mean over random draws (``draws``: the figure per draw) states a claim about
  every draw: when one draw's figure ``deviates`` by the rule, the headline deviates (a statement about every
  pattern that fails on 1 of 5 draws is not 80% true).

A statement about every point of a sweep ("fewest", "every", "always", "at every k") lists its points
(``points``, ``over``), and its figure is the worst point's (``worst_at``), the mean over the points beside it
(``mean``), never instead. ``inconsistent`` is kept for the paper's own contradictions: two of its sentences
that its own arithmetic makes impossible together, both quoted in ``inconsistent`` with the arithmetic (002's
Fig. 4: "4 × 1024 B per IRD comparison" against (1024×8)/(20.48 µs×4) = 100 Mb/s). A pair of statements that
*our* readings cannot reach together is a reproduction failure, each statement judged on its own with the pair
shown in its reading.

Every verdict word a reproduction prints (the model tables, the BMv2 lines that judge a paper's figure) comes
from :func:`verdict`; a table has no tolerance of its own.

That rule judges one figure. A headline has up to two, the model's and BMv2's, and each gets its own
verdict (``model_verdict``, ``emulation_verdict``); the headline's ``verdict`` combines them
(:func:`combine`):

* both figures: ``reproduced`` only when both are reproduced; when exactly one is, ``model only`` or
  ``BMv2 only``; ``inconsistent`` when either is; when neither holds, ``trend`` when both are trends,
  ``unstable`` or ``flat`` when either is (in that order), else ``deviates``;
* only the model's figure: the model's verdict. A headline BMv2 does not measure (``emulated`` false)
  has no BMv2 verdict (null, shown as "–"); one whose BMv2 experiment did not run (``emulated`` true,
  no BMv2 figure) has the BMv2 verdict ``not run``, and the report marks its verdict "BMv2 not run";
* only BMv2's figure: BMv2's verdict (the model verdict ``not run``, marked "model not run");
* neither: ``not run``.

``basis`` names the figures judged (``model``, ``emulation``, ``both`` or None). Where both exist,
``difference`` is BMv2 against the model in percent of the model (the goal is agreement within
:data:`EMULATION_GOAL_PERCENT`). ``full_run`` is, in a quick run, the verdict of the same statement in the full
run (the committed search of the paper's settings), where known: the report marks a quick verdict that differs.
``summary.json`` carries the headlines' ``counts`` by verdict, the
figures' (``figure_counts``: ``model`` and ``BMv2``) and ``bmv2_not_run`` (headlines BMv2 measures whose
BMv2 experiment did not run); they are derived, and recomputed when it is read.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from dcnlab.results.goals import (
    BMV2_ONLY,
    DEVIATES,
    FIGURE_VERDICTS,
    FLAT,
    INCONSISTENT,
    MODEL_ONLY,
    NOT_JUDGED,
    NOT_RUN,
    REPRODUCED,
    TREND,
    UNSTABLE,
    VERDICTS,
    Z95,
)

__all__ = ["COMBINED_RULE", "DIRECTIONS", "EDGE_SES", "EMULATION_GOAL_PERCENT", "FIGURE_VERDICTS", "Headline", "KINDS",
           "MIN_SEEDS", "PERCENT_POINTS", "RATIO_FRACTION", "RULE", "Summary", "VERDICTS", "combine", "count_of",
           "counts", "deterministic", "difference", "read", "counts_text", "quantile", "tolerance_text", "verdict",
           "verdict_note", "with_seeds", "over_seeds", "worst_point", "write"]

KINDS = ("percent", "ratio", "count", "trend")
PERCENT_POINTS = 3.0
"""A percentage is reproduced within this many percentage points."""
RATIO_FRACTION = 0.10
"""A ratio is reproduced within this fraction of the paper's figure."""
EMULATION_GOAL_PERCENT = 5.0
"""Model against BMv2: the goal for every pair (the emulation must agree with the model it checks)."""
DIRECTIONS: dict[str, Callable[[float, float], bool]] = {
    "up": operator.gt, "down": operator.lt, "at least": operator.ge, "at most": operator.le}
DIRECTION_WORDS = {"up": "above", "down": "below", "at least": "at least", "at most": "at most"}
_EPS = 1e-9
EDGE_SES = 2.0
"""A figure within this many standard errors of an edge of its tolerance (or of its reference) is near the edge:
its verdict must hold at :data:`MIN_SEEDS` seeds."""
MIN_SEEDS = 3
"""The seeds a verdict near an edge, or one a reading decides, must hold at (else ``unstable``)."""

RULE = (f"A percentage is reproduced within ±{PERCENT_POINTS:g} points, a ratio within {RATIO_FRACTION:.0%} of the "
        f"paper's figure, a count exactly, a trend when ours goes in the stated direction. A figure outside its "
        f"tolerance that still goes in a direction the paper states is a 'trend'; otherwise it 'deviates'; a figure "
        f"inside its tolerance but not in the stated direction is not reproduced (0% is not 'about 3% less', a tie "
        f"is not 'the fewest'). A trend over a sweep is its least-squares slope over every point. A figure from "
        f"random draws is judged with its 95% interval (± t standard errors, t Student's for the rounds it came "
        f"from: 4.30 for 3, 2.78 for 5, shown beside it): an interval across an edge of the tolerance is 'unstable', "
        f"a trend whose interval contains its reference is 'flat'; a verdict within {EDGE_SES:g} standard errors of "
        f"an edge, or one a reading decides, must hold at {MIN_SEEDS} seeds, else it is 'unstable' (a figure with no "
        f"randomness, the same at every seed, holds at every seed by construction); a claim about "
        f"random draws that deviates on any draw deviates. A statement about every point ('fewest', 'every', "
        f"'always', 'at every k') is judged at its worst point, the mean over the points shown beside it. "
        f"'inconsistent': two sentences of the paper contradict each other by its own arithmetic (both quoted); a "
        f"pair only our readings cannot reach together is judged, the pair shown. 'not run' means we have no figure "
        f"yet, and the reading says why. Model against BMv2: the goal is within {EMULATION_GOAL_PERCENT:g}%.")
"""How one figure is judged (the model's or BMv2's)."""
COMBINED_RULE = ("Each figure of ours is judged by that rule: the model's, and BMv2's where the BMv2 experiment "
                 "measures the same quantity (columns 'model verdict' and 'BMv2 verdict'). A headline is "
                 "'reproduced' only when both figures hold; when one holds and the other does not it is "
                 f"'{MODEL_ONLY}' or '{BMV2_ONLY}'; 'inconsistent' when either is; when neither holds it is a "
                 "'trend' if both are trends, 'unstable' or 'flat' if either is, else it "
                 "'deviates'. A headline BMv2 does not measure ('–' under BMv2) gets its model verdict; one whose "
                 "BMv2 experiment did not run gets its model verdict, marked 'BMv2 not run' (and the other way "
                 "round, 'model not run'); 'not run' means neither figure exists.")
"""How a headline's verdict follows from its figures' verdicts (:func:`combine`)."""


def _number(x: Any) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def tolerance_text(kind: str, direction: str | None = None, reference: float | None = None) -> str:
    """The tolerance in words: ``±3 points``, ``±10%``, ``exact``, ``at least 512``."""
    if kind == "percent":
        return f"±{PERCENT_POINTS:g} points"
    if kind == "ratio":
        return f"±{RATIO_FRACTION:.0%}"
    if kind == "count":
        return "exact"
    ref = "" if reference is None else f" {reference:g}"
    return f"{DIRECTION_WORDS.get(direction, direction)}{ref}" if direction else "direction"


def within(kind: str, paper: float, value: float) -> bool:
    """Whether ``value`` reproduces ``paper`` under the tolerance of ``kind`` (percent, ratio, count)."""
    if kind == "percent":
        return abs(value - paper) <= PERCENT_POINTS + _EPS
    if kind == "ratio":
        return abs(value - paper) <= RATIO_FRACTION * abs(paper) + _EPS
    if kind == "count":
        return value == paper
    raise ValueError(f"kind {kind!r} has no tolerance; valid: percent, ratio, count")


def band(kind: str, paper: float) -> tuple[float, float]:
    """The tolerance of ``kind`` around ``paper`` as an interval (a count's is the figure itself)."""
    if kind == "percent":
        return paper - PERCENT_POINTS - _EPS, paper + PERCENT_POINTS + _EPS
    if kind == "ratio":
        return paper - RATIO_FRACTION * abs(paper) - _EPS, paper + RATIO_FRACTION * abs(paper) + _EPS
    if kind == "count":
        return paper, paper
    raise ValueError(f"kind {kind!r} has no tolerance; valid: percent, ratio, count")


def quantile(n: int | None) -> float:
    """How many standard errors a 95% interval spans for a figure whose spread comes from ``n`` rounds: Student's t
    at 97.5% with ``n - 1`` degrees of freedom (3 rounds: 4.30, 5 draws: 2.78, 20 rounds: 2.09, 100 rounds: 1.98);
    :data:`~dcnlab.results.goals.Z95` (1.96) when the count is unknown."""
    if n is None or isinstance(n, bool) or n < 2:
        return Z95
    return _t975(int(n))


@lru_cache(maxsize=256)
def _t975(n: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.975, n - 1))


def count_of(spread_of: str | None) -> int | None:
    """The number of rounds a spread came from, read off its ``spread_of`` (``20 rounds``, ``5 draws``)."""
    m = re.match(r"\s*(\d+)\s", spread_of or "")
    return int(m.group(1)) if m else None


def interval(value: float | None, spread: float | None, n: int | None = None) -> tuple[float, float] | None:
    """The 95% interval ``value ± t spread`` (:func:`quantile` of the ``n`` rounds; None without a figure; the
    figure itself without a spread)."""
    v, se = _number(value), _number(spread)
    if v is None:
        return None
    if se is None or se <= 0:
        return v, v
    q = quantile(n)
    return v - q * se, v + q * se


def edges(kind: str, paper: float | None, direction: str | None = None,
          reference: float | None = None) -> list[float]:
    """The values where a figure's verdict changes: the edges of its tolerance and the reference of its
    direction."""
    out: list[float] = []
    p = _number(paper)
    if kind != "trend" and p is not None:
        lo, hi = band(kind, p)
        out += [lo, hi]
    if direction is not None:
        out.append(reference if reference is not None else (p if kind == "trend" and p is not None else 0.0))
    return out


def verdict(kind: str, paper: float | None, value: float | None, direction: str | None = None,
            reference: float | None = None, spread: float | None = None, n: int | None = None,
            seeds: Mapping[str, float] | None = None, draws: Mapping[str, float] | None = None,
            decided: bool = False, seed_spreads: Mapping[str, float | None] | None = None,
            seed_n: int | None = None) -> str:
    """The verdict rule (module docstring): ``reproduced``, ``trend``, ``unstable``, ``flat``, ``deviates`` or
    ``not run``.

    ``value`` is our figure (None: not run), ``spread`` its standard error over ``n`` rounds (None: a figure with
    no draws, or one round; ``n`` None: a count not known, judged with 1.96). ``direction`` (``up``, ``down``,
    ``at least``, ``at most``) compares ``value`` with ``reference`` (for a trend without one: the paper's
    figure, else 0); a trend headline needs it, a percent/ratio/count headline may state it to earn ``trend``
    when it misses. ``draws``: the figure on each random draw, where ``value`` is their mean: a claim that
    ``deviates`` on any draw deviates. ``seeds``: the figure at each seed the run was repeated at (``value``'s
    own seed among them); a verdict within :data:`EDGE_SES` standard errors of an edge, or one a reading decides
    (``decided``), holds only when it is the same at :data:`MIN_SEEDS` seeds or more, else it is ``unstable``;
    each seed's figure is judged with its own standard error (``seed_spreads``, over ``seed_n`` rounds) where the
    run gives one (a run of replications, :func:`over_seeds`), else with ``spread``.

    A figure with no randomness (:func:`deterministic`: no ``spread``, no count of rounds ``n``, and every seed it
    ran at gave the same figure) is exempt from the seeds: it is the same at every seed, so it holds at 3 seeds by construction, and a
    reading that decides it (``decided``) is the headline's ``depends_on``, not noise."""
    first = _verdict(kind, paper, value, direction, reference, spread, n)
    if first == NOT_RUN:
        return first
    if draws and any(_verdict(kind, paper, x, direction, reference) == DEVIATES for x in draws.values()):
        return DEVIATES
    if first in (UNSTABLE, FLAT) or not (decided or near_edge(kind, paper, value, direction, reference, spread)):
        return first    # the noise verdicts need no more seeds
    if deterministic(value, spread, seeds, n):
        return first    # no randomness: the same figure at every seed
    got = [(sd, x) for sd, x in (seeds or {}).items() if _number(x) is not None]
    if len(got) < MIN_SEEDS:
        return UNSTABLE
    return first if all(_seed_verdict(kind, paper, sd, x, direction, reference, spread, n, seed_spreads, seed_n)
                        == first for sd, x in got) else UNSTABLE


def _seed_verdict(kind: str, paper: float | None, sd: str, x: float, direction: str | None,
                  reference: float | None, spread: float | None, n: int | None,
                  seed_spreads: Mapping[str, float | None] | None, seed_n: int | None) -> str:
    """One seed's figure ``x`` judged alone: with its own standard error where the run gives one
    (``seed_spreads``), else with the headline's."""
    if seed_spreads is not None and sd in seed_spreads:
        return _verdict(kind, paper, x, direction, reference, seed_spreads[sd], seed_n)
    return _verdict(kind, paper, x, direction, reference, spread, n)


def deterministic(value: float | None, spread: float | None, seeds: Mapping[str, float] | None = None,
                  n: int | None = None) -> bool:
    """Whether a figure has no randomness, so that the seeds rule (:func:`verdict`) cannot make it ``unstable``:
    no ``spread`` (None) and no rounds it came from (``n`` None: a figure from a deterministic model, e.g. 002's
    fluid model or 004's counts), and every seed it ran at (``seeds``, where given) gave the same figure. A figure
    with a spread, one from a count of rounds (``1 round`` of a random model has no spread but is a draw), or one
    whose seeds differ is not."""
    v = _number(value)
    if v is None or _number(spread) is not None or n is not None:
        return False
    return all(_number(x) is None or abs(float(x) - v) <= _EPS * max(1.0, abs(v)) for x in (seeds or {}).values())


def near_edge(kind: str, paper: float | None, value: float | None, direction: str | None = None,
              reference: float | None = None, spread: float | None = None) -> bool:
    """Whether ``value`` lies within :data:`EDGE_SES` standard errors (``spread``) of an edge of its tolerance or
    of its direction's reference (:func:`edges`); never for a figure without a spread."""
    v, se = _number(value), _number(spread)
    if v is None or se is None or se <= 0:
        return False
    return any(abs(v - e) < EDGE_SES * se for e in edges(kind, paper, direction, reference))


def _verdict(kind: str, paper: float | None, value: float | None, direction: str | None = None,
             reference: float | None = None, spread: float | None = None, n: int | None = None) -> str:
    """One figure against its tolerance over its 95% interval (:func:`verdict` without draws and seeds)."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}; valid: {', '.join(KINDS)}")
    if direction is not None and direction not in DIRECTIONS:
        raise ValueError(f"direction {direction!r}; valid: {', '.join(DIRECTIONS)}")
    v = _number(value)
    if v is None:
        return NOT_RUN
    lo, hi = interval(v, spread, n) or (v, v)
    p = _number(paper)

    def by_direction(ref: float, miss: str) -> str:
        assert direction is not None
        if hi > lo and lo <= ref <= hi:         # the noise covers the reference: no direction shown
            return FLAT
        return miss if DIRECTIONS[direction](v, ref) else DEVIATES

    if kind == "trend":
        if direction is None:
            raise ValueError("a trend headline needs a direction")
        return by_direction(reference if reference is not None else (p if p is not None else 0.0), REPRODUCED)
    if p is None:
        raise ValueError(f"a {kind} headline needs the paper's figure")
    if within(kind, p, lo) and within(kind, p, hi):
        ref = reference if reference is not None else 0.0
        if direction is not None and not (DIRECTIONS[direction](lo, ref) and DIRECTIONS[direction](hi, ref)):
            return by_direction(ref, TREND)     # the null case: "about 3% less" is not 0% less
        return REPRODUCED
    b_lo, b_hi = band(kind, p)
    if not (hi < b_lo or lo > b_hi):             # the interval reaches into the tolerance: either way
        return UNSTABLE
    if direction is not None:
        return by_direction(reference if reference is not None else 0.0, TREND)
    return DEVIATES


def margin(kind: str, paper: float | None, value: float, direction: str | None = None,
           reference: float | None = None, spread: float | None = None, n: int | None = None) -> float:
    """How far ``value`` (less its interval's half-width, :func:`quantile` ``spread``) lies inside its tolerance
    or direction: negative when it misses. :func:`worst_point` takes the point with the smallest margin."""
    se = quantile(n) * (_number(spread) or 0.0)
    if kind == "trend" or paper is None:
        ref = reference if reference is not None else (paper if paper is not None else 0.0)
        return (value - ref if direction in ("up", "at least") else ref - value) - se
    lo, hi = band(kind, paper)
    return min(value - lo, hi - value) - se


def worst_point(points: Mapping[str, float], kind: str, paper: float | None, direction: str | None = None,
                reference: float | None = None, spreads: Mapping[str, float | None] | None = None,
                n: int | None = None) -> str | None:
    """The point of a sweep where a statement about every point is farthest from holding (its figure, less its
    noise, nearest to missing or farthest off): the point such a statement is judged at."""
    got = {k: v for k, v in points.items() if _number(v) is not None}
    if not got:
        return None
    spreads = spreads or {}
    return min(got, key=lambda k: margin(kind, paper, float(got[k]), direction, reference, spreads.get(k), n))


def combine(model: str | None, emulation: str | None) -> str:
    """A headline's verdict from its figures' verdicts (:data:`FIGURE_VERDICTS`; ``emulation`` None: BMv2
    measures no such quantity), by :data:`COMBINED_RULE`."""
    for v in (model, emulation):
        if v is not None and v not in FIGURE_VERDICTS:
            raise ValueError(f"figure verdict {v!r}; valid: {', '.join(FIGURE_VERDICTS)}")
    judged = [v for v in (model, emulation) if v not in (None, NOT_RUN, NOT_JUDGED)]
    if not judged:
        return NOT_JUDGED if NOT_JUDGED in (model, emulation) else NOT_RUN
    if len(judged) == 1:
        return judged[0]
    if model == emulation:
        return model
    if INCONSISTENT in judged:
        return INCONSISTENT
    if model == REPRODUCED:
        return MODEL_ONLY
    if emulation == REPRODUCED:
        return BMV2_ONLY
    for v in (UNSTABLE, FLAT):
        if v in judged:
            return v
    return DEVIATES


def verdict_note(model: str | None, emulation: str | None) -> str:
    """``BMv2 not run`` (or ``model not run``) where the headline's verdict judges one of two figures it should
    have; empty otherwise."""
    if emulation == NOT_RUN and model not in (None, NOT_RUN):
        return "BMv2 not run"
    if model == NOT_RUN and emulation not in (None, NOT_RUN):
        return "model not run"
    return ""


def difference(model: float | None, emulation: float | None) -> float | None:
    """BMv2 against the model in percent of the model (None without both, or for a model figure of 0
    against a non-zero one)."""
    m, e = _number(model), _number(emulation)
    if m is None or e is None:
        return None
    if m == 0:
        return 0.0 if e == 0 else None
    return 100.0 * (e - m) / abs(m)


@dataclass
class Headline:
    """One figure of a paper against ours. ``tolerance``, ``verdict``, ``basis`` and ``difference`` are
    computed from the others when left empty (:func:`verdict`, :func:`difference`)."""

    seed: str
    statement: str
    paper: float | None
    model: float | None
    emulation: float | None = None
    unit: str = ""
    tolerance: str = ""
    verdict: str = ""
    reading: str = ""
    plot: str | None = None
    kind: str = "percent"
    direction: str | None = None
    reference: float | None = None
    paper_text: str | None = None
    """How the paper states it, when a number alone would mislead (``about 3%``, ``< 35 s vs > 575 s``)."""
    basis: str | None = None
    """Which figures the verdict judges: ``model``, ``emulation``, ``both`` or None (not run)."""
    difference: float | None = None
    """BMv2 against the model, percent of the model."""
    emulated: bool = False
    """Whether BMv2's experiment measures this headline (true whenever ``emulation`` is a figure)."""
    model_verdict: str | None = None
    """The model's figure judged alone (:func:`verdict`)."""
    emulation_verdict: str | None = None
    """BMv2's figure judged alone; ``not run`` when ``emulated`` without a figure, None when not ``emulated``."""
    spread: float | None = None
    """The standard error of the model's figure over its random draws (None: no draws, or a single one)."""
    spread_of: str = ""
    """What ``spread`` is over (``100 rounds``, ``3 draws``, ``5 timings``)."""
    interval: list[float] | None = None
    """The model's figure ± 1.96 ``spread`` (derived)."""
    emulation_spread: float | None = None
    """The standard error of BMv2's figure over its runs."""
    points: dict[str, float] | None = None
    """A statement about every point of a sweep: the figure at each point (the model's figure is the worst's)."""
    point_spreads: dict[str, float | None] | None = None
    """The standard error of each point's figure."""
    over: str = ""
    """What the points are (``k``, ``m``, ``model``)."""
    worst_at: str | None = None
    """The point the statement is judged at (derived, :func:`worst_point`)."""
    mean: float | None = None
    """The mean over the points, reported beside the worst (derived)."""
    inconsistent: str = ""
    """Why the paper's own rules make this statement impossible (the pair or the bound): verdict ``inconsistent``."""
    full_run: str | None = None
    """In a quick run: the verdict of the same statement in the full run, where known (the report marks a
    difference)."""
    spread_n: int | None = None
    """How many rounds ``spread`` came from (derived from ``spread_of``, ``20 rounds`` -> 20): the degrees of
    freedom of its interval (:func:`quantile`)."""
    emulation_spread_n: int | None = None
    """How many runs ``emulation_spread`` came from."""
    draws: dict[str, float] | None = None
    """A figure from random draws that is their mean: the figure on each draw (a claim that deviates on one
    draw deviates)."""
    seeds: dict[str, float] | None = None
    """The model's figure at each seed the run was repeated at (its own among them, or, in a run of replications,
    each replication's figure beside the pooled one, :func:`over_seeds`): a verdict near an edge, or one a reading
    decides, must hold at :data:`MIN_SEEDS` of them."""
    seed_spreads: dict[str, float | None] | None = None
    """In a run of replications (:func:`over_seeds`): the standard error of each seed's figure over its own rounds
    (None: one round), with which that seed's figure is judged."""
    seed_spread_n: int | None = None
    """How many rounds each seed's figure came from (the degrees of freedom of its interval)."""
    depends_on: str = ""
    """The open setting whose reading decides this verdict (empty: none does)."""
    stability: str = ""
    """Why the verdict is ``unstable`` though its interval lies on one side of every edge, or which draw failed
    (derived)."""
    emulation_runs: dict[str, float] | None = None
    """BMv2's figure in each run of its experiment, by run (``"1"``, ``"2"``, ...), where it ran more than once:
    ``emulation`` is their mean, ``emulation_spread`` their standard error (:mod:`dcnlab.results.runs`)."""

    def __post_init__(self) -> None:
        self.paper, self.model, self.emulation = _number(self.paper), _number(self.model), _number(self.emulation)
        if self.spread_n is None:
            self.spread_n = count_of(self.spread_of)
        if self.points:
            self.points = {str(k): float(v) for k, v in self.points.items() if _number(v) is not None}
            sp = self.point_spreads or {}
            if self.worst_at is None:
                self.worst_at = worst_point(self.points, self.kind, self.paper, self.direction, self.reference, sp,
                                            self.spread_n)
            if self.model is None and self.worst_at is not None:
                self.model, self.spread = self.points[self.worst_at], _number(sp.get(self.worst_at))
            if self.mean is None and self.points:
                self.mean = sum(self.points.values()) / len(self.points)
        self.spread, self.emulation_spread = _number(self.spread), _number(self.emulation_spread)
        iv = interval(self.model, self.spread, self.spread_n) if self.spread is not None else None
        self.interval = [iv[0], iv[1]] if iv else None
        self.emulated = bool(self.emulated) or self.emulation is not None
        if not self.tolerance:
            self.tolerance = tolerance_text(self.kind, self.direction, self.reference)
        if self.model_verdict is None:
            self.model_verdict = verdict(self.kind, self.paper, self.model, self.direction, self.reference,
                                         self.spread, self.spread_n, self.seeds, self.draws, bool(self.depends_on),
                                         self.seed_spreads, self.seed_spread_n)
            if self.inconsistent and self.model is not None:
                self.model_verdict = INCONSISTENT
            if not self.stability:
                self.stability = stability_text(self)
        if self.emulation_verdict is None and self.emulated:
            self.emulation_verdict = verdict(self.kind, self.paper, self.emulation, self.direction, self.reference,
                                             self.emulation_spread, self.emulation_spread_n)
            if self.inconsistent and self.emulation is not None:
                self.emulation_verdict = INCONSISTENT
        for name, v in (("model_verdict", self.model_verdict), ("emulation_verdict", self.emulation_verdict)):
            if v is not None and v not in FIGURE_VERDICTS:
                raise ValueError(f"{name} {v!r}; valid: {', '.join(FIGURE_VERDICTS)}")
        if self.basis is None:
            m, e = self.model is not None, self.emulation is not None
            self.basis = "both" if m and e else "model" if m else "emulation" if e else None
        if not self.verdict:
            self.verdict = combine(self.model_verdict, self.emulation_verdict)
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r}; valid: {', '.join(VERDICTS)}")
        if self.difference is None:
            self.difference = difference(self.model, self.emulation)

    @property
    def note(self) -> str:
        """``BMv2 not run`` or ``model not run`` beside the verdict, or empty (:func:`verdict_note`)."""
        return verdict_note(self.model_verdict, self.emulation_verdict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Headline:
        """A record of ``summary.json``; one written before the figures had verdicts of their own (no
        ``model_verdict``) is judged again by today's rule."""
        names = {f.name for f in fields(cls)}
        old = "model_verdict" not in data
        return cls(**{k: v for k, v in data.items() if k in names and not (old and k in ("verdict", "basis"))})


def stability_text(h: Headline) -> str:
    """Why the model's verdict is what the draws or the seeds made it (empty when they changed nothing)."""
    args = (h.kind, h.paper, h.model, h.direction, h.reference, h.spread, h.spread_n)
    if h.model is None:
        return ""
    if h.draws:
        bad = [d for d, x in h.draws.items() if _verdict(h.kind, h.paper, x, h.direction, h.reference) == DEVIATES]
        if bad:
            return (f"deviates on {len(bad)} of {len(h.draws)} draws ("
                    + ", ".join(f"draw {d}: {h.draws[d]:.4g}" for d in bad) + ")")
    first = _verdict(*args)
    if first in (UNSTABLE, FLAT) or h.model_verdict != UNSTABLE:
        return ""
    why = (f"decided by the reading of {h.depends_on}" if h.depends_on else
           f"within {EDGE_SES:g} standard errors of an edge ({', '.join(f'{e:.4g}' for e in edges(h.kind, h.paper, h.direction, h.reference))})")
    got = {sd: x for sd, x in (h.seeds or {}).items() if _number(x) is not None}
    n = len(got)
    where = "over the pooled seeds" if h.seed_spreads is not None else "at this seed"
    if n < MIN_SEEDS:
        return f"{first} {where}, but {why}: it must hold at {MIN_SEEDS} seeds, and it ran at {n or 1} seed" + \
            ("s" if n > 1 else "")
    other = {sd: v for sd, x in got.items()
             if (v := _seed_verdict(h.kind, h.paper, sd, float(x), h.direction, h.reference, h.spread, h.spread_n,
                                    h.seed_spreads, h.seed_spread_n)) != first}
    return (f"{first} {where}, but {why}: it must hold at {MIN_SEEDS} seeds, and it does not at every one of the "
            f"{n} it ran at (" + ", ".join(f"seed {sd}: {float(got[sd]):.4g}, {v}" for sd, v in other.items()) + ")")


def with_seeds(runs: Mapping[str, Sequence[Headline]]) -> list[Headline]:
    """The headlines of the first run of ``runs`` (seed -> that run's headlines, the same statements) judged
    again with every run's model figure under ``seeds``: a verdict near an edge, or one a reading decides, holds
    when it is the same at :data:`MIN_SEEDS` seeds (:func:`verdict`), each judged with the first run's spread.
    ``dcnlab reproduce all --seed S`` runs one seed; three runs cost three times one (a run of replications
    that share the rounds is :func:`over_seeds`)."""
    seeds = list(runs)
    return over_seeds(runs[seeds[0]], runs, own_spreads=False) if seeds else []


def over_seeds(pooled: Sequence[Headline], per_seed: Mapping[str, Sequence[Headline]],
               own_spreads: bool = True) -> list[Headline]:
    """``pooled`` (the headlines of a run of replications: every seed's rounds pooled, their figure the mean over
    all of them) judged again with each replication's figure (``per_seed``: seed -> the headlines of that seed's
    rounds alone, the same statements): the figure of each seed goes under ``seeds``, its standard error under
    ``seed_spreads``, so that a verdict near an edge, or one a reading decides, holds when every seed, judged
    with its own interval, gives it (:func:`verdict`). A headline not judged by its model figure (``not judged``,
    ``inconsistent``, not run) is left as it is. A run of :data:`MIN_SEEDS` replications costs what one run of
    their pooled rounds costs. ``own_spreads`` False: every seed is judged with the headline's spread
    (:func:`with_seeds`, whose figure is one of the seeds')."""
    from dataclasses import replace

    by = {sd: {h.statement: h for h in hs} for sd, hs in per_seed.items()}
    out = []
    for h in pooled:
        figs = {sd: b[h.statement] for sd, b in by.items()
                if h.statement in b and b[h.statement].model is not None}
        if h.model is None or len(figs) < 2 or h.model_verdict in (NOT_JUDGED, NOT_RUN, INCONSISTENT):
            out.append(h)
            continue
        ns = {x.spread_n for x in figs.values() if x.spread_n is not None}
        out.append(replace(h, seeds={sd: float(x.model) for sd, x in figs.items() if x.model is not None},
                           seed_spreads={sd: x.spread for sd, x in figs.items()} if own_spreads else None,
                           seed_spread_n=(min(ns) if ns else None) if own_spreads else None,
                           model_verdict=None, verdict="", stability=""))
    return out


@dataclass
class Summary:
    """The contents of one ``summary.json``."""

    seeds: list[str]
    headlines: list[Headline]
    emulation_ran: bool
    emulation_why: str
    extra: dict[str, Any] | None = None
    """More top-level keys (``mechanism``, ``quick``, ``parts``)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seed": list(self.seeds), "headlines": [h.to_json() for h in self.headlines],
                               "emulation": {"ran": self.emulation_ran, "why": self.emulation_why}}
        out.update(counts(self.headlines))
        for k, v in (self.extra or {}).items():
            out.setdefault(k, v)
        return out

    def counts(self) -> dict[str, int]:
        """Headlines per verdict, in :data:`VERDICTS` order."""
        return counts(self.headlines)["counts"]


DERIVED = ("counts", "figure_counts", "bmv2_not_run")
"""The keys of ``summary.json`` computed from its headlines (:func:`counts`)."""


def counts(heads: Sequence[Headline]) -> dict[str, Any]:
    """``counts``: headlines per verdict (:data:`VERDICTS` order); ``figure_counts``: the model's and BMv2's
    figures per verdict (:data:`FIGURE_VERDICTS`; BMv2 over the headlines it measures); ``bmv2_not_run``:
    headlines BMv2 measures whose BMv2 experiment did not run."""
    return {"counts": {v: sum(h.verdict == v for h in heads) for v in VERDICTS},
            "figure_counts": {"model": {v: sum(h.model_verdict == v for h in heads) for v in FIGURE_VERDICTS},
                              "BMv2": {v: sum(h.emulation_verdict == v for h in heads) for v in FIGURE_VERDICTS}},
            "bmv2_not_run": sum(h.note == "BMv2 not run" for h in heads)}


def counts_text(heads: Sequence[Headline]) -> str:
    """``76 headlines: 40 reproduced, 3 model only, ...; BMv2 not run on 9 it measures (model verdict)``."""
    c = counts(heads)
    text = f"{len(heads)} headlines: " + ", ".join(f"{n} {v}" for v, n in c["counts"].items())
    if c["bmv2_not_run"]:
        text += (f"; BMv2 did not run on {c['bmv2_not_run']} headline{'s' if c['bmv2_not_run'] != 1 else ''} it "
                 "measures (there the model's verdict counts)")
    return text


def write(path: Path, seeds: Iterable[str], headlines: Sequence[Headline], emulation_ran: bool,
          emulation_why: str, **extra: Any) -> Path:
    """Write ``summary.json`` (the caller wraps it in :func:`dcnlab.results.outputs.writing`)."""
    s = Summary(sorted(set(seeds)), list(headlines), emulation_ran, emulation_why, extra or None)
    path.write_text(json.dumps(s.to_json(), indent=1) + "\n")
    return path


def read(path: Path) -> Summary:
    """Read a ``summary.json``; ``ValueError`` when it is not in this shape."""
    data = json.loads(Path(path).read_text())
    try:
        heads = [Headline.from_json(h) for h in data["headlines"]]
        emu = data["emulation"]
        seeds = data["seed"]
        extra = {k: v for k, v in data.items() if k not in ("seed", "headlines", "emulation", *DERIVED)}
        return Summary(list(seeds) if isinstance(seeds, list) else [seeds], heads, bool(emu["ran"]),
                       str(emu["why"]), extra or None)
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a summary.json ({type(e).__name__}: {e})") from None


# -- what every paper's headline builder (dcnlab/reproduce/<mechanism>/headlines.py) shares -------------------

def mean_of(xs: Sequence[float]) -> float | None:
    """The mean of the finite values of ``xs`` (None when there is none)."""
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return sum(xs) / len(xs) if xs else None


def figure_text(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def missing(h: Headline, why: str) -> Headline:
    """``h`` with the reason it has no figure of ours (the reading starts with it)."""
    if h.model is None and h.emulation is None:
        h.reading = why if not h.reading else f"{why}; {h.reading}"
    return h
