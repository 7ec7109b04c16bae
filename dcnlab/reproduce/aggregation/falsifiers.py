"""Every headline of 000 (M2, Fang et al.) and 003 (IRS/SRS, Guo et al.) can fail: a falsifier per headline.

A falsifier is a deliberately wrong mechanism, input or model, fed through the **same** pipeline as the
reproduction (a part's rounds -> :func:`dcnlab.reproduce.aggregation.model.summarise` ->
:func:`dcnlab.reproduce.aggregation.headlines.aggregation` -> the report's verdict rule), which must be judged
``deviates`` (or ``flat``). The first falsifier of a comparison is its null case: "X saves about 3% more than Y",
"X uses the fewest", "X uses fewer than Y" must fail when X is Y (a tie is not "fewest"; 0% is not "about 3%
less"); a trend over a sweep must fail when the quantity does not change over it. :data:`FALSIFIERS` says, per
headline, its falsifier in one phrase (``tests/test_falsifiers_000_003.py`` runs each);
:func:`falsified` applies one to a run's rounds.

000's waiting-time model rows have no falsifier: the paper gives no model of the waiting time, so they are
``not judged (no model in the paper)`` under any model, a wrong one included.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from dcnlab.reproduce.aggregation.headlines import PAPER_003, WORKED_TREES
from dcnlab.reproduce.aggregation.headlines_000 import WORD_COUNT

Rows = dict[str, list[dict[str, Any]]]
"""part -> the rows ``summarise`` takes (``{"point", "round", "result"}``)."""

_NAMES = {"srs": "SRS", "incast": "incast-based", "kmb": "Steiner-based (KMB)", "unicast": "unicast-based"}
_WHERE = {"003-k": "60×60 shuffles, BCube(6,k), k = 2..8 (Fig. 4(a), Table 1)",
          "003-size": "m = n = 50..1500, BCube(8,5) (Fig. 5)"}
_SENDERS = "senders v2 v5 v9 v10 v11 v14"
NO_FALSIFIER = "none: not judged (no model in the paper), under any model of the waiting time, a wrong one included"


def _saving(part: str, m: str) -> str:
    return f"{_NAMES[m]} saves {PAPER_003[part][m]:g}% vs no aggregation: {_WHERE[part]}"


FALSIFIERS: dict[str, str] = {
    **{_saving(part, m): f"{_NAMES[m]}'s trees aggregate nothing (its traffic is no aggregation's): 0% saved"
       for part in ("003-k", "003-size") for m in _NAMES},
    "SRS saves 28.78% with δ uniform on [0,1]: m = n = 250, BCube(8,5) (Fig. 6(a))":
        "merging gains nothing at any δ (SRS's traffic is no aggregation's on the whole curve): 0% saved",
    "SRS saves 45.05% with δ uniform on [0,1]: m = n = 1000, BCube(8,5) (Fig. 6(b))":
        "merging gains nothing at any δ (SRS's traffic is no aggregation's on the whole curve): 0% saved",
    "SRS uses fewer links than incast-based on BCube(6,k) (Fig. 4(b))": "null case: SRS is incast-based (ratio 1)",
    "SRS uses fewer aggregators than incast-based on BCube(6,k) (Fig. 4(c))":
        "null case: SRS is incast-based (ratio 1)",
    "As k grows, incast-based uses more aggregating servers (Fig. 4(c))":
        "null case: incast-based's aggregating servers do not change with k (each round's mean over k at every k)",
    "As k grows, unicast-based uses fewer aggregating servers (Fig. 4(c))":
        "null case: unicast-based's aggregating servers do not change with k (each round's mean over k at every k)",
    "SRS cuts the input size at each receiver (Fig. 4(d))":
        "null case: SRS's receivers take in what they take without aggregation (ratio 1)",
    "Steiner-based uses fewer aggregating servers than SRS (§6)": "null case: Steiner-based is SRS (ratio 1)",
    "The savings grow with m = n on BCube(8,5) (Fig. 5)":
        "null case: SRS's saving does not change with m = n (each round's mean over the sweep at every point)",
    "SRS traffic stays below unicast and no aggregation for every δ (Fig. 6)":
        "null case: SRS is unicast-based at every δ (ratio 1 at best)",
    **{f"IRS tree costs {cost}: {where}, BCube(4,1), {_SENDERS}":
       "no aggregation on the way (every sender's flow on its own shortest path: cost 2 × the Hamming distances)"
       for _, _, cost, _, where in WORKED_TREES},
    "SRS enters the shuffle to {v0, v3, v8} at v8, cost 42 (v0/v3/v8: 46/48/42; same senders, §2.3)":
        "formula (1) not applied: the group's head v0 is its entry (cost 46)",
    **{f"In-packet Bloom filter needs {bits} bits on BCube(6,{k}) (Table 2, formula (3))":
       "formula (3) with the wrong false-positive base 0.5 for 0.6185 (one hash function's rate)"
       for k, bits in ((3, 19), (4, 38), (7, 102))},
    "M2 carries about 3% less data than IRS-based, across network sizes, BCube(6,k), 120 senders (abstract)":
        "null case: M2 is IRS-based (0% less)",
    "M2 carries about 19% less data than IRS-based, across sender counts, 100..4000 on BCube(4,8) (abstract)":
        "null case: M2 is IRS-based (0% less)",
    "Shuffle+reduce wait about 2/3 shorter than without aggregation, across network sizes (Table 1: BCube(6,k), "
    "k = 2..6) (abstract)": NO_FALSIFIER,
    "Shuffle+reduce wait about 3/4 shorter than without aggregation, across sender counts (Table 2: 1000..3000 "
    "senders) (abstract)": NO_FALSIFIER,
    WORD_COUNT: "null case: BMv2 runs in which M2's jobs complete as without aggregation (0% shorter)",
    "Aggregation servers rise with k for M2 and IRS-based (Fig. 5(b))":
        "null case: M2's and IRS's aggregation servers do not change with k (each round's mean over k at every k)",
    "Aggregation servers fall with k for unicast (Fig. 5(b))":
        "null case: unicast's aggregation servers do not change with k (each round's mean over k at every k)",
    "M2 uses the fewest newly added servers (BCube(6,k), Fig. 5(c))": "null case: M2 is IRS-based (a tie)",
    "M2 uses the fewest links (BCube(6,k), Fig. 5(d))": "null case: M2 is IRS-based (a tie)",
    "M2 uses the fewest links (BCube(4,8), Fig. 6(b))": "null case: M2 is IRS-based (a tie)",
    "At the most senders M2 still carries the least data, below unicast and no aggregation (Fig. 6(a))":
        "null case: M2 is unicast-based (ratio 1)",
    "All in-network schemes sharply reduce the data arriving at the receiver (Fig. 5(e))":
        "null case: unicast's receiver takes in what it takes without aggregation (ratio 1)",
}
"""Per headline of 000 and 003 (its statement, the id in ``summary.json``), its falsifier in one phrase."""

SHUFFLE_KEYS = ("traffic", "links", "aggregators", "aggregators_summed", "receiver_input")
INCAST_KEYS = ("traffic", "links", "aggregators", "new_servers", "busiest", "receiver_input")


def same_as(rows: Sequence[Mapping[str, Any]], method: str, like: str, keys: Sequence[str]) -> list[dict[str, Any]]:
    """The null case "``method`` is ``like``": every round's ``keys`` of ``method`` replaced by ``like``'s."""
    out: list[dict[str, Any]] = [copy.deepcopy(dict(r)) for r in rows]
    for row in out:
        res = row["result"]
        for key in keys:
            if isinstance(res.get(key), dict) and like in res[key]:
                res[key][method] = copy.deepcopy(res[key][like])
        for per in (res.get("variants") or {}).values():         # 000: both IRS readings of every round
            if method in per and like in per:
                per[method] = per[like]
    return out


def constant(rows: Sequence[Mapping[str, Any]], method: str, keys: Sequence[str]) -> list[dict[str, Any]]:
    """The null case of a trend: each round's ``keys`` of ``method`` set to its mean over the sweep's points."""
    out: list[dict[str, Any]] = [copy.deepcopy(dict(r)) for r in rows]
    by_round: dict[Any, list[dict[str, Any]]] = {}
    for row in out:
        by_round.setdefault(row["round"], []).append(row["result"])
    for results in by_round.values():
        for key in keys:
            vals = [r[key][method] for r in results if isinstance(r.get(key), dict) and method in r[key]]
            if len(vals) != len(results) or not vals:
                continue
            if isinstance(vals[0], list):
                mean: Any = [sum(v[i] for v in vals) / len(vals) for i in range(len(vals[0]))]
            else:
                mean = sum(vals) / len(vals)
            for r in results:
                r[key][method] = copy.deepcopy(mean)
    return out


def constant_saving(rows: Sequence[Mapping[str, Any]], method: str) -> list[dict[str, Any]]:
    """The null case of "the savings grow": each round's saving of ``method`` the same at every point (its
    traffic set to no aggregation's times one minus the round's mean saving over the points)."""
    out: list[dict[str, Any]] = [copy.deepcopy(dict(r)) for r in rows]
    by_round: dict[Any, list[dict[str, Any]]] = {}
    for row in out:
        by_round.setdefault(row["round"], []).append(row["result"])
    for results in by_round.values():
        s = sum(1 - r["traffic"][method][0] / r["traffic"]["none"][0] for r in results) / len(results)
        for r in results:
            r["traffic"][method] = [(1 - s) * x for x in r["traffic"]["none"]]
    return out


def _worked_without_aggregation(worked: Mapping[str, Any]) -> dict[str, Any]:
    """The worked trees' costs without aggregation: 2 links × the Hamming distance per sender."""
    from dcnlab.controller.aggregation.labels import LabelSpace
    from dcnlab.reproduce.aggregation.headlines import SENDERS_41

    space = LabelSpace(4, 1)

    def dist(a: str, b: str) -> int:
        x, y = space.digits(int(a[1:])), space.digits(int(b[1:]))
        return int(sum(int(p != q) for p, q in zip(x, y)))

    trees = [dict(t, cost=float(2 * sum(dist(s, t["receiver"]) for s in SENDERS_41))) for t in worked["trees"]]
    return dict(worked, trees=trees)


