"""The paper's experiments (report §6) as flow schedules, plus a large-scale exploration.

One :class:`Scenario` holds the flows (start/stop times, tenants, switch input ports), the
controller's parameter pushes and meter settings derived from :class:`~.policy.TenantPolicy`, and
the measurement windows. The model backend runs it with :func:`~.fluid.simulate`; the BMv2
experiment (issue 10 §5) can replay the same schedule in scaled time.

* **(a) Fig. 3, fairness with identical parameters.** Senders A, B, D, E to C; a new flow every
  phase (1 s), each lasting 5 phases. Decision (report §6.2, inference): A and B reach the
  bottleneck switch through one shared input port, D and E through their own, which is what makes
  A+B = D = E without CC (the parking-lot effect of round-robin input arbitration). A starts first
  so that sharing becomes fair once A ends, as in the paper.
* **(b) Theorem 1.** Two flows with ``CCTI_Increase`` 1:N share one bottleneck for the whole run;
  the expected bandwidth ratio is N:1.
* **(c) Fig. 5, tenant fairness.** Tenant 1 has one flow (C->A); tenant 2 has D->B throughout, E->B
  joins after one phase and F->B after two; F leaves after three phases and E after four (1 -> 2 ->
  3 -> 2 -> 1 flows, 2 s phases as the paper's 5-7-8 s marks suggest). The policy pushes
  ``CCTI_Increase`` = tenant 2's flow count to its flows at each arrival/departure (paper §5: the
  pushes happen at the schedule's time points; ``control_delay_s`` delays them). In meter mode the
  flows run without CC and each tenant is metered to its share.
* **Large scale.** Random tenants (weights 1, 2 or 4) with random flow counts on one bottleneck;
  the policy's values must make each tenant's share ``w_t / sum(w)``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dcnlab.controller.congestion.cct import Cct
from dcnlab.controller.congestion.fluid import (
    FlowDef,
    MeterChange,
    ModelConfig,
    ModelResult,
    ParamChange,
    jain_index,
    simulate,
)
from dcnlab.controller.congestion.params import CongestionParamError, HcaParams, TimerMode
from dcnlab.controller.congestion.policy import FlowSpec, Tenant, TenantPolicy

PAPER_BECN = {1: 790, 2: 480, 3: 320}
"""Fig. 5(b): BECNs at the D->B source with 1, 2 and 3 tenant-2 flows (interval not stated)."""


@dataclass(frozen=True)
class Window:
    """A measurement window ``[t0, t1]`` with a label (e.g. a phase of the schedule)."""

    t0: float
    t1: float
    label: str


@dataclass(frozen=True)
class Scenario:
    name: str
    flows: tuple[FlowDef, ...]
    duration_s: float
    config: ModelConfig
    changes: tuple[ParamChange, ...] = ()
    meters: tuple[MeterChange, ...] = ()
    windows: tuple[Window, ...] = ()
    tenants: tuple[Tenant, ...] = ()
    meta: dict = field(default_factory=dict)

    def run(self) -> ModelResult:
        return simulate(self.flows, self.duration_s, self.config, self.changes, self.meters)


def policy_schedule(flows: Sequence[FlowDef], tenants: Sequence[Tenant], config: ModelConfig,
                    control_delay_s: float = 0.0) -> tuple[list[ParamChange], list[MeterChange]]:
    """Replay the flows' arrivals and departures through the policy; return its pushes and meter settings."""
    link_bps, switch, receiver = config.link.rate_bps, config.switch, config.receiver
    packet_bytes = config.pacer.packet_bytes
    policy = TenantPolicy(tenants, bottleneck_rates={"bottleneck": link_bps}, switch=switch, receiver=receiver,
                          packet_bytes=packet_bytes)
    by_name = {f.name: f for f in flows}
    events = sorted([(f.start_s, 1, f.name) for f in flows]
                    + [(f.stop_s, 0, f.name) for f in flows if math.isfinite(f.stop_s)])
    changes: list[ParamChange] = []
    meters: list[MeterChange] = []
    metered: dict[str, float] = {}
    for t, kind, name in events:
        if kind == 1:
            updates = policy.add_flow(FlowSpec(name, by_name[name].tenant))
        else:
            updates = policy.remove_flow(name)
        for u in updates:
            params = replace(by_name[u.flow].params, ccti_increase=u.ccti_increase, ccti_timer=u.ccti_timer)
            changes.append(ParamChange(t + control_delay_s, u.flow, params))
        now = {m.tenant: m.rate_bps for m in policy.meter_rates()}
        for tenant in sorted(set(metered) | set(now)):
            if metered.get(tenant) != now.get(tenant):
                meters.append(MeterChange(t + control_delay_s, tenant, now.get(tenant)))
        metered = now
    return changes, meters


