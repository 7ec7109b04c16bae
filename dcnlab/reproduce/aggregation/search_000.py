"""The sensitivity run of 000's open settings (M2 incast trees, :mod:`dcnlab.report.search`).

The reproduction runs 000's pre-registered setting (:mod:`dcnlab.results.open_settings`, each value fixed from
000's text alone: IRS as 000 describes it, each point of a sweep weighing the same, every sender count
m = 100..4000, the setup's k = 2..8). This module runs every other admissible reading, one setting at a time with
the rest pre-registered (:attr:`Search000.preregistered`): the IRS-based baseline with 003's intra-stage step
(``intra``), the pooled average, Table 2's sender counts and Table 1's k = 2..6. A headline whose verdict changes
under one of them depends on that setting (the headline table says so); the counts are the pre-registered
setting's. The waiting time's model is no setting (the paper gives none: its rows are not judged).

Every reading is read from the same rounds: ``reproduce all``'s rounds of parts ``000-k`` and ``000-size``
(:func:`dcnlab.reproduce.aggregation.search_seeds.plans`: 100 rounds per k, 10 per sender count; ``--quick``
its quick plan), shared out among the seeds 1, 2 and 3 as it shares them (100 rounds are 34 + 33 + 33,
:mod:`~.search_seeds`), each round computing both IRS variants, so the run costs one pass of the rounds. Each
reading's figures are over the pooled rounds, each seed's figure judged beside them
(:func:`dcnlab.results.summary.over_seeds`), as the headlines are: the pre-registered row of every headline is
the headline's figure (same setting, seeds, points and rounds). The members of a round are drawn from its seed,
so no setting is random.

The statements are 000's headlines (Fang et al., M2: :func:`dcnlab.reproduce.aggregation.headlines.aggregation`),
the model's figures only (the BMv2 word-count row has no model figure here).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from dcnlab.reproduce.aggregation import search_seeds
from dcnlab.results.summary import Headline

PARTS = ("000-k", "000-size")
K_POINTS = tuple(range(2, 9))
TABLE_1 = (2, 3, 4, 5, 6)
TABLE_2 = (1000, 1500, 2000, 3000)
IRS_NAMES = {"no-intra": "irs-nointra", "intra": "irs-intra"}
"""The values of the setting ``irs-baseline`` -> the round's names of the two IRS variants."""


def plans(quick: bool) -> dict[str, Any]:
    """``reproduce all``'s plans of 000's parts (every reading is judged on the rounds the reproduction runs, so
    the pre-registered reading's figures are the headlines')."""
    return search_seeds.plans(PARTS, quick)


def irs_round(part: str, point: int, rnd: int, seed: int = search_seeds.SEED) -> dict[str, Any]:
    """One round of ``part`` as ``reproduce all`` runs it at ``seed`` (both IRS readings scored in its
    ``variants``)."""
    from dcnlab.reproduce.aggregation import model as am

    n, k, m = (6, point, 120) if part == "000-k" else (4, 8, point)
    res = am._incast_round(n, k, m, (seed, am.PARTS.index(part), int(point), rnd))
    res.pop("seconds", None)
    return res


def _as_irs(res: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """A round's results with ``irs`` the given reading (:data:`IRS_NAMES`)."""
    name = IRS_NAMES[variant]
    variants = res.get("variants") or {}
    if name not in variants.get("traffic", {}):
        raise KeyError(f"000 sensitivity: a round without {name}")
    out: dict[str, Any] = {key: (dict(per, irs=variants[key][name]) if isinstance(per, dict) and key in variants
                                 else per) for key, per in res.items()}
    out["seconds"] = {a: 0.0 for a in ("m2", "mib", "mc")}
    return out


def summarise(part: str, rounds: Sequence[tuple[int, dict[str, Any]]], points: Sequence[int],
              setting: Mapping[str, str]) -> dict[str, Any] | None:
    """``reproduce aggregation``'s summary of ``part`` over ``points`` under ``setting`` (the IRS reading and 000's
    one averaging rule, :func:`dcnlab.reproduce.aggregation.model.summarise`) from ``(point, round's result)``
    in the order the reproduction pools them; None without a round."""
    from dcnlab.reproduce.aggregation import model as am

    rows = [{"point": p, "round": 0, "result": _as_irs(r, setting["irs-baseline"])} for p, r in rounds if p in points]
    if not rows:
        return None
    s = am.summarise(part, rows, points, setting)
    s["rounds"] = len(rows) // max(1, len(points))
    return s


def _key(task: Hashable) -> tuple[str, int, int, int]:
    """(part, point, round, seed) of a task."""
    t: tuple[Any, ...] = tuple(task)  # type: ignore[arg-type]
    return str(t[0]), int(t[1]), int(t[2]), int(t[3])


class Search000:
    paper = "000"
    preregistered = True
    """The setting is 000's pre-registered one; the others run as sensitivity readings (never chosen by a count)."""

    def is_random(self, setting: Mapping[str, str]) -> bool:
        return False

    def tasks(self, setting: Mapping[str, str], draw: int, quick: bool) -> list[Hashable]:
        """Every round of ``reproduce all``'s parts 000-k and 000-size, ``(part, point, round, seed)``."""
        return [(part, int(p), r, sd) for part, plan in plans(quick).items()
                for sd, r in search_seeds.seeded(plan.rounds) for p in plan.points]

    def run(self, task: Hashable) -> Any:
        part, point, rnd, seed = _key(task)
        return irs_round(part, point, rnd, seed)

    def seconds(self, task: Hashable) -> float:
        part, point, _, _ = _key(task)
        return 0.03 * point if part == "000-k" else 0.4 * point / 1000

    def headlines(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> list[Headline]:
        """000's model headlines under ``setting``, over the pooled rounds and judged beside each seed's."""
        from dcnlab.reproduce.aggregation import headlines

        ks = TABLE_1 if setting["k-sweep"] == "2..6" else K_POINTS
        keys = sorted((_key(t) for t in results), key=lambda k: (k[3], k[2]))     # seed, then round: as pooled
        got = {_key(t): r for t, r in results.items()}
        got_sizes = sorted({p for part, p, _, _ in keys if part == "000-size"})
        sizes = [p for p in got_sizes if p in TABLE_2] if setting["sender-sweep"] == "table-2" else got_sizes

        def build(seed: int | None) -> list[Headline]:
            by = {part: [(k[1], got[k]) for k in keys if k[0] == part and seed in (None, k[3])] for part in PARTS}
            pk = summarise("000-k", by["000-k"], ks, setting)
            ps = summarise("000-size", by["000-size"], sizes, setting)
            heads = headlines._headlines_000(pk, ps, None, lambda name: f"part {name} not run")
            return [h for h in heads if not h.emulated]     # BMv2's word-count incast: no model figure here

        return search_seeds.replicated(build, sorted({k[3] for k in keys}))

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        return {"note": search_seeds.note(plans(quick)) + "; every reading is judged on them, the figures over the "
                "pooled rounds and each seed's judged beside them, as the headlines are: the pre-registered row is "
                "the headline's figure"}
