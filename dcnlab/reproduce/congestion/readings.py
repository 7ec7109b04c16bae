"""IB CC partitioning (Zhang et al., 002): readings of Fig. 5(b)'s BECN counts 790 / 480 / 320, of Fig. 5(a)'s
recovery times after departures (2 s and 1 s) and of Fig. 4's CCT rate limit (100 Mb/s at 20.48 µs).

§5 (experiment 2): the D->B source, captured with ``ibdump``, receives "790, 480 and 320"
BECNs with 1, 2 and 3 tenant-2 flows; the paper calls the ratio "5:3:2" (1 : 0.61 : 0.41) and close to
the allocation 1 : 1/2 : 1/3. The sampling interval is not stated; the only interval the text gives is
Fig. 3's "throughput is sampled every 100 ms". The fluid model (:mod:`dcnlab.controller.congestion.fluid`)
runs the scenario of :func:`dcnlab.controller.congestion.scenarios.tenant_fair` (phases of 2 s:
1 -> 2 -> 3 -> 2 -> 1 tenant-2 flows, the policy pushing ``CCTI_Increase`` = tenant 2's flow count).

Readings of the count (headlines ``002-becn-<n>flows``, unit BECNs, a count: exact):

* ``per-100ms`` (the reproduction's): the settled mean (the last three quarters of each phase) per 100 ms sample,
  Fig. 3's sampling interval;
* ``per-1s``: the same mean per second;
* ``per-phase``: all BECNs of the phase (2 s, transients included), as a count per phase of the schedule;
* ``median-100ms``: the median of the phase's 100 ms samples (a figure's "very stable" level).

Each window is read under both timer semantics (the paper's Algorithm 1 and the specification differ):
``reset`` (Algorithm 1, the pre-registered reading: ``dcnlab.reproduce.congestion.model.DEFAULT_SETTING_002``) and
``free`` (the specification's free-running timer, which Algorithm 1 rules out), suffixed ``/reset`` and ``/free``;
every other setting is the pre-registered one (``model.model_config``). The ratio headlines ``002-becn-ratio-2`` and ``002-becn-ratio-3`` (0.608 and 0.405 of the
1-flow count, unit ratio) are read the same ways (the 1 s and 100 ms windows give the same ratio, so
only ``settled``, ``per-phase`` and ``median`` are listed). ``quick``: phases of 0.4 s.

**Recovery after departures** (002 §5, Fig. 5(a): after flows leave, tenant 2's remaining flows speed up
"relatively slowly", over 5-7 s and 7-8 s: 2 s after the first departure, 1 s after the second). The
model's schedule of (c) sampled every 1 ms (:func:`~dcnlab.controller.congestion.scenarios.tenant_recovery`,
phases of 2 s; ``quick``: 0.2 s, which gives the same times within 2 ms). Headlines ``002-recovery-1st``
and ``002-recovery-2nd`` (unit s, against 2 and 1) and ``002-recovery-ratio`` (1st / 2nd, unit ratio, against
2), each within 10%. Readings: the recovery threshold, ``90%`` (the reproduction's), ``80%`` or ``95%`` of each
remaining flow's new steady rate, under timer ``reset`` (Algorithm 1) or ``free`` (the specification's).

**CCT rate limit** (002 §5, Fig. 4: CCTI fixed at 1, 4 x 1024-byte packets per IRD comparison,
"(1024 x 8) / (20.48 x 4 x 10^-6) = 100MB", 204.8 µs "10MB", 2.048 µs "1GB"). Headlines
``002-cct-<IRD>us`` (unit Mb/s, against the paper's 1000 / 100 / 10, within 10%). Each reading is the model's
measured rate of one QP alone with CCTI pinned (:func:`~dcnlab.controller.congestion.scenarios.cct_rate_limit`):
``aggregate-4`` (today's: Algorithm 2, 4 packets per IRD), ``per-packet`` (one packet per IRD) and
``paper-formula`` (one packet per four IRDs: the only pacing the paper's arithmetic describes). The
paper's "MB" as megabytes (800 Mb/s at 20.48 µs) matches none of them.
"""

from __future__ import annotations

import math
import os
import time
from functools import lru_cache
from typing import Any

import numpy as np

from dcnlab.controller.congestion.params import TimerMode
from dcnlab.results.readings import Reading
from dcnlab.sweep.pool import run_all

