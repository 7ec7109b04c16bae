"""Fluid model of the IB congestion-control loop on one bottleneck (the model backend of ``reproduce congestion``).

IB CC partitioning (Zhang et al.), §4.1-4.2: N flows share one bottleneck output. The switch marks FECN on
packets that find the queue at or above the threshold, one in ``Marking_Rate + 1`` of them; the
receiver returns one BECN per ``C`` marks; each source raises its CCTI by ``CCTI_Increase`` per
BECN and lowers it by one per ``CCTI_Timer`` expiry (Algorithm 1, timer reset on BECN, or the
specification's free-running timer); it sends at most one aggregate of 4 packets per
``CCT[CCTI]`` (Algorithm 2). The model predicts per-flow throughput over time, BECN counts, CCTI
and the queue, vectorised over flows with numpy so hundreds of flows and tenants are cheap.

Model (time-stepped fluid, step ``dt`` = 8 µs by default, about 8 packet times at 8 Gb/s; 2 µs gives
the same shares within 1%):

* **Sources.** A flow's offered rate is ``min(aggregate * l / CCT[CCTI], NIC rate)`` (Algorithm 2
  as a rate: the 4-packet bursts are smoothed out). CC off = always the NIC rate.
* **Bottleneck.** Flows enter the bottleneck switch through input ports (flows of one port share
  its buffer, ``buffer_packets`` per port). Arbitration ``"round_robin"`` (IB's credit-based
  switches) serves the ports max-min fairly (water filling), ``"fifo"`` (a BMv2 egress queue) puts
  every flow in one queue. Within a port, service is proportional to each flow's queued content
  (FIFO). The fabric is lossless: when a port's buffer is full, the sources are held back (credit
  back-pressure); for a lossy BMv2 queue the same traffic would be dropped instead, which gives
  the same receiver throughput.
* **Input links.** By default every flow reaches the bottleneck over a link of its own at the NIC
  rate. ``Link.shared_input`` makes the flows of one ``port`` share one such link (BMv2's A and B
  on one host NIC, the paper's S1->S2 link): their offered rates are scaled down together to the
  NIC rate before the bottleneck. Under ``"round_robin"`` this changes nothing at line-rate loads
  (the port gets its share either way); under ``"fifo"`` it decides the parking lot of Fig. 3(a)
  without CC: four flows each on its own input share a FIFO 1:1:1:1, so (A+B)/D = 2, while A
  and B on one input share it with D and E 1:1:1, so (A+B)/D = 1, as under round robin.
* **Marking.** Traffic admitted while the total queue of the output is at or above the threshold
  depth is eligible (the switch compares ``enq_qdepth``); a fraction ``1/(Marking_Rate+1)`` of it is
  marked: as a fractional count (``"nth"``: every n-th packet, deterministic) or a Poisson draw
  (``"random"``).
* **Meter mode.** Optional per-tenant meters cap each tenant's admitted traffic (the excess is
  dropped, shared among the tenant's flows in proportion to their offered rates).
* **Feedback.** One BECN per ``C`` marks of a flow reaches the source after the queueing delay plus
  ``feedback_delay_s``.
* **Two kernels.** The step exists in plain Python (a few flows: numpy's per-call overhead would
  dominate) and vectorised with numpy (many flows); ``tests/test_congestion_fluid.py`` checks that
  both give the same trajectories.
* **Source reaction.** Exactly :class:`dcnlab.traffic.cc.CctiController` (same decisions: clamp to
  ``CCTI_Limit``, BECNs at the limit ignored without timer reset, periodic timer); the timer phase
  is kept below ``dt`` so the mean timer period is exact.

Decisions on the paper's ambiguities beyond those in :mod:`~dcnlab.controller.congestion.params`
and :mod:`~dcnlab.controller.congestion.cct`: the defaults here are the controller's (a link of 8 Gb/s of
data, ``IB_DATA_RATE_BPS``); the reproduction of IB CC partitioning (Zhang et al., Chinese Journal of Computers
2012) runs the settings pre-registered from that paper's text in ``dcnlab.results.open_settings`` (the links'
"actual working rate" of 10 Gb/s, §5; Marking_Rate 0 and C = 1, the simplest readings, as the text gives no
value; threshold level 15, §4.1; CCTI_Timer 150, Table 1), each passed in a :class:`ModelConfig`, and every
other reading of them as a sensitivity reading. CCTI_Limit = CCT size − 1 (the paper gives none).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from dcnlab.controller.congestion.cct import IB_DATA_RATE_BPS, Cct, TimeScale
from dcnlab.controller.congestion.params import (
    CongestionParamError,
    HcaParams,
    PacerParams,
    ReceiverParams,
    SwitchParams,
    check_choice,
)

Arbitration = Literal["round_robin", "fifo"]
ARBITRATIONS: tuple[str, ...] = ("round_robin", "fifo")


@dataclass(frozen=True)
class Link:
    """The bottleneck output port and the senders' NICs."""

    rate_bps: float = IB_DATA_RATE_BPS
    buffer_packets: int = 128
    arbitration: Arbitration = "round_robin"
    feedback_delay_s: float = 2e-6
    nic_rate_bps: float | None = None
    shared_input: bool = False
    """Flows with the same ``port`` reach the switch over one link at the NIC rate (module docstring)."""

    def __post_init__(self) -> None:
        if not self.rate_bps > 0:
            raise CongestionParamError(f"link rate_bps={self.rate_bps} must be > 0")
        if self.buffer_packets < 1:
            raise CongestionParamError(f"buffer_packets={self.buffer_packets} must be >= 1")
        check_choice("arbitration", self.arbitration, ARBITRATIONS)
        if self.feedback_delay_s < 0:
            raise CongestionParamError(f"feedback_delay_s={self.feedback_delay_s} must be >= 0")
        if self.nic_rate_bps is not None and not self.nic_rate_bps > 0:
            raise CongestionParamError(f"nic_rate_bps={self.nic_rate_bps} must be > 0")

    @property
    def nic_bps(self) -> float:
        return self.rate_bps if self.nic_rate_bps is None else self.nic_rate_bps


