"""Host-side InfiniBand-style congestion control: per-flow CCTI controller, pacer, BECN reflector.

IB CC partitioning (Zhang et al.), §4.1: Algorithm 1 (CCT management) and Algorithm 2 (source send-rate
limiting); the receiver reflects FECN marks to
the source as BECN. Everything here is pure Python with an injectable clock (a callable returning
seconds, e.g. ``time.monotonic``), so a host agent can drive it from its socket loop and tests can
drive it with a fake clock. Times are in the agent's seconds: parameters and the CCT are given in IB
time and a :class:`dcnlab.controller.congestion.cct.TimeScale` stretches the CCT entries and
``CCTI_Timer`` into emulated time (BMv2 forwards ~100x fewer packets per second than IB).

Decisions on the paper's ambiguities (the timer, Algorithm 2's aggregate):

* **Algorithm 1, reset mode (default).** On a BECN, if ``CCTI < CCTI_Limit``: ``CCTI += CCTI_Increase``
  clamped to ``CCTI_Limit`` (as ``hfi1`` does; the paper does not clamp) and the timer restarts. A
  BECN that arrives at ``CCTI_Limit`` is ignored and does *not* restart the timer (literal
  Algorithm 1: the reset sits inside the ``if``).
* **Free-running mode** (``timer_mode="free"``, the IB specification and ``hfi1``): BECNs never touch
  the timer; CCTI falls by one every ``CCTI_Timer`` while above ``CCTI_Min``.
* **Expiry at CCTI_Min.** Algorithm 1 only restarts the timer when it decrements, so at ``CCTI_Min``
  its ``Timer == CCTI_Timer`` test would never fire again. We treat the timer as periodic: every
  expiry restarts it, and an expiry at ``CCTI_Min`` does nothing else.
* **Timer evaluation** is lazy and exact: expiries are at ``ref + k * CCTI_Timer`` and are applied
  whenever the controller is consulted, so no thread or timer is needed.
* **Algorithm 2.** One IRD per aggregate of ``aggregate`` packets (4 in the IB spec): after the
  last packet of an aggregate the sender waits until ``CCT[CCTI]`` has passed since the previous
  aggregate boundary, using the CCTI current at that moment. ``CCT[0] = 0`` never waits.

**Congestion-notification (CN) packet.** The receiver sends one UDP datagram to the sender's
``CN_PORT`` for every ``C`` CE-marked packets of a flow. Payload (network byte order, 24 bytes,
:data:`CN_HEADER`)::

    0      4        5      6          8         12           16                24
    | "DCCN" | version | flags | becns u16 | flow u32 | marked u32 | sent_ns u64 |

``version`` is 1, ``flags`` 0, ``becns`` the number of BECNs this datagram stands for (1 normally),
``flow`` the data flow's id (as in :mod:`dcnlab.traffic.wire`), ``marked`` the receiver's running count
of CE-marked packets of the flow (mod 2³²) and ``sent_ns`` the receiver's clock in ns. Data packets
are sent ECT(0) (TOS ECN bits ``10``); the switch sets CE (``11``) as the IB FECN.

Use in an agent (the sender's socket loop and the CN listener may be different threads; guard the
sender with a lock then)::

    sender = CcSender(flow, HcaParams(), Cct.paper(), time.monotonic, scale=TimeScale.for_link(10_000))
    while sending:
        sock.send(frame)
        time.sleep(sender.after_send())              # Algorithm 2
    ...                                              # CN listener on CN_PORT:
    cn = CnPacket.unpack(datagram)
    if cn is not None:
        sender.on_cn(cn)                             # Algorithm 1
    ...                                              # receiver, per data packet (IP_RECVTOS):
    cn = reflector.on_packet(flow, tos)
    if cn is not None:
        cn_sock.sendto(cn.pack(), (sender_ip, CN_PORT))
"""

from __future__ import annotations

import logging
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dcnlab.controller.congestion.cct import Cct, TimeScale
from dcnlab.controller.congestion.params import HcaParams, PacerParams, ReceiverParams

log = logging.getLogger(__name__)