PAPER = {1: 790.0, 2: 480.0, 3: 320.0}
TIMER_MODES: tuple[TimerMode, ...] = ("reset", "free")


RECOVERY_FRACTIONS = (0.9, 0.8, 0.95)
"""Recovery thresholds (fraction of the new steady rate); the first is the reproduction's."""


def _default() -> dict[str, str]:
    """002's setting as the reproduction runs it (``dcnlab.reproduce.congestion.model.DEFAULT_SETTING_002``)."""
    from dcnlab.reproduce.congestion.model import DEFAULT_SETTING_002

    return DEFAULT_SETTING_002


def _timer() -> TimerMode:
    return "free" if _default()["ccti-timer"] == "free" else "reset"
CCT_READINGS = {"aggregate-4": ("4 x 1024 B per IRD (Algorithm 2, the model's pacer)", 4, 1.0),
                "per-packet": ("one 1024 B packet per IRD", 1, 1.0),
                "paper-formula": ("one 1024 B packet per four IRDs (the paper's arithmetic as a pacing)", 1, 4.0)}
"""Reading -> (description, packets per interval, interval in IRDs)."""


def _task(kind: str, timer_mode: TimerMode, phase_s: float) -> dict[str, Any]:
    """One model run of the fan-out: ``becn`` (:func:`_run`) or ``recovery`` (:func:`_recovery`)."""
    return _run(timer_mode, phase_s) if kind == "becn" else _recovery(timer_mode, phase_s)


def _recovery(timer_mode: TimerMode, phase_s: float) -> dict[str, Any]:
    """Fig. 5(a) at 1 ms: recovery times after the two departures per threshold of :data:`RECOVERY_FRACTIONS`."""
    from dcnlab.controller.congestion import scenarios as sc

    from dcnlab.reproduce.congestion.model import model_config, with_setting

    s = with_setting(sc.tenant_recovery(phase_s, timer_mode=timer_mode, config=model_config()), {"ccti-timer": timer_mode})
    t0 = time.perf_counter()
    r = s.run()
    return {"seconds": time.perf_counter() - t0, "sample_s": r.sample_s, "phase_s": phase_s,
            "recovery": {f: list(sc.summarize_recovery(s, r, f).recovery_s) for f in RECOVERY_FRACTIONS}}


def _cct(ird_us: float, reading: str) -> tuple[float, float]:
    """The model's measured rate (Mb/s) of one QP pinned to ``ird_us`` under a reading of :data:`CCT_READINGS`,
    and the seconds simulated."""
    from dcnlab.controller.congestion import scenarios as sc

    from dcnlab.reproduce.congestion.model import model_config

    _, packets, irds = CCT_READINGS[reading]
    s = sc.cct_rate_limit(ird_us * irds, packets, config=model_config())
    return sc.summarize_cct(s, s.run()).measured_bps / 1e6, s.duration_s


def _run(timer_mode: TimerMode, phase_s: float) -> dict[str, Any]:
    """One tenant-fairness run; per phase: settled BECN rate, whole-phase count, median 100 ms sample."""
    from dcnlab.controller.congestion import scenarios as sc

    from dcnlab.reproduce.congestion.model import model_config, with_setting

    s = with_setting(sc.tenant_fair(phase_s, "cc", config=model_config()), {"ccti-timer": timer_mode})
    t0 = time.perf_counter()
    r = s.run()
    db = r.column("D->B")
    out: dict[str, Any] = {"seconds": time.perf_counter() - t0, "sample_s": r.sample_s, "phase_s": phase_s,
                           "phases": []}
    for ph, w, n in zip(sc.summarize_tenants(s, r), s.windows, s.meta["tenant2_flows"]):
        t = np.asarray(r.times)
        inside = (t > w.t0 + 1e-9) & (t <= w.t1 + 1e-9)
        samples = r.becns[inside, db]
        out["phases"].append({"flows": n, "rate": ph.becn_per_s, "total": float(samples.sum()),
                              "median": float(np.median(samples)) * 0.1 / r.sample_s})
    return out


@lru_cache(maxsize=4)
def _runs(quick: bool, workers: int) -> tuple[dict[str, dict[str, Any]], float, float, dict[str, dict[str, Any]],
                                              float]:
    """The BECN runs and the recovery runs (one fan-out), per timer mode; their wall time and phases."""
    phase, rec_phase = (0.4, 0.2) if quick else (2.0, 2.0)
    t0 = time.perf_counter()
    tasks = [("becn", m, phase) for m in TIMER_MODES] + [("recovery", m, rec_phase) for m in TIMER_MODES]
    res = run_all(_task, tasks, workers)
    n = len(TIMER_MODES)
    return (dict(zip(TIMER_MODES, res[:n])), time.perf_counter() - t0, phase, dict(zip(TIMER_MODES, res[n:])),
            rec_phase)


