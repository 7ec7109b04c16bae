"""The spread of a figure over the rounds it was measured on (the verdicts judge its 95% interval).

A reproduction's figure is usually a function of per-point means (a mean over k of per-k savings, a ratio of
two means, the least-squares slope over every point, :func:`slope`). Its standard error is taken from *replicates*: the same function
applied to round ``r`` of every point instead of the means, for every round ``r``; the standard error is the
replicates' standard deviation over ``sqrt(R)``. For a linear figure (a mean, a difference) that is the exact
standard error of the mean; for a ratio it is the usual first-order estimate. Methods compared on the same
round are paired (M2 and IRS on the same members), so a difference carries only the noise of the difference.

:class:`Rounds` holds the per-round values of a part, ``{point: {key: {method: [value per round]}}}``, as
:func:`dcnlab.reproduce.aggregation.model.summarise` stores them under each point's ``rounds``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Getter = Callable[[str, str, str], float]
"""``get(point, key, method)``: one figure of one point (its mean, or one round's value)."""


def se(xs: Sequence[float | None]) -> float | None:
    """The standard error of the mean of the finite values of ``xs`` (None with fewer than two)."""
    vals = [float(x) for x in xs if x is not None and math.isfinite(float(x))]
    if len(vals) < 2:
        return None
    mu = sum(vals) / len(vals)
    return math.sqrt(sum((x - mu) ** 2 for x in vals) / (len(vals) - 1) / len(vals))


def combined(*ses: float | None) -> float | None:
    """The standard error of a sum or difference of independent figures (None when one has none)."""
    if any(s is None for s in ses):
        return None
    return math.sqrt(sum(float(s) ** 2 for s in ses))        # type: ignore[arg-type]


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The least-squares slope of ``ys`` on ``xs`` (every point, not the ends): how a trend over a sweep is
    judged. ``ValueError`` with fewer than two distinct ``xs``."""
    if len(xs) != len(ys) or len(set(xs)) < 2:
        raise ValueError("a slope needs two or more distinct points")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def slope_se(xs: Sequence[float], ses: Sequence[float | None]) -> float | None:
    """The standard error of :func:`slope` from the points' own standard errors (independent points): the slope
    is ``sum w_i y_i`` with ``w_i = (x_i - mean x) / Sxx``, so its variance is ``sum w_i^2 se_i^2`` (None when a
    point has none)."""
    if any(s is None for s in ses) or len(set(xs)) < 2:
        return None
    mx = sum(xs) / len(xs)
    sxx = sum((x - mx) ** 2 for x in xs)
    return math.sqrt(sum(((x - mx) / sxx) ** 2 * float(s) ** 2 for x, s in zip(xs, ses)))  # type: ignore[arg-type]


class Rounds:
    """The per-round values of a sweep's points (see the module doc)."""

    def __init__(self, points: Mapping[str, Mapping[str, Any]]) -> None:
        self.rounds = {str(p): v.get("rounds") or {} for p, v in points.items()}

    def __bool__(self) -> bool:
        return any(self.rounds.values())

    def series(self, point: str, key: str, method: str) -> Sequence[float]:
        try:
            return self.rounds[str(point)][key][method]
        except KeyError:
            return ()

    def count(self) -> int:
        """The rounds per point (the fewest over every series)."""
        lens = [len(xs) for per in self.rounds.values() for m in per.values() for xs in m.values()]
        return min(lens) if lens else 0

    def se(self, figure: Callable[[Getter], float | None]) -> float | None:
        """The standard error of ``figure`` (a function of a getter) from its replicates over the rounds that
        every series it reads has."""
        seen: list[int] = []

        def probe(p: str, k: str, m: str) -> float:
            xs = self.series(p, k, m)
            seen.append(len(xs))
            return float(xs[0]) if len(xs) else float("nan")

        try:
            figure(probe)
        except (ZeroDivisionError, ValueError):
            return None
        n = min(seen) if seen else 0
        if n < 2:
            return None
        reps = []
        for r in range(n):
            def at(p: str, k: str, m: str, r: int = r) -> float:
                return float(self.series(p, k, m)[r])
            try:
                v = figure(at)
            except ZeroDivisionError:
                continue
            if v is not None and math.isfinite(v):
                reps.append(v)
        if len(reps) < 2:
            return None
        mu = sum(reps) / len(reps)
        return math.sqrt(sum((x - mu) ** 2 for x in reps) / (len(reps) - 1) / len(reps))


def rounds_text(n: int) -> str:
    """``20 rounds`` (the ``spread_of`` of a headline)."""
    return f"{n} round{'s' if n != 1 else ''}"