def fairness_incast(cc: bool, phase_s: float = 1.0, config: ModelConfig | None = None) -> Scenario:
    """(a) Fig. 3: A, B, D, E -> C, one new flow per phase, each for 5 phases; A and B share a port."""
    cfg = config or ModelConfig()
    flows = tuple(FlowDef(f"{src}->C", src, i * phase_s, (i + 5) * phase_s, HcaParams(), cc,
                          port="AB" if src in "AB" else src)
                  for i, src in enumerate("ABDE"))
    windows = tuple(Window(k * phase_s, (k + 1) * phase_s, f"{sum(f.start_s <= k * phase_s < f.stop_s for f in flows)} flows")
                    for k in range(8))
    return Scenario(f"fairness_cc_{'on' if cc else 'off'}", flows, 8 * phase_s, cfg, windows=windows,
                    meta={"cc": cc, "phase_s": phase_s})


def proportional(ratio: int, duration_s: float = 2.0, warmup_s: float = 0.2,
                 config: ModelConfig | None = None) -> Scenario:
    """(b) Theorem 1: two flows with ``CCTI_Increase`` 1 and ``ratio``; expected rates ratio:1."""
    if ratio < 1:
        raise CongestionParamError(f"ratio={ratio} is out of range; valid: 1..255")
    cfg = config or ModelConfig()
    flows = (FlowDef("inc1", "t1", params=HcaParams(ccti_increase=1)),
             FlowDef(f"inc{ratio}", "t2", params=HcaParams(ccti_increase=ratio)))
    return Scenario(f"proportional_1_{ratio}", flows, duration_s, cfg,
                    windows=(Window(warmup_s, duration_s, "steady"),), meta={"ratio": ratio})


def tenant_fair(phase_s: float = 2.0, mode: str = "cc", control_delay_s: float = 0.0,
                config: ModelConfig | None = None) -> Scenario:
    """(c) Fig. 5: tenant 1 with one flow, tenant 2 going 1 -> 2 -> 3 -> 2 -> 1 flows."""
    if mode not in ("cc", "meter"):
        raise CongestionParamError(f"mode={mode!r} is not valid; valid: cc, meter")
    cfg = config or ModelConfig()
    cc = mode == "cc"
    flows = (FlowDef("C->A", "tenant1", 0.0, math.inf, HcaParams(), cc),
             FlowDef("D->B", "tenant2", 0.0, math.inf, HcaParams(), cc),
             FlowDef("E->B", "tenant2", phase_s, 4 * phase_s, HcaParams(), cc),
             FlowDef("F->B", "tenant2", 2 * phase_s, 3 * phase_s, HcaParams(), cc))
    tenants = (Tenant("tenant1", 1.0), Tenant("tenant2", 1.0))
    changes, meters = policy_schedule(flows, tenants, cfg, control_delay_s)
    counts = (1, 2, 3, 2, 1)
    windows = tuple(Window(k * phase_s, (k + 1) * phase_s, f"{n} tenant-2 flows") for k, n in enumerate(counts))
    return Scenario(f"tenant_fair_{mode}", flows, 5 * phase_s, cfg, tuple(changes) if cc else (),
                    tuple(meters) if not cc else (), windows, tenants,
                    meta={"mode": mode, "phase_s": phase_s, "tenant2_flows": counts})


def large_scale(n_flows: int, n_tenants: int, seed: int, duration_s: float = 1.0, warmup_s: float = 0.5,
                timer_mode: TimerMode = "reset", warm_start: bool = True, config: ModelConfig | None = None) -> Scenario:
    """Random tenants (weights 1/2/4) with ``n_flows`` flows in total on one bottleneck.

    ``warm_start`` starts each flow at the CCT index of its target rate instead of at line rate: a
    simultaneous start of hundreds of flows is an incast whose transient (queues of tens of
    thousands of packets) would otherwise dominate a short run; the steady state is what is explored."""
    if not 1 <= n_tenants <= n_flows:
        raise CongestionParamError(f"n_tenants={n_tenants} is out of range; valid: 1..n_flows={n_flows}")
    rng = random.Random(seed)
    tenants = tuple(Tenant(f"t{i}", float(rng.choice((1, 2, 4)))) for i in range(n_tenants))
    owner = list(range(n_tenants)) + [rng.randrange(n_tenants) for _ in range(n_flows - n_tenants)]
    rng.shuffle(owner)
    size = 4096
    base = HcaParams(ccti_limit=size - 1, timer_mode=timer_mode)
    cfg = config or ModelConfig(cct=Cct.paper(size), sample_s=0.05)
    flows = tuple(FlowDef(f"f{i}", tenants[t].name, 0.0, math.inf, base) for i, t in enumerate(owner))
    changes, _ = policy_schedule(flows, tenants, cfg)
    final = {c.flow: c.params for c in changes}
    counts = {t.name: owner.count(i) for i, t in enumerate(tenants)}
    wsum = sum(t.weight for t in tenants)
    weight = {t.name: t.weight for t in tenants}

    def start(f: FlowDef) -> int | None:
        if not warm_start:
            return None
        rate = cfg.link.rate_bps * weight[f.tenant] / wsum / counts[f.tenant]
        return cfg.cct.index_for_rate(rate, cfg.pacer.packet_bytes, cfg.pacer.aggregate, cfg.link.nic_bps)

    flows = tuple(replace(f, params=final[f.name], initial_ccti=start(f)) for f in flows)
    return Scenario(f"large_{n_flows}f_{n_tenants}t_{timer_mode}_s{seed}", flows, duration_s, cfg,
                    windows=(Window(warmup_s, duration_s, "steady"),), tenants=tenants,
                    meta={"n_flows": n_flows, "n_tenants": n_tenants, "seed": seed, "timer_mode": timer_mode,
                          "warm_start": warm_start, "ccti_timer": max(p.ccti_timer for p in final.values())})


