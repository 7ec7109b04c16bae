"""The experiment's checks: measured ratios, Jain indices and BECNs beside the model's, each with its target,
and the verdict on a run disturbed by a starved emulator.

Decisions (ours: the paper's testbed is InfiniBand hardware, and none of this is in it):

* **What sets the exit status.** ``reproduce congestion`` fails only on a defect of dcnlab's own, never on a
  figure that landed outside a tolerance: every check is a *defect check* with one rule (:func:`defect_band`:
  the figure nearer, on a log scale, to what the mechanism gives than to what the nearest defect gives), no
  tolerance of its own. The checks: (a) with CC on and in meter mode, Jain's index of the four flows (defect:
  no control, 0.9); (b) ``CCTI_Increase`` 1:n, or meter weights 1:n, give n:1 (defect: equal shares, 1);
  (c) tenant1 : tenant2 in the phases with k = 2 and 3 tenant-2 flows (:func:`tenant_check`; defect:
  tenant-blind per-flow CC, 1:k), the lowest Jain's index inside tenant 2 with CC (defect: a flow starved, 0.5),
  and the BECNs at D->B falling as tenant 2's flows rise (:func:`becn_checks`: n_k x k against the model's at
  BMv2's setting, within :data:`BECN_BAND`, the log midpoint between the model's about 1.04 and plain per-flow
  CC's 1.9 with 2 flows). Each has ``ok`` True or
  False, and ``emulation_ok`` means the experiment ran and its mechanisms work. How close each figure comes to
  the paper is the headline's business: the report judges the figures (over the BMv2 runs of a full run, with
  their spread) by its one rule. What BMv2 itself does is a *figure* with its verdict by the report's rule
  (:func:`dcnlab.results.summary.verdict`), ``ok`` None, reported and never failing the command:
  (a) without CC, four senders through one BMv2 tail-drop FIFO ("BMv2 FIFO share": (A+B)/mean(D, E) against
  the paper's 1, and each flow's share of what arrived over its share of what was sent,
  :mod:`~dcnlab.reproduce.congestion.bmv2.budget`). The paper's 1 comes from its switch's per-input round
  robin, which BMv2's single egress FIFO does not have; BMv2's tail drop locks onto periodic senders' phases
  ((A+B)/D of 0.17-16.35, a flow at 0.12 of its offered share; 1.04-1.23 with the senders' departure jitter:
  plans.py, "Parking lot in (a)"). A forwarding defect (a flow that never arrives) still fails: the same
  hosts, paths and receiver carry (a) with CC on and in meter mode, which are checked. The within-tenant
  Jain index of (c) in meter mode is reported the same way (one meter per tenant divides nothing inside it),
  and so is how far the BECNs at D->B fall with 2 and 3 tenant-2 flows (against the paper's measured
  1:0.61:0.41): how many BECNs a flow gets depends on how long the queue stays over its threshold, which the
  timer's dynamics and BMv2's timing set, not on the marking alone (the fluid model at BMv2's setting
  predicts 1:0.52:0.36 with the reset timer; fifteen quick BMv2 runs measured 0.48-0.63 and 0.28-0.48). The check
  keeps what the mechanism guarantees, against the model at BMv2's setting: n_k x k (1 when the BECNs fall as 1/k)
  within :data:`BECN_BAND` of the model's, which plain per-flow CC without the pushes misses.
* **Starved sender or starved queue.** A flow that got little without CC is told apart by its sender's own
  timestamps (:func:`~dcnlab.reproduce.congestion.bmv2.budget.flow_budgets`): a sender that sent under 90%
  of what its NIC let it send was starved of CPU, and the run is :func:`disturbed` (repeated); one that sent
  in full and got little through lost its packets at BMv2's queue, which is BMv2's figure.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dcnlab.controller.congestion import scenarios as sc
from dcnlab.controller.congestion.fluid import ModelResult, jain_index
from dcnlab.reproduce.congestion.bmv2 import budget
from dcnlab.reproduce.congestion.bmv2.config import IB_PACKET_BYTES, EmuConfig
from dcnlab.reproduce.congestion.bmv2.runs import EmuRun

def defect_band(sound: float, defect: float) -> tuple[float, float]:
    """The band of a defect check: the figures nearer, on a log scale, to what the mechanism gives (``sound``) than
    to what the nearest defect gives (``defect``): ``sound / f`` to ``sound * f`` with ``f`` the square root of their
    ratio. One rule for every check of the experiment, no tolerance of its own: a figure outside the band looks like
    the defect more than like the mechanism, and BMv2's scatter around the mechanism's figure stays inside it
    (on sound mechanisms, the 3-s windows of quick runs measured tenant ratios of 0.80-1.27, inside [0.71, 1.41];
    three full runs measured the 2:1 bandwidth ratio at 1.98-2.30, inside [1.41, 2.83])."""
    if not (sound > 0 and defect > 0) or sound == defect:
        raise ValueError(f"defect_band({sound!r}, {defect!r}): both positive and different")
    f = math.sqrt(max(sound / defect, defect / sound))
    return sound / f, sound * f


def in_band(got: float, sound: float, defect: float) -> bool:
    """Whether ``got`` lies in :func:`defect_band` (False for a NaN, an infinity or a figure <= 0)."""
    lo, hi = defect_band(sound, defect)
    return bool(math.isfinite(got) and lo <= got <= hi)


def band_text(sound: float, defect: float, what: str) -> str:
    """The target of a defect check: ``2 in [1.41, 2.83] (defect: equal shares, 1)``."""
    lo, hi = defect_band(sound, defect)
    return f"{sound:g} in [{lo:.2f}, {hi:.2f}] (defect: {what}, {defect:.3g})"


FAIR_JAIN_DEFECT = 0.9
"""(a)'s defect with CC on (or meters): the control loop does nothing, and a switch that serves its inputs in turn
splits the parking lot A+B = D = E (the paper's Fig. 3 without CC), Jain's index 0.9 over the four flows."""
STARVED_JAIN_DEFECT = 0.5
"""(c)'s defect inside tenant 2: one of two flows starved (Jain's index 0.5)."""
MIN_OFFERED = budget.SENDER_SHORT
"""(a) without CC: a sender that sent less than this fraction of its NIC's rate measured a starved sender."""
DISTURBED_LOAD_PER_CPU = 2.0
"""A run during which the 1-minute load average exceeded this per CPU is reported as disturbed."""
MAX_CC_LOSS = 0.10
"""A CC run that loses more of its packets measured a starved emulator (:func:`disturbed`)."""


