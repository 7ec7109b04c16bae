"""The experiments of IB CC partitioning (Zhang et al.), §5 and Figs. 3-5, as flow schedules, plus a large-scale
exploration.

One :class:`Scenario` holds the flows (start/stop times, tenants, switch input ports), the
controller's parameter pushes and meter settings derived from :class:`~.policy.TenantPolicy`, and
the measurement windows. The model backend runs it with :func:`~.fluid.simulate`; the BMv2
experiment (:mod:`dcnlab.reproduce.congestion.bmv2`) can replay the same schedule in scaled time.

* **(a) Fig. 3, fairness with identical parameters.** Senders A, B, D, E to C; a new flow every
  phase (1 s), each lasting 5 phases. Decision (§5 does not give the wiring; we infer it from Fig. 3): A and B reach the
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
* **(c') Recovery after departures (Fig. 5(a)).** The schedule of (c) sampled every millisecond
  (:func:`tenant_recovery`); :func:`summarize_recovery` measures how long tenant 2's flows take to
  reach their new steady rates after each arrival and departure.
* **(d) Fig. 4, CCT rate limit.** One QP alone on the link with its CCTI pinned to an entry holding a
  fixed IRD (:func:`cct_rate_limit`, :func:`summarize_cct`).
* **Large scale.** Random tenants (weights 1, 2 or 4) with random flow counts on one bottleneck;
  the policy's values must make each tenant's share ``w_t / sum(w)``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dcnlab.controller.congestion.cct import Cct, aggregate_rate
from dcnlab.controller.congestion.fluid import (
    FlowDef,
    Link,
    MeterChange,
    ModelConfig,
    ModelResult,
    ParamChange,
    jain_index,
    simulate,
)
from dcnlab.controller.congestion.params import CongestionParamError, HcaParams, PacerParams, TimerMode
from dcnlab.controller.congestion.policy import FlowSpec, Tenant

PAPER_BECN = {1: 790, 2: 480, 3: 320}
"""Fig. 5(b): BECNs at the D->B source with 1, 2 and 3 tenant-2 flows (interval not stated)."""
PAPER_FIG4_MBPS = {2.048: 1000.0, 20.48: 100.0, 204.8: 10.0}
"""Fig. 4 (§5): IRD (µs) -> the paper's rate limit, written "1GB", "100MB", "10MB" and computed as
``(1024 * 8) / (IRD * 4)``: bit/s, so read here as Mb/s."""
PAPER_RECOVERY_S = (2.0, 1.0)
"""Fig. 5(a) (§5): after the first departure tenant 2's remaining flows speed up over 5-7 s, after
the second over 7-8 s: 2 s and 1 s."""
RECOVERY_FRACTION = 0.9
"""A flow has recovered (converged) once it is within 10% of its new steady rate (:func:`summarize_recovery`)."""


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
                    control_delay_s: float = 0.0,
                    policy_name: str = "tenant-fair",
                    base_timer: int | None = None) -> tuple[list[ParamChange], list[MeterChange]]:
    """Replay the flows' arrivals and departures through the policy ``policy_name`` (:mod:`.registry`: a
    built-in, an installed plug-in or a reference), driven as ``plan congestion`` drives it
    (:class:`.registry.PolicyRun`); return its pushes and meter settings, every one checked.

    ``base_timer``: the senders' ``CCTI_Timer`` before any push, for a policy that takes it
    (:func:`.registry.make_policy`; the BMv2 experiment's 20 or 30); None leaves the policy's default (150)."""
    from dcnlab.controller.congestion import registry

    link_bps, switch, receiver = config.link.rate_bps, config.switch, config.receiver
    packet_bytes = config.pacer.packet_bytes
    rates = {"bottleneck": link_bps}
    extra = {} if base_timer is None else {"base_timer": base_timer}
    run = registry.PolicyRun(policy_name, tenants, rates, switch=switch, receiver=receiver,
                             packet_bytes=packet_bytes, **extra)
    by_name = {f.name: f for f in flows}
    events = sorted([(f.start_s, 1, f.name) for f in flows]
                    + [(f.stop_s, 0, f.name) for f in flows if math.isfinite(f.stop_s)])
    changes: list[ParamChange] = []
    meters: list[MeterChange] = []
    metered: dict[str, float] = {}
    for t, kind, name in events:
        updates = run.add([FlowSpec(name, by_name[name].tenant)]) if kind == 1 else run.remove(name)
        current = run.meters()
        for u in updates:
            params = replace(by_name[u.flow].params, ccti_increase=u.ccti_increase, ccti_timer=u.ccti_timer)
            changes.append(ParamChange(t + control_delay_s, u.flow, params))
        now = {m.tenant: m.rate_bps for m in current}
        for tenant in sorted(set(metered) | set(now)):
            if metered.get(tenant) != now.get(tenant):
                meters.append(MeterChange(t + control_delay_s, tenant, now.get(tenant)))
        metered = now
    return changes, meters


def link_variant(link: Link) -> str:
    """The name suffix of a bottleneck that is not the paper's (round robin per input port, own input links)."""
    return ("_fifo" if link.arbitration == "fifo" else "") + ("_shared" if link.shared_input else "")


def fairness_incast(cc: bool, phase_s: float = 1.0, config: ModelConfig | None = None) -> Scenario:
    """(a) Fig. 3: A, B, D, E -> C, one new flow per phase, each for 5 phases; A and B share a port.

    The name gets ``_fifo`` for a FIFO bottleneck and ``_shared`` when A and B share one input link
    (:func:`link_variant`): the parking lot without CC depends on both (``fluid`` module docstring)."""
    cfg = config or ModelConfig()
    flows = tuple(FlowDef(f"{src}->C", src, i * phase_s, (i + 5) * phase_s, HcaParams(), cc,
                          port="AB" if src in "AB" else src)
                  for i, src in enumerate("ABDE"))
    windows = tuple(Window(k * phase_s, (k + 1) * phase_s, f"{sum(f.start_s <= k * phase_s < f.stop_s for f in flows)} flows")
                    for k in range(8))
    return Scenario(f"fairness_cc_{'on' if cc else 'off'}{link_variant(cfg.link)}", flows, 8 * phase_s, cfg,
                    windows=windows, meta={"cc": cc, "phase_s": phase_s, "arbitration": cfg.link.arbitration,
                                           "shared_input": cfg.link.shared_input})


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
                config: ModelConfig | None = None, policy: str = "tenant-fair") -> Scenario:
    """(c) Fig. 5: tenant 1 with one flow, tenant 2 going 1 -> 2 -> 3 -> 2 -> 1 flows, under ``policy``
    (:mod:`.registry`; the scenario's name carries a policy other than the paper's)."""
    if mode not in ("cc", "meter"):
        raise CongestionParamError(f"mode={mode!r} is not valid; valid: cc, meter")
    cfg = config or ModelConfig()
    cc = mode == "cc"
    flows = (FlowDef("C->A", "tenant1", 0.0, math.inf, HcaParams(), cc),
             FlowDef("D->B", "tenant2", 0.0, math.inf, HcaParams(), cc),
             FlowDef("E->B", "tenant2", phase_s, 4 * phase_s, HcaParams(), cc),
             FlowDef("F->B", "tenant2", 2 * phase_s, 3 * phase_s, HcaParams(), cc))
    tenants = (Tenant("tenant1", 1.0), Tenant("tenant2", 1.0))
    changes, meters = policy_schedule(flows, tenants, cfg, control_delay_s, policy)
    counts = (1, 2, 3, 2, 1)
    windows = tuple(Window(k * phase_s, (k + 1) * phase_s, f"{n} tenant-2 flows") for k, n in enumerate(counts))
    suffix = "" if policy == "tenant-fair" else "_" + "".join(c if c.isalnum() else "_" for c in policy)[-40:]
    return Scenario(f"tenant_fair_{mode}{suffix}", flows, 5 * phase_s, cfg, tuple(changes) if cc else (),
                    tuple(meters) if not cc else (), windows, tenants,
                    meta={"mode": mode, "phase_s": phase_s, "tenant2_flows": counts, "policy": policy})