@dataclass(frozen=True)
class FlowDef:
    """One flow: active in ``[start_s, stop_s)``; flows with the same ``port`` share a switch input."""

    name: str
    tenant: str = ""
    start_s: float = 0.0
    stop_s: float = math.inf
    params: HcaParams = field(default_factory=HcaParams)
    cc: bool = True
    port: str | None = None
    initial_ccti: int | None = None
    """CCTI at start (default ``CCTI_Min``): a warm start skips the line-rate start-up transient."""


@dataclass(frozen=True)
class ParamChange:
    """At ``time_s`` the controller's push reaches ``flow``: its parameters become ``params``."""

    time_s: float
    flow: str
    params: HcaParams


@dataclass(frozen=True)
class MeterChange:
    """Meter mode: from ``time_s`` on, ``tenant``'s traffic into the bottleneck is capped at ``rate_bps``
    (None removes the meter). The switch drops what exceeds the meter (``p4src/meter.p4`` drops red)."""

    time_s: float
    tenant: str
    rate_bps: float | None


@dataclass(frozen=True)
class ModelConfig:
    link: Link = field(default_factory=Link)
    switch: SwitchParams = field(default_factory=SwitchParams)
    receiver: ReceiverParams = field(default_factory=ReceiverParams)
    pacer: PacerParams = field(default_factory=PacerParams)
    cct: Cct = field(default_factory=Cct.paper)
    dt_s: float = 8e-6
    sample_s: float = 0.1
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.dt_s <= 1e-3:
            raise CongestionParamError(f"dt_s={self.dt_s} is out of range; valid: 0 < dt_s <= 1e-3")
        if not self.sample_s >= self.dt_s:
            raise CongestionParamError(f"sample_s={self.sample_s} must be >= dt_s={self.dt_s}")