@dataclass(frozen=True)
class Check:
    scenario: str
    metric: str
    emulation: str
    model: str
    target: str
    ok: bool | None
    """None: reported, not checked (module docstring, "What sets the exit status")."""
    verdict: str | None = None
    """A reported figure's verdict by the report's rule (``reproduced``, ``trend``, ``deviates``), or
    ``disturbed`` when a sender starved of CPU measured the machine instead; None for a check (``ok``)."""


@dataclass
class ExperimentResult:
    cfg: EmuConfig
    runs: list[EmuRun] = field(default_factory=list)
    wall_s: float = 0.0
    rejected: list[dict[str, Any]] = field(default_factory=list)
    """Runs repeated because :func:`disturbed` rejected them (their health data)."""

    def run(self, name: str) -> EmuRun | None:
        return next((r for r in self.runs if r.plan.name == name), None)

    def summary(self) -> dict[str, Any]:
        return summarize(self)

    @property
    def ok(self) -> bool:
        return all(c["ok"] is not False for c in self.summary()["checks"])


def smoothed_jain(r: ModelResult, samples: int = 10) -> np.ndarray:
    """Jain's index per sample over the flows active during the whole sample, of rates averaged over the
    last ``samples`` samples (1 s). A paced flow sends aggregates of 4 packets, so a 100 ms sample holds
    a few aggregates and its rate is quantised; the average shows the share the control loop gives."""
    act = r.active_whole()
    kernel = np.ones(samples) / samples
    avg = np.array([np.convolve(r.throughput_bps[:, i], kernel)[:len(r.times)] for i in range(len(r.flows))]).T
    out = np.full(len(r.times), math.nan)
    for k in range(len(r.times)):
        lo = max(0, k - samples + 1)
        flows = act[lo:k + 1].all(axis=0)        # active during the whole averaging window
        if flows.any():
            out[k] = jain_index(avg[k, flows])
    return out


