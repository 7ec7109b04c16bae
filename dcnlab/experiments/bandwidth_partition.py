"""Bandwidth partition by IB-style congestion control on BMv2 (issue 10 §5; paper 002 §5, Fig. 3 and Fig. 5).

One emulated fabric runs every scenario in turn. Host 0 is the receiver and hosts 1-4 (sender slots 0-3)
send; the default fabric, ``dragonfly:p=5,a=1,h=1`` (two BMv2 switches with five hosts each), has all
five on one switch, so every packet crosses a single BMv2: on a busy 2-core machine each extra BMv2 hop
loses packets when its process is starved. The bottleneck is the BMv2 egress queue of the receiver's
port, rate-limited to ``rate_pps`` packets/s with ``queue_depth`` packets of buffer over Thrift (anchors
§C6 step 1: the queue must live inside BMv2, not in tc). That port marks CE (the FECN) as
``p4src/ecn.p4`` does; the receiver host reflects BECNs; each sender runs Algorithm 1 and 2
(:mod:`dcnlab.traffic.congestion_agent`). Any fabric with 5 hosts works (``--spec``, e.g. ``bcube:n=5,k=0``).

Scenarios (each also in **meter mode**: flows without CC, the bottleneck switch meters each tenant to
its share with ``p4src/meter.p4``):

* **(a) Fig. 3.** Flows A->C, B->C, D->C, E->C; a new one every ``phase_a`` seconds, each lasting five
  phases; CC off, CC on, meter mode (every flow its own tenant). Jain's index per 100 ms sample.
* **(b) Theorem 1.** Two flows with ``CCTI_Increase`` 1 and N (N = 2, 3): bandwidth N:1 (+-15%).
  Meter mode: two tenants with weights 1 and 1/N.
* **(c) Fig. 5.** Tenant 1: C->A. Tenant 2: D->B always, E->B from phase 1 to 4, F->B from phase 2 to
  3 (1 -> 2 -> 3 -> 2 -> 1 flows). The policy (:class:`~dcnlab.controller.congestion.policy.TenantPolicy`)
  pushes ``CCTI_Increase`` = tenant 2's flow count to its flows at each arrival and departure. Tenant
  shares 1:1 (+-10%), equal within tenant 2, BECNs at D->B ∝ 1/CCTI_Increase.

Every scenario is one :class:`dcnlab.controller.congestion.scenarios.Scenario` in *emulated* seconds; the same
object drives the emulation and, scaled into IB time, the fluid model (:func:`predict`), whose result is
scaled back (``ModelResult.in_emulated_time``) and drawn on the same plots.

Decisions (report §7, §9; none of this is in the paper):

* **Time scale.** One emulated packet stands for one 1024-byte IB packet: the bottleneck of
  ``rate_pps`` packets/s plays the 8 Gb/s IB link (976,563 packets/s), so ``TimeScale.for_link(rate_pps)``
  stretches IB time by 976.6 at the default 1000 packets/s. CCT entries, ``CCTI_Timer`` and sampling
  scale by it; queue thresholds, packets per IRD, marks per BECN are unchanged. Frames are
  ``frame_bytes`` (200) on the wire: BMv2's queue rate counts packets, whatever their size.
* **Timer: the specification's free-running timer, CCTI_Timer = 20, by default on BMv2;** the paper's
  Algorithm 1 (timer reset on every BECN) with CCTI_Timer = 30 is ``timer_mode="reset"``
  (``--timer-mode reset``; :data:`DEFAULT_TIMER`). Both are implemented by the same sender
  (:mod:`dcnlab.traffic.cc`) and predicted by the same model. Why free-running here: with Algorithm 1 a flow
  that receives a BECN more often than once per timer period never recovers (report §7.2), so the
  shares depend on the history of the run and on when a busy machine happens to delay a sender; on
  this shared 2-core machine the reset timer gave 1:3 -> 3.1-5.7:1 over six BMv2 runs (the model
  says 3.0), while the free-running timer's equilibrium ``r_i ∝ 1/(CCTI_Increase_i * CCTI_Timer)``
  (report §4.7) does not depend on the history, and gave 2.8-3.1:1. The timer values are 20 and 30
  instead of Table 1's 150: the paper's phases last 1-2 s of IB time, i.e. 6,500-13,000 timer
  periods, while an emulated phase of 3-10 s at the scale above is only 3-10 ms of IB time. With 150
  a flow that must speed up after a departure recovers one CCT index per 150 ms and needs longer than
  a phase (the model predicts a tenant ratio of 2.4 after the last departure).
* **CCTI_Limit = 255** (the paper gives none; the CCT keeps 1024 entries). CCT[255] lets 50 packets/s
  through on BMv2 (5% of the bottleneck), below every operating point of the scenarios (CCTI 80-150,
  100-700 packets/s). With the CCT's last entry as the limit, one stall of a starved BMv2 (the queue
  fills, every 2nd packet is marked for a while) drove flows to CCTI of several hundred, i.e. a few
  packets/s, and recovering one index per timer period then took 10-15 s, longer than a phase
  (measured: tenant 2 at 20-40 packets/s for 15 s after such a storm). The limit bounds the recovery
  to about 3 s and leaves the model's predictions unchanged.
* **Marking.** Threshold level 14 (16 packets, params.py's mapping) and ``Marking_Rate`` 1 (every 2nd
  eligible packet, counter mode; ``marking_mode="random"`` draws with probability 1/2 instead); C = 1.
  The counter is deterministic and has the lower variance: with random marks the model's own ratios
  over the short windows of ``quick()`` scatter by up to 17% (1:2 -> 1.66:1 for one seed). The
  counter's risk is aliasing (two flows whose 4-packet aggregates interleave regularly could share
  the marks unevenly); the two single-flow phases of (c), where two identical flows meet, are where
  it would show, and there the measured tenant ratios scatter on both sides of 1 from run to run
  (0.80-1.11 with 7-s windows, 0.999-1.045 with 24-s windows), not in one direction. A sweep of the fluid model over timer {20, 25, 30, 40, 50,
  80, 150} x level {12, 14, 15} x rate {0, 1, 3, 5, 7} put this point closest to the targets for
  both timers: reset/30 (b) 1.96:1 and 3.02:1, (c) tenant ratios 0.99-1.04, BECNs 1:0.52:0.36, (a)
  Jain 0.99, at 85% link use; free/20 (b) 1.96:1 and 2.92:1, (c) 0.99-1.00, (a) Jain 0.995.
* **Phases.** (a) a new flow every 3 s (the model's Jain index with CC falls to 0.88 at 1 s and 0.96
  at 2 s phases: the newcomer starts at line rate and the others recover one index per timer
  period), (c) 30 s phases with CC, measured after 6 s of settling, (b) 20 s after 4 s of warm-up. The
  loop oscillates (a BECN burst, then a recovery of one index per timer period, 20 ms, about 1 s per
  cycle on BMv2 as in the model), and two flows' CCTIs wander apart and back with a correlation time of
  about a second (the restoring force: a flow ahead by ΔCCTI gets ≈ 2·ΔCCTI/CCTI more marks), so the
  1-s tenant ratio of two identical flows scatters by ±15-20% (measured). A window must therefore hold
  many such times: with 7-s windows (10 s phases) two of five phases per run missed 1:1 ± 10%
  (0.80-1.18 over two runs); with 24-s windows every phase of two runs was within 0.965-1.045. Meter
  mode needs no settling (its shares are exact within a second), so its phases stay 10 s
  (``phase_c_meter``). ``quick()`` shortens them all (the tests use it).
* **NIC rate** = ``rate_pps``: a source never sends faster than the link (IB HCA at line rate). CC off
  therefore means "at line rate".
* **Parking lot in (a).** A and B run on the same host, and a host has one NIC at line rate that its
  flows share (:class:`dcnlab.traffic.congestion_agent.Nic`): A+B <= ``rate_pps``, the "shared input port" of
  report §6.2. The model of (a) without CC uses ``round_robin`` arbitration with A and B on one port
  (A+B = D = E, Jain 0.90), all other runs a FIFO. On BMv2 the CC-off index is *reported, not
  checked*: a tail-drop FIFO shares by offered load, and on a busy machine the Python senders of D and
  E do not reach line rate (measured 700-900 of 1000 packets/s), so the measured index (0.98 on the
  loaded machine) depends on the machine, not on the mechanism (report §9's caveat: a BMv2 FIFO does
  not reproduce IB's per-input arbitration).
* **Meter mode** meters each *tenant* (one meter cell per tenant, CIR = PIR = its share); the flows of
  a tenant run without CC at line rate and share the tenant's cell by offered load. So meters hold the
  tenant shares, but equal shares *inside* a tenant are only reported in meter mode, not checked: on a
  busy machine the senders' threads reach different rates. Meter mode is also the heaviest load on the
  machine: every flow offers the line rate, 2-4 times the bottleneck, and BMv2 parses every packet
  before the meter drops it.
* **Meter bursts** are 50 ms of the tenant's rate, at least 16 packets: senders and BMv2 on a busy
  machine are scheduled in bursts of milliseconds, and a 4-packet bucket drops much of a tenant's
  share then (measured on the loaded machine: a flow of 1000 packets/s through a 1000 packets/s meter
  kept 76% with a 4-packet bucket and 100% with 16).
* **Priority.** The emulation measures time: a sender thread that a busy machine starves sends less
  than its CCT allows, and a starved BMv2 drains its queue late. The machine is shared (other work runs
  numba and compilers on both cores), so the run's own BMv2 switches and host agents, every thread,
  get niceness ``nice`` = -10 (:func:`renice`; root, as the emulation needs anyway). Nothing else is
  touched, and the processes die with the run.
* **Disturbed runs.** A CC run that lost more than 10% of its packets (:func:`disturbed`) measured a
  starved emulator, not the mechanism; it is run again (``attempts`` = 2 runs per scenario at most),
  and the rejected run's health data stays in the JSON (``rejected_runs``) and the printed summary.
* **Receivers A and B of (c)** are two UDP ports of the receiving host: on a star every other pair of
  hosts has its own last hop, and the shared egress queue is what the paper's S1-S2 link provides.
* **Start.** A new flow starts at ``CCTI_Min`` = 0 (line rate), as an IB QP does.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from dcnlab.controller.congestion import scenarios as sc
from dcnlab.controller.congestion.cct import Cct, TimeScale
from dcnlab.controller.congestion.dataplane import CongestionDataplane, PortMarks, TenantKey
from dcnlab.controller.congestion.fluid import (
    FlowDef,
    Link,
    MeterChange,
    ModelConfig,
    ModelResult,
    ParamChange,
    jain_index,
)
from dcnlab.controller.congestion.params import (
    CongestionParamError,
    HcaParams,
    MarkingMode,
    PacerParams,
    ReceiverParams,
    SwitchParams,
    TimerMode,
    check_field,
)
from dcnlab.controller.congestion.policy import FlowSpec, MeterRate, Tenant, TenantPolicy
from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

Progress = Callable[[str], None]

IB_PACKET_BYTES = 1024
DEFAULT_TIMER: dict[str, int] = {"free": 20, "reset": 30}
"""CCTI_Timer by timer mode (module docstring, "Timer")."""
RX_PORTS = {"C": 5001, "A": 5001, "B": 5002}
SPORT_BASE = 40000
METER_BURST_S = 0.05
METER_BURST_PACKETS = 16
RATIO_TOLERANCE = 0.15
TENANT_TOLERANCE = 0.10
DISTURBED_LOAD_PER_CPU = 2.0
"""A run during which the 1-minute load average exceeded this per CPU is reported as disturbed."""
MAX_CC_LOSS = 0.10
"""A CC run that loses more of its packets measured a starved emulator (:func:`disturbed`)."""
START_DELAY_S = 0.3
DRAIN_S = 0.4


@dataclass(frozen=True)
class EmuConfig:
    """Every knob of the BMv2 experiment (times in emulated seconds)."""

    spec: str = "dragonfly:p=5,a=1,h=1"
    rate_pps: int = 1000
    queue_depth: int = 128
    frame_bytes: int = 200
    threshold: int = 14
    marking_rate: int = 1
    marking_mode: MarkingMode = "nth"
    becn_every: int = 1
    ccti_timer: int = 20
    timer_mode: TimerMode = "free"
    cct_size: int = 1024
    ccti_limit: int = 255
    aggregate: int = 4
    sample_s: float = 0.1
    phase_a: float = 3.0
    duration_b: float = 20.0
    warmup_b: float = 4.0
    duration_b_meter: float = 6.0
    phase_c: float = 30.0
    settle_c: float = 6.0
    phase_c_meter: float = 10.0
    max_load: float | None = None
    """Before each scenario, wait (up to ``quiet_wait_s``) until the 1-minute load average is below this."""
    quiet_wait_s: float = 300.0
    attempts: int = 2
    """Runs per scenario at most: a run that :func:`disturbed` rejects is repeated."""
    nice: int | None = -10
    """Niceness given to the run's own BMv2 switches and host agents (every thread), None: leave it."""
    ratios: tuple[int, ...] = (2, 3)
    parts: tuple[str, ...] = ("a", "b", "c")
    modes: tuple[str, ...] = ("cc", "meter")

    def __post_init__(self) -> None:
        check_field("rate_pps", self.rate_pps, 50, 20_000, "packets/s at the bottleneck; BMv2 on 2 cores")
        check_field("queue_depth", self.queue_depth, 8, 100_000, "packets")
        check_field("frame_bytes", self.frame_bytes, 66, 1514, "bytes")
        for name in ("phase_a", "duration_b", "duration_b_meter", "phase_c", "phase_c_meter"):
            v = getattr(self, name)
            if not (math.isfinite(v) and 0.5 <= v <= 600):
                raise CongestionParamError(f"{name}={v} is out of range; valid: 0.5..600 s")
        if not 0 <= self.warmup_b < self.duration_b:
            raise CongestionParamError(f"warmup_b={self.warmup_b} is out of range; valid: 0..duration_b")
        if self.max_load is not None and not (math.isfinite(self.max_load) and self.max_load > 0):
            raise CongestionParamError(f"max_load={self.max_load} is out of range; valid: > 0")
        check_field("attempts", self.attempts, 1, 10, "runs per scenario")
        if self.nice is not None:
            check_field("nice", self.nice, -20, 19, "Linux niceness of the run's switches and agents")
        if not 0 <= self.settle_c < self.phase_c:
            raise CongestionParamError(f"settle_c={self.settle_c} is out of range; valid: 0..phase_c")
        for n in self.ratios:
            check_field("ratio", n, 2, 255, "CCTI_Increase of the second flow")
        for p in self.parts:
            if p not in ("a", "b", "c"):
                raise CongestionParamError(f"part {p!r} is not valid; valid: a, b, c")
        for m in self.modes:
            if m not in ("cc", "meter"):
                raise CongestionParamError(f"mode {m!r} is not valid; valid: cc, meter")
        self.switch_params()
        self.hca(1).check_cct(self.cct_size)

    @property
    def scale(self) -> TimeScale:
        return TimeScale.for_link(self.rate_pps, packet_bytes=IB_PACKET_BYTES)

    @property
    def link_bps(self) -> float:
        """The bottleneck in emulated bits/s of ``frame_bytes`` frames."""
        return self.rate_pps * 8.0 * self.frame_bytes

    def switch_params(self) -> SwitchParams:
        return SwitchParams(threshold=self.threshold, marking_rate=self.marking_rate, marking_mode=self.marking_mode)

    def hca(self, ccti_increase: int) -> HcaParams:
        return HcaParams(ccti_increase=ccti_increase, ccti_timer=self.ccti_timer, ccti_limit=self.ccti_limit,
                         timer_mode=self.timer_mode)