@dataclass(frozen=True)
class ModelResult:
    """Samples (rows) x flows (columns). Throughput is what left the bottleneck in each sample."""

    flows: tuple[str, ...]
    tenants: tuple[str, ...]
    starts: tuple[float, ...]
    stops: tuple[float, ...]
    sample_s: float
    times: np.ndarray
    throughput_bps: np.ndarray
    becns: np.ndarray
    ccti: np.ndarray
    queue_packets: np.ndarray
    link_bps: float
    marked_packets: np.ndarray
    packets: np.ndarray

    def column(self, flow: str) -> int:
        return self.flows.index(flow)

    def active_whole(self) -> np.ndarray:
        """Boolean samples x flows: the flow was active during the whole sample."""
        t1 = self.times
        t0 = t1 - self.sample_s
        starts, stops = np.asarray(self.starts), np.asarray(self.stops)
        return (starts[None, :] <= t0[:, None] + 1e-12) & (stops[None, :] >= t1[:, None] - 1e-12)

    def tenant_names(self) -> list[str]:
        return sorted(set(self.tenants))

    def tenant_throughput(self) -> dict[str, np.ndarray]:
        return {t: self.throughput_bps[:, [i for i, x in enumerate(self.tenants) if x == t]].sum(axis=1)
                for t in self.tenant_names()}

    def window(self, t0: float, t1: float) -> np.ndarray:
        """Boolean mask over samples lying entirely within ``[t0, t1]``."""
        return (self.times - self.sample_s >= t0 - 1e-9) & (self.times <= t1 + 1e-9)

    def mean_rates(self, t0: float, t1: float) -> np.ndarray:
        """Mean throughput (bit/s) per flow over the samples within ``[t0, t1]``."""
        m = self.window(t0, t1)
        if not m.any():
            raise ValueError(f"no sample lies within [{t0}, {t1}] s")
        return self.throughput_bps[m].mean(axis=0)

    def mean_becn_rate(self, t0: float, t1: float) -> np.ndarray:
        """Mean BECNs per second per flow over the samples within ``[t0, t1]``."""
        m = self.window(t0, t1)
        return self.becns[m].sum(axis=0) / (m.sum() * self.sample_s)

    def jain_over_time(self) -> np.ndarray:
        """Jain's fairness index per sample over the flows active during the whole sample (NaN if none)."""
        act = self.active_whole()
        return np.array([jain_index(row[a]) if a.any() else math.nan
                         for row, a in zip(self.throughput_bps, act)])

    def in_emulated_time(self, scale: TimeScale) -> ModelResult:
        """The same result on an emulation's clock: times x ``scale.factor``, rates / ``scale.factor``.

        Packet and BECN counts per sample are unchanged (each sample covers the same packets)."""
        f = scale.factor
        return replace(self, starts=tuple(t * f for t in self.starts), stops=tuple(t * f for t in self.stops),
                       sample_s=self.sample_s * f, times=self.times * f, throughput_bps=self.throughput_bps / f,
                       link_bps=self.link_bps / f)

    def to_dict(self) -> dict:
        return {"flows": list(self.flows), "tenants": list(self.tenants), "starts": list(self.starts),
                "stops": [None if math.isinf(s) else s for s in self.stops], "sample_s": self.sample_s,
                "link_bps": self.link_bps, "times": self.times.round(6).tolist(),
                "throughput_bps": self.throughput_bps.round(0).tolist(), "becns": self.becns.tolist(),
                "ccti": self.ccti.round(2).tolist(), "queue_packets": self.queue_packets.round(2).tolist(),
                "marked_packets": self.marked_packets.round(1).tolist(), "packets": self.packets.round(1).tolist()}


def jain_index(x: Sequence[float] | np.ndarray) -> float:
    """Jain's fairness index (Σx)² / (n Σx²): 1 when all equal, 1/n when one takes everything."""
    a = np.asarray(x, dtype=float)
    if a.size == 0:
        raise ValueError("Jain's index of no values")
    if np.any(a < 0):
        raise ValueError("Jain's index needs non-negative values")
    sq = float((a * a).sum())
    return 1.0 if sq == 0 else float(a.sum()) ** 2 / (a.size * sq)


def waterfill(demand: np.ndarray, capacity: float) -> np.ndarray:
    """Max-min fair split of ``capacity`` among ``demand`` (each gets at most its demand)."""
    if demand.sum() <= capacity:
        return demand.copy()
    d = np.sort(demand)
    n = d.size
    before = np.concatenate(([0.0], np.cumsum(d)[:-1]))
    level = (capacity - before) / (n - np.arange(n))
    j = int(np.argmax(d >= level))
    return np.minimum(demand, level[j])


@dataclass(frozen=True, order=True)
class _Event:
    step: int
    order: int  # stops before starts before parameter pushes within one step
    seq: int
    kind: str = field(compare=False)
    flow: int = field(compare=False)
    params: HcaParams | None = field(default=None, compare=False)
    rate_bps: float | None = field(default=None, compare=False)


def _bucket(events: list[_Event]) -> dict[int, list[_Event]]:
    out: dict[int, list[_Event]] = {}
    for e in sorted(events):
        out.setdefault(e.step, []).append(e)
    return out