def parking_ratio(rates: Any) -> float:
    """(A->C + B->C) / mean(D->C, E->C) of per-flow rates (a mapping or an array in the plan's flow order)."""
    r = dict(zip(("A->C", "B->C", "D->C", "E->C"), rates)) if not hasattr(rates, "keys") else rates
    d = (r["D->C"] + r["E->C"]) / 2
    return float((r["A->C"] + r["B->C"]) / d) if d > 0 else math.inf


def fairness_window(plan: sc.Scenario) -> tuple[float, float]:
    """(a)'s measurement window: all four flows run, E's start settled (``3 * phase + settle`` to ``5 * phase``).

    The fourth flow E starts at line rate (``CCTI_Min``) at ``3 * phase``; with CC it takes about a second of
    emulated time to come down to its share (the model at BMv2's setting: E/D = 3.2, 1.36, 1.03 in the three
    half-seconds after its start), so a window from its start measured that transient, not the sharing (the
    model's slowest/fastest 0.853 over 3-5 phases of 3 s, 0.986 from one second after E's start). The paper's
    phases are 1 s of IB time, 6,500 timer periods, where the same transient is invisible."""
    p = plan.meta["phase_s"]
    return 3 * p + plan.meta.get("settle_s", 0.0), 5 * p


def _mean_rate_jain(plan: sc.Scenario, r: ModelResult) -> float:
    """Jain's index of the flows' mean rates while all four run (less noisy than per-sample Jain)."""
    return jain_index(r.mean_rates(*fairness_window(plan)))


def offered_pps(run: EmuRun) -> dict[str, float]:
    """Packets per second each flow's sender sent during (a)'s :func:`fairness_window` (its sender's bins)."""
    t0, t1 = fairness_window(run.plan)
    b0, b1 = round(t0 / run.emu.sample_s), round(t1 / run.emu.sample_s)
    return {f.name: sum(b[1] for b in (run.senders.get(f.name) or {}).get("bins", []) if b0 <= b[0] < b1) / (t1 - t0)
            for f in run.plan.flows}


def fifo_budgets(run: EmuRun) -> dict[str, budget.FlowBudget]:
    """(a)'s flows over its :func:`fairness_window`: offered against delivered (:func:`budget.flow_budgets`)."""
    return budget.flow_budgets(run.plan, run.senders, run.receivers, fairness_window(run.plan), run.emu.sample_s,
                               run.plan.meta["nic_pps"])


def _fifo_figure(run: EmuRun, entry: dict[str, Any], rates: np.ndarray, model_rates: np.ndarray,
                 offered: dict[str, float]) -> Check:
    """(a) without CC: BMv2's FIFO share, a figure with its verdict, not a check (module docstring)."""
    from dcnlab.results.summary import verdict

    got, want, by_offer = parking_ratio(rates), parking_ratio(model_rates), parking_ratio(offered)
    flows = fifo_budgets(run)
    low = min(flows.values(), key=lambda b: b.fifo_share if math.isfinite(b.fifo_share) else math.inf)
    senders = budget.starved(flows, "sender")
    entry.update(parking=got, model_parking=want, offered_parking=by_offer,
                 flows={n: b.row() for n, b in flows.items()}, starved_senders=senders,
                 starved_by_queue=budget.starved(flows, "queue"))
    figure = "disturbed" if senders else verdict("ratio", 1.0, got if math.isfinite(got) else None)
    return Check("(a) 4 senders, CC off", "BMv2 FIFO share: (A+B) / mean(D, E); lowest delivered/offered share",
                 f"{got:.2f} (offered {by_offer:.2f}); {low.flow} {low.fifo_share:.2f}", f"{want:.3f}",
                 "1 (paper: A+B = D = E) +-10%",
                 None, figure)


BECN_BAND = 0.35
"""The BECN check's band: BMv2's n_k x k (BECNs with k tenant-2 flows, normalised to one flow, times k) within this
fraction of the model's at BMv2's setting, for k = 2 and 3. The width is BMv2's own scatter around the model (fifteen
quick runs measured 0.78-1.33 of the model's n_k); plain per-flow CC without the pushes (the model's 1 : 0.95 :
0.95, n_k x k 1.9 and 2.85 against the pushes' about 1) falls outside it (tests/test_falsifiers_002.py)."""