def quick(cfg: EmuConfig = EmuConfig()) -> EmuConfig:
    """A shorter run (about a minute of traffic): shorter phases, one ratio."""
    return replace(cfg, phase_a=2.0, duration_b=10.0, warmup_b=3.0, duration_b_meter=4.0, phase_c=5.0,
                   settle_c=2.0, phase_c_meter=4.0, ratios=(2,))


# -- scenarios in emulated time ------------------------------------------------------------------------------
def _schedule(flows: Sequence[FlowDef], tenants: Sequence[Tenant], cfg: EmuConfig, pushes: bool,
              meters: bool) -> tuple[list[ParamChange], list[MeterChange]]:
    """Replay arrivals and departures through the policy: its pushes (if ``pushes``) and meter rates
    (if ``meters``; emulated bits/s) at each event."""
    inc_policy = TenantPolicy(tenants, base_timer=cfg.ccti_timer, switch=cfg.switch_params(),
                              receiver=ReceiverParams(cfg.becn_every), packet_bytes=cfg.frame_bytes)
    meter_policy = TenantPolicy(tenants)       # its target shares; the rates are in emulated bits/s here
    by_name = {f.name: f for f in flows}
    events = sorted([(f.start_s, 1, f.name) for f in flows]
                    + [(f.stop_s, 0, f.name) for f in flows if math.isfinite(f.stop_s)])
    changes: list[ParamChange] = []
    out_meters: list[MeterChange] = []
    current: dict[str, float] = {}
    for t, kind, name in events:
        spec = FlowSpec(name, by_name[name].tenant)
        if kind:
            ups = inc_policy.add_flow(spec)
            meter_policy.add_flow(spec)
        else:
            ups = inc_policy.remove_flow(name)
            meter_policy.remove_flow(name)
        if pushes:
            for u in ups:
                changes.append(ParamChange(t, u.flow, replace(by_name[u.flow].params, ccti_increase=u.ccti_increase,
                                                              ccti_timer=u.ccti_timer)))
        if meters:
            now = {t: share * cfg.link_bps for t, share in meter_policy.target_shares().items()}
            for tenant in sorted(set(current) | set(now)):
                if current.get(tenant) != now.get(tenant):
                    out_meters.append(MeterChange(t, tenant, now.get(tenant)))
            current = now
    return changes, out_meters


