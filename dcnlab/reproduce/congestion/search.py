"""The sensitivity run of 002's open settings (IB CC bandwidth partition, ``dcnlab reproduce search 002``,
:mod:`dcnlab.report.search` with a ``preregistered`` searcher).

Every open setting of 002 is pre-registered from the paper's text alone (:mod:`dcnlab.results.open_settings`, each
with its sentence and its argument): Algorithm 1's resetting timer, CCTI_Timer 150 in 1.024 µs ticks,
Marking_Rate 0, C = 1, threshold level 15, the CCT 14 i²/11236 µs, 10 Gb/s links, BECNs per 100 ms and recovery
at 90%. The run is that setting, then every other reading the text admits, **one setting at a time** with the
rest pre-registered: Marking_Rate 1, 3, 7; C = 2, 4; levels 14, 12; the literal 1062; 8 Gb/s; 150 µs; BECNs per
second or per phase; recovery at 80% or 95%. The verdicts and counts are the pre-registered setting's; a
statement whose verdict changes under a reading depends on that setting (:func:`depends`; the headlines carry
it, :func:`dcnlab.reproduce.congestion.headlines.congestion`). Nothing is chosen by how many statements hold.

Each reading that changes the model (timer, Marking_Rate, C, threshold, denominator, link rate) runs every
scenario 002's statements read (Fig. 3 with and without CC, Theorem 1, Fig. 5 and its 1 ms recovery run, Fig. 4's
pinned QP); the runs without CC only change with the link rate; the window and the recovery threshold read the
same runs differently (:func:`apply`). The fluid model is deterministic (with Marking_Rate 0 every eligible
packet is marked; otherwise the marks are counted), so no reading is random and the figures carry no spread.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import asdict
from functools import lru_cache
from typing import Any

from dcnlab.reproduce.congestion.model import (
    DEFAULT_SETTING_002,
    build_scenarios,
    fairness_rates,
    summarize,
)
from dcnlab.results.summary import Headline

WINDOWS = ("per-100ms", "per-1s", "per-phase")
FRACTIONS = {"90%": 0.9, "80%": 0.8, "95%": 0.95}
"""The values of ``recovery-threshold`` -> the fraction of the new steady rate."""
WITHOUT_CC = ("fairness_cc_off", "fairness_cc_off_fifo", "fairness_cc_off_fifo_shared", "tenant_fair_meter")
"""Runs without a CC loop: only the link rate changes them."""
MODEL_SETTINGS = ("ccti-timer", "ccti-timer-value", "marking-rate", "becn-every", "threshold", "cct-denominator",
                  "link-rate")
"""The settings that change the model's runs (the others read the same runs)."""


def model_key(name: str, setting: Mapping[str, str]) -> tuple[str, ...]:
    """What a run of scenario ``name`` depends on under ``setting`` (equal keys: one run)."""
    if name in WITHOUT_CC:
        return ("-", setting["link-rate"])
    return tuple(setting[k] for k in MODEL_SETTINGS)


@lru_cache(maxsize=32)
def _scenarios(quick: bool, key: tuple[str, ...]) -> dict[str, Any]:
    setting = dict(zip(MODEL_SETTINGS, key)) if len(key) == len(MODEL_SETTINGS) else {"link-rate": key[1]}
    return {s.name: s for s in build_scenarios(quick, setting=setting, large=False)}


def scenarios(quick: bool, setting: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The reproduction's scenarios that 002's statements read under ``setting`` (default: pre-registered)."""
    st = dict(DEFAULT_SETTING_002, **(setting or {}))
    return _scenarios(quick, tuple(st[k] for k in MODEL_SETTINGS))


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
    """The reproduction's model summary (with ``fairness_rates``) under ``setting`` from its runs (name -> result)."""
    by = {name: s for name, s in scenarios(quick, setting).items() if name in runs}
    results = {name: (runs[name], 0.0) for name in by}
    order = list(by.values())
    summary = summarize(order, results)
    summary["fairness_rates"] = fairness_rates(order, results)
    return apply(summary, by, results, setting)


def _key(task: Hashable) -> tuple[str, tuple[str, ...], bool]:
    t: tuple[Any, ...] = tuple(task)  # type: ignore[arg-type]
    return str(t[0]), tuple(t[1]), bool(t[2])


class Search002:
    """002's sensitivity run (module docstring): the pre-registered setting, then each other reading alone."""

    paper = "002"
    preregistered = True

    def is_random(self, setting: Mapping[str, str]) -> bool:
        return False

    def tasks(self, setting: Mapping[str, str], draw: int, quick: bool) -> list[Hashable]:
        return [(name, model_key(name, setting), quick) for name in scenarios(quick, setting)]

    def run(self, task: Hashable) -> Any:
        name, key, quick = _key(task)
        return _scenarios(quick, key)[name].run()

    def seconds(self, task: Hashable) -> float:
        name, _, quick = _key(task)
        base = {"fairness_cc_off": 30.0, "fairness_cc_on": 13.0, "tenant_fair_cc": 20.0, "tenant_fair_meter": 14.0,
                "tenant_recovery": 19.0, "proportional_1_2": 4.0, "proportional_1_3": 3.0}.get(name, 1.0)
        return base / (5 if quick else 1)

    def headlines(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> list[Headline]:
        from dcnlab.reproduce.congestion import headlines

        quick = any(_key(t)[2] for t in results)
        runs = {}
        for name in scenarios(quick, setting):
            task = (name, model_key(name, setting), quick)
            if task in results:
                runs[name] = results[task]
        return headlines.congestion(model_summary(runs, setting, quick))

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        return {"note": "fluid model at the reproduction's scale (phases of 1 s for Fig. 3, 2 s for Fig. 5, the "
                        "1 ms recovery run with 2 s phases), the pre-registered setting and each other reading alone; "
                        "deterministic, so no figure has a spread" + (" (quick: phases of 0.3 and 0.4 s)" if quick else "")}


def depends(data: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Statement -> ``<setting> (<value>: <verdict>, ...)`` for every statement whose verdict under some reading
    differs from the pre-registered one's, from the committed sensitivity table (``search_tables/002.json``) or
    ``data``; a statement no reading flips is absent."""
    from dcnlab.results.open_settings import stored_search

    data = data if data is not None else stored_search("002")
    if not data or not data.get("candidates"):
        return {}
    base = next((c for c in data["candidates"] if c["setting"] == data["chosen"]), None)
    if base is None:
        return {}
    out: dict[str, dict[str, list[str]]] = {}
    for c in data["candidates"]:
        changed = [k for k, v in c["setting"].items() if data["chosen"].get(k) != v]
        if len(changed) != 1:
            continue
        name = changed[0]
        for st, pre in zip(c["statements"], base["statements"]):
            if st["verdict"] != pre["verdict"]:
                out.setdefault(st["statement"], {}).setdefault(name, []).append(
                    f"{c['setting'][name]}: {st['verdict']}")
    return {st: "; ".join(f"{name} ({', '.join(vals)})" for name, vals in by.items()) for st, by in out.items()}
