"""Tenant-fair bandwidth partition policy: per-flow ``CCTI_Increase`` and per-tenant meter rates.

IB CC partitioning (Zhang et al.), §4.2 and §5: tenant t with weight w_t should get ``B * w_t / sum(w)`` of a
bottleneck however many flows it opens. Theorem 1 gives each flow a rate ∝ 1/CCTI_Increase, so
tenant t's n_t flows get ``CCTI_Increase ∝ n_t / w_t`` each: every flow of t then gets ∝ w_t/n_t,
the tenant ∝ w_t, and its flows share equally. The controller recomputes the values on every flow
arrival and departure and pushes only the changes (:class:`FlowUpdate`) to the sender agents.

Decisions (the paper leaves these open):

* **Integer values.** ``CCTI_Increase`` is an 8-bit integer >= 1. For the loads ``v_t = n_t/w_t``
  at one bottleneck we take ``v / min(v)`` (the least loaded tenant gets 1) and multiply it by the
  smallest integer m for which rounding is within ``tolerance`` (2%) of the exact ratio, without
  exceeding 255. This gives the paper's values exactly (1 flow -> 1, 2 flows -> 2, 3 flows -> 3,
  tenant 1 stays at 1) and keeps the values small: a large CCTI_Increase makes each BECN a big jump.
  When the exact ratio needs more than 255, the values are clamped to 1..255 (logged).
* **Several bottlenecks.** A flow that crosses several bottlenecks takes the largest value that
  any of its *congested* bottlenecks asks for (by default every bottleneck counts as congested;
  :meth:`TenantPolicy.set_congested` narrows it, e.g. from the switches' marking counters). The
  paper does not address this case.
* **Operating point (CCTI_Timer).** Theorem 1 fixes the ratios, not the level: in steady state a
  flow's CCTI balances ``CCTI_Increase x BECN rate`` against one decrement per ``CCTI_Timer``, so
  ``r_i ~ C*l / (alpha * Inc_i * T)`` (our steady-state estimate from Theorem 1 and eq. (2)). If the sum of these
  rates exceeds the bottleneck,
  the flows cannot collect enough marks, the queue fills and the split falls back to the switch's
  arbitration. With a few flows the default timer (150 = 153.6 µs) is far from that limit (2 flows
  at Inc 1 and 2: 0.64 Gb/s of 8), but with hundreds of flows it is not. When the bottleneck rate is
  known, the policy therefore also sets one ``CCTI_Timer`` per bottleneck, the default or the
  smallest value with ``sum(r_i) <= load_target * B`` (``load_target`` = 0.5), at most 65535. A
  common timer leaves the ratios alone (the rates scale as 1/(Inc*T)).
* **Activity.** Only tenants with at least one flow at a bottleneck share it (work conserving).
* **Meter mode.** The same policy as in-network rate limits: each active tenant at a bottleneck
  gets one meter at ``B * w_t / sum(active w)`` (``p4src/meter.p4`` drops red packets, so both
  meter rates are set to this value). Meter indices are the tenants' positions in the tenant list.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dcnlab.controller.congestion.params import (
    TIMER_TICK_S,
    CongestionParamError,
    ReceiverParams,
    SwitchParams,
    check_field,
)

log = logging.getLogger(__name__)

DEFAULT_BOTTLENECK = "bottleneck"
MAX_INCREASE = 255


@dataclass(frozen=True)
class Tenant:
    name: str
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not self.name:
            raise CongestionParamError("tenant name must not be empty")
        if not (isinstance(self.weight, (int, float)) and math.isfinite(self.weight) and self.weight > 0):
            raise CongestionParamError(f"tenant {self.name}: weight={self.weight!r} is out of range; valid: > 0")


@dataclass(frozen=True)
class FlowSpec:
    """A flow (one QP) of a tenant and the bottleneck links on its path."""

    flow: str
    tenant: str
    bottlenecks: tuple[str, ...] = (DEFAULT_BOTTLENECK,)


@dataclass(frozen=True)
class FlowUpdate:
    """Push ``ccti_increase`` and ``ccti_timer`` to the sender of ``flow``.

    ``previous`` is the former ``(ccti_increase, ccti_timer)``, None for a new flow."""

    flow: str
    ccti_increase: int
    ccti_timer: int
    previous: tuple[int, int] | None


@dataclass(frozen=True)
class MeterRate:
    """Per-tenant meter at a bottleneck: committed = peak rate ``rate_bps``, bursts of ``burst_bytes``."""

    bottleneck: str
    tenant: str
    index: int
    rate_bps: float
    burst_bytes: int


def increase_values(loads: Mapping[str, float], max_increase: int = MAX_INCREASE,
                    tolerance: float = 0.02) -> dict[str, int]:
    """Integer ``CCTI_Increase`` per key, proportional to ``loads`` (n_t / w_t), smallest value >= 1."""
    if not loads:
        return {}
    for k, v in loads.items():
        if not (math.isfinite(v) and v > 0):
            raise CongestionParamError(f"load of {k}={v!r} must be a finite number > 0")
    lo = min(loads.values())
    base = {k: v / lo for k, v in loads.items()}
    top = max(base.values())
    if top > max_increase:
        log.warning("CCTI_Increase ratio %.1f exceeds %d; values are clamped and the partition is approximate",
                    top, max_increase)
        return {k: min(max_increase, max(1, round(b))) for k, b in base.items()}
    best: tuple[float, dict[str, int]] | None = None
    for m in range(1, int(max_increase // top) + 1):
        vals = {k: round(b * m) for k, b in base.items()}
        err = max(abs(vals[k] / (b * m) - 1.0) for k, b in base.items())
        if best is None or err < best[0] - 1e-12:
            best = (err, vals)
        if err <= tolerance:
            break
    assert best is not None
    return best[1]


def meter_shares(weights: Mapping[str, float], rate_bps: float) -> dict[str, float]:
    """``rate * w_t / sum(w)`` for each tenant in ``weights`` (the active ones)."""
    total = sum(weights.values())
    return {t: rate_bps * w / total for t, w in weights.items()} if total > 0 else {}


class TenantPolicy:
    """The controller's flow table and the per-flow ``CCTI_Increase`` it implies (paper §5)."""

    def __init__(self, tenants: Iterable[Tenant], *, bottleneck_rates: Mapping[str, float] | None = None,
                 max_increase: int = MAX_INCREASE, tolerance: float = 0.02, meter_burst_s: float = 1e-3,
                 packet_bytes: int = 1024, switch: SwitchParams | None = None,
                 receiver: ReceiverParams | None = None, base_timer: int = 150, load_target: float = 0.5) -> None:
        self.tenants: dict[str, Tenant] = {}
        for t in tenants:
            if t.name in self.tenants:
                raise CongestionParamError(f"tenant {t.name!r} is listed twice")
            self.tenants[t.name] = t
        if not self.tenants:
            raise CongestionParamError("the policy needs at least one tenant")
        if not 1 <= max_increase <= MAX_INCREASE:
            raise CongestionParamError(f"max_increase={max_increase} is out of range; valid: 1..{MAX_INCREASE}")
        if not 0 <= tolerance < 1:
            raise CongestionParamError(f"tolerance={tolerance} is out of range; valid: 0 <= tolerance < 1")
        self.rates = dict(bottleneck_rates or {})
        for b, r in self.rates.items():
            if not r > 0:
                raise CongestionParamError(f"bottleneck {b}: rate={r} must be > 0 bit/s")
        self.max_increase, self.tolerance = max_increase, tolerance
        self.meter_burst_s, self.packet_bytes = meter_burst_s, packet_bytes
        self.switch = switch or SwitchParams()
        self.receiver = receiver or ReceiverParams()
        self.base_timer = check_field("CCTI_Timer", base_timer, 1, 65535, "16-bit IB field, units of 1.024 us")
        if not 0 < load_target <= 1:
            raise CongestionParamError(f"load_target={load_target} is out of range; valid: 0 < load_target <= 1")
        self.load_target = load_target
        self.flows: dict[str, FlowSpec] = {}
        self.congested: frozenset[str] | None = None
        self._current: dict[str, tuple[int, int]] = {}

    # -- flow events -------------------------------------------------------------------------------
    def add_flow(self, flow: FlowSpec) -> list[FlowUpdate]:
        """Register a flow; return the updates for every flow whose value changed (the new one included)."""
        return self.add_flows([flow])

    def add_flows(self, flows: Iterable[FlowSpec]) -> list[FlowUpdate]:
        """Register several flows at once and recompute once (``add_flow`` per flow recomputes every
        flow each time: quadratic); return the updates, as :meth:`add_flow` would in sum."""
        for flow in flows:
            if flow.flow in self.flows:
                raise CongestionParamError(f"flow {flow.flow!r} is already active")
            if flow.tenant not in self.tenants:
                raise CongestionParamError(f"flow {flow.flow!r}: unknown tenant {flow.tenant!r}; "
                                           f"valid: {', '.join(self.tenants)}")
            if not flow.bottlenecks:
                raise CongestionParamError(f"flow {flow.flow!r} crosses no bottleneck")
            self.flows[flow.flow] = flow
        return self._recompute()

    def remove_flow(self, flow_id: str) -> list[FlowUpdate]:
        """Forget a flow; return the updates for the remaining flows whose value changed."""
        if self.flows.pop(flow_id, None) is None:
            raise CongestionParamError(f"flow {flow_id!r} is not active")
        self._current.pop(flow_id, None)
        return self._recompute()

    def set_congested(self, bottlenecks: Iterable[str] | None) -> list[FlowUpdate]:
        """Only these bottlenecks drive the values (None = all); return the resulting updates."""
        self.congested = None if bottlenecks is None else frozenset(bottlenecks)
        return self._recompute()

    # -- queries -----------------------------------------------------------------------------------
    def increase(self, flow_id: str) -> int:
        return self._current[flow_id][0]

    def timer(self, flow_id: str) -> int:
        return self._current[flow_id][1]

    def increases(self) -> dict[str, int]:
        return {f: v[0] for f, v in self._current.items()}

    def timers(self) -> dict[str, int]:
        return {f: v[1] for f, v in self._current.items()}

    def equilibrium_rate_bps(self, ccti_increase: int, ccti_timer: int) -> float:
        """Our steady-state estimate (Theorem 1, eq. (2)): the rate at which a flow's CCTI is stable when every
        eligible packet is marked."""
        bits = self.receiver.becn_every * self.packet_bytes * 8 / self.switch.mark_probability
        return bits / (ccti_increase * ccti_timer * TIMER_TICK_S)

    def bottlenecks(self) -> list[str]:
        return sorted({b for f in self.flows.values() for b in f.bottlenecks})

    def tenant_flows(self, bottleneck: str = DEFAULT_BOTTLENECK) -> dict[str, int]:
        """Active flows per tenant at ``bottleneck`` (tenants without flows omitted)."""
        out: dict[str, int] = {}
        for f in self.flows.values():
            if bottleneck in f.bottlenecks:
                out[f.tenant] = out.get(f.tenant, 0) + 1
        return out

    def target_shares(self, bottleneck: str = DEFAULT_BOTTLENECK) -> dict[str, float]:
        """The paper's B_t / B_w: each active tenant's fraction of the bottleneck."""
        return meter_shares({t: self.tenants[t].weight for t in self.tenant_flows(bottleneck)}, 1.0)

    def target_flow_shares(self, bottleneck: str = DEFAULT_BOTTLENECK) -> dict[str, float]:
        """Each active flow's fraction of the bottleneck: its tenant's share split equally."""
        counts, shares = self.tenant_flows(bottleneck), self.target_shares(bottleneck)
        return {f.flow: shares[f.tenant] / counts[f.tenant]
                for f in self.flows.values() if bottleneck in f.bottlenecks}

    def meter_rates(self) -> list[MeterRate]:
        """Meter mode: one meter per active tenant per bottleneck with a known rate."""
        index = {t: i for i, t in enumerate(self.tenants)}
        out = []
        for b in self.bottlenecks():
            rate = self.rates.get(b)
            if rate is None:
                continue
            for t, share in sorted(self.target_shares(b).items()):
                burst = max(4 * self.packet_bytes, int(rate * share * self.meter_burst_s / 8))
                out.append(MeterRate(b, t, index[t], rate * share, burst))
        return out

    # -- internals ---------------------------------------------------------------------------------
    def _per_bottleneck(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for b in self.bottlenecks():
            if self.congested is not None and b not in self.congested:
                continue
            counts = self.tenant_flows(b)
            out[b] = increase_values({t: n / self.tenants[t].weight for t, n in counts.items()},
                                     self.max_increase, self.tolerance)
        return out

    def _timer_for(self, bottleneck: str, incs: Mapping[str, int]) -> int:
        rate = self.rates.get(bottleneck)
        if rate is None:
            return self.base_timer
        counts = self.tenant_flows(bottleneck)
        inv = sum(n / incs[t] for t, n in counts.items())
        bits = self.receiver.becn_every * self.packet_bytes * 8 / self.switch.mark_probability
        need = math.ceil(bits * inv / (self.load_target * rate) / TIMER_TICK_S)
        if need > 65535:
            log.warning("bottleneck %s: CCTI_Timer would need %d ticks; clamped to 65535", bottleneck, need)
        return min(65535, max(self.base_timer, need))

    def _recompute(self) -> list[FlowUpdate]:
        per_b = self._per_bottleneck()
        timers = {b: self._timer_for(b, incs) for b, incs in per_b.items()}
        updates = []
        for fid, f in self.flows.items():
            inc_vals = [per_b[b][f.tenant] for b in f.bottlenecks if b in per_b]
            tim_vals = [timers[b] for b in f.bottlenecks if b in per_b]
            new = (max(inc_vals) if inc_vals else 1, max(tim_vals) if tim_vals else self.base_timer)
            old = self._current.get(fid)
            if new != old:
                updates.append(FlowUpdate(fid, new[0], new[1], old))
                self._current[fid] = new
        if updates:
            log.debug("policy: %d flows, updates %s", len(self.flows), updates)
        return updates