def fairness_plan(cfg: EmuConfig, mode: str) -> sc.Scenario:
    """(a): ``mode`` = ``off`` (no CC), ``cc`` or ``meter``."""
    p = cfg.phase_a
    cc = mode == "cc"
    slots = {"A": 0, "B": 0, "D": 1, "E": 2}
    flows = tuple(FlowDef(f"{src}->C", f"{src}->C", i * p, (i + 5) * p, cfg.hca(1), cc,
                          port="AB" if src in "AB" else src) for i, src in enumerate("ABDE"))
    tenants = tuple(Tenant(f.name) for f in flows)
    _, meters = _schedule(flows, tenants, cfg, pushes=False, meters=mode == "meter")
    windows = tuple(sc.Window(k * p, (k + 1) * p, f"{sum(f.start_s <= k * p < f.stop_s for f in flows)} flows")
                    for k in range(8))
    return sc.Scenario(f"fairness_{mode}", flows, 8 * p, ModelConfig(), (), tuple(meters), windows, tenants,
                       meta={"kind": "fairness", "mode": mode, "cc": cc, "phase_s": p, "routes": {f.name: (slots[f.name[0]], RX_PORTS["C"]) for f in flows}})


def ratio_plan(cfg: EmuConfig, n: int, mode: str) -> sc.Scenario:
    """(b): CCTI_Increase 1 and ``n`` (``cc``) or meters with weights 1 and 1/n (``meter``)."""
    cc = mode == "cc"
    dur = cfg.duration_b if cc else cfg.duration_b_meter
    warm = cfg.warmup_b if cc else min(cfg.warmup_b, dur / 3)
    flows = (FlowDef("inc1", "t1", 0.0, math.inf, cfg.hca(1), cc),
             FlowDef(f"inc{n}", "t2", 0.0, math.inf, cfg.hca(n), cc))
    tenants = (Tenant("t1", 1.0), Tenant("t2", 1.0 / n))
    _, meters = _schedule(flows, tenants, cfg, pushes=False, meters=not cc)
    return sc.Scenario(f"ratio_1_{n}_{mode}", flows, dur, ModelConfig(), (), tuple(meters),
                       (sc.Window(warm, dur, "steady"),), tenants,
                       meta={"kind": "ratio", "mode": mode, "cc": cc, "ratio": n,
                             "routes": {"inc1": (0, RX_PORTS["C"]), f"inc{n}": (1, RX_PORTS["C"])}})


