"""The search of 002's open settings (IB CC bandwidth partition, :mod:`dcnlab.report.search`).

Searched (:mod:`dcnlab.results.open_settings`): the CCTI timer's semantics (``reset``: Algorithm 1,
a BECN restarts the timer; ``free``: the specification's free-running timer), the window the BECN counts
790/480/320 are counted in (``per-100ms``, ``per-1s``, ``per-phase``) and when a flow has "recovered"
after a departure (``90%``, ``80%``, ``95%`` of its new steady rate). 18 settings.

The timer changes every run with CC, so each scenario of ``dcnlab reproduce congestion``'s model
backend that has CC (Fig. 3(b), Theorem 1, Fig. 5 and its 1 ms recovery run, Fig. 4's pinned QP) runs
once per semantics; the runs without CC (Fig. 3(a) under round robin and FIFO, the meter mode) run once.
The large-scale exploration is no statement of the paper and does not run. The window and the recovery
threshold only read the same runs differently (:func:`apply`). The fluid model is deterministic
(``Marking_Rate`` counts packets), so no setting is random.

The statements are 002's headlines (:func:`dcnlab.reproduce.congestion.headlines.congestion`), the model's
figures, from the summary ``reproduce congestion`` computes (:func:`dcnlab.reproduce.congestion.model.summarize`)
with the setting applied.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import asdict
from functools import lru_cache
from typing import Any

from dcnlab.reproduce.congestion.model import (
    build_scenarios,
    fairness_rates,
    summarize,
    with_timer,
)
from dcnlab.results.summary import Headline

TIMERS = ("reset", "free")
WINDOWS = ("per-100ms", "per-1s", "per-phase")
FRACTIONS = {"90%": 0.9, "80%": 0.8, "95%": 0.95}
"""The values of ``recovery-threshold`` -> the fraction of the new steady rate."""
WITHOUT_CC = ("fairness_cc_off", "fairness_cc_off_fifo", "fairness_cc_off_fifo_shared", "tenant_fair_meter")
"""Runs the timer cannot change (no CC loop): run once, under the name ``-``."""


@lru_cache(maxsize=2)
def scenarios(quick: bool) -> dict[str, Any]:
    """The reproduction's scenarios that 002's statements read (its large-scale exploration left out)."""

    return {s.name: s for s in build_scenarios(quick) if not s.name.startswith("large_")}


def becn_window(s: Any, r: Any, window: str) -> dict[int, float]:
    """BECNs at D->B's source in the first phase with 1, 2 and 3 tenant-2 flows, counted per ``window``:
    the settled mean (the last three quarters of the phase) per 100 ms or per second, or every BECN of the
    phase (transients included)."""
    import numpy as np

    from dcnlab.controller.congestion import scenarios as sc

    out: dict[int, float] = {}
    db = r.column("D->B")
    t = np.asarray(r.times)
    for ph, w in zip(sc.summarize_tenants(s, r), s.windows):
        n = ph.tenant2_flows
        if n in out:
            continue
        if window == "per-phase":
            inside = (t > w.t0 + 1e-9) & (t <= w.t1 + 1e-9)
            out[n] = float(r.becns[inside, db].sum())
        else:
            out[n] = ph.becn_per_s * (0.1 if window == "per-100ms" else 1.0)
    return out


def apply(summary: dict[str, Any], by: Mapping[str, Any], results: Mapping[str, Any],
          setting: Mapping[str, str]) -> dict[str, Any]:
    """``summary`` (of :func:`dcnlab.reproduce.congestion.model.summarize`) with the BECN counts in ``setting``'s window and
    the recovery times at its threshold. ``by``: name -> scenario; ``results``: name -> (result, seconds)."""
    from dcnlab.controller.congestion import scenarios as sc

    out = dict(summary)
    counts = becn_window(by["tenant_fair_cc"], results["tenant_fair_cc"][0], setting["becn-window"])
    base = counts.get(1) or float("nan")
    out["becn_per_sample"] = dict(summary["becn_per_sample"], window=setting["becn-window"],
                                  model={str(k): v for k, v in sorted(counts.items())},
                                  model_normalized=[counts[k] / base for k in (1, 2, 3)])
    if "tenant_recovery" in by:
        rec = sc.summarize_recovery(by["tenant_recovery"], results["tenant_recovery"][0],
                                    FRACTIONS[setting["recovery-threshold"]])
        out["recovery"] = asdict(rec)
    return out


def model_summary(runs: Mapping[str, Any], setting: Mapping[str, str], quick: bool) -> dict[str, Any]:
    """The reproduction's model summary (with ``fairness_rates``) under ``setting`` from the runs
    (name -> result) of its timer."""

    by = {name: with_timer(s, setting["ccti-timer"]) for name, s in scenarios(quick).items() if name in runs}
    results = {name: (runs[name], 0.0) for name in by}
    order = list(by.values())
    summary = summarize(order, results)
    summary["fairness_rates"] = fairness_rates(order, results)
    return apply(summary, by, results, setting)


def _key(task: Hashable) -> tuple[str, str, bool]:
    t: tuple[Any, ...] = tuple(task)  # type: ignore[arg-type]
    return str(t[0]), str(t[1]), bool(t[2])


class Search002:
    paper = "002"

    def is_random(self, setting: Mapping[str, str]) -> bool:
        return False

    def tasks(self, setting: Mapping[str, str], draw: int, quick: bool) -> list[Hashable]:
        timer = setting["ccti-timer"]
        return [(name, "-" if name in WITHOUT_CC else timer, quick) for name in scenarios(quick)]

    def run(self, task: Hashable) -> Any:
        name, timer, quick = _key(task)
        s = scenarios(quick)[name]
        return with_timer(s, "reset" if timer == "-" else timer).run()

    def seconds(self, task: Hashable) -> float:
        name, _, quick = _key(task)
        base = {"fairness_cc_off": 30.0, "fairness_cc_on": 13.0, "tenant_fair_cc": 20.0, "tenant_fair_meter": 14.0,
                "tenant_recovery": 19.0, "proportional_1_2": 4.0, "proportional_1_3": 3.0}.get(name, 1.0)
        return base / (5 if quick else 1)

    def headlines(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> list[Headline]:
        from dcnlab.reproduce.congestion import headlines

        timer = setting["ccti-timer"]
        runs = {}
        for task, res in results.items():
            name, t, quick = _key(task)
            if t in ("-", timer):
                runs[name] = res
        quick = any(_key(t)[2] for t in results)
        return headlines.congestion(model_summary(runs, setting, quick))

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        return {"note": "fluid model at the reproduction's scale (phases of 1 s for Fig. 3, 2 s for Fig. 5, the "
                        "1 ms recovery run with 2 s phases), every run with CC once per timer semantics"
                        + (" (quick: phases of 0.3 and 0.4 s)" if quick else "")}
