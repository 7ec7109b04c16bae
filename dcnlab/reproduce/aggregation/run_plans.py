"""The model sweep's plans of ``dcnlab reproduce all`` (points and rounds per part, in each mode), which both the
reproduction (:mod:`dcnlab.reproduce.aggregation.reproduction`) and 000's readings
(:mod:`dcnlab.reproduce.aggregation.readings_000`) run, so the starred reading is the headline's figure."""

from __future__ import annotations

from typing import Any

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
