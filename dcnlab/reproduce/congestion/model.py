"""IB CC partitioning (Zhang et al., 002) on the model backend (the paper's §5; :mod:`dcnlab.controller.congestion.scenarios` on
:mod:`dcnlab.controller.congestion.fluid`): the paper's experiments at paper scale in IB time plus a large-scale
exploration (hundreds of flows and tenants), run on the pool, and the checks of the paper's figures.

Also (a) without CC on one FIFO queue (BMv2's arbitration; A and B on their own inputs or on one shared input,
as BMv2 runs them), (c') the recovery after Fig. 5(a)'s departures at 1 ms resolution and (d) Fig. 4's CCT
rate limit (one QP pinned to an IRD). The plots are :mod:`dcnlab.reproduce.congestion.plots`'s.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcnlab.controller.congestion.params import TimerMode


GBPS = 1e9
BACKEND_NOTE = "model backend (fluid model of the IB CC loop, paper scale)"


BMV2_NOTE = "BMv2 backend (emulation: BMv2 switches, Mininet hosts, congestion agents)"


TENANT_TOLERANCE = 0.10
"""The targets of ours (meters, the FIFO variants, the large runs); the paper's rows are judged by the report's
one rule instead (:func:`judged`)."""


PARKING_PHASE_S = 0.01
"""Phases of the FIFO variants of (a) without CC: no control loop runs, the shares settle within one
buffer fill (128 packets, 0.13 ms), so 10 ms phases (20 ms of four active flows) measure them."""


RECOVERY_PHASE_QUICK_S = 0.2
"""(c')'s phases with ``--quick`` (2 s, the paper's, otherwise): the recovery times do not depend on it."""


CCT_IRDS_US = (2.048, 20.48, 204.8)
"""Fig. 4's IRDs (µs)."""


def _preregistered() -> dict[str, str]:
    from dcnlab.results.open_settings import searched

    return {o.name: o.candidates[0] for o in searched("002")}


DEFAULT_SETTING_002 = _preregistered()
"""002's open settings (:mod:`dcnlab.results.open_settings`) as the model backend runs them: the pre-registered
reading of each, fixed from the paper's text alone before any result (the sentence and the argument are in
``open_settings``; a test checks that they are the same). :func:`model_config` and :func:`with_setting` turn a setting
into the model's parameters; :func:`summarize` counts BECNs per 100 ms sample and recovery at 90%
(``scenarios.RECOVERY_FRACTION``). Every other reading runs as a sensitivity reading (``dcnlab reproduce search 002``,
:mod:`dcnlab.reproduce.congestion.search`; the table is ``dcnlab/results/search_tables/002.json``)."""

TIMER_TICKS = {"150x1.024us": 150, "150us": 146}
"""``ccti-timer-value`` -> the CCTI_Timer field: Table 1's 150 in 1.024 µs ticks, or 150 µs (146 ticks, 149.5 µs)."""


def model_config(setting: dict[str, str] | None = None) -> Any:
    """The fluid model's configuration under 002's ``setting`` (default: the pre-registered one): the link's data
    rate, the marking threshold level and Marking_Rate, C and the CCT's denominator."""
    from dcnlab.controller.congestion.cct import Cct
    from dcnlab.controller.congestion.fluid import Link, ModelConfig
    from dcnlab.controller.congestion.params import ReceiverParams, SwitchParams

    st = dict(DEFAULT_SETTING_002, **(setting or {}))
    return ModelConfig(link=Link(rate_bps=float(st["link-rate"]) * 1e9),
                       switch=SwitchParams(threshold=int(st["threshold"]), marking_rate=int(st["marking-rate"])),
                       receiver=ReceiverParams(becn_every=int(st["becn-every"])),
                       cct=Cct.paper(denominator=float(st["cct-denominator"])))


def with_setting(s: Any, setting: dict[str, str] | None = None) -> Any:
    """``s`` with every flow's (and push's) CCTI timer as 002's ``setting`` says: its semantics and its value."""
    from dataclasses import replace

    st = dict(DEFAULT_SETTING_002, **(setting or {}))
    s = with_timer(s, st["ccti-timer"])
    ticks = TIMER_TICKS[st["ccti-timer-value"]]
    if all(f.params.ccti_timer == ticks for f in s.flows) and all(c.params.ccti_timer == ticks for c in s.changes):
        return s
    return replace(s, flows=tuple(replace(f, params=replace(f.params, ccti_timer=ticks)) for f in s.flows),
                   changes=tuple(replace(c, params=replace(c.params, ccti_timer=ticks)) for c in s.changes))


def _large_points(quick: bool) -> list[tuple[int, int, TimerMode, int]]:
    """(flows, tenants, timer mode, seed) of the large-scale exploration."""
    if quick:
        return [(32, 8, "reset", 1), (128, 32, "reset", 1), (256, 64, "free", 1)]
    modes: tuple[TimerMode, ...] = ("reset", "free")
    return [(n, t, mode, 1) for n, t in ((32, 8), (128, 16), (128, 64), (256, 32), (256, 128), (512, 128))
            for mode in modes]


def build_scenarios(quick: bool, policies: tuple[str, ...] = (), setting: dict[str, str] | None = None,
                    large: bool = True) -> list[Any]:
    """Every scenario of the reproduction under 002's ``setting`` (default: the pre-registered one); the longest
    first so that the worker pool stays balanced. Each of ``policies`` (``--policy``) adds the tenant experiment
    (c), CC and meter mode, under that policy; ``large``: with the large-scale exploration."""
    from dataclasses import replace

    from dcnlab.controller.congestion import scenarios as sc

    cfg = model_config(setting)
    phase_a, phase_c, dur_b = (0.3, 0.4, 0.6) if quick else (1.0, 2.0, 2.0)
    large_dur, large_warm = (0.4, 0.2) if quick else (0.6, 0.3)
    out = [sc.fairness_incast(False, phase_a, cfg), sc.fairness_incast(True, phase_a, cfg),
           sc.tenant_fair(phase_c, "cc", config=cfg), sc.tenant_fair(phase_c, "meter", config=cfg),
           sc.tenant_recovery(RECOVERY_PHASE_QUICK_S if quick else phase_c, config=cfg),
           sc.proportional(2, dur_b, config=cfg), sc.proportional(3, dur_b, config=cfg)]
    out += [sc.tenant_fair(phase_c, mode, config=cfg, policy=p) for p in dict.fromkeys(policies)
            if p != "tenant-fair" for mode in ("cc", "meter")]
    out += [sc.fairness_incast(False, PARKING_PHASE_S,
                               replace(sc.fifo_config(shared, cfg), sample_s=PARKING_PHASE_S / 10))
            for shared in (False, True)]
    out += [sc.cct_rate_limit(ird, config=cfg) for ird in CCT_IRDS_US]
    out = [with_setting(s, setting) for s in out]     # the pre-registered timer, or the reading's
    if large:       # the exploration's own CCT of 4096 entries and 50 ms samples, at the setting's link and marking
        from dcnlab.controller.congestion.cct import Cct

        denominator = float(dict(DEFAULT_SETTING_002, **(setting or {}))["cct-denominator"])
        big = replace(cfg, cct=Cct.paper(4096, denominator), sample_s=0.05)
        out += [sc.large_scale(n, t, seed, large_dur, large_warm, mode, config=big)
                for n, t, mode, seed in _large_points(quick)]
    return out


def _run_one(scenario: Any) -> tuple[str, Any, float]:
    t0 = time.perf_counter()
    result = scenario.run()
    return scenario.name, result, time.perf_counter() - t0


def run_all(scenarios: list[Any], workers: int, cluster: Any = None) -> dict[str, tuple[Any, float]]:
    """Run the scenarios on ``workers`` processes or a Dask ``cluster`` (:func:`dcnlab.sweep.pool.fan_out`;
    progress on stderr); name -> (result, seconds), in the order of ``scenarios``."""
    from dcnlab.sweep.pool import fan_out
    from dcnlab.sweep.progress import Progress

    done: dict[int, tuple[str, Any, float]] = {}
    with Progress(len(scenarios), "model", unit="run") as bar:
        for i, row in fan_out(_run_one, [(s,) for s in scenarios], workers, cluster):
            done[i] = row
            bar.update()
    return {name: (res, sec) for name, res, sec in (done[i] for i in range(len(scenarios)))}


def _check(ok: bool) -> str:
    return "ok" if ok else "MISS"


def judged(kind: str, figures: list[tuple[float, float | None]], direction: str | None = None,
           reference: float | None = None, inconsistent: str = "", decided: bool = False) -> tuple[bool, str, str]:
    """A paper row of the table judged by the report's one rule (:func:`dcnlab.results.summary.verdict`, the rule
    of ``summary.json``; no tolerance of the table's own): ``figures`` are (paper, ours) pairs, judged at the
    worst (relative to the paper's figure); ``inconsistent``: the paper contradicts itself there (the headline's
    own text); ``decided``: a reading of an open setting decides the verdict (the headline's ``depends_on``).
    Returns (reproduced, verdict, tolerance)."""
    from dcnlab.results.goals import INCONSISTENT, NOT_RUN, REPRODUCED
    from dcnlab.results.summary import margin, tolerance_text, verdict

    got = [(p, v) for p, v in figures if v is not None and math.isfinite(v)]
    tol = tolerance_text(kind, direction, reference)
    if not got:
        return False, NOT_RUN, tol
    if inconsistent:
        return False, INCONSISTENT, tol
    p, v = min(got, key=lambda pv: margin(kind, pv[0], pv[1], direction, reference) / (abs(pv[0]) or 1.0))
    word = verdict(kind, p, v, direction, reference, decided=decided)
    return word == REPRODUCED, word, tol


def summarize(scenarios: list[Any], results: dict[str, tuple[Any, float]],
              depends: dict[str, str] | None = None) -> dict[str, Any]:
    """The reproduction's numbers and checks, as one JSON-able dict (no time series). ``depends``: statement -> the
    setting whose readings flip it (:func:`dcnlab.reproduce.congestion.search.depends`): its rows are judged as
    decided by a reading, as its headline is."""
    from dcnlab.reproduce.congestion.headlines import INSIDE_T2, TENANT_SHARE, theorem_1

    dep = depends or {}
    from dataclasses import asdict

    import numpy as np

    from dcnlab.controller.congestion import scenarios as sc

    by = {s.name: s for s in scenarios}
    fair = {name: sc.summarize_fairness(by[name], results[name][0])
            for name in ("fairness_cc_off", "fairness_cc_on")}
    off, on = fair["fairness_cc_off"], fair["fairness_cc_on"]
    ratios = [sc.summarize_ratio(by[n], results[n][0]) for n in ("proportional_1_2", "proportional_1_3")]
    tenants = {m: sc.summarize_tenants(by[f"tenant_fair_{m}"], results[f"tenant_fair_{m}"][0]) for m in ("cc", "meter")}
    large = [sc.summarize_large(by[n], results[n][0]) for n in by if n.startswith("large_")]

    becn = {}
    for ph in tenants["cc"][:3]:
        becn[ph.tenant2_flows] = ph.becn_per_sample
    b1 = becn.get(1) or math.nan
    checks = []

    def add(name: str, metric: str, model: str, paper: str, ok: bool, label: str, unit: str, tolerance: str,
            kind: str = "paper", verdict: str | None = None) -> None:
        """One row of the table (``label``: its first cell, under the heading of ``SECTIONS[name[:3]]``);
        ``kind``: ``paper`` (a statement of the paper, its ``verdict`` by the report's rule, :func:`judged`) or
        ``target`` (ours)."""
        checks.append({"scenario": name, "metric": metric, "model": model, "paper": paper, "ok": ok,
                       "label": label, "unit": unit, "tolerance": tolerance, "kind": kind,
                       **({"verdict": verdict} if verdict is not None else {})})

    def add_paper(name: str, metric: str, model: str, paper: str, label: str, unit: str,
                  rule: tuple[bool, str, str]) -> None:
        """A paper row whose verdict and tolerance are the report's rule's (:func:`judged`)."""
        ok, word, tol = rule
        add(name, metric, model, paper, ok, label, unit, tol, "paper", word)

    # Jain's index is our yardstick of (a), not a figure of the paper's: targets of ours (met / MISSED)
    add("(a) 4 senders, CC off", "Jain index, 4 flows active", f"{off.jain_all_active:.3f}",
        "< 0.95 (parking lot)", off.jain_all_active < 0.95, "CC off", "index", "< 0.95", "target")
    add("(a) 4 senders, CC on", "Jain index, 4 flows active",
        f"{on.jain_all_active:.3f} (min {on.min_jain_all_active:.3f})", ">= 0.98 (fair, in sync)",
        on.jain_all_active >= 0.98, "CC on", "index", ">= 0.98", "target")
    parking = {name: sc.parking_ratio(by[name], results[name][0])
               for name in ("fairness_cc_off", "fairness_cc_off_fifo", "fairness_cc_off_fifo_shared") if name in by}
    for name, label, paper, target, kind in (
            ("fairness_cc_off", "CC off, round robin per input (paper)", "1 (A+B = D = E)", 1.0, "paper"),
            ("fairness_cc_off_fifo", "CC off, one FIFO, A, B on own inputs", "2 (by offered load)", 2.0, "target"),
            ("fairness_cc_off_fifo_shared", "CC off, one FIFO, A+B on one NIC (BMv2)", "1 (by offered load)", 1.0,
             "target")):
        if name in parking and kind == "paper":
            add_paper(f"(a) 4 senders, {label}", "(A+B) / mean(D, E)", f"{parking[name]:.3f}", paper, label,
                      "(A+B)/D", judged("ratio", [(target, parking[name])]))
        elif name in parking:
            add(f"(a) 4 senders, {label}", "(A+B) / mean(D, E)", f"{parking[name]:.3f}", paper,
                abs(parking[name] / target - 1) <= TENANT_TOLERANCE, label, "(A+B)/D", f"±{TENANT_TOLERANCE:.0%}",
                kind)
    for r in ratios:
        add_paper(f"(b) CCTI_Increase 1:{r.ratio}", "bandwidth ratio", f"{r.measured:.2f} ({r.error:+.1%})",
                  f"{r.ratio}:1", f"CCTI_Increase 1:{r.ratio}", "ratio",
                  judged("ratio", [(r.ratio, r.measured)], decided=theorem_1(r.ratio) in dep))
    for mode, phases in tenants.items():
        for k, ph in enumerate(phases, start=1):
            row = (f"(c) {mode}, {ph.label}", "tenant1 : tenant2",
                   f"{ph.tenant_ratio:.3f} ({ph.tenant1_bps / GBPS:.2f}/{ph.tenant2_bps / GBPS:.2f} Gb/s)",
                   "1 (equal)", f"{mode}, phase {k}, {ph.tenant2_flows} T2 flow{'s' if ph.tenant2_flows > 1 else ''}",
                   "T1:T2 (Gb/s)")
            if mode == "cc":            # the paper's Fig. 5(a); meters are ours
                add_paper(*row, judged("ratio", [(1.0, ph.tenant_ratio)], decided=TENANT_SHARE in dep))
            else:
                add(*row[:4], abs(ph.tenant_ratio - 1) <= TENANT_TOLERANCE, *row[4:], f"±{TENANT_TOLERANCE:.0%}",
                    "target")
        jmin = min(ph.jain_tenant2 for ph in phases)
        if mode == "cc":
            smin = min(ph.slowest_over_fastest_tenant2 for ph in phases)
            add_paper(f"(c) {mode}", "min slowest/fastest inside tenant 2", f"{smin:.4f}", "1 (equal)",
                      f"{mode}, min slowest/fastest inside T2", "ratio",
                      judged("ratio", [(1.0, smin)], decided=INSIDE_T2 in dep))
        else:
            add(f"(c) {mode}", "min Jain inside tenant 2", f"{jmin:.4f}", ">= 0.99", jmin >= 0.99,
                f"{mode}, min Jain inside T2", "index", ">= 0.99", "target")
    policies = _policy_rows(by, results, add)
    norm = [becn[k] / b1 for k in (1, 2, 3)]
    paper_norm = [sc.PAPER_BECN[k] / sc.PAPER_BECN[1] for k in (1, 2, 3)]
    from dcnlab.reproduce.congestion.headlines import becn_pair

    shown = "/".join(f"{becn[k]:.0f}" for k in (1, 2, 3)) + " (" + ":".join(f"{x:.2f}" for x in norm) + ")"
    per = f"/{1000 * results['tenant_fair_cc'][0].sample_s:.0f} ms"
    add_paper("(c) cc, BECN at D->B", "per 100 ms, 1/2/3 flows", shown, "790/480/320 (1:0.61:0.41)",
              "cc, D->B BECNs (1/2/3 T2), the paper's counts", per,
              judged("ratio", [(paper_norm[k - 1], norm[k - 1]) for k in (2, 3)], inconsistent=becn_pair(2)))
    add_paper("(c) cc, BECN at D->B", "1/2/3 flows, against 1 : 1/2 : 1/3", shown, "1:0.50:0.33 (stated)",
              "cc, D->B BECNs (1/2/3 T2), the stated 1:1/2:1/3", per,
              judged("ratio", [(1 / k, norm[k - 1]) for k in (2, 3)]))
    rec = (sc.summarize_recovery(by["tenant_recovery"], results["tenant_recovery"][0])
           if "tenant_recovery" in by else None)
    if rec is not None:
        got = [x for x in rec.recovery_s if x is not None]
        add_paper("(c) cc, recovery after departures", "1st / 2nd departure",
                  " / ".join("-" if x is None else f"{1000 * x:.0f} ms" for x in rec.recovery_s),
                  " / ".join(f"{x:g} s" for x in rec.paper_s) + " (5-7 s, 7-8 s)",
                  f"cc, recovery to {rec.fraction:.0%} after the 1st / 2nd departure", "time",
                  judged("ratio", [(float(y), x) for x, y in zip(rec.recovery_s, rec.paper_s)]))
        add_paper("(c) cc, departures vs arrivals", "recovery / convergence",
                  "-" if rec.leave_over_join is None else
                  f"{rec.leave_over_join:.1f} ({1000 * float(np.mean(got)):.1f} vs "
                  f"{1000 * float(np.mean([x for x in rec.join_s if x is not None])):.1f} ms)",
                  "> 1 (slowly vs very fast)", "cc, after departures vs after arrivals", "ratio",
                  judged("trend", [(1.0, rec.leave_over_join)], "up", 1.0))
    cct = [sc.summarize_cct(by[n], results[n][0]) for n in by if n.startswith("cct_limit_")]
    from dcnlab.reproduce.congestion.headlines import IRD_PAIR

    for c in cct:
        add_paper(f"(d) IRD {c.ird_us:g} us", "rate of one QP", f"{c.measured_bps / 1e6:.0f}",
                  "-" if c.paper_mbps is None else f"{c.paper_mbps:g}",
                  f"IRD {c.ird_us:g} us, {c.aggregate} x {c.packet_bytes} B per IRD", "Mb/s",
                  judged("ratio", [] if c.paper_mbps is None else [(float(c.paper_mbps), c.measured_bps / 1e6)],
                         inconsistent=IRD_PAIR))
    if cct:
        worst = max(abs(c.error) for c in cct)
        add("(d) pacer", "rate against Algorithm 2", f"{100 * worst:.2f}", "0",
            worst <= 0.01, "measured vs 4 x l x 8 / IRD (<= link)", "% max error", "<= 1", "target")
    for lg in large:
        add(f"large {lg.n_flows} flows / {lg.n_tenants} tenants, {lg.timer_mode}, seed {lg.seed}",
            "tenant share error max/mean", f"{100 * lg.max_share_error:.1f}/{100 * lg.mean_share_error:.1f}",
            "0", lg.mean_share_error <= TENANT_TOLERANCE,
            f"{lg.n_flows} flows/{lg.n_tenants} tenants, {lg.timer_mode}" + (f", s{lg.seed}" if lg.seed != 1 else ""),
            "% max/mean",
            f"mean <= {100 * TENANT_TOLERANCE:.0f}", "target")
    return {
        "backend": "model", "note": BACKEND_NOTE,
        "fairness": {"cc_off": asdict(off), "cc_on": asdict(on)},
        "proportional": [asdict(r) for r in ratios],
        "tenants": {m: [asdict(p) for p in ph] for m, ph in tenants.items()},
        "becn_per_sample": {"model": {str(k): v for k, v in becn.items()}, "paper": sc.PAPER_BECN,
                            "model_normalized": norm, "paper_normalized": paper_norm},
        "large": [asdict(x) for x in large],
        "parking": parking,
        "recovery": asdict(rec) if rec is not None else None,
        "cct_limit": [asdict(c) for c in cct],
        "checks": checks,
        "seconds": {n: round(sec, 2) for n, (_, sec) in results.items()},
        **({"policies": policies} if policies else {}),
    }


def _policy_rows(by: dict[str, Any], results: dict[str, tuple[Any, float]], add: Any) -> list[dict[str, Any]]:
    """(c) under each ``--policy`` other than the paper's: its rows (targets of ours, the paper's 1:1 as the
    yardstick) and, per policy, its name, origin and phases."""
    from dataclasses import asdict

    from dcnlab.controller.congestion import registry
    from dcnlab.controller.congestion import scenarios as sc
    from dcnlab.controller.registry import short_name

    out: list[dict[str, Any]] = []
    names = list(dict.fromkeys(s.meta["policy"] for s in by.values()
                               if s.meta.get("policy", "tenant-fair") != "tenant-fair"))
    for name in names:
        algo = registry.get(name)
        entry: dict[str, Any] = {"name": name, "origin": algo.origin, "summary": algo.summary, "tenants": {}}
        for mode in ("cc", "meter"):
            s = next(x for x in by.values() if x.meta.get("policy") == name and x.meta.get("mode") == mode)
            phases = sc.summarize_tenants(s, results[s.name][0])
            entry["tenants"][mode] = [asdict(p) for p in phases]
            for k, ph in enumerate(phases, start=1):
                add(f"(c) {mode} [{short_name(name)}], {ph.label}", "tenant1 : tenant2",
                    f"{ph.tenant_ratio:.3f} ({ph.tenant1_bps / GBPS:.2f}/{ph.tenant2_bps / GBPS:.2f} Gb/s)",
                    "1 (equal)", abs(ph.tenant_ratio - 1) <= TENANT_TOLERANCE,
                    f"{mode}, {short_name(name)}, phase {k}, {ph.tenant2_flows} T2 flow{'s' if ph.tenant2_flows > 1 else ''}",
                    "T1:T2 (Gb/s)", f"±{TENANT_TOLERANCE:.0%}", "target")
        out.append(entry)
    return out


def _params_json() -> dict[str, Any]:
    from dcnlab.controller.congestion.params import HcaParams

    cfg, hca = model_config(), HcaParams(ccti_timer=TIMER_TICKS[DEFAULT_SETTING_002["ccti-timer-value"]])
    return {"link_bps": cfg.link.rate_bps, "buffer_packets_per_port": cfg.link.buffer_packets,
            "arbitration": cfg.link.arbitration, "feedback_delay_s": cfg.link.feedback_delay_s,
            "threshold_level": cfg.switch.threshold, "threshold_packets": cfg.switch.threshold_packets,
            "marking_rate": cfg.switch.marking_rate, "marking_mode": cfg.switch.marking_mode,
            "becn_every": cfg.receiver.becn_every, "aggregate": cfg.pacer.aggregate,
            "packet_bytes": cfg.pacer.packet_bytes,
            "cct": f"14*i^2/{DEFAULT_SETTING_002['cct-denominator']} us", "cct_size": len(cfg.cct),
            "ccti_timer": hca.ccti_timer, "ccti_timer_s": hca.timer_s, "timer_mode": hca.timer_mode,
            "dt_s": cfg.dt_s, "sample_s": cfg.sample_s}


def check_verdict(check: dict[str, Any]) -> str:
    """The table's verdict of one check: a paper statement's is the report's rule's (``verdict``, :func:`judged`;
    a check written before it had one: ``reproduced`` or ``deviates``), a target of ours (``kind`` ``target``) is
    ``met`` or ``MISSED``; ``ok`` None: reported only."""
    if check.get("verdict"):
        return str(check["verdict"])
    if check.get("ok") is None:
        return "-"
    if check.get("kind") == "target":
        return "met" if check["ok"] else "MISSED"
    return "reproduced" if check["ok"] else "deviates"


def checks_table(checks: list[dict[str, Any]], model_column: str = "model") -> str:
    """The checks as a table of at most 100 columns, under one heading per experiment: what is checked,
    its unit, our figure, the paper's (or the target), the tolerance and the verdict."""
    from dcnlab.results.tables import Column, Section
    from dcnlab.results.tables import table as format_table

    rows: list[Any] = []
    last = None
    for c in checks:
        model = c[model_column] or "-"
        if c.get("unit", "").endswith("(Gb/s)"):
            model = model.replace(" Gb/s)", ")")
        head = SECTIONS.get(c["scenario"][:3])
        if head is not None and head != last:
            rows.append(Section(head))
            last = head
        rows.append(((c.get("label") or f"{c['scenario']}: {c['metric']}"),
                     c.get("unit", ""), model, c["paper"], c.get("tolerance", ""), check_verdict(c)))
    return format_table([Column("check (Zhang et al.)", wrap=True, min_width=28), Column("unit"),
                         Column(model_column, wrap=True, min_width=12), Column("paper / target", wrap=True,
                                                                               min_width=12),
                         Column("tolerance", wrap=True, min_width=10), Column("verdict")], rows)


def fairness_rates(scenarios: list[Any], results: dict[str, tuple[Any, float]]) -> dict[str, dict[str, float]]:
    """(a): each flow's mean rate (b/s) while all four run (phases 3 to 5), CC off and on, and without CC on
    one FIFO (``cc_off_fifo``; ``cc_off_fifo_shared``: A and B on one input) when those ran."""
    by = {s.name: s for s in scenarios}
    out = {}
    for mode in ("off", "on", "off_fifo", "off_fifo_shared"):
        name = f"fairness_cc_{mode}"
        if name not in by:
            continue
        r, p = results[name][0], by[name].meta["phase_s"]
        out[f"cc_{mode}"] = dict(zip(r.flows, (float(x) for x in r.mean_rates(3 * p, 5 * p))))
    return out


def with_timer(s: Any, timer: str) -> Any:
    """``s`` with every flow's CCTI timer in ``timer`` (its name and meta kept: the summary finds it by name)."""
    from dataclasses import replace

    from dcnlab.controller.congestion.scenarios import with_timer_mode

    if timer == "reset" and all(f.params.timer_mode == "reset" for f in s.flows):
        return s
    return replace(with_timer_mode(s, "free" if timer == "free" else "reset"), meta=s.meta | ({"timer_mode": timer} if "timer_mode" in s.meta else {}))


SECTIONS = {"(a)": "(a) Fig. 3, 4 senders -> C: Jain's index while all four flows are on (1: fair); (A+B)/D "
                   "without CC",
            "(b)": "(b) Theorem 1: rate of the CCTI_Increase 1 flow over the 1:n flow's",
            "(c)": "(c) Fig. 5: tenant 1 (T1, 1 flow) against tenant 2 (T2, 1-2-3-2-1 flows), by phase; CC or meters",
            "(d)": "(d) Fig. 4: one QP alone, CCTI pinned to an entry of a fixed IRD",
            "lar": "large scale, our exploration (a target of ours): tenant share error |share - w_t/sum(w)|, "
                   "seed 1"}
"""Headings of the table's sections, by the first three letters of a check's ``scenario``."""