@dataclass
class _Plan:
    """Everything a kernel needs: constants per step, initial per-flow parameters, bucketed events."""

    n: int
    dt: float
    total_steps: int
    steps_per_sample: int
    n_samples: int
    l_bytes: float
    rate_tab: np.ndarray
    nic_step: float
    serve_step: float
    link_Bps: float
    buf: float
    feedback_s: float
    port_of: np.ndarray
    n_ports: int
    own_ports: bool
    input_of: np.ndarray | None
    """Input link of each flow when flows share them (``Link.shared_input``), else None."""
    n_inputs: int
    thr_bytes: float
    alpha_per_byte: float
    random_marks: bool
    c_marks: float
    seed: int
    cc: np.ndarray
    inc: np.ndarray
    cmin: np.ndarray
    climit: np.ndarray
    tper: np.ndarray
    reset: np.ndarray
    start_ccti: np.ndarray
    tenant_of: np.ndarray
    n_tenants: int
    pending: dict[int, list[_Event]]
    max_delay_steps: int


@dataclass
class _Out:
    thr: np.ndarray
    becn: np.ndarray
    ccti: np.ndarray
    queue: np.ndarray
    marked: np.ndarray
    packets: np.ndarray


def _plan(flows: Sequence[FlowDef], duration_s: float, cfg: ModelConfig, changes: Iterable[ParamChange],
          meters: Iterable[MeterChange]) -> _Plan:
    if not flows:
        raise CongestionParamError("the model needs at least one flow")
    names = [f.name for f in flows]
    if len(set(names)) != len(names):
        raise CongestionParamError("flow names must be unique")
    if not duration_s >= cfg.sample_s:
        raise CongestionParamError(f"duration_s={duration_s} must be >= sample_s={cfg.sample_s}")
    link, sw = cfg.link, cfg.switch
    n = len(flows)
    steps_per_sample = max(1, round(cfg.sample_s / cfg.dt_s))
    n_samples = int(round(duration_s / cfg.sample_s))
    dt = cfg.sample_s / steps_per_sample
    l_bytes = float(cfg.pacer.packet_bytes)
    for f in flows:
        f.params.check_cct(len(cfg.cct))
    port_of: np.ndarray     # numpy 2.2 (the last for Python 3.10) types zeros() by its 1-d shape, array() not
    if link.arbitration == "fifo":
        port_of = np.zeros(n, dtype=np.int64)
    else:
        keys: dict[str, int] = {}
        port_of = np.array([keys.setdefault(f.port if f.port is not None else f"\0{f.name}", len(keys))
                            for f in flows], dtype=np.int64)
    n_ports = int(port_of.max()) + 1
    inputs: dict[str, int] = {}
    input_of = np.array([inputs.setdefault(f.port if f.port is not None else f"\0{f.name}", len(inputs))
                         for f in flows], dtype=np.int64)
    shared = link.shared_input and len(inputs) < n
    buf = link.buffer_packets * l_bytes
    thr_bytes = sw.threshold_packets * l_bytes if sw.enabled and sw.min_marked_bytes <= l_bytes else math.inf

    events: list[_Event] = []
    idx = {f.name: i for i, f in enumerate(flows)}
    for i, f in enumerate(flows):
        events.append(_Event(int(round(f.start_s / dt)), 1, len(events), "start", i))
        if math.isfinite(f.stop_s):
            events.append(_Event(int(round(f.stop_s / dt)), 0, len(events), "stop", i))
    for c in changes:
        if c.flow not in idx:
            raise CongestionParamError(f"parameter change for unknown flow {c.flow!r}")
        c.params.check_cct(len(cfg.cct))
        events.append(_Event(int(round(c.time_s / dt)), 2, len(events), "params", idx[c.flow], c.params))
    tenant_names = sorted({f.tenant for f in flows})
    for mc in meters:
        if mc.tenant not in tenant_names:
            raise CongestionParamError(f"meter for unknown tenant {mc.tenant!r}; valid: {', '.join(tenant_names)}")
        if mc.rate_bps is not None and not mc.rate_bps > 0:
            raise CongestionParamError(f"meter rate of tenant {mc.tenant!r}={mc.rate_bps} must be > 0 bit/s")
        events.append(_Event(int(round(mc.time_s / dt)), 3, len(events), "meter", tenant_names.index(mc.tenant),
                             rate_bps=mc.rate_bps))
    link_Bps = link.rate_bps / 8
    return _Plan(
        n=n, dt=dt, total_steps=n_samples * steps_per_sample, steps_per_sample=steps_per_sample,
        n_samples=n_samples, l_bytes=l_bytes,
        rate_tab=np.array(cfg.cct.rates(cfg.pacer.packet_bytes, cfg.pacer.aggregate, link.nic_bps)) / 8 * dt,
        nic_step=link.nic_bps / 8 * dt, serve_step=link_Bps * dt, link_Bps=link_Bps, buf=buf,
        feedback_s=link.feedback_delay_s, port_of=port_of, n_ports=n_ports,
        own_ports=n_ports == n and bool((port_of == np.arange(n)).all()),
        input_of=input_of if shared else None, n_inputs=len(inputs),
        thr_bytes=thr_bytes, alpha_per_byte=sw.mark_probability / l_bytes,
        random_marks=sw.marking_mode == "random", c_marks=float(cfg.receiver.becn_every), seed=cfg.seed,
        cc=np.array([f.cc for f in flows], dtype=bool),
        inc=np.array([f.params.ccti_increase for f in flows], dtype=np.int64),
        cmin=np.array([f.params.ccti_min for f in flows], dtype=np.int64),
        climit=np.array([f.params.ccti_limit for f in flows], dtype=np.int64),
        tper=np.array([f.params.timer_s for f in flows], dtype=float),
        reset=np.array([f.params.timer_mode == "reset" for f in flows], dtype=bool),
        start_ccti=np.array([f.params.ccti_min if f.initial_ccti is None
                             else min(max(f.initial_ccti, f.params.ccti_min), f.params.ccti_limit)
                             for f in flows], dtype=np.int64),
        tenant_of=np.array([tenant_names.index(f.tenant) for f in flows], dtype=np.int64),
        n_tenants=len(tenant_names), pending=_bucket(events),
        max_delay_steps=int(math.ceil((n_ports * buf / link_Bps + link.feedback_delay_s) / dt)) + 2)