def tenant_plan(cfg: EmuConfig, mode: str) -> sc.Scenario:
    """(c): the paper's Fig. 5 schedule, policy pushes (``cc``) or tenant meters (``meter``)."""
    cc = mode == "cc"
    p = cfg.phase_c if cc else cfg.phase_c_meter
    settle = cfg.settle_c if cc else min(cfg.settle_c, p / 3)
    flows = (FlowDef("C->A", "tenant1", 0.0, math.inf, cfg.hca(1), cc),
             FlowDef("D->B", "tenant2", 0.0, math.inf, cfg.hca(1), cc),
             FlowDef("E->B", "tenant2", p, 4 * p, cfg.hca(1), cc),
             FlowDef("F->B", "tenant2", 2 * p, 3 * p, cfg.hca(1), cc))
    tenants = (Tenant("tenant1", 1.0), Tenant("tenant2", 1.0))
    changes, meters = _schedule(flows, tenants, cfg, pushes=cc, meters=not cc)
    counts = (1, 2, 3, 2, 1)
    windows = tuple(sc.Window(k * p, (k + 1) * p, f"{n} tenant-2 flows") for k, n in enumerate(counts))
    slots = {"C->A": 0, "D->B": 1, "E->B": 2, "F->B": 3}
    return sc.Scenario(f"tenant_fair_{mode}", flows, 5 * p, ModelConfig(), tuple(changes), tuple(meters), windows,
                       tenants, meta={"kind": "tenants", "mode": mode, "cc": cc, "phase_s": p, "tenant2_flows": counts,
                                      "settle_s": settle,
                                      "routes": {f.name: (slots[f.name], RX_PORTS[f.name[-1]]) for f in flows}})


def plans(cfg: EmuConfig) -> list[sc.Scenario]:
    out = []
    if "a" in cfg.parts:
        out += [fairness_plan(cfg, m) for m in ("off", "cc", "meter") if m == "off" or m in cfg.modes]
    if "b" in cfg.parts:
        out += [ratio_plan(cfg, n, m) for m in cfg.modes for n in cfg.ratios]
    if "c" in cfg.parts:
        out += [tenant_plan(cfg, m) for m in cfg.modes]
    return out


# -- the model's prediction ----------------------------------------------------------------------------------
def model_config(plan: sc.Scenario, cfg: EmuConfig) -> ModelConfig:
    """The fluid model set up like the emulation, in IB time."""
    parking_lot = plan.meta["kind"] == "fairness" and plan.meta["mode"] == "off"
    return ModelConfig(link=Link(buffer_packets=cfg.queue_depth, arbitration="round_robin" if parking_lot else "fifo"),
                       switch=cfg.switch_params(), receiver=ReceiverParams(cfg.becn_every),
                       pacer=PacerParams(cfg.aggregate, IB_PACKET_BYTES), cct=Cct.paper(cfg.cct_size),
                       sample_s=cfg.sample_s / cfg.scale.factor)


def predict(plan: sc.Scenario, cfg: EmuConfig) -> ModelResult:
    """The model's run of ``plan`` (emulated seconds in, emulated seconds out)."""
    f = cfg.scale.factor
    ib_per_emu_bit = f * IB_PACKET_BYTES / cfg.frame_bytes   # emulated bit/s of frames -> IB bit/s

    def ib(t: float) -> float:
        return t / f

    flows = [replace(x, start_s=ib(x.start_s), stop_s=ib(x.stop_s)) for x in plan.flows]
    changes = [replace(c, time_s=ib(c.time_s)) for c in plan.changes]
    meters = [MeterChange(ib(m.time_s), m.tenant, None if m.rate_bps is None else m.rate_bps * ib_per_emu_bit)
              for m in plan.meters]
    return sc.Scenario(plan.name, tuple(flows), ib(plan.duration_s), model_config(plan, cfg), tuple(changes),
                       tuple(meters)).run().in_emulated_time(cfg.scale)


def pps(r: ModelResult, packet_bytes: int) -> np.ndarray:
    """Throughput in packets/s (samples x flows)."""
    return r.throughput_bps / (8.0 * packet_bytes)


# -- the testbed ---------------------------------------------------------------------------------------------
@dataclass
class Testbed:
    """A running emulation prepared for the experiment."""

    net: Any
    dp: CongestionDataplane
    receiver: str
    senders: list[str]
    bottleneck: tuple[str, int]
    cfg: EmuConfig


def renice(pids: Sequence[int], nice: int) -> int:
    """Set the niceness of every thread of ``pids`` (Linux: a thread has its own; threads created later
    inherit their creator's). Returns the number of threads changed; processes gone meanwhile are skipped."""
    n = 0
    for pid in pids:
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except FileNotFoundError:
            continue
        for tid in tids:
            try:
                os.setpriority(os.PRIO_PROCESS, tid, nice)
                n += 1
            except ProcessLookupError:
                continue
    return n


@contextmanager
def testbed(cfg: EmuConfig, progress: Progress | None = None) -> Iterator[Testbed]:
    """Bring the fabric up (no ECMP: one path per pair), set the bottleneck queue and its marking."""
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.topos.spec import parse_spec

    say = progress or (lambda m: log.info("%s", m))
    fabric = parse_spec(cfg.spec)
    if fabric.num_hosts() < 5:
        raise UserError(f"{cfg.spec} has {fabric.num_hosts()} hosts; the experiment needs 5 "
                        f"(a receiver and 4 senders), e.g. bcube:n=5,k=0")
    net = FabricNetwork(fabric, NetOptions(ecmp=False), progress=say)
    with net:
        dp = CongestionDataplane(net.controller, packet_bytes=cfg.frame_bytes)
        bottleneck = fabric.host_attachment(0)
        tb = Testbed(net, dp, fabric.host_name(0), [fabric.host_name(i) for i in range(1, 5)], bottleneck, cfg)
        if cfg.nice is not None:
            pids = [sw.pid for sw in net.switches.values() if sw.pid] + [a.pid for a in net.agents.values()]
            n = renice(pids, cfg.nice)
            say(f"niceness {cfg.nice} for {n} threads of {len(pids)} switch and agent processes")
        dp.set_bottleneck(bottleneck[0], [bottleneck[1]], cfg.rate_pps, cfg.queue_depth)
        dp.set_marking(bottleneck[0], [bottleneck[1]], cfg.switch_params())
        say(f"bottleneck {bottleneck[0]} port {bottleneck[1]}: {cfg.rate_pps} packets/s, depth {cfg.queue_depth}, "
            f"marking from {cfg.switch_params().threshold_packets} packets, 1 in {cfg.marking_rate + 1}")
        yield tb


# -- one run -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EmuRun:
    """One scenario on BMv2 and the model's prediction for it, both in emulated seconds."""

    plan: sc.Scenario
    emu: ModelResult
    model: ModelResult
    marks: dict[str, PortMarks]
    senders: dict[str, dict]
    receivers: dict[str, dict]
    load: tuple[float, float]
    """1-minute load average before and after the run."""
    wall_s: float


@dataclass(frozen=True)
class _Event:
    t: float
    order: int
    kind: str
    flow: str = ""
    params: HcaParams | None = None
    tenant: str = ""
    rate_bps: float | None = None