Transform = Callable[[Rows, Mapping[str, Any], Mapping[str, Any] | None], tuple[Rows, Mapping[str, Any],
                                                                            Mapping[str, Any] | None]]


def _on(part: str, fn: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> Transform:
    def t(rows: Rows, worked: Mapping[str, Any], emu: Mapping[str, Any] | None) -> Any:
        return dict(rows, **{part: fn(rows[part])}), worked, emu
    return t


def _null_saving(method: str) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    return lambda rs: same_as(rs, method, "none", ("traffic",))


def transform(statement: str) -> Transform | None:
    """The falsifier of ``statement`` as a change of a run's inputs (rows per part, the worked examples, the
    BMv2 waiting-time JSON); None for a headline with nothing to judge (000's waiting-time models)."""
    S, I = SHUFFLE_KEYS, INCAST_KEYS
    for part in ("003-k", "003-size"):
        for m in _NAMES:
            if statement == _saving(part, m):
                return _on(part, _null_saving(m))
    table: dict[str, Transform] = {
        "SRS saves 28.78%": _on("003-delta", lambda rs: same_as(rs, "srs", "none", ("traffic",))),
        "SRS saves 45.05%": _on("003-delta", lambda rs: same_as(rs, "srs", "none", ("traffic",))),
        "SRS uses fewer links": _on("003-k", lambda rs: same_as(rs, "srs", "incast", ("links",))),
        "SRS uses fewer aggregators": _on("003-k", lambda rs: same_as(rs, "srs", "incast",
                                                                      ("aggregators", "aggregators_summed"))),
        "As k grows, incast-based": _on("003-k", lambda rs: constant(rs, "incast", ("aggregators",
                                                                                    "aggregators_summed"))),
        "As k grows, unicast-based": _on("003-k", lambda rs: constant(rs, "unicast", ("aggregators",
                                                                                      "aggregators_summed"))),
        "SRS cuts the input size": _on("003-k", lambda rs: same_as(rs, "srs", "none", ("receiver_input",))),
        "Steiner-based uses fewer": _on("003-k", lambda rs: same_as(rs, "kmb", "srs", S[2:4])),
        "The savings grow": _on("003-size", lambda rs: constant_saving(rs, "srs")),
        "SRS traffic stays below": _on("003-delta", lambda rs: same_as(rs, "srs", "unicast", ("traffic",))),
        "M2 carries about 3%": _on("000-k", lambda rs: same_as(rs, "m2", "irs", I)),
        "M2 carries about 19%": _on("000-size", lambda rs: same_as(rs, "m2", "irs", I)),
        "Aggregation servers rise": _on("000-k", lambda rs: constant(constant(rs, "m2", ("aggregators",)), "irs",
                                                                     ("aggregators",))),
        "Aggregation servers fall": _on("000-k", lambda rs: constant(rs, "unicast", ("aggregators",))),
        "M2 uses the fewest newly added servers": _on("000-k", lambda rs: same_as(rs, "m2", "irs", I)),
        "M2 uses the fewest links (BCube(6,k)": _on("000-k", lambda rs: same_as(rs, "m2", "irs", I)),
        "M2 uses the fewest links (BCube(4,8)": _on("000-size", lambda rs: same_as(rs, "m2", "irs", I)),
        "At the most senders": _on("000-size", lambda rs: same_as(rs, "m2", "unicast", ("traffic",))),
        "All in-network schemes": _on("000-k", lambda rs: same_as(rs, "unicast", "none", ("receiver_input",))),
    }
    for prefix, t in table.items():
        if statement.startswith(prefix):
            return t
    if statement.startswith("IRS tree costs"):
        return lambda rows, worked, emu: (rows, _worked_without_aggregation(worked), emu)
    if statement.startswith("SRS enters the shuffle"):
        return lambda rows, worked, emu: (rows, dict(worked, entry_costs=list(worked["entry_costs"])[:1]), emu)
    if statement == WORD_COUNT:
        return lambda rows, worked, emu: (rows, worked, {"waiting": dict((emu or {}).get("waiting") or {},
                                                                         saving=0.0)})
    if statement.startswith("In-packet Bloom filter"):
        return lambda rows, worked, emu: (rows, dict(worked, fp_base=0.5), emu)
    return None


def judged(rows: Rows, points: Mapping[str, Sequence[Any]], worked: Mapping[str, Any],
           emulation: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """statement -> headline: ``rows`` through the reproduction's pipeline (``summarise`` per part, the headlines,
    the report's rule; without the sensitivity marks, which ask for 3 seeds). ``worked["fp_base"]``, where set,
    is the false-positive base formula (3) is evaluated with (the Bloom filter's falsifier)."""
    from unittest import mock

    from dcnlab.controller.aggregation import bloom
    from dcnlab.reproduce.aggregation import headlines
    from dcnlab.reproduce.aggregation import model as am

    parts = {}
    for part, rs in rows.items():
        parts[part] = am.summarise(part, rs, points[part])
        parts[part]["rounds"] = len(rs) // max(1, len(points[part]))
    fixed = _bloom(float(worked.get("fp_base", bloom.FP_BASE)))
    with mock.patch.object(headlines, "_bloom_003", lambda: copy.deepcopy(fixed)):
        heads = headlines.aggregation(parts, emulation, {k: v for k, v in worked.items() if k != "fp_base"},
                                      sensitivity=False)
    return {h.statement: h for h in heads}


@lru_cache(maxsize=4)
def _bloom(base: float) -> list[Any]:
    """Table 2's headlines with formula (3) evaluated at the false-positive base ``base`` (a Monte Carlo: built
    once per base)."""
    from unittest import mock

    from dcnlab.controller.aggregation import bloom
    from dcnlab.reproduce.aggregation import headlines

    with mock.patch.object(bloom, "FP_BASE", base):
        return headlines._bloom_003()


def falsified(statement: str, rows: Rows, points: Mapping[str, Sequence[Any]], worked: Mapping[str, Any],
              emulation: Mapping[str, Any] | None = None) -> Any:
    """The headline ``statement`` judged under its falsifier (:func:`transform`) on the given inputs."""
    t = transform(statement)
    if t is None:
        rs, w, emu = rows, worked, emulation
    else:
        rs, w, emu = t(rows, worked, emulation)
    return judged(rs, points, w, emu)[statement]