PYTHON_KERNEL_MAX_FLOWS = 16
"""Up to this many flows the pure-Python kernel is faster than numpy's per-call overhead."""


def simulate(flows: Sequence[FlowDef], duration_s: float, config: ModelConfig = ModelConfig(),
             changes: Iterable[ParamChange] = (), meters: Iterable[MeterChange] = (),
             kernel: Literal["auto", "numpy", "python"] = "auto") -> ModelResult:
    """Run the fluid model for ``duration_s`` seconds of IB time; sample every ``config.sample_s``.

    ``changes`` are the controller's parameter pushes, ``meters`` the meter-mode rate limits.
    ``kernel`` picks the implementation of the step (both compute the same model; ``auto`` takes
    plain Python up to :data:`PYTHON_KERNEL_MAX_FLOWS` flows and numpy above)."""
    check_choice("kernel", kernel, ("auto", "numpy", "python"))
    plan = _plan(flows, duration_s, config, changes, meters)
    use_python = kernel == "python" or (kernel == "auto" and plan.n <= PYTHON_KERNEL_MAX_FLOWS)
    out = _run_python(plan) if use_python else _run_numpy(plan)
    times = (np.arange(plan.n_samples) + 1) * config.sample_s
    return ModelResult(tuple(f.name for f in flows), tuple(f.tenant for f in flows),
                       tuple(f.start_s for f in flows), tuple(f.stop_s for f in flows), config.sample_s, times,
                       out.thr, out.becn, out.ccti, out.queue, config.link.rate_bps, out.marked,
                       out.packets / plan.l_bytes)


