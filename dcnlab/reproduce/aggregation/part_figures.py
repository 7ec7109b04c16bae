"""What the aggregation headlines read off a part's results (the JSON-able dicts ``reproduce aggregation``
writes): the points run, a figure's spread over the rounds, the names of what ran. Shared by the headlines of
IRS/SRS (Guo et al.) in :mod:`dcnlab.reproduce.aggregation.headlines` and of M2 (Fang et al.) in
:mod:`dcnlab.reproduce.aggregation.headlines_000`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dcnlab.results.spread import Rounds, rounds_text, se, slope

PAPERS_SCHEMES = frozenset({"m2", "irs", "mib", "mc", "unicast", "none", "kmb", "irs-nointra", "optimal",
                            "srs", "incast"})
"""The schemes a headline compares: the papers' (and the baselines they name). A user's ``--algo`` builder runs
beside them with rows of its own and never enters a headline's figure."""


def saving_points(res: Mapping[str, Any]) -> str:
    pts = list(res["points"])
    return f"{pts[0]}..{pts[-1]} ({len(pts)} points)" if len(pts) > 1 else f"{pts[0]} (1 point)"


def ends(p: Mapping[str, Any] | None, var: str) -> str:
    """The last point run minus the first, named by what ran (``k=8 minus k=2``): a difference's unit."""
    keys = list((p or {}).get("points", {}))
    return f"{var}={keys[-1]} minus {var}={keys[0]}" if len(keys) > 1 else f"largest {var} minus smallest"


def span(p: Mapping[str, Any] | None, var: str) -> str:
    """The points run (``k = 2..8``)."""
    keys = list((p or {}).get("points", {}))
    return f"{var} = {keys[0]}..{keys[-1]}" if len(keys) > 1 else f"{var} = {keys[0]}" if keys else f"every {var}"


def points(p: Mapping[str, Any] | None, key: str, method: str) -> list[float]:
    if not p:
        return []
    return [v[key][method] for v in p["points"].values() if method in v.get(key, {})]


def spread(p: Mapping[str, Any] | None, key: str) -> dict[str, Any]:
    """``spread`` and ``spread_of`` of the overall figure ``key`` of part ``p`` (its standard error over the rounds,
    :func:`dcnlab.reproduce.aggregation.model.summarise`), as Headline keyword arguments. A figure from one round
    has no standard error but is still a draw of a random model: its ``spread_of`` says ``1 round``, so the
    3-seed rule (:func:`dcnlab.results.summary.deterministic`) does not take it for a figure without randomness."""
    if not p:
        return {}
    se = (p.get("overall_se") or {}).get(key)
    n = int(p.get("rounds") or 0)
    if se is not None:
        return {"spread": se, "spread_of": rounds_text(n)}
    return {"spread_of": rounds_text(n)} if n else {}


def replicated(p: Mapping[str, Any] | None, figure: Any) -> dict[str, Any]:
    """``spread`` and ``spread_of`` of a figure computed from ``p``'s points (a function of a getter,
    :class:`dcnlab.results.spread.Rounds`); from one round, no spread but ``spread_of`` ``1 round`` (as
    :func:`spread`)."""
    if not p:
        return {}
    r = Rounds(p["points"])
    if not r:
        return {}
    se, n = r.se(figure), r.count()
    if se is not None:
        return {"spread": se, "spread_of": rounds_text(n)}
    return {"spread_of": rounds_text(n)} if n else {}


def slope_over(p: Mapping[str, Any] | None, key: str, method: str, rounds_key: str | None = None,
               per: float = 1.0) -> tuple[float | None, dict[str, Any]]:
    """The least-squares slope of ``method``'s ``key`` over every point of ``p`` (the points' names are the swept
    variable: k, m), per ``per`` of that variable, and its spread from the rounds (``rounds_key``: the rounds'
    name of the same quantity, default ``key``): a trend is judged by the slope, not by its two ends."""
    if not p:
        return None, {}
    pts = [q for q, v in p["points"].items() if method in v.get(key, {})]
    if len(pts) < 2:
        return None, {}
    xs = [float(q) for q in pts]
    value = per * slope(xs, [float(p["points"][q][key][method]) for q in pts])
    rk = rounds_key or key
    return value, replicated(p, lambda get: per * slope(xs, [get(q, rk, method) for q in pts]))


def point_se(p: Mapping[str, Any], point: str, key: str, a: str, b: str | None = None) -> float | None:
    """The standard error of one point's mean of ``key`` for ``a`` (or of ``a`` minus ``b``, paired by round)."""
    per = p["points"][point].get("rounds", {}).get(key, {})
    xs = per.get(a)
    if xs is None or (b is not None and b not in per):
        return None
    return se(xs if b is None else [x - y for x, y in zip(xs, per[b])])


def counted(p: Mapping[str, Any] | None) -> str:
    """The rounds' key of the aggregating servers under 003's counting (distinct servers or summed over trees)."""
    summed = ((p or {}).get("setting") or {}).get("counting") == "summed"
    return "aggregators_summed" if summed else "aggregators"
