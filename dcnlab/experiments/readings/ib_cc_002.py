"""002 (IB CC bandwidth partition): readings of Fig. 5(b)'s BECN counts 790 / 480 / 320.

002 §5 (report 002 §6.4): the D->B source, captured with ``ibdump``, receives "790, 480 and 320"
BECNs with 1, 2 and 3 tenant-2 flows; the paper calls the ratio "5:3:2" (1 : 0.61 : 0.41) and close to
the allocation 1 : 1/2 : 1/3. The sampling interval is not stated; the only interval the text gives is
Fig. 3's "throughput is sampled every 100 ms". The fluid model (:mod:`dcnlab.controller.congestion.fluid`)
runs the scenario of :func:`dcnlab.controller.congestion.scenarios.tenant_fair` (phases of 2 s:
1 -> 2 -> 3 -> 2 -> 1 tenant-2 flows, the policy pushing ``CCTI_Increase`` = tenant 2's flow count).

Readings of the count (headlines ``002-becn-<n>flows``, unit count):

* ``per-100ms`` (today's): the settled mean (the last three quarters of each phase) per 100 ms sample,
  Fig. 3's sampling interval;
* ``per-1s``: the same mean per second;
* ``per-phase``: all BECNs of the phase (2 s, transients included), as a count per phase of the schedule;
* ``median-100ms``: the median of the phase's 100 ms samples (a figure's "very stable" level).

Each window is read under both timer semantics (report 002 §7.2): ``reset`` (Algorithm 1, the
model's default) and ``free`` (the specification's free-running timer), suffixed ``/reset`` and
``/free``. The ratio headlines ``002-becn-ratio-2`` and ``002-becn-ratio-3`` (0.608 and 0.405 of the
1-flow count, unit ratio) are read the same ways (the 1 s and 100 ms windows give the same ratio, so
only ``settled``, ``per-phase`` and ``median`` are listed). ``quick``: phases of 0.4 s.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from dcnlab.controller.congestion.params import TimerMode
from dcnlab.experiments.pool import run_all
from dcnlab.experiments.readings import Reading

PAPER = {1: 790.0, 2: 480.0, 3: 320.0}
TIMER_MODES: tuple[TimerMode, ...] = ("reset", "free")


def _run(timer_mode: TimerMode, phase_s: float) -> dict[str, Any]:
    """One tenant-fairness run; per phase: settled BECN rate, whole-phase count, median 100 ms sample."""
    from dcnlab.controller.congestion import scenarios as sc

    s = sc.tenant_fair(phase_s, "cc")
    if timer_mode != "reset":
        s = replace(s, flows=tuple(replace(f, params=replace(f.params, timer_mode=timer_mode)) for f in s.flows),
                    changes=tuple(replace(c, params=replace(c.params, timer_mode=timer_mode)) for c in s.changes))
    t0 = time.perf_counter()
    r = s.run()
    db = r.column("D->B")
    out: dict[str, Any] = {"seconds": time.perf_counter() - t0, "sample_s": r.sample_s, "phases": []}
    for ph, w, n in zip(sc.summarize_tenants(s, r), s.windows, s.meta["tenant2_flows"]):
        t = np.asarray(r.times)
        inside = (t > w.t0 + 1e-9) & (t <= w.t1 + 1e-9)
        samples = r.becns[inside, db]
        out["phases"].append({"flows": n, "rate": ph.becn_per_s, "total": float(samples.sum()),
                              "median": float(np.median(samples)) * 0.1 / r.sample_s})
    return out


@lru_cache(maxsize=4)
def _runs(quick: bool, workers: int) -> tuple[dict[str, dict[str, Any]], float, float]:
    phase = 0.4 if quick else 2.0
    t0 = time.perf_counter()
    res = run_all(_run, [(m, phase) for m in TIMER_MODES], workers)
    return dict(zip(TIMER_MODES, res)), time.perf_counter() - t0, phase


def _first(phases: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """The first phase with ``n`` tenant-2 flows (1 -> 2 -> 3 -> 2 -> 1: the rising half)."""
    return next(p for p in phases if p["flows"] == n)


def readings(quick: bool, workers: int) -> list[Reading]:
    workers = max(1, workers or os.cpu_count() or 1)
    runs, wall, phase = _runs(quick, workers)
    setting = f"fluid model, phases of {phase:g} s, D->B source; {wall:.0f} s wall for both timer modes"
    windows = {"per-100ms": ("settled mean per 100 ms sample (Fig. 3's sampling interval)", lambda p: p["rate"] * 0.1),
               "per-1s": ("settled mean per second", lambda p: p["rate"]),
               "per-phase": (f"all BECNs of the {phase:g} s phase, transients included", lambda p: p["total"]),
               "median-100ms": ("median 100 ms sample of the phase", lambda p: p["median"])}
    out: list[Reading] = []
    for n in (1, 2, 3):
        for wname, (desc, fn) in windows.items():
            for mode in TIMER_MODES:
                p = _first(runs[mode]["phases"], n)
                out.append(Reading(f"002-becn-{n}flows", f"{wname}/{mode}",
                                   f"{desc}; timer {mode}" + (" (Algorithm 1)" if mode == "reset" else " (spec)"),
                                   float(fn(p)), PAPER[n], "count", wname == "per-100ms" and mode == "reset",
                                   setting, runs[mode]["seconds"]))
    ratio_windows = {"settled": ("settled means (any window length)", lambda p: p["rate"]),
                     "per-phase": ("whole-phase counts, transients included", lambda p: p["total"]),
                     "median": ("median 100 ms samples", lambda p: p["median"])}
    for n in (2, 3):
        for wname, (desc, fn) in ratio_windows.items():
            for mode in TIMER_MODES:
                ph = runs[mode]["phases"]
                base = fn(_first(ph, 1))
                val = fn(_first(ph, n)) / base if base else float("nan")
                out.append(Reading(f"002-becn-ratio-{n}", f"{wname}/{mode}", f"{n} flows : 1 flow, {desc}; timer {mode}",
                                   val, PAPER[n] / PAPER[1], "ratio", wname == "settled" and mode == "reset", setting))
    return out