def _run_numpy(p: _Plan) -> _Out:
    """The step vectorised over flows (hundreds of flows)."""
    n, dt, n_ports, port_of, own = p.n, p.dt, p.n_ports, p.port_of, p.own_ports
    rng = np.random.default_rng(p.seed)
    active = np.zeros(n, dtype=bool)
    cc = p.cc
    no_cc, all_cc = ~cc, bool(cc.all())
    inc, cmin, climit = p.inc.copy(), p.cmin.copy(), p.climit.copy()
    tper, reset, start_ccti = p.tper.copy(), p.reset.copy(), p.start_ccti
    ccti = cmin.copy()
    timer, marks, q = np.zeros(n), np.zeros(n), np.zeros(n)
    served_acc, ccti_acc = np.zeros(n), np.zeros(n)
    becn_acc = np.zeros(n, dtype=np.int64)
    marked_total, packets_total = np.zeros(n), np.zeros(n)
    queue_acc = 0.0
    meter_step = np.full(p.n_tenants, math.inf)
    metered = False
    ring = np.zeros((p.max_delay_steps + 1, n), dtype=np.int64)
    ring_len = ring.shape[0]
    pending = dict(p.pending)
    out = _Out(np.zeros((p.n_samples, n)), np.zeros((p.n_samples, n), dtype=np.int64),
               np.zeros((p.n_samples, n)), np.zeros(p.n_samples), marked_total, packets_total)

    for k in range(p.total_steps):
        if pending and k in pending:
            for e in pending.pop(k):
                i, prm = e.flow, e.params
                if e.kind == "start":
                    active[i] = True
                    ccti[i], timer[i], marks[i] = max(cmin[i], start_ccti[i]), 0.0, 0.0
                elif e.kind == "stop":
                    active[i] = False
                elif e.kind == "meter":
                    meter_step[i] = math.inf if e.rate_bps is None else e.rate_bps / 8 * dt
                    metered = bool(np.isfinite(meter_step).any())
                elif prm is not None:
                    inc[i], cmin[i], climit[i] = prm.ccti_increase, prm.ccti_min, prm.ccti_limit
                    tper[i], reset[i] = prm.timer_s, prm.timer_mode == "reset"
                    ccti[i] = min(max(ccti[i], cmin[i]), climit[i])

        # BECNs due now (Algorithm 1, lines 4-8)
        slot = k % ring_len
        b = ring[slot]
        if b.any():
            becn_acc += b
            hit = (b > 0) & cc & active & (ccti < climit)
            if hit.any():
                ccti[hit] = np.minimum(ccti[hit] + inc[hit] * b[hit], climit[hit])
                timer[hit & reset] = 0.0
            ring[slot] = 0

        # CCTI timer (Algorithm 1, lines 9-15)
        timer += dt
        fire = timer >= tper
        if fire.any():
            nf = np.floor(timer[fire] / tper[fire])
            timer[fire] -= nf * tper[fire]
            cf = ccti[fire]
            ccti[fire] = np.maximum(cf - nf.astype(np.int64), np.minimum(cf, cmin[fire]))

        # sources (Algorithm 2 as a rate), meters
        a = p.rate_tab[ccti]
        if not all_cc:
            a[no_cc] = p.nic_step
        a *= active
        if p.input_of is not None:      # flows of one input link share its NIC rate
            per_input = np.bincount(p.input_of, weights=a, minlength=p.n_inputs)
            a *= np.divide(p.nic_step, per_input, out=np.ones(p.n_inputs), where=per_input > p.nic_step)[p.input_of]
        if metered:
            per_tenant = np.bincount(p.tenant_of, weights=a, minlength=p.n_tenants)
            cap = np.divide(meter_step, per_tenant, out=np.ones(p.n_tenants), where=per_tenant > meter_step)
            a *= cap[p.tenant_of]
        q_total = float(q.sum())

        # bottleneck: arbitration, lossless admission, FIFO service within a port
        content = q + a
        if q_total + float(a.sum()) <= p.serve_step:
            served = content
            q = np.zeros(n)
        else:
            if n_ports == 1:
                sp = np.array([p.serve_step])
                cp = np.array([float(content.sum())])
            elif own:
                cp = content
                sp = waterfill(cp, p.serve_step)
            else:
                cp = np.bincount(port_of, weights=content, minlength=n_ports)
                sp = waterfill(cp, p.serve_step)
            excess = cp - sp - p.buf
            if (excess > 0).any():
                ap = a if own else np.bincount(port_of, weights=a, minlength=n_ports)
                keep = np.clip(1.0 - np.divide(excess, ap, out=np.zeros(n_ports), where=ap > 0), 0.0, 1.0)
                a = a * (keep if own else keep[port_of])
                content = q + a
                cp = content if own else np.bincount(port_of, weights=content, minlength=n_ports)
            ratio = np.divide(sp, cp, out=np.zeros(n_ports), where=cp > 0)
            served = content * (ratio if own else ratio[port_of])
            q = content - served
        served_acc += served
        packets_total += a

        # FECN marking and BECN feedback
        if q_total >= p.thr_bytes:
            m = a * p.alpha_per_byte
            if p.random_marks:
                m = rng.poisson(m).astype(float)
            marks += m
            marked_total += m
            nb = np.floor(marks / p.c_marks)
            if nb.any():
                marks -= nb * p.c_marks
                delay = int((q_total / p.link_Bps + p.feedback_s) / dt) + 1
                ring[(k + min(delay, p.max_delay_steps)) % ring_len] += nb.astype(np.int64)

        ccti_acc += ccti
        queue_acc += q_total
        if (k + 1) % p.steps_per_sample == 0:
            si = (k + 1) // p.steps_per_sample - 1
            out.thr[si] = served_acc * 8 / (p.steps_per_sample * dt)
            out.becn[si] = becn_acc
            out.ccti[si] = ccti_acc / p.steps_per_sample
            out.queue[si] = queue_acc / p.steps_per_sample / p.l_bytes
            served_acc[:] = 0.0
            becn_acc[:] = 0
            ccti_acc[:] = 0.0
            queue_acc = 0.0
    return out