def _first(phases: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """The first phase with ``n`` tenant-2 flows (1 -> 2 -> 3 -> 2 -> 1: the rising half)."""
    return next(p for p in phases if p["flows"] == n)


def readings(quick: bool, workers: int) -> list[Reading]:
    workers = max(1, workers or os.cpu_count() or 1)
    runs, wall, phase, recs, rec_phase = _runs(quick, workers)
    ran = {runs[m]["phase_s"] for m in TIMER_MODES}
    setting = (f"fluid model, phases of {'/'.join(f'{p:g}' for p in sorted(ran))} s, D->B source; {wall:.0f} s wall "
               "for both timer modes and the recovery runs")
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
                                   float(fn(p)), PAPER[n], "BECNs", wname == _default()["becn-window"] and mode == _timer(),
                                   setting, runs[mode]["seconds"], kind="count"))
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
                                   val, PAPER[n] / PAPER[1], "ratio", wname == "settled" and mode == _timer(), setting))
    return out + _recovery_readings(recs) + _cct_readings()


def _recovery_readings(recs: dict[str, dict[str, Any]]) -> list[Reading]:
    """``002-recovery-1st``, ``-2nd`` (seconds against 2 and 1) and ``-ratio`` (against 2)."""
    from dcnlab.controller.congestion.scenarios import PAPER_RECOVERY_S

    phases = sorted({r["phase_s"] for r in recs.values()})
    samples = sorted({r["sample_s"] for r in recs.values()})
    setting = (f"fluid model, Fig. 5(a)'s schedule with phases of {'/'.join(f'{p:g}' for p in phases)} s sampled "
               f"every {'/'.join(f'{1000 * x:g}' for x in samples)} ms")
    out: list[Reading] = []
    variants = [(f, m) for f in RECOVERY_FRACTIONS for m in TIMER_MODES if m == "reset" or f == RECOVERY_FRACTIONS[0]]
    chosen = float(_default()["recovery-threshold"].rstrip("%")) / 100
    for head, paper, pick in (("002-recovery-1st", PAPER_RECOVERY_S[0], lambda x: x[0]),
                              ("002-recovery-2nd", PAPER_RECOVERY_S[1], lambda x: x[1]),
                              ("002-recovery-ratio", PAPER_RECOVERY_S[0] / PAPER_RECOVERY_S[1],
                               lambda x: x[0] / x[1] if x[1] else math.nan)):
        for f, mode in variants:
            got = recs[mode]["recovery"][f]
            value = math.nan if None in got else float(pick(got))
            ratio = head.endswith("ratio")
            what = "1st / 2nd recovery" if ratio else "seconds"
            out.append(Reading(head, f"{f:.0%}/{mode}", f"{what}, until each remaining flow first reaches {f:.0%} of "
                                                       f"its new steady rate; timer {mode}", value, paper,
                               "ratio" if ratio else "s", f == chosen and mode == _timer(), setting,
                               recs[mode]["seconds"] if head.endswith("1st") else 0.0, kind="ratio"))
    return out


def _cct_readings() -> list[Reading]:
    """``002-cct-<IRD>us``: the pinned QP's rate (Mb/s) under each reading of the pacing."""
    from dcnlab.controller.congestion.scenarios import PAPER_FIG4_MBPS

    out: list[Reading] = []
    for ird, paper in sorted(PAPER_FIG4_MBPS.items(), key=lambda kv: -kv[1]):
        got = {name: _cct(ird, name) for name in CCT_READINGS}
        durations = sorted({d for _, d in got.values()})
        setting = (f"fluid model, one QP alone, CCTI_Min = CCTI_Limit = 1, "
                   f"{'/'.join(f'{1000 * d:g}' for d in durations)} ms simulated")
        for name, (desc, _, _) in CCT_READINGS.items():
            out.append(Reading(f"002-cct-{ird:g}us", name, f"{desc}; at most the link rate", got[name][0], paper,
                               "Mb/s", name == "aggregate-4", setting, kind="ratio"))
    return out