def with_timer_mode(s: Scenario, timer_mode: TimerMode) -> Scenario:
    """``s`` with every flow's (and every push's) CCTI timer in ``timer_mode``."""
    return replace(s, flows=tuple(replace(f, params=replace(f.params, timer_mode=timer_mode)) for f in s.flows),
                   changes=tuple(replace(c, params=replace(c.params, timer_mode=timer_mode)) for c in s.changes))


def tenant_recovery(phase_s: float = 2.0, sample_s: float = 1e-3, timer_mode: TimerMode = "reset",
                    config: ModelConfig | None = None) -> Scenario:
    """(c') Fig. 5(a)'s arrivals and departures at a fine time resolution: the schedule of
    :func:`tenant_fair` with CC (1 -> 2 -> 3 -> 2 -> 1 tenant-2 flows) sampled every ``sample_s``.

    Paper §5: "convergence after a flow joins is very fast"; after flows leave, tenant 2's
    remaining flows speed up "relatively slowly", over 5-7 s and 7-8 s. The loop's time constants are
    ``CCTI_Timer`` (153.6 µs) and the feedback delay, so the model's transients last milliseconds: the
    100 ms samples of (c) cannot resolve them, 1 ms samples can (:func:`summarize_recovery`). The
    recovery does not depend on the phase length once a phase is long enough to settle (phases of 0.1,
    0.2, 0.4 and 2 s gave the same times within 2 ms)."""
    if not sample_s > 0:
        raise CongestionParamError(f"sample_s={sample_s} must be > 0 s")
    base = config or ModelConfig()
    s = tenant_fair(phase_s, "cc", config=replace(base, sample_s=sample_s))
    if timer_mode != "reset":
        s = with_timer_mode(s, timer_mode)
    return replace(s, name="tenant_recovery" + ("" if timer_mode == "reset" else f"_{timer_mode}"),
                   meta=s.meta | {"timer_mode": timer_mode, "sample_s": sample_s})


