"""Switch side of IB-style congestion control on BMv2: marking, counters, bottleneck queues, tenant meters.

IB CC partitioning (Zhang et al.), §4.1 (switch side: threshold and marking rate), emulated on BMv2 with
ECN marks for FECNs (our recipe: the paper runs on InfiniBand switches). The P4 side is ``p4src/ecn.p4``
(egress marking and per-port counters) and
``p4src/meter.p4`` (per-tenant meters); this module turns :class:`~dcnlab.controller.congestion.params.SwitchParams`
and :class:`~dcnlab.controller.congestion.policy.MeterRate` into their table entries, meter configs and counter
reads, and sets the bottleneck queue through the Thrift channel (BMv2's P4Runtime server has no queue
or register support).

Decisions (§4.1 leaves them open):

* **Threshold.** The IB level 0..15 becomes a depth in packets by :func:`~dcnlab.controller.congestion.params.
  threshold_depth` (``8 * (16 - level)``; level 15 -> 8, 12 -> 32, 1 -> 120 packets). Level 0 (off)
  deletes the port's entry, so the port never marks. BMv2's ``enq_qdepth`` counts packets, so the
  depth is in packets whatever the packet size.
* **Marking rate.** ``Marking_Rate = m`` marks one in ``m + 1`` eligible packets (IB: "mean number of
  packets between markings"): ``every = m + 1`` in ``ecn_config``. ``marking_mode="nth"`` counts in a
  per-port register (deterministic, exact), ``"random"`` draws with probability ``1/every``.
* **Packet_Size** (64-byte credits) is compared with BMv2's ``packet_length`` (the frame without FCS).
* **Counters.** Per egress port: all packets, eligible packets, marked packets (:class:`PortMarks`).
* **Meters.** Per-tenant meters in bytes, CIR = PIR = the tenant's share (only red is dropped, so
  the share is a hard cap); bursts as the policy gives them, at least 4 packets. A tenant is a set of
  (source IP, UDP source port or None = every port) keys (:class:`TenantKey`); the classification is
  installed at the bottleneck's switch only, so traffic that does not cross it is never metered. One
  meter cell per (switch, tenant): a switch with two metered bottlenecks would need the tenant's index
  per bottleneck, which the experiments here never need.
* **Resetting a meter.** P4Runtime has no "unset" in our entity model; a tenant without a rate is
  removed from ``tenant_class`` instead (its packets are no longer metered).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from dcnlab.controller.congestion.params import CongestionParamError, SwitchParams, check_field
from dcnlab.controller.congestion.policy import MeterRate
from dcnlab.controller.runtime.entities import Counter, MeterConfig, TableEntry, Update
from dcnlab.controller.runtime.errors import ThriftError

log = logging.getLogger(__name__)

ECN_TABLE = "DcnEgress.ecn.ecn_config"
ECN_ACTION = "DcnEgress.ecn.set_marking"
PACKETS_COUNTER = "DcnEgress.ecn.ecn_packets"
ELIGIBLE_COUNTER = "DcnEgress.ecn.ecn_eligible"
MARKED_COUNTER = "DcnEgress.ecn.ecn_marked"
NTH_REGISTER = "DcnEgress.ecn.ecn_since"
TENANT_TABLE = "DcnIngress.tenant.tenant_class"
TENANT_ACTION = "DcnIngress.tenant.meter_tenant"
METER = "DcnIngress.tenant.tenant_meter"
TENANT_PACKETS = "DcnIngress.tenant.tenant_packets"
TENANT_DROPPED = "DcnIngress.tenant.tenant_dropped"

MAX_DEPTH = (1 << 19) - 1
"""``enq_qdepth`` is 19 bits wide."""
MIN_BURST_PACKETS = 4
THRIFT_ATTEMPTS = 3


class Runtime(Protocol):
    """What this module needs of :class:`dcnlab.controller.runtime.controller.Controller`."""

    def write(self, updates: Mapping[str, Sequence[Update]]) -> None: ...

    def read_counters(self, counter: str, names: Iterable[str] | None = None) -> dict[str, list[Counter]]: ...

    def thrift(self, name: str): ...


# -- entities (pure) -------------------------------------------------------------------------------------
def marking_entry(port: int, params: SwitchParams) -> TableEntry | None:
    """The ``ecn_config`` entry for ``port``, or None when marking is off (IB threshold level 0)."""
    check_field("egress port", port, 0, 511, "BMv2 port numbers are 9 bits")
    if not params.enabled:
        return None
    depth = params.threshold_packets
    if depth > MAX_DEPTH:
        raise CongestionParamError(f"threshold depth={depth} packets is out of range; valid: 1..{MAX_DEPTH} "
                                   "(enq_qdepth is 19 bits)")
    return TableEntry(ECN_TABLE, {"std.egress_port": port}, ECN_ACTION,
                      {"threshold": depth, "every": params.marking_rate + 1,
                       "random_mode": 1 if params.marking_mode == "random" else 0,
                       "min_len": params.min_marked_bytes})


@dataclass(frozen=True)
class TenantKey:
    """Packets of a tenant: IPv4 source ``ip`` and UDP source port ``sport`` (None: any port)."""

    ip: str
    sport: int | None = None


def tenant_entry(key: TenantKey, index: int) -> TableEntry:
    """``tenant_class`` entry sending ``key``'s packets to meter cell ``index``; a per-flow key wins."""
    check_field("meter index", index, 0, (1 << 32) - 1)
    match: dict[str, tuple] = {"hdr.ipv4.srcAddr": (key.ip, 0xFFFFFFFF)}
    if key.sport is not None:   # P4Runtime: a don't-care ternary field is left out, never masked with 0
        match["hdr.udp.srcPort"] = (check_field("UDP source port", key.sport, 0, 65535), 0xFFFF)
    return TableEntry(TENANT_TABLE, match, TENANT_ACTION, {"index": index}, priority=1 if key.sport is None else 2)