def _events(plan: sc.Scenario) -> list[_Event]:
    """Stops, starts (with the parameters pushed at that instant), pushes, meters, in time order."""
    at_start = {(c.time_s, c.flow): c.params for c in plan.changes}
    ev = []
    for f in plan.flows:
        ev.append(_Event(f.start_s, 1, "start", f.name, at_start.get((f.start_s, f.name), f.params)))
        if math.isfinite(f.stop_s) and f.stop_s < plan.duration_s:
            ev.append(_Event(f.stop_s, 0, "stop", f.name))
    starts = {(f.start_s, f.name) for f in plan.flows}
    ev += [_Event(c.time_s, 2, "push", c.flow, c.params) for c in plan.changes if (c.time_s, c.flow) not in starts]
    ev += [_Event(m.time_s, 3, "meter", tenant=m.tenant, rate_bps=m.rate_bps) for m in plan.meters]
    return sorted(ev, key=lambda e: (e.t, e.order))


def run_plan(tb: Testbed, plan: sc.Scenario, progress: Progress | None = None) -> EmuRun:
    """Run one scenario on the testbed and measure it; the model's prediction comes along."""
    from dcnlab.traffic import congestion_agent as ca

    say = progress or (lambda m: log.info("%s", m))
    cfg, dp, net = tb.cfg, tb.dp, tb.net
    t_wall = time.perf_counter()
    load0 = os.getloadavg()[0]
    routes: dict[str, tuple[int, int]] = plan.meta["routes"]
    ids = {f.name: i + 1 for i, f in enumerate(plan.flows)}
    tenant_index = {t.name: i for i, t in enumerate(plan.tenants)}
    tenant_of = {f.name: f.tenant for f in plan.flows}
    hosts = {name: tb.senders[slot] for name, (slot, _) in routes.items()}
    rx = net.agent(tb.receiver)
    rx_ip = net.addr(tb.receiver).ip
    bsw, bport = tb.bottleneck
    dp.reset_marking_phase(bsw)
    if plan.meta["mode"] == "meter":
        dp.classify(bsw, {TenantKey(net.addr(hosts[f.name]).ip, SPORT_BASE + ids[f.name]): tenant_index[f.tenant]
                          for f in plan.flows})
    else:
        dp.classify(bsw, {})
    before = dp.marks(bsw).get(bport, PortMarks())

    epoch = time.time() + START_DELAY_S
    ports = sorted({port for _, port in routes.values()})
    for port in ports:
        rx.call({"cmd": "congestion.recv_start", "port": port, "becn_every": cfg.becn_every, "epoch": epoch,
                 "bin": cfg.sample_s})
    senders: dict[str, dict] = {}
    running: set[str] = set()
    say(f"{plan.name}: {len(plan.flows)} flows over {plan.duration_s:g} s")
    try:
        for ev in _events(plan):
            delay = epoch + ev.t - time.time()
            if delay > 0:
                time.sleep(delay)
            if ev.kind == "start":
                assert ev.params is not None
                slot_host = hosts[ev.flow]
                req = ca.flow_start_request(ids[ev.flow], rx_ip, routes[ev.flow][1], sport=SPORT_BASE + ids[ev.flow],
                                            size=cfg.frame_bytes, nic_pps=cfg.rate_pps, params=ev.params,
                                            scale=cfg.scale, cc=bool(plan.meta["cc"]), epoch=epoch, bin_s=cfg.sample_s,
                                            cct_size=cfg.cct_size, aggregate=cfg.aggregate)
                net.agent(slot_host).call(req)
                running.add(ev.flow)
            elif ev.kind == "stop":
                senders[ev.flow] = net.agent(hosts[ev.flow]).call({"cmd": "congestion.flow_stop", "flow": ids[ev.flow]})
                running.discard(ev.flow)
            elif ev.kind == "push":
                assert ev.params is not None
                net.agent(hosts[ev.flow]).call({"cmd": "congestion.flow_update", "flow": ids[ev.flow],
                                               "ccti_increase": ev.params.ccti_increase,
                                               "ccti_timer": ev.params.ccti_timer})
            elif ev.kind == "meter" and ev.rate_bps is not None:
                idx = tenant_index[ev.tenant]
                burst = max(METER_BURST_PACKETS * cfg.frame_bytes, int(ev.rate_bps / 8 * METER_BURST_S))
                dp.set_meters(bsw, [MeterRate("bottleneck", ev.tenant, idx, ev.rate_bps, burst)])
        delay = epoch + plan.duration_s - time.time()
        if delay > 0:
            time.sleep(delay)
    finally:
        for name in sorted(running):
            senders[name] = net.agent(hosts[name]).call({"cmd": "congestion.flow_stop", "flow": ids[name]})
        time.sleep(DRAIN_S)
        receivers = {str(port): rx.call({"cmd": "congestion.recv_stop", "port": port}) for port in ports}
    marks = {"bottleneck": dp.marks(bsw).get(bport, PortMarks()) - before}
    emu = measured_result(plan, cfg, ids, tenant_of, senders, receivers, routes)
    model = predict(plan, cfg)
    run = EmuRun(plan, emu, model, marks, senders, receivers, (load0, os.getloadavg()[0]),
                 time.perf_counter() - t_wall)
    say(f"{plan.name}: done in {run.wall_s:.1f} s; bottleneck marked {marks['bottleneck'].marked} of "
        f"{marks['bottleneck'].packets} packets; load {run.load[0]:.1f} -> {run.load[1]:.1f}")
    return run


def measured_result(plan: sc.Scenario, cfg: EmuConfig, ids: dict[str, int], tenant_of: dict[str, str],
                    senders: dict[str, dict], receivers: dict[str, dict],
                    routes: dict[str, tuple[int, int]]) -> ModelResult:
    """The agents' 100 ms bins as a :class:`ModelResult` (throughput in bit/s of the emulated frames)."""
    n_samples = round(plan.duration_s / cfg.sample_s)
    names = [f.name for f in plan.flows]
    thr = np.zeros((n_samples, len(names)))
    becns = np.zeros((n_samples, len(names)), dtype=np.int64)
    ccti = np.full((n_samples, len(names)), np.nan)
    marked, sent = np.zeros(len(names)), np.zeros(len(names))
    for j, name in enumerate(names):
        rec = receivers[str(routes[name][1])]["flows"].get(str(ids[name]))
        if rec is not None:
            marked[j] = rec["marked"]
            for b, _pk, nbytes, _ce in rec["bins"]:
                if 0 <= b < n_samples:
                    thr[b, j] = nbytes * 8 / cfg.sample_s
        snd = senders.get(name)
        if snd is not None:
            sent[j] = snd["packets"]
            for b, _sent, nb, mean_ccti in snd["bins"]:
                if 0 <= b < n_samples:
                    becns[b, j] = nb
                    if mean_ccti is not None:
                        ccti[b, j] = mean_ccti
    times = (np.arange(n_samples) + 1) * cfg.sample_s
    return ModelResult(tuple(names), tuple(tenant_of[n] for n in names), tuple(f.start_s for f in plan.flows),
                       tuple(f.stop_s for f in plan.flows), cfg.sample_s, times, thr, becns, ccti,
                       np.full(n_samples, np.nan), cfg.link_bps, marked, sent)