def _waterfill_list(demand: list[float], capacity: float) -> list[float]:
    if sum(demand) <= capacity:
        return list(demand)
    left, todo = capacity, sorted(range(len(demand)), key=demand.__getitem__)
    out = [0.0] * len(demand)
    for j, i in enumerate(todo):
        share = left / (len(todo) - j)
        out[i] = min(demand[i], share)
        left -= out[i]
    return out


def _poisson(rnd: random.Random, lam: float) -> int:
    """Knuth's method; the per-step means here are small (about one packet)."""
    limit, k, prod = math.exp(-lam), 0, rnd.random()
    while prod > limit:
        k += 1
        prod *= rnd.random()
    return k


def _run_python(p: _Plan) -> _Out:
    """The same step as :func:`_run_numpy` in plain Python (a few flows: no per-call numpy overhead)."""
    n, dt, serve, buf = p.n, p.dt, p.serve_step, p.buf
    rate = p.rate_tab.tolist()
    nic, alpha, c_marks, thr = p.nic_step, p.alpha_per_byte, p.c_marks, p.thr_bytes
    cc = p.cc.tolist()
    inc, cmin, climit = p.inc.tolist(), p.cmin.tolist(), p.climit.tolist()
    tper, reset, start_ccti = p.tper.tolist(), p.reset.tolist(), p.start_ccti.tolist()
    port_of, n_ports, tenant_of = p.port_of.tolist(), p.n_ports, p.tenant_of.tolist()
    input_of = None if p.input_of is None else p.input_of.tolist()
    rnd = random.Random(p.seed)
    rng_n = range(n)
    active = [False] * n
    ccti = list(cmin)
    timer, marks, q = [0.0] * n, [0.0] * n, [0.0] * n
    served_acc, ccti_acc = [0.0] * n, [0.0] * n
    becn_acc = [0] * n
    marked_total, packets_total = [0.0] * n, [0.0] * n
    queue_acc = 0.0
    meter_step = [math.inf] * p.n_tenants
    metered = False
    ring_len = p.max_delay_steps + 1
    ring: list[list[int] | None] = [None] * ring_len
    pending = dict(p.pending)
    out_thr = np.zeros((p.n_samples, n))
    out_becn = np.zeros((p.n_samples, n), dtype=np.int64)
    out_ccti = np.zeros((p.n_samples, n))
    out_queue = np.zeros(p.n_samples)

    for k in range(p.total_steps):
        if pending and k in pending:
            for e in pending.pop(k):
                i, prm = e.flow, e.params
                if e.kind == "start":
                    active[i] = True
                    ccti[i], timer[i], marks[i] = max(cmin[i], start_ccti[i]), 0.0, 0.0
                elif e.kind == "stop":
                    active[i] = False
                elif e.kind == "meter":
                    meter_step[i] = math.inf if e.rate_bps is None else e.rate_bps / 8 * dt
                    metered = any(math.isfinite(x) for x in meter_step)
                elif prm is not None:
                    inc[i], cmin[i], climit[i] = prm.ccti_increase, prm.ccti_min, prm.ccti_limit
                    tper[i], reset[i] = prm.timer_s, prm.timer_mode == "reset"
                    ccti[i] = min(max(ccti[i], cmin[i]), climit[i])

        slot = k % ring_len
        b = ring[slot]
        if b is not None:
            ring[slot] = None
            for i in rng_n:
                bi = b[i]
                if bi:
                    becn_acc[i] += bi
                    if cc[i] and active[i] and ccti[i] < climit[i]:
                        ccti[i] = min(ccti[i] + inc[i] * bi, climit[i])
                        if reset[i]:
                            timer[i] = 0.0

        for i in rng_n:
            t = timer[i] + dt
            if t >= tper[i]:
                nf = math.floor(t / tper[i])
                t -= nf * tper[i]
                c = ccti[i]
                ccti[i] = max(c - nf, min(c, cmin[i]))
            timer[i] = t

        a = [(rate[ccti[i]] if cc[i] else nic) if active[i] else 0.0 for i in rng_n]
        if input_of is not None:
            per_input = [0.0] * p.n_inputs
            for i in rng_n:
                per_input[input_of[i]] += a[i]
            a = [a[i] * (nic / per_input[input_of[i]]) if per_input[input_of[i]] > nic else a[i] for i in rng_n]
        if metered:
            per_tenant = [0.0] * p.n_tenants
            for i in rng_n:
                per_tenant[tenant_of[i]] += a[i]
            for i in rng_n:
                cap, got = meter_step[tenant_of[i]], per_tenant[tenant_of[i]]
                if got > cap:
                    a[i] *= cap / got
        q_total = sum(q)

        content = [q[i] + a[i] for i in rng_n]
        if q_total + sum(a) <= serve:
            served = content
            q = [0.0] * n
        else:
            cp = [0.0] * n_ports
            for i in rng_n:
                cp[port_of[i]] += content[i]
            sp = [serve] if n_ports == 1 else _waterfill_list(cp, serve)
            excess = [cp[j] - sp[j] - buf for j in range(n_ports)]
            if any(x > 0 for x in excess):
                ap = [0.0] * n_ports
                for i in rng_n:
                    ap[port_of[i]] += a[i]
                keep = [min(1.0, max(0.0, 1.0 - excess[j] / ap[j])) if ap[j] > 0 else 1.0 for j in range(n_ports)]
                a = [a[i] * keep[port_of[i]] for i in rng_n]
                content = [q[i] + a[i] for i in rng_n]
                cp = [0.0] * n_ports
                for i in rng_n:
                    cp[port_of[i]] += content[i]
            ratio = [sp[j] / cp[j] if cp[j] > 0 else 0.0 for j in range(n_ports)]
            served = [content[i] * ratio[port_of[i]] for i in rng_n]
            q = [content[i] - served[i] for i in rng_n]
        for i in rng_n:
            served_acc[i] += served[i]
            packets_total[i] += a[i]

        if q_total >= thr:
            new: list[int] | None = None
            for i in rng_n:
                m = a[i] * alpha
                if p.random_marks:
                    m = float(_poisson(rnd, m)) if m > 0 else 0.0
                if m:
                    marks[i] += m
                    marked_total[i] += m
                    nb = math.floor(marks[i] / c_marks)
                    if nb:
                        marks[i] -= nb * c_marks
                        if new is None:
                            new = [0] * n
                        new[i] = nb
            if new is not None:
                delay = int((q_total / p.link_Bps + p.feedback_s) / dt) + 1
                tgt = (k + min(delay, p.max_delay_steps)) % ring_len
                cur = ring[tgt]
                ring[tgt] = new if cur is None else [x + y for x, y in zip(cur, new)]

        for i in rng_n:
            ccti_acc[i] += ccti[i]
        queue_acc += q_total
        if (k + 1) % p.steps_per_sample == 0:
            si = (k + 1) // p.steps_per_sample - 1
            span = p.steps_per_sample * dt
            out_thr[si] = [x * 8 / span for x in served_acc]
            out_becn[si] = becn_acc
            out_ccti[si] = [x / p.steps_per_sample for x in ccti_acc]
            out_queue[si] = queue_acc / p.steps_per_sample / p.l_bytes
            served_acc, ccti_acc, becn_acc = [0.0] * n, [0.0] * n, [0] * n
            queue_acc = 0.0
    return _Out(out_thr, out_becn, out_ccti, out_queue, np.array(marked_total), np.array(packets_total))


__all__ = ["Link", "FlowDef", "ParamChange", "MeterChange", "ModelConfig", "ModelResult", "simulate", "jain_index",
           "waterfill"]