def meter_config(rate: MeterRate, packet_bytes: int) -> MeterConfig:
    """The meter cell of ``rate``: CIR = PIR in bytes/s, bursts of at least 4 packets."""
    bps = round(rate.rate_bps / 8)
    if bps <= 0:
        raise CongestionParamError(f"meter rate of tenant {rate.tenant}={rate.rate_bps} bit/s must be >= 8 bit/s")
    burst = max(rate.burst_bytes, MIN_BURST_PACKETS * packet_bytes)
    return MeterConfig(METER, rate.index, bps, burst, bps, burst)


@dataclass(frozen=True)
class PortMarks:
    """Counts of one egress port: every packet, eligible ones, marked ones."""

    packets: int = 0
    eligible: int = 0
    marked: int = 0

    def __sub__(self, other: PortMarks) -> PortMarks:
        return PortMarks(self.packets - other.packets, self.eligible - other.eligible, self.marked - other.marked)

    @property
    def marked_fraction(self) -> float:
        """Marked / all packets (the measured α over every packet of the port)."""
        return self.marked / self.packets if self.packets else 0.0


@dataclass(frozen=True)
class TenantCount:
    packets: int = 0
    dropped: int = 0

    def __sub__(self, other: TenantCount) -> TenantCount:
        return TenantCount(self.packets - other.packets, self.dropped - other.dropped)