def cct_rate_limit(ird_us: float, aggregate: int = 4, packet_bytes: int = 1024, duration_s: float = 0.01,
                   config: ModelConfig | None = None) -> Scenario:
    """(d) Fig. 4: one QP alone on the link, its CCTI pinned to 1 (``CCTI_Min = CCTI_Limit = 1``) and
    ``CCT[1]`` = ``ird_us``; ``aggregate`` packets of ``packet_bytes`` per IRD (Algorithm 2).

    Paper §5: "one QP's CCTI is fixed at 1 and fixed IRD values are set; the sender
    aggregates 4 x 1024-byte packets per IRD comparison"; IRD 20.48 µs gives "(1024 x 8) / (20.48 x 4 x
    10^-6) = 100MB", 204.8 µs "10MB", 2.048 µs "1GB". Decisions: the packet is 1024 bytes and the
    aggregate 4 (the paper's), the IRD applies per aggregate (Algorithm 2, the model's pacer;
    ``aggregate=1`` is the per-packet reading), the link is otherwise idle (no marking, no BECN), and
    the NIC caps the rate at the link's 8 Gb/s. The paper's arithmetic divides one packet's bits by
    four IRDs, which no pacing of 4 x 1024 B per IRD gives (:func:`summarize_cct`)."""
    if not (math.isfinite(ird_us) and ird_us > 0):
        raise CongestionParamError(f"ird_us={ird_us} is out of range; valid: > 0 µs")
    pacer = PacerParams(aggregate, packet_bytes)
    cfg = replace(config or ModelConfig(), cct=Cct.from_us((0.0, ird_us)), pacer=pacer, sample_s=duration_s / 10)
    flow = FlowDef("QP", "t", params=HcaParams(ccti_min=1, ccti_limit=1))
    return Scenario(f"cct_limit_{ird_us:g}us" + ("" if aggregate == 4 else f"_agg{aggregate}"), (flow,), duration_s,
                    cfg, windows=(Window(0.0, duration_s, "all"),),
                    meta={"ird_us": ird_us, "aggregate": aggregate, "packet_bytes": packet_bytes})


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


def fifo_config(shared_input: bool = False, base: ModelConfig | None = None) -> ModelConfig:
    """The model with one FIFO bottleneck queue (BMv2's egress queue) instead of round robin per input port;
    ``shared_input``: the flows of one ``port`` share one input link (BMv2 runs A and B on one host NIC)."""
    cfg = base or ModelConfig()
    return replace(cfg, link=replace(cfg.link, arbitration="fifo", shared_input=shared_input))


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