# -- summaries -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    scenario: str
    metric: str
    emulation: str
    model: str
    target: str
    ok: bool | None
    """None: reported, not checked."""


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


def _mean_rate_jain(plan: sc.Scenario, r: ModelResult) -> float:
    """Jain's index of the flows' mean rates while all four run (less noisy than per-sample Jain)."""
    p = plan.meta["phase_s"]
    return jain_index(r.mean_rates(3 * p, 5 * p))


def _becn_scaling(phases: Sequence[sc.PhaseSummary]) -> list[float]:
    """BECNs per second at D->B with 1, 2, 3 tenant-2 flows, normalised to the 1-flow phase (first three)."""
    b = {ph.tenant2_flows: ph.becn_per_s for ph in phases[:3]}
    return [b[k] / b[1] if b[1] > 0 else math.nan for k in (1, 2, 3)]


def _health(run: EmuRun) -> dict[str, Any]:
    """What tells a clean run from one disturbed by load: per flow the rate it managed to send (a CC-off
    flow should reach the NIC rate), its losses at the receiver; the bottleneck's marks; the load average."""
    names = {str(i + 1): f.name for i, f in enumerate(run.plan.flows)}
    sent, lost = {}, {}
    for f in run.plan.flows:
        active = min(f.stop_s, run.plan.duration_s) - f.start_s
        snd = run.senders.get(f.name)
        if snd is not None and active > 0:
            sent[f.name] = round(snd["packets"] / active, 1)
    for rx in run.receivers.values():
        for fid, rec in rx["flows"].items():
            lost[names.get(fid, fid)] = rec["lost"]
    return {"wall_s": round(run.wall_s, 1), "load": list(run.load), "sent_pps": sent, "lost": lost,
            "marks": {k: asdict(v) for k, v in run.marks.items()}}


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
            rates = e.mean_rates(3 * plan.meta["phase_s"], 5 * plan.meta["phase_s"]) / (8 * cfg.frame_bytes)
            out["fairness"][mode] = {"jain_mean_of_samples": fe.jain_all_active, "jain_min": fe.min_jain_all_active,
                                     "jain_of_mean_rates": je, "model_jain_mean_of_samples": fm.jain_all_active,
                                     "jain_1s_mean": float(np.nanmean(smoothed_jain(e)[e.window(
                                         3 * plan.meta["phase_s"], 5 * plan.meta["phase_s"])])),
                                     "jain_1s_over_time": [None if math.isnan(x) else round(float(x), 4)
                                                           for x in smoothed_jain(e)],
                                     "jain_over_time": [None if math.isnan(x) else round(float(x), 4)
                                                        for x in e.jain_over_time()],
                                     "model_jain_of_mean_rates": jm,
                                     "rates_pps_4_active": dict(zip(e.flows, rates.round(1).tolist()))}
            label = {"off": "CC off", "cc": "CC on", "meter": "meter mode"}[mode]
            target = "reported (model: A+B = D = E, Jain 0.90)" if mode == "off" else "fair (Jain >= 0.95)"
            ok = None if mode == "off" else je >= 0.95
            checks.append(Check(f"(a) 4 senders, {label}", "Jain of mean rates, 4 active",
                                f"{je:.3f} (samples {fe.jain_all_active:.3f})", f"{jm:.3f}", target, ok))
        elif kind == "ratio":
            re_, rm = sc.summarize_ratio(plan, e), sc.summarize_ratio(plan, m)
            n = plan.meta["ratio"]
            out["ratio"][f"1:{n} {mode}"] = {"measured": re_.measured, "error": re_.error, "model": rm.measured,
                                             "rates_pps": [x / (8 * cfg.frame_bytes) for x in re_.rates_bps],
                                             "becn_ratio": re_.becn_ratio, "model_becn_ratio": rm.becn_ratio}
            what = "CCTI_Increase" if mode == "cc" else "meter weights"
            checks.append(Check(f"(b) {what} 1:{n} ({mode})", "bandwidth ratio",
                                f"{re_.measured:.2f} ({re_.error:+.1%})", f"{rm.measured:.2f}",
                                f"{n}:1 +-{RATIO_TOLERANCE:.0%}", abs(re_.error) <= RATIO_TOLERANCE))
        elif kind == "tenants":
            settle = plan.meta["settle_s"]
            pe, pm = sc.summarize_tenants(plan, e, settle), sc.summarize_tenants(plan, m, settle)
            rows = []
            for a, b in zip(pe, pm):
                rows.append({"phase": a.label, "tenant1_pps": a.tenant1_bps / (8 * cfg.frame_bytes),
                             "tenant2_pps": a.tenant2_bps / (8 * cfg.frame_bytes), "ratio": a.tenant_ratio,
                             "model_ratio": b.tenant_ratio, "jain_tenant2": a.jain_tenant2,
                             "model_jain_tenant2": b.jain_tenant2, "becn_per_s": a.becn_per_s,
                             "model_becn_per_s": b.becn_per_s})
                checks.append(Check(f"(c) {mode}, {a.label}", "tenant1 : tenant2", f"{a.tenant_ratio:.3f}",
                                    f"{b.tenant_ratio:.3f}", f"1 +-{TENANT_TOLERANCE:.0%}",
                                    abs(a.tenant_ratio - 1) <= TENANT_TOLERANCE))
            jmin = min(a.jain_tenant2 for a in pe)
            checks.append(Check(f"(c) {mode}", "min Jain inside tenant 2", f"{jmin:.3f}",
                                f"{min(b.jain_tenant2 for b in pm):.3f}",
                                "equal (>= 0.95)" if mode == "cc" else "reported (one meter per tenant)",
                                jmin >= 0.95 if mode == "cc" else None))
            entry: dict[str, Any] = {"phases": rows}
            if mode == "cc":
                ne, nm = _becn_scaling(pe), _becn_scaling(pm)
                entry.update(becn_normalized=ne, model_becn_normalized=nm)
                paper = [sc.PAPER_BECN[k] / sc.PAPER_BECN[1] for k in (1, 2, 3)]
                checks.append(Check("(c) cc, BECNs at D->B", "1/2/3 flows, normalised",
                                    ":".join(f"{x:.2f}" for x in ne), ":".join(f"{x:.2f}" for x in nm),
                                    "1:0.50:0.33 (paper 1:" + ":".join(f"{x:.2f}" for x in paper[1:]) + ")",
                                    ne[1] < 1 and ne[2] < ne[1] and abs(ne[1] * 2 - 1) <= 0.35
                                    and abs(ne[2] * 3 - 1) <= 0.35))
            out["tenants"][mode] = entry
    out["checks"] = [asdict(c) for c in checks]
    out["runs"] = {r.plan.name: _health(r) for r in res.runs}
    out["rejected_runs"] = list(res.rejected)
    cpus = os.cpu_count() or 1
    loads = {r.plan.name: max(r.load) for r in res.runs}
    out["load"] = {"cpus": cpus, "max_1min": max(loads.values(), default=0.0),
                   "disturbed_runs": [n for n, x in loads.items() if x > DISTURBED_LOAD_PER_CPU * cpus]}
    out["config"] = asdict(cfg)
    out["time_scale"] = cfg.scale.factor
    out["wall_s"] = round(res.wall_s, 1)
    return out