def becn_follows_model(ne: Sequence[float], nm: Sequence[float]) -> bool:
    """Whether BMv2's BECNs at D->B (``ne``, normalised to one flow) follow the model's at BMv2's setting (``nm``):
    n_k x k within :data:`BECN_BAND` of the model's for k = 2, 3 (False with a NaN)."""
    ok = True
    for k in (2, 3):
        got, want = float(ne[k - 1]) * k, float(nm[k - 1]) * k
        ok = ok and math.isfinite(got) and math.isfinite(want) and want > 0 and abs(got / want - 1) <= BECN_BAND
    return bool(ok)


def becn_checks(ne: Sequence[float], nm: Sequence[float], paper: Sequence[float]) -> list[Check]:
    """(c) with CC, BECNs at D->B with 1, 2, 3 tenant-2 flows normalised to the 1-flow phase (``ne`` BMv2's,
    ``nm`` the model's, ``paper`` the paper's): the check that they fall, and how far they fall against the
    paper's measured 1:0.61:0.41, a figure with its verdict, not a check (module docstring): the worse of
    the 2- and 3-flow ratios by the report's rule."""
    from dcnlab.results.summary import margin, verdict

    judged = [k for k in (1, 2) if math.isfinite(ne[k])]
    at = min(judged, key=lambda k: margin("ratio", float(paper[k]), float(ne[k])), default=1)   # the worst point
    worst = verdict("ratio", float(paper[at]), float(ne[at]) if at in judged else None)
    shown = ":".join(f"{x:.2f}" for x in ne), ":".join(f"{x:.2f}" for x in nm)
    falls = becn_follows_model(ne, nm)
    return [Check("(c) cc, BECNs at D->B", "1/2/3 flows, normalised", *shown,
                  f"n_k x k within {BECN_BAND:.0%} of the model's (k = 2, 3)", falls),
            Check("(c) cc, BECNs at D->B", "1/2/3 flows, normalised, against the paper", *shown,
                  "paper 1:" + ":".join(f"{x:.2f}" for x in paper[1:]) + " +-10% (1/n: 1:0.50:0.33)", None, worst)]


def tenant_check(mode: str, a: sc.PhaseSummary, b: sc.PhaseSummary) -> Check:
    """(c) one phase's tenant1 : tenant2 (``a`` BMv2's, ``b`` the model's). With k = 2 or 3 tenant-2 flows it is a
    defect check (:func:`in_band`): tenant-blind per-flow CC (or meters per flow) gives 1:k there. With one
    tenant-2 flow every mechanism gives 1, so no defect can show: the phase is a figure with its verdict by the
    report's rule, never failing the command (a quick run's last 1-flow phase, a 3-s window just after two flows
    left, read 1.363 on a sound mechanism). The paper's "equal shares" is the headline's figure, the worst phase
    over the runs, judged by the report's rule."""
    from dcnlab.results.summary import verdict

    shown = (f"(c) {mode}, {a.label}", "tenant1 : tenant2", f"{a.tenant_ratio:.3f}", f"{b.tenant_ratio:.3f}")
    if a.tenant2_flows <= 1:
        return Check(*shown, "1 (reported: one flow per tenant tells no defect)", None,
                     verdict("ratio", 1.0, a.tenant_ratio if math.isfinite(a.tenant_ratio) else None))
    defect = 1 / a.tenant2_flows
    return Check(*shown, band_text(1.0, defect, "tenant-blind CC"), in_band(a.tenant_ratio, 1.0, defect))


def _becn_scaling(phases: Sequence[sc.PhaseSummary]) -> list[float]:
    """BECNs per second at D->B with 1, 2, 3 tenant-2 flows, normalised to the 1-flow phase (first three)."""
    b = {ph.tenant2_flows: ph.becn_per_s for ph in phases[:3]}
    return [b[k] / b[1] if b[1] > 0 else math.nan for k in (1, 2, 3)]


def health(run: EmuRun) -> dict[str, Any]:
    """What tells a clean run from one disturbed by load: per flow the rate it managed to send (a CC-off
    flow should reach the NIC rate), how late its packets left (ms per s) and its longest gap, its losses at
    the receiver; the bottleneck's marks; the load average."""
    names = {str(i + 1): f.name for i, f in enumerate(run.plan.flows)}
    sent, lost, late, gap = {}, {}, {}, {}
    for f in run.plan.flows:
        active = min(f.stop_s, run.plan.duration_s) - f.start_s
        snd = run.senders.get(f.name)
        if snd is not None and active > 0:
            sent[f.name] = round(snd["packets"] / active, 1)
            timing = [b for b in snd["bins"] if len(b) > 5]
            late[f.name] = round(sum(b[4] for b in timing) / active, 1)
            gap[f.name] = max((b[5] for b in timing), default=None)
    for rx in run.receivers.values():
        for fid, rec in rx["flows"].items():
            lost[names.get(fid, fid)] = rec["lost"]
    return {"wall_s": round(run.wall_s, 1), "load": list(run.load), "sent_pps": sent, "lost": lost,
            "late_ms_per_s": late, "max_gap_ms": gap, "marks": {k: asdict(v) for k, v in run.marks.items()}}