def parking_ratio(s: Scenario, r: ModelResult) -> float:
    """(a): (A->C + B->C) / mean(D->C, E->C) while all four flows run (phases 3 to 5): 1 under the
    parking lot of Fig. 3(a), 2 when the four flows share the bottleneck equally."""
    p = s.meta["phase_s"]
    rates = dict(zip((f[0] for f in r.flows), r.mean_rates(3 * p, 5 * p)))
    return float((rates["A"] + rates["B"]) / ((rates["D"] + rates["E"]) / 2))


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
    slowest_over_fastest_tenant2: float = 1.0
    """Tenant 2's slowest flow over its fastest (equal shares: 1; a 1 : 0.5 split: 0.5)."""


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
        inside = rates[active]
        spread = float(inside.min() / inside.max()) if inside.size and inside.max() > 0 else math.nan
        out.append(PhaseSummary(w.label, n, t1, t2r, t1 / t2r if t2r > 0 else math.inf,
                                jain_index(inside), becn, becn * r.sample_s, spread))
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


@dataclass(frozen=True)
class Transition:
    """(c'): one arrival or departure of a tenant-2 flow and how long tenant 2's flows took to settle."""

    kind: str
    """``join`` or ``leave``."""
    flow: str
    time_s: float
    flows: tuple[str, ...]
    """The tenant-2 flows measured: those active after the event."""
    before_bps: tuple[float, ...]
    """Settled rates before (mean over the second half of the phase before; line rate for a newcomer)."""
    steady_bps: tuple[float, ...]
    """New steady rates (mean over the second half of the phase after)."""
    ccti_before: tuple[float, ...]
    ccti_after: tuple[float, ...]
    seconds: float | None
    """Time from the event until every flow is within ``1 - fraction`` of its new steady rate, coming
    from the side it starts on (None: not within the phase)."""
    min_seconds: float
    """Lower bound of a recovery from the CCT alone: the largest CCTI decrease x ``CCTI_Timer`` (one
    index per timer period; 0 for a join)."""


@dataclass(frozen=True)
class RecoverySummary:
    """(c'): arrivals and departures of tenant 2's flows, with the paper's 2 s and 1 s beside them."""

    fraction: float
    sample_s: float
    timer_mode: str
    joins: tuple[Transition, ...]
    leaves: tuple[Transition, ...]
    recovery_s: tuple[float | None, ...]
    """After the first and second departure (the paper's 5-7 s and 7-8 s: 2 s and 1 s)."""
    join_s: tuple[float | None, ...]
    leave_over_join: float | None
    """Mean recovery after departures over mean convergence after arrivals (> 1: slower)."""
    first_over_second: float | None
    """Recovery after the first departure over the second's (the paper: 2 s / 1 s = 2)."""
    paper_s: tuple[float, ...] = PAPER_RECOVERY_S


def settle_time(r: ModelResult, t_event: float, cols: Sequence[int], start: np.ndarray, steady: np.ndarray,
                fraction: float = RECOVERY_FRACTION, t_end: float = math.inf) -> float | None:
    """Seconds from ``t_event`` to the end of the first sample in which every flow of ``cols`` is within
    ``1 - fraction`` of its ``steady`` rate from the side of its ``start`` rate: at least ``fraction x
    steady`` for a flow that speeds up, at most ``(2 - fraction) x steady`` for one that slows down
    (None if that does not happen before ``t_end``). The resolution is one sample."""
    if not 0 < fraction < 1:
        raise CongestionParamError(f"fraction={fraction} is out of range; valid: 0 < fraction < 1")
    m = (r.times > t_event + 1e-12) & (r.times <= t_end + 1e-12)
    th = r.throughput_bps[m][:, list(cols)]
    up = start < steady
    ok = np.where(up[None, :], th >= fraction * steady[None, :], th <= (2 - fraction) * steady[None, :]).all(axis=1)
    if not ok.any():
        return None
    return float(r.times[m][int(np.argmax(ok))] - t_event)