Clock = Callable[[], float]

CN_MAGIC = b"DCCN"
CN_VERSION = 1
CN_HEADER = struct.Struct("!4sBBHIIQ")
CN_PORT = 47900
"""UDP port on which a sender agent listens for congestion notifications."""
ECN_MASK, ECT0, CE = 0x3, 0x2, 0x3


def is_ce(tos: int) -> bool:
    """True when the IP TOS/traffic-class byte carries CE (the emulated FECN)."""
    return tos & ECN_MASK == CE


@dataclass(frozen=True)
class CnPacket:
    """A congestion notification: ``becns`` BECNs for ``flow``."""

    flow: int
    becns: int = 1
    marked: int = 0
    sent_ns: int = 0

    def pack(self) -> bytes:
        return CN_HEADER.pack(CN_MAGIC, CN_VERSION, 0, self.becns & 0xFFFF, self.flow & 0xFFFFFFFF,
                              self.marked & 0xFFFFFFFF, self.sent_ns & 0xFFFFFFFFFFFFFFFF)

    @classmethod
    def unpack(cls, payload: bytes) -> CnPacket | None:
        """The CN in ``payload``, or None if it is not one (wrong magic, version or length)."""
        if len(payload) < CN_HEADER.size:
            return None
        magic, version, _flags, becns, flow, marked, sent = CN_HEADER.unpack_from(payload)
        if magic != CN_MAGIC or version != CN_VERSION:
            return None
        return cls(flow, becns, marked, sent)


class CctiController:
    """Algorithm 1 for one flow: the CCT index, raised by BECNs and lowered by the CCTI timer."""

    def __init__(self, params: HcaParams, cct: Cct, clock: Clock, scale: TimeScale = TimeScale()) -> None:
        params.check_cct(len(cct))
        self.params, self.clock, self.scale = params, clock, scale
        self.delays = cct.scaled(scale).delays if scale.factor != 1.0 else cct.delays
        self.timer_s = scale.timer_s(params.ccti_timer)
        self.ccti = params.ccti_min
        self._ref = clock()
        self.becns = 0
        self.ignored_becns = 0
        self.decrements = 0

    def _advance(self, now: float) -> None:
        n = int(math.floor((now - self._ref) / self.timer_s + 1e-6))  # tolerate float error
        if n <= 0:
            return
        self._ref += n * self.timer_s
        dec = min(n, max(0, self.ccti - self.params.ccti_min))
        self.ccti -= dec
        self.decrements += dec

    def index(self, now: float | None = None) -> int:
        """CCTI at ``now`` (default: the clock), after the timer expiries due by then."""
        self._advance(self.clock() if now is None else now)
        return self.ccti

    def ird(self, now: float | None = None) -> float:
        """The current inter-aggregate delay ``CCT[CCTI]`` in seconds."""
        return self.delays[self.index(now)]

    def on_becn(self, count: int = 1, now: float | None = None) -> int:
        """Apply ``count`` BECNs received at ``now``; return the new CCTI."""
        t = self.clock() if now is None else now
        self._advance(t)
        p = self.params
        accepted = False
        for _ in range(count):
            self.becns += 1
            if self.ccti < p.ccti_limit:
                self.ccti = min(self.ccti + p.ccti_increase, p.ccti_limit)
                accepted = True
            else:
                self.ignored_becns += 1
        if accepted and p.timer_mode == "reset":
            self._ref = t
        return self.ccti

    def set_params(self, params: HcaParams, now: float | None = None) -> None:
        """Reconfigure at run time (the controller's push); CCTI is clamped into the new bounds."""
        params.check_cct(len(self.delays))
        self._advance(self.clock() if now is None else now)
        self.params = params
        self.timer_s = self.scale.timer_s(params.ccti_timer)
        self.ccti = min(max(self.ccti, params.ccti_min), params.ccti_limit)

    def set_increase(self, ccti_increase: int, now: float | None = None) -> None:
        self.set_params(replace(self.params, ccti_increase=ccti_increase), now)