def summarize(res: ExperimentResult) -> dict[str, Any]:
    """Measured ratios, Jain indices, model-vs-emulation, and the checks, as one JSON-able dict."""
    cfg = res.cfg
    checks: list[Check] = []
    out: dict[str, Any] = {"fairness": {}, "ratio": {}, "tenants": {}}
    for run in res.runs:
        plan, e, m = run.plan, run.emu, run.model
        kind, mode = plan.meta["kind"], plan.meta["mode"]
        if kind == "fairness":
            fe, fm = sc.summarize_fairness(plan, e), sc.summarize_fairness(plan, m)
            je, jm = _mean_rate_jain(plan, e), _mean_rate_jain(plan, m)
            t0, t1 = fairness_window(plan)
            rates = e.mean_rates(t0, t1) / (8 * cfg.frame_bytes)
            model_rates = m.mean_rates(t0, t1) / (8 * IB_PACKET_BYTES)
            offered = offered_pps(run)
            out["fairness"][mode] = {"jain_mean_of_samples": fe.jain_all_active, "jain_min": fe.min_jain_all_active,
                                     "jain_of_mean_rates": je, "model_jain_mean_of_samples": fm.jain_all_active,
                                     "jain_1s_mean": float(np.nanmean(smoothed_jain(e)[e.window(t0, t1)])),
                                     "jain_1s_over_time": [None if math.isnan(x) else round(float(x), 4)
                                                           for x in smoothed_jain(e)],
                                     "jain_over_time": [None if math.isnan(x) else round(float(x), 4)
                                                        for x in e.jain_over_time()],
                                     "model_jain_of_mean_rates": jm, "window_s": [t0, t1],
                                     "rates_pps_4_active": dict(zip(e.flows, rates.round(1).tolist())),
                                     "model_rates_pps_4_active": dict(zip(m.flows, model_rates.round(1).tolist())),
                                     "offered_pps_4_active": {k: round(v, 1) for k, v in offered.items()}}
            label = {"off": "CC off", "cc": "CC on", "meter": "meter mode"}[mode]
            if mode == "off":
                checks.append(_fifo_figure(run, out["fairness"][mode], rates, model_rates, offered))
                continue
            checks.append(Check(f"(a) 4 senders, {label}", "Jain of mean rates, 4 active",
                                f"{je:.3f} (samples {fe.jain_all_active:.3f})", f"{jm:.3f}",
                                band_text(1.0, FAIR_JAIN_DEFECT, "no control"), in_band(je, 1.0, FAIR_JAIN_DEFECT)))
        elif kind == "ratio":
            re_, rm = sc.summarize_ratio(plan, e), sc.summarize_ratio(plan, m)
            n = plan.meta["ratio"]
            out["ratio"][f"1:{n} {mode}"] = {"measured": re_.measured, "error": re_.error, "model": rm.measured,
                                             "rates_pps": [x / (8 * cfg.frame_bytes) for x in re_.rates_bps],
                                             "becn_ratio": re_.becn_ratio, "model_becn_ratio": rm.becn_ratio}
            what = "CCTI_Increase" if mode == "cc" else "meter weights"
            checks.append(Check(f"(b) {what} 1:{n} ({mode})", "bandwidth ratio",
                                f"{re_.measured:.2f} ({re_.error:+.1%})", f"{rm.measured:.2f}",
                                band_text(float(n), 1.0, "equal shares"), in_band(re_.measured, float(n), 1.0)))
        elif kind == "tenants":
            settle = plan.meta["settle_s"]
            pe, pm = sc.summarize_tenants(plan, e, settle), sc.summarize_tenants(plan, m, settle)
            rows = []
            for a, b in zip(pe, pm):
                rows.append({"phase": a.label, "tenant1_pps": a.tenant1_bps / (8 * cfg.frame_bytes),
                             "tenant2_pps": a.tenant2_bps / (8 * cfg.frame_bytes), "ratio": a.tenant_ratio,
                             "model_ratio": b.tenant_ratio, "jain_tenant2": a.jain_tenant2,
                             "model_jain_tenant2": b.jain_tenant2,
                             "slowest_over_fastest_tenant2": a.slowest_over_fastest_tenant2,
                             "model_slowest_over_fastest_tenant2": b.slowest_over_fastest_tenant2,
                             "becn_per_s": a.becn_per_s,
                             "model_becn_per_s": b.becn_per_s})
                checks.append(tenant_check(mode, a, b))
            jmin = min(a.jain_tenant2 for a in pe)
            checks.append(Check(f"(c) {mode}", "min Jain inside tenant 2", f"{jmin:.3f}",
                                f"{min(b.jain_tenant2 for b in pm):.3f}",
                                (band_text(1.0, STARVED_JAIN_DEFECT, "a flow starved") if mode == "cc"
                                 else "reported (one meter per tenant)"),
                                in_band(jmin, 1.0, STARVED_JAIN_DEFECT) if mode == "cc" else None))
            entry: dict[str, Any] = {"phases": rows}
            if mode == "cc":
                ne, nm = _becn_scaling(pe), _becn_scaling(pm)
                entry.update(becn_normalized=ne, model_becn_normalized=nm)
                paper = [sc.PAPER_BECN[k] / sc.PAPER_BECN[1] for k in (1, 2, 3)]
                checks += becn_checks(ne, nm, paper)
            out["tenants"][mode] = entry
    out["checks"] = [asdict(c) for c in checks]
    out["runs"] = {r.plan.name: health(r) for r in res.runs}
    out["rejected_runs"] = list(res.rejected)
    cpus = os.cpu_count() or 1
    loads = {r.plan.name: max(r.load) for r in res.runs}
    out["load"] = {"cpus": cpus, "max_1min": max(loads.values(), default=0.0),
                   "disturbed_runs": [n for n, x in loads.items() if x > DISTURBED_LOAD_PER_CPU * cpus]}
    out["config"] = asdict(cfg)
    out["time_scale"] = cfg.scale.factor
    out["wall_s"] = round(res.wall_s, 1)
    return out