def wait_for_quiet(max_load: float, timeout_s: float, say: Progress) -> float:
    """Wait until the 1-minute load average is below ``max_load`` (other work shares the machine, and the
    emulation is rate-sensitive), at most ``timeout_s``; return the load average then."""
    end = time.monotonic() + timeout_s
    load = os.getloadavg()[0]
    if load >= max_load:
        say(f"load average {load:.1f} >= {max_load:g}: waiting up to {timeout_s:.0f} s for a quieter machine")
    while load >= max_load and time.monotonic() < end:
        time.sleep(5)
        load = os.getloadavg()[0]
    return load


def disturbed(run: EmuRun) -> str:
    """Why ``run`` measured a starved emulator rather than the mechanism ('' if it did not).

    With CC on, the bottleneck's queue (``queue_depth`` packets, 8x the marking threshold) only overflows
    while a newcomer at line rate waits for its first BECNs: a few percent of the packets. More than
    :data:`MAX_CC_LOSS` lost means BMv2 or the senders were starved (BMv2 stalled while the queue filled;
    measured: 40-70% lost at load averages of 20-50 on 2 cores). Runs without CC lose packets by design."""
    if not run.plan.meta["cc"]:
        return ""
    got = lost = 0
    for rx in run.receivers.values():
        for rec in rx["flows"].values():
            got += rec["packets"]
            lost += rec["lost"]
    frac = lost / (got + lost) if got + lost else 1.0
    return f"{frac:.0%} of the packets lost with CC on (> {MAX_CC_LOSS:.0%})" if frac > MAX_CC_LOSS else ""


def run_experiment(cfg: EmuConfig = EmuConfig(), progress: Progress | None = None) -> ExperimentResult:
    """Bring the fabric up once, run every scenario of ``cfg``, tear down. A run that :func:`disturbed`
    rejects is repeated, up to ``cfg.attempts`` runs per scenario; the rejected ones are kept in
    ``ExperimentResult.rejected`` (and in the JSON)."""
    say = progress or (lambda m: log.info("%s", m))
    t0 = time.perf_counter()
    res = ExperimentResult(cfg)
    with testbed(cfg, progress) as tb:
        for plan in plans(cfg):
            for attempt in range(1, cfg.attempts + 1):
                if cfg.max_load is not None:
                    wait_for_quiet(cfg.max_load, cfg.quiet_wait_s, say)
                run = run_plan(tb, plan, progress)
                time.sleep(DRAIN_S)
                why = disturbed(run)
                if not why or attempt == cfg.attempts:
                    break
                say(f"{plan.name}: disturbed ({why}); running it again")
                res.rejected.append({"scenario": plan.name, "attempt": attempt, "why": why, **_health(run)})
            res.runs.append(run)
    res.wall_s = time.perf_counter() - t0
    return res


# -- output --------------------------------------------------------------------------------------------------
BMV2_SECTIONS = {"(a)": "(a) Fig. 3, 4 senders -> C: Jain's index of the mean rates while all four flows are on",
                 "(b)": "(b) Theorem 1: rate of the weight-1 flow over the 1:n flow's (CCTI_Increase or meters)",
                 "(c)": "(c) Fig. 5: tenant 1 (T1, 1 flow) against tenant 2 (T2, 1-2-3-2-1 flows), by phase"}


def _bmv2_row(check: dict[str, Any], phase: dict[str, int]) -> tuple[str, ...]:
    """(label, unit, BMv2, model, paper / target, tolerance, verdict) of one check; ``phase`` counts the
    tenant phases per mode, so that a phase that comes back (2 flows, then 2 again) keeps its own label."""
    scen, metric, target = check["scenario"], check["metric"], check["target"]
    tol = "-"
    if " +-" in target:
        target, tol = target.split(" +-", 1)
        tol = "±" + tol
    unit = "index" if "Jain" in metric else "ratio"
    label = scen[4:] if scen[:3] in BMV2_SECTIONS else scen
    if scen.startswith("(c) ") and metric == "tenant1 : tenant2":
        mode, flows = scen[4:].split(", ", 1)
        phase[mode] = phase.get(mode, 0) + 1
        n = flows.split()[0]
        label = f"{mode}, phase {phase[mode]}, {n} T2 flow{'s' if n != '1' else ''}"
        unit = "T1:T2"
    elif metric == "min Jain inside tenant 2":
        label = f"{label}, min Jain inside T2"
    elif "BECN" in scen:
        label, unit = "cc, D->B BECNs (1/2/3 T2)", "to 1 flow"
    verdict = {True: "reproduced", False: "deviates", None: "-"}[check["ok"]]
    return (label, unit, check["emulation"], check["model"], target, tol, verdict)


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """:func:`summary_table` as lines."""
    return summary_table(summary).splitlines()


def summary_table(summary: dict[str, Any]) -> str:
    """The checks as a table of at most 100 columns, one heading per experiment: BMv2's figure, the model's,
    the paper's (or the target), the tolerance and the verdict ('-': reported, not checked)."""
    from dcnlab.experiments.tables import Column, Section, table

    rows: list[Any] = []
    last = None
    phase: dict[str, int] = {}
    for c in summary["checks"]:
        head = BMV2_SECTIONS.get(c["scenario"][:3])
        if head is not None and head != last:
            rows.append(Section(head))
            last = head
        rows.append(_bmv2_row(c, phase))
    return table([Column("check (Zhang et al.)", wrap=True, min_width=24), Column("unit"),
                  Column("BMv2", wrap=True, min_width=10), Column("model", wrap=True, min_width=8),
                  Column("paper / target", wrap=True, min_width=12), Column("tolerance", wrap=True, min_width=9),
                  Column("verdict")], rows)


def _series(r: ModelResult, packet_bytes: int) -> dict[str, Any]:
    return {"flows": list(r.flows), "tenants": list(r.tenants), "times": r.times.round(3).tolist(),
            "pps": pps(r, packet_bytes).round(1).tolist(), "becns": r.becns.tolist(),
            "ccti": [[None if math.isnan(x) else round(float(x), 2) for x in row] for row in r.ccti]}


def write_outputs(res: ExperimentResult, out: Path) -> list[Path]:
    """PNGs in the style of the paper's Fig. 3 and Fig. 5 (emulation solid, model dashed) and the JSON."""
    out.mkdir(parents=True, exist_ok=True)
    summary = res.summary()
    files = plot(res, out)
    data = dict(summary)
    data["series"] = {r.plan.name: {"emulation": _series(r.emu, res.cfg.frame_bytes),
                                    "model": _series(r.model, IB_PACKET_BYTES)} for r in res.runs}
    path = out / "emulation.json"
    path.write_text(json.dumps(data))
    return files + [path]