class Pacer:
    """Algorithm 2: compare the elapsed time with the IRD once per aggregate of packets."""

    def __init__(self, aggregate: int = 4) -> None:
        PacerParams(aggregate=aggregate)
        self.aggregate = aggregate
        self.count = 0
        self.last_time: float | None = None

    def after_send(self, now: float, ird: float) -> float:
        """Call after each packet sent at ``now``; returns how long to wait before the next packet."""
        self.count += 1
        if self.count < self.aggregate:
            return 0.0
        self.count = 0
        wait = 0.0 if self.last_time is None else max(0.0, ird - (now - self.last_time))
        self.last_time = now + wait
        return wait


@dataclass
class SenderStats:
    packets: int = 0
    waits: int = 0
    waited_s: float = 0.0


class CcSender:
    """Per-flow sender state: CCTI controller + pacer. ``enabled=False`` sends unpaced (CC off)."""

    def __init__(self, flow: int, params: HcaParams, cct: Cct, clock: Clock, *, aggregate: int = 4,
                 scale: TimeScale = TimeScale(), enabled: bool = True) -> None:
        self.flow = flow
        self.clock = clock
        self.enabled = enabled
        self.ccti = CctiController(params, cct, clock, scale)
        self.pacer = Pacer(aggregate)
        self.stats = SenderStats()

    def after_send(self, now: float | None = None) -> float:
        """Account one packet sent; return the seconds to wait before sending the next one."""
        t = self.clock() if now is None else now
        self.stats.packets += 1
        if not self.enabled:
            return 0.0
        wait = self.pacer.after_send(t, self.ccti.ird(t))
        if wait > 0:
            self.stats.waits += 1
            self.stats.waited_s += wait
        return wait

    def apply_update(self, ccti_increase: int, ccti_timer: int | None = None, now: float | None = None) -> None:
        """Take the controller's push (:class:`dcnlab.controller.congestion.policy.FlowUpdate` fields)."""
        p = replace(self.ccti.params, ccti_increase=ccti_increase,
                    ccti_timer=self.ccti.params.ccti_timer if ccti_timer is None else ccti_timer)
        self.ccti.set_params(p, now)

    def on_cn(self, cn: CnPacket, now: float | None = None) -> None:
        if cn.flow != self.flow:
            log.debug("flow %d: ignoring CN for flow %d", self.flow, cn.flow)
            return
        if self.enabled:
            self.ccti.on_becn(cn.becns, now)
        else:
            self.ccti.becns += cn.becns

    def snapshot(self) -> dict:
        return {"flow": self.flow, "ccti": self.ccti.index(), "becns": self.ccti.becns,
                "ignored_becns": self.ccti.ignored_becns, "decrements": self.ccti.decrements,
                "packets": self.stats.packets, "ccti_increase": self.ccti.params.ccti_increase,
                "enabled": self.enabled}


@dataclass
class _FlowMarks:
    packets: int = 0
    marked: int = 0
    pending: int = 0
    becns: int = 0


@dataclass
class BecnReflector:
    """Receiver side: one :class:`CnPacket` per ``C`` CE-marked packets of a flow."""

    params: ReceiverParams = field(default_factory=ReceiverParams)
    clock_ns: Callable[[], int] | None = None
    flows: dict[int, _FlowMarks] = field(default_factory=dict)

    def on_packet(self, flow: int, tos: int) -> CnPacket | None:
        """Account a data packet with IP TOS ``tos``; return the CN to send back, if one is due."""
        r = self.flows.get(flow)
        if r is None:
            r = self.flows[flow] = _FlowMarks()
        r.packets += 1
        if not is_ce(tos):
            return None
        r.marked += 1
        r.pending += 1
        if r.pending < self.params.becn_every:
            return None
        r.pending = 0
        r.becns += 1
        return CnPacket(flow, 1, r.marked, self.clock_ns() if self.clock_ns else 0)

    def summary(self) -> dict[str, dict[str, int]]:
        return {str(f): {"packets": r.packets, "marked": r.marked, "becns": r.becns}
                for f, r in sorted(self.flows.items())}