def bmv2_config(queue_depth_packets: int = 64, base: ModelConfig | None = None) -> ModelConfig:
    """The model configured like the BMv2 bottleneck, in IB time: one FIFO egress queue of the given
    depth (BMv2 drops instead of back-pressuring, which gives the same receiver throughput here).
    Compare with an emulation run through ``ModelResult.in_emulated_time(TimeScale.for_link(pps))``."""
    cfg = base or ModelConfig()
    return replace(cfg, link=replace(cfg.link, arbitration="fifo", buffer_packets=queue_depth_packets))


# -- summaries -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FairnessSummary:
    """(a): Jain's index per sample and its mean while all four flows are active."""

    cc: bool
    jain: tuple[float, ...]
    jain_all_active: float
    min_jain_all_active: float


def summarize_fairness(s: Scenario, r: ModelResult) -> FairnessSummary:
    j = r.jain_over_time()
    p = s.meta["phase_s"]
    m = r.window(3 * p, 5 * p)
    vals = j[m]
    return FairnessSummary(s.meta["cc"], tuple(float(x) for x in j), float(np.nanmean(vals)), float(np.nanmin(vals)))


@dataclass(frozen=True)
class RatioSummary:
    """(b): measured bandwidth ratio of the ``CCTI_Increase`` 1 flow to the ``ratio`` flow."""

    ratio: int
    rates_bps: tuple[float, float]
    measured: float
    error: float
    becn_ratio: float


def summarize_ratio(s: Scenario, r: ModelResult) -> RatioSummary:
    w = s.windows[0]
    rates = r.mean_rates(w.t0, w.t1)
    becn = r.mean_becn_rate(w.t0, w.t1)
    n = s.meta["ratio"]
    measured = float(rates[0] / rates[1])
    return RatioSummary(n, (float(rates[0]), float(rates[1])), measured, measured / n - 1.0,
                        float(becn[0] / becn[1]) if becn[1] > 0 else math.nan)


@dataclass(frozen=True)
class PhaseSummary:
    """(c), one phase: tenant throughputs, their ratio, fairness inside tenant 2, D->B BECNs."""

    label: str
    tenant2_flows: int
    tenant1_bps: float
    tenant2_bps: float
    tenant_ratio: float
    jain_tenant2: float
    becn_per_s: float
    becn_per_sample: float


def summarize_tenants(s: Scenario, r: ModelResult, settle_s: float | None = None) -> list[PhaseSummary]:
    """Per phase, skipping ``settle_s`` (default: a quarter phase) after each change."""
    p = s.meta["phase_s"]
    settle = p / 4 if settle_s is None else settle_s
    t2 = [i for i, t in enumerate(r.tenants) if t == "tenant2"]
    db = r.column("D->B")
    out = []
    for w, n in zip(s.windows, s.meta["tenant2_flows"]):
        rates = r.mean_rates(w.t0 + settle, w.t1)
        active = [i for i in t2 if r.starts[i] <= w.t0 and r.stops[i] >= w.t1]
        t1 = float(rates[r.column("C->A")])
        t2r = float(rates[active].sum())
        becn = float(r.mean_becn_rate(w.t0 + settle, w.t1)[db])
        out.append(PhaseSummary(w.label, n, t1, t2r, t1 / t2r if t2r > 0 else math.inf,
                                jain_index(rates[active]), becn, becn * r.sample_s))
    return out


@dataclass(frozen=True)
class LargeSummary:
    """Large scale: tenant shares against ``w_t / sum(w)``."""

    n_flows: int
    n_tenants: int
    timer_mode: str
    seed: int
    utilization: float
    max_share_error: float
    mean_share_error: float
    jain_normalized: float
    max_increase: int
    ccti_timer: int
    jain_within_tenants: float


def summarize_large(s: Scenario, r: ModelResult) -> LargeSummary:
    w = s.windows[0]
    rates = r.mean_rates(w.t0, w.t1)
    total = float(rates.sum())
    weights = {t.name: t.weight for t in s.tenants}
    wsum = sum(weights.values())
    errs, norm, within = [], [], []
    for t in s.tenants:
        cols = [i for i, x in enumerate(r.tenants) if x == t.name]
        share = float(rates[cols].sum()) / total
        target = t.weight / wsum
        errs.append(abs(share / target - 1.0))
        norm.append(share / target)
        if len(cols) > 1:
            within.append(jain_index(rates[cols]))
    return LargeSummary(s.meta["n_flows"], s.meta["n_tenants"], s.meta["timer_mode"], s.meta["seed"],
                        total / r.link_bps, max(errs), float(np.mean(errs)), jain_index(norm),
                        max(f.params.ccti_increase for f in s.flows), s.meta["ccti_timer"],
                        float(np.mean(within)) if within else 1.0)