# -- installer ---------------------------------------------------------------------------------------------
class CongestionDataplane:
    """Marking, counters, bottleneck queues and tenant meters of a running emulation."""

    def __init__(self, runtime: Runtime, packet_bytes: int = 1024) -> None:
        self.rt = runtime
        self.packet_bytes = packet_bytes
        self.marking: dict[tuple[str, int], TableEntry] = {}
        self.tenants: dict[str, dict[TenantKey, TableEntry]] = {}

    # marking
    def set_marking(self, switch: str, ports: Iterable[int], params: SwitchParams) -> None:
        """Install (or change, or with level 0 remove) the marking of ``ports`` at ``switch``."""
        updates: list[Update] = []
        for port in ports:
            new = marking_entry(port, params)
            old = self.marking.get((switch, port))
            if new is None:
                if old is not None:
                    updates.append(-old)
                    del self.marking[(switch, port)]
            else:
                updates.append(+new if old is None else ~new)
                self.marking[(switch, port)] = new
        if updates:
            self.rt.write({switch: updates})
        log.debug("%s: marking %s on ports %s", switch, params, list(ports))

    def clear_marking(self) -> None:
        """Remove every marking entry this installer wrote."""
        by_switch: dict[str, list[Update]] = {}
        for (sw, _), e in self.marking.items():
            by_switch.setdefault(sw, []).append(-e)
        if by_switch:
            self.rt.write(by_switch)
        self.marking.clear()

    def _thrift(self, switch: str, call: Callable[[Any], None]) -> None:
        """Run ``call(channel)``, retried: each Thrift call forks a ``simple_switch_CLI``, and a fork next to
        gRPC's threads occasionally fails before the CLI runs (gRPC logs "epoll_wait error")."""
        for attempt in range(THRIFT_ATTEMPTS):
            try:
                call(self.rt.thrift(switch))
                return
            except ThriftError as e:
                if attempt == THRIFT_ATTEMPTS - 1:
                    raise
                log.warning("%s: Thrift call failed (%s); retrying", switch, e)
                time.sleep(0.2)

    def reset_marking_phase(self, switch: str) -> None:
        """Zero the every-n-th counters (register ``ecn_since``, Thrift) so runs start in the same phase."""
        self._thrift(switch, lambda ch: ch.register_reset(NTH_REGISTER))

    def marks(self, switch: str) -> dict[int, PortMarks]:
        """Per egress port of ``switch``: packets, eligible and marked (cumulative counters)."""
        reads = [self.rt.read_counters(name, [switch])[switch]
                 for name in (PACKETS_COUNTER, ELIGIBLE_COUNTER, MARKED_COUNTER)]
        cells: dict[int, list[int]] = {}
        for k, cs in enumerate(reads):
            for c in cs:
                cells.setdefault(c.index or 0, [0, 0, 0])[k] = c.packets
        return {port: PortMarks(*v) for port, v in sorted(cells.items())}

    # bottleneck queue
    def set_bottleneck(self, switch: str, ports: Sequence[int], rate_pps: int | None,
                       depth: int | None = None) -> None:
        """BMv2 egress queue rate (packets/s) and depth (packets) of ``ports`` (Thrift)."""
        if rate_pps is not None:
            check_field("queue rate", rate_pps, 1, 10_000_000, "packets/s")
        if depth is not None:
            check_field("queue depth", depth, 1, 1_000_000, "packets")
        self._thrift(switch, lambda ch: ch.set_queues(depth, rate_pps, list(ports)))

    # tenants and meters
    def classify(self, switch: str, keys: Mapping[TenantKey, int]) -> None:
        """Make ``switch``'s tenant classification exactly ``keys`` (key -> meter index)."""
        old = self.tenants.get(switch, {})
        new = {k: tenant_entry(k, i) for k, i in keys.items()}
        updates: list[Update] = [-e for k, e in old.items() if k not in new]
        for k, e in new.items():
            if k not in old:
                updates.append(+e)
            elif old[k] != e:
                updates.append(~e)
        if updates:
            self.rt.write({switch: updates})
        self.tenants[switch] = new

    def set_meters(self, switch: str, rates: Sequence[MeterRate]) -> None:
        """Set the meter cells of ``rates`` (P4Runtime MODIFY: meter cells always exist)."""
        if rates:
            self.rt.write({switch: [~meter_config(r, self.packet_bytes) for r in rates]})

    def tenant_counts(self, switch: str) -> dict[int, TenantCount]:
        seen = {c.index or 0: c.packets for c in self.rt.read_counters(TENANT_PACKETS, [switch])[switch]}
        red = {c.index or 0: c.packets for c in self.rt.read_counters(TENANT_DROPPED, [switch])[switch]}
        return {i: TenantCount(seen.get(i, 0), red.get(i, 0)) for i in sorted(set(seen) | set(red))}

    def clear_tenants(self) -> None:
        by_switch = {sw: [-e for e in entries.values()] for sw, entries in self.tenants.items() if entries}
        if by_switch:
            self.rt.write(by_switch)
        self.tenants.clear()