def plot(res: ExperimentResult, out: Path) -> list[Path]:
    """Zhang et al.'s Fig. 3 and Fig. 5 and Theorem 1 from BMv2 (solid, open markers) beside the fluid model
    (dashed, the same colour; one legend key explains it)."""
    from matplotlib.lines import Line2D

    from dcnlab.experiments import plotcheck, plotstyle

    plt = plotstyle.pyplot()
    cfg, files = res.cfg, []
    model_key = Line2D([], [], color="#555555", linestyle="--")
    phase_key = Line2D([], [], color="#999999", linewidth=0.8)

    def flows(ax: Any, run: EmuRun, tenants: bool = False) -> None:
        e, m = pps(run.emu, cfg.frame_bytes), pps(run.model, IB_PACKET_BYTES)
        names = list(run.emu.flows)
        groups = sorted(set(run.emu.tenants)) if tenants else []
        colors = plotstyle.colors(len(names) + len(groups))
        every = max(1, len(run.emu.times) // 12)
        for i, name in enumerate(names):
            c = colors[i]
            ax.plot(run.emu.times, e[:, i], color=c, drawstyle="steps-pre", linewidth=1.2, label=name,
                    marker=plotstyle.MARKERS[i % len(plotstyle.MARKERS)], markevery=(i % every, every),
                    markersize=5, markerfacecolor="none")
            ax.plot(run.model.times, m[:, i], color=c, linestyle="--", linewidth=1)
        for k, t in enumerate(groups):
            cols = [i for i, x in enumerate(run.emu.tenants) if x == t]
            c = colors[len(names) + k]
            ax.plot(run.emu.times, e[:, cols].sum(axis=1), color=c, linewidth=2.2, drawstyle="steps-pre",
                    label=f"{t} total")
            ax.plot(run.model.times, m[:, cols].sum(axis=1), color=c, linewidth=1.6, linestyle="--")
        for w in run.plan.windows[1:]:
            ax.axvline(w.t0, color="#999999", linewidth=0.8)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(model_key)
        labels.append("model (dashed, same colour)")
        if len(run.plan.windows) > 1:
            handles.append(phase_key)
            labels.append("phase boundary")
        ax.set_ylabel("throughput (packets/s)")
        ax.grid(alpha=0.3)
        plotstyle.legend_outside(ax, handles=handles, labels=labels)

    fair = [r for r in res.runs if r.plan.meta["kind"] == "fairness"]
    if fair:
        fig, axes = plt.subplots(len(fair) + 1, 1, figsize=(10, 2.9 * (len(fair) + 1) + 0.6), sharex=True,
                                 layout="constrained")
        top = max(float(pps(r.emu, cfg.frame_bytes).max()) for r in fair)
        for ax, run in zip(axes, fair):
            flows(ax, run)
            ax.set_ylim(-0.02 * top, 1.1 * top)
            ax.set_title(f"({run.plan.meta['mode']}) 4 senders -> C, a new flow every "
                         f"{run.plan.meta['phase_s']:g} s", fontsize=10)
        ax = axes[-1]
        styles = plotstyle.series_styles(len(fair))
        every = max(1, len(fair[0].emu.times) // 12)
        for i, run in enumerate(fair):
            c = styles[i]["color"]
            ax.plot(run.emu.times, run.emu.jain_over_time(), color=c, drawstyle="steps-pre", linewidth=0.6,
                    alpha=0.5)
            ax.plot(run.emu.times, smoothed_jain(run.emu), color=c, drawstyle="steps-pre", linewidth=1.4,
                    marker=styles[i]["marker"], markersize=5, markerfacecolor="none", markevery=(i % every, every),
                    label=f"{run.plan.meta['mode']} (BMv2; thin: per sample)")
            ax.plot(run.model.times, run.model.jain_over_time(), color=c, linestyle="--")
        handles, labels = ax.get_legend_handles_labels()
        plotstyle.legend_outside(ax, handles=handles + [model_key], labels=labels + ["model (dashed, same colour)"])
        ax.set_title("Jain's index of the active flows over time", fontsize=10)
        ax.set_ylabel("Jain's index (1 = fair)")
        ax.set_xlabel("time (s, emulated)")
        ax.set_ylim(0.4, 1.02)
        ax.grid(alpha=0.3)
        fig.suptitle(plotstyle.title("002", "Fig. 3", "fairness on BMv2 (solid) and in the model (dashed)"))
        files.append(plotcheck.save(fig, out / "emulation_fig3_fairness.png", dpi=110))

    ratio = [r for r in res.runs if r.plan.meta["kind"] == "ratio"]
    if ratio:
        fig, axes = plt.subplots(1, len(ratio), figsize=(5.2 * len(ratio) + 2.5, 4.2), squeeze=False, sharey=True,
                                 layout="constrained")
        for ax, run in zip(axes[0], ratio):
            flows(ax, run)
            if ax is not axes[0][-1]:
                ax.get_legend().remove()
            s = sc.summarize_ratio(run.plan, run.emu)
            ax.set_title(f"1:{run.plan.meta['ratio']} {run.plan.meta['mode']}: {s.measured:.2f}:1", fontsize=10)
            ax.set_xlabel("time (s, emulated)")
        fig.suptitle(plotstyle.title("002", "Theorem 1", "rates inversely proportional to CCTI_Increase (or meter "
                                                         "weights), BMv2 and model"))
        files.append(plotcheck.save(fig, out / "emulation_theorem1_ratios.png", dpi=110))

    for run in (r for r in res.runs if r.plan.meta["kind"] == "tenants"):
        mode = run.plan.meta["mode"]
        fig, axes = plt.subplots(2, 1, figsize=(10, 7.5), sharex=True, gridspec_kw={"height_ratios": [2, 1]},
                                 layout="constrained")
        flows(axes[0], run, tenants=True)
        axes[0].set_title(f"(a) tenant 1: 1 flow; tenant 2: 1 -> 2 -> 3 -> 2 -> 1 flows ({mode})", fontsize=10)
        ax = axes[1]
        db = run.emu.column("D->B")
        ax.set_title("(b) BECNs received by the D->B source", fontsize=10)
        emu_b, model_b = run.emu.becns[:, db], run.model.becns[:, db]
        if plotstyle.all_zero([float(x) for x in emu_b] + [float(x) for x in model_b]):
            plotstyle.note(ax, "no BECNs at all, on BMv2 or in the model" + (" (meters: CC is off)" if mode == "meter"
                                                                             else ""))
        else:
            ax.plot(run.emu.times, emu_b, color="k", drawstyle="steps-pre", label="BMv2")
            ax.plot(run.model.times, model_b, color="tab:purple", linestyle="--", label="model")
            plotstyle.legend_outside(ax)
        ax.set_ylabel(f"BECNs per {cfg.sample_s * 1000:.0f} ms (count)")
        ax.set_xlabel("time (s, emulated)")
        ax.grid(alpha=0.3)
        fig.suptitle(plotstyle.title("002", "Fig. 5", f"tenant-level fairness on BMv2 and in the model ({mode})"))
        files.append(plotcheck.save(fig, out / f"emulation_fig5_tenants_{mode}.png", dpi=110))
    return files