def summarize_recovery(s: Scenario, r: ModelResult, fraction: float = RECOVERY_FRACTION) -> RecoverySummary:
    """(c'): for each arrival and departure of a tenant-2 flow after the start, how long tenant 2's flows
    take to settle (:func:`settle_time`), their rates and CCTIs before and after.

    Decisions: the new steady rate is the mean over the second half of the phase after the event (the
    model's oscillation, about 10 ms, averages out over it); "recovered" means within 10% of it, i.e. at
    90% for the remaining flows after a departure (they speed up), at 110% after an arrival (they slow
    down; the newcomer starts at line rate); one sample (1 ms) resolution."""
    p = s.meta["phase_s"]
    t2 = [i for i, t in enumerate(r.tenants) if t == "tenant2"]
    events = sorted([(r.starts[i], "join", i) for i in t2 if r.starts[i] > 0]
                    + [(r.stops[i], "leave", i) for i in t2 if math.isfinite(r.stops[i])])
    timer = {f.name: f.params.timer_s for f in s.flows}
    joins: list[Transition] = []
    leaves: list[Transition] = []
    for t, kind, i in events:
        cols = [j for j in t2 if r.starts[j] <= t + 1e-9 and r.stops[j] > t + 1e-9]
        steady = r.mean_rates(t + p / 2, t + p)[cols]
        before = r.mean_rates(t - p / 2, t)[cols]
        if kind == "join":
            before[cols.index(i)] = r.link_bps
        w_before, w_after = r.window(t - p / 2, t), r.window(t + p / 2, t + p)
        c_before = r.ccti[w_before][:, cols].mean(axis=0)
        c_after = r.ccti[w_after][:, cols].mean(axis=0)
        steps = float(max(0.0, *(c_before - c_after))) if kind == "leave" else 0.0
        tr = Transition(kind, r.flows[i], t, tuple(r.flows[j] for j in cols), tuple(map(float, before)),
                        tuple(map(float, steady)), tuple(map(float, c_before)), tuple(map(float, c_after)),
                        settle_time(r, t, cols, before, steady, fraction, t + p),
                        steps * max(timer[r.flows[j]] for j in cols))
        (joins if kind == "join" else leaves).append(tr)
    rec = tuple(x.seconds for x in leaves)
    js = tuple(x.seconds for x in joins)

    def mean(xs: tuple[float | None, ...]) -> float | None:
        return None if not xs or any(x is None for x in xs) else float(np.mean([x for x in xs if x is not None]))

    ml, mj = mean(rec), mean(js)
    first_second = rec[0] / rec[1] if len(rec) == 2 and rec[0] is not None and rec[1] else None
    return RecoverySummary(fraction, r.sample_s, s.meta.get("timer_mode", "reset"), tuple(joins), tuple(leaves), rec,
                           js, ml / mj if ml is not None and mj else None, first_second)


@dataclass(frozen=True)
class CctLimitSummary:
    """(d) Fig. 4: the measured rate of the pinned QP against Algorithm 2 and the paper's figure."""

    ird_us: float
    aggregate: int
    packet_bytes: int
    measured_bps: float
    expected_bps: float
    """``aggregate x packet bits / IRD``, capped at the NIC rate (what Algorithm 2 allows)."""
    error: float
    """measured / expected - 1."""
    paper_mbps: float | None
    """Fig. 4's figure for this IRD (None: not one of the paper's)."""
    paper_formula_bps: float
    """The paper's arithmetic ``packet bits / (IRD x 4)``."""


def summarize_cct(s: Scenario, r: ModelResult) -> CctLimitSummary:
    w = s.windows[0]
    measured = float(r.mean_rates(w.t0, w.t1)[0])
    ird = s.meta["ird_us"] * 1e-6
    expected = aggregate_rate(ird, s.meta["packet_bytes"], s.meta["aggregate"], s.config.link.nic_bps)
    return CctLimitSummary(s.meta["ird_us"], s.meta["aggregate"], s.meta["packet_bytes"], measured, expected,
                           measured / expected - 1.0, PAPER_FIG4_MBPS.get(s.meta["ird_us"]),
                           s.meta["packet_bytes"] * 8 / (ird * 4))