def disturbed(run: EmuRun) -> str:
    """Why ``run`` measured a starved emulator rather than the mechanism ('' if it did not).

    With CC on, the bottleneck's queue (``queue_depth`` packets, 8x the marking threshold) only overflows
    while a newcomer at line rate waits for its first BECNs: a few percent of the packets. More than
    :data:`MAX_CC_LOSS` lost means BMv2 or the senders were starved (BMv2 stalled while the queue filled;
    measured: 40-70% lost at load averages of 20-50 on 2 cores). Runs without CC lose packets by design."""
    if not run.plan.meta["cc"]:
        if run.plan.meta["kind"] != "fairness" or run.emu is None:
            return ""
        # (a) without CC: every sender must send what its NIC lets it (its send timestamps say whether it did)
        flows = fifo_budgets(run)
        short = budget.starved(flows, "sender")
        nic = run.plan.meta.get("nic_pps")
        if short:
            return ("senders starved of CPU without CC: " + ", ".join(
                f"{n} sent {flows[n].offered_pps:.0f} of {flows[n].due_pps:.0f} packets/s (late "
                f"{flows[n].late_ms_per_s:.0f} ms/s, longest gap {flows[n].max_gap_ms:.0f} ms)" for n in short)
                + f" (< {MIN_OFFERED:.0%} of what its NIC allowed)")
        got = float(run.emu.mean_rates(*fairness_window(run.plan)).sum()) / (8 * run.plan.meta.get("frame_bytes", 200))
        if nic and got < MIN_OFFERED * nic:
            return (f"the bottleneck delivered {got:.0f} packets/s without CC, offered three times its {nic:g} "
                    f"(< {MIN_OFFERED:.0%}: BMv2 starved)")
        return ""
    got = lost = 0
    for rx in run.receivers.values():
        for rec in rx["flows"].values():
            got += rec["packets"]
            lost += rec["lost"]
    frac = lost / (got + lost) if got + lost else 1.0
    return f"{frac:.0%} of the packets lost with CC on (> {MAX_CC_LOSS:.0%})" if frac > MAX_CC_LOSS else ""
