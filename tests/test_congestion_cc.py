"""Host-side CC state machines with a fake clock: Algorithm 1 (CCTI), Algorithm 2 (pacer), BECN reflector."""

from __future__ import annotations

import pytest

from dcnlab.controller.congestion.cct import Cct, TimeScale
from dcnlab.controller.congestion.params import CongestionParamError, HcaParams, ReceiverParams
from dcnlab.traffic.cc import CE, ECT0, BecnReflector, CcSender, CctiController, CnPacket, Pacer, is_ce

T = 153.6e-6  # CCTI_Timer = 150


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


def make(**kw) -> tuple[CctiController, FakeClock]:
    clock = FakeClock()
    return CctiController(HcaParams(**kw), Cct.paper(), clock), clock


def test_becn_raises_ccti_by_increase_and_clamps_at_limit():
    c, clock = make(ccti_increase=3, ccti_limit=10)
    assert c.on_becn() == 3
    assert c.on_becn(2) == 9
    assert c.on_becn() == 10            # clamped (hfi1), not 12
    assert c.on_becn() == 10 and c.ignored_becns == 1
    assert c.ird() == Cct.paper().delay(10)


def test_reset_mode_decrements_only_after_a_becn_free_timer():
    c, clock = make(ccti_increase=5)
    c.on_becn()
    for _ in range(20):                 # a BECN every 0.9 T: never recovers (Algorithm 1)
        clock.advance(0.9 * T)
        c.on_becn()
    assert c.index() == 105 and c.decrements == 0
    clock.advance(0.99 * T)
    assert c.index() == 105
    clock.advance(0.02 * T)
    assert c.index() == 104
    clock.advance(10 * T)
    assert c.index() == 94


def test_free_running_timer_ignores_becns():
    c, clock = make(ccti_increase=5, timer_mode="free")
    c.on_becn()
    for _ in range(20):
        clock.advance(0.9 * T)
        c.on_becn()
    # 21 BECNs x 5, minus one decrement per elapsed T (18 T = 20 x 0.9 T)
    assert c.index() == 105 - 18
    assert c.decrements == 18


def test_timer_stops_at_ccti_min_and_is_periodic():
    c, clock = make(ccti_increase=2, ccti_min=3)
    assert c.index() == 3
    clock.advance(5 * T)
    assert c.index() == 3               # never below CCTI_Min
    c.on_becn()
    assert c.index() == 5
    clock.advance(1.5 * T)
    assert c.index() == 4
    clock.advance(0.5 * T)
    assert c.index() == 3
    clock.advance(10 * T)
    assert c.index() == 3


def test_becn_at_the_limit_does_not_reset_the_timer():
    c, clock = make(ccti_increase=10, ccti_limit=10)
    c.on_becn()
    clock.advance(0.6 * T)
    c.on_becn()                         # ignored at the limit: timer keeps running
    clock.advance(0.6 * T)
    assert c.index() == 9


def test_runtime_reconfiguration_and_time_scale():
    clock = FakeClock()
    scale = TimeScale.for_link(10_000)
    c = CctiController(HcaParams(), Cct.paper(), clock, scale)
    assert c.timer_s == pytest.approx(T * scale.factor)
    c.set_increase(4)
    assert c.on_becn() == 4
    assert c.ird() == pytest.approx(Cct.paper().delay(4) * scale.factor)
    c.set_params(HcaParams(ccti_min=6, ccti_increase=4))
    assert c.index() == 6               # clamped into the new bounds
    clock.advance(T * scale.factor * 1.01)
    assert c.index() == 6


def test_pacer_waits_once_per_aggregate():
    p = Pacer(4)
    ird = 10e-6
    t, waits = 0.0, []
    for _ in range(12):
        t += 0.1e-6                     # wire time of one packet
        w = p.after_send(t, ird)
        waits.append(w)
        t += w
    assert [w > 0 for w in waits] == [False] * 7 + [True] + [False] * 3 + [True]
    assert waits[7] == pytest.approx(ird - 0.4e-6)
    assert p.after_send(t, 0.0) == 0.0


def test_sender_rate_matches_algorithm_2():
    """Sending as fast as allowed, a flow at CCTI i moves 4 packets per CCT[i]."""
    clock = FakeClock(0.0)
    cct = Cct.paper()
    s = CcSender(7, HcaParams(ccti_increase=150), cct, clock)
    s.on_cn(CnPacket(7))
    s.on_cn(CnPacket(8))                 # another flow's CN is ignored
    assert s.ccti.index() == 150
    n = 4000
    for _ in range(n):
        clock.advance(0.05e-6)
        clock.advance(s.after_send())
        s.ccti._ref = clock.t            # hold CCTI still (no timer decrements) for the measurement
    rate = n * 1024 * 8 / clock.t
    assert rate == pytest.approx(cct.rate(150), rel=0.01) and rate < 8e9 / 2
    snap = s.snapshot()
    assert snap["ccti"] == 150 and snap["packets"] == n and snap["becns"] == 1


def test_sender_takes_the_policy_push():
    clock = FakeClock()
    s = CcSender(1, HcaParams(), Cct.paper(), clock)
    s.apply_update(3, 300)
    assert s.ccti.params.ccti_increase == 3 and s.ccti.timer_s == pytest.approx(300 * 1.024e-6)
    s.on_cn(CnPacket(1, becns=2))
    assert s.ccti.index() == 6
    s.apply_update(1)
    assert s.ccti.params.ccti_timer == 300 and s.ccti.params.ccti_increase == 1
    with pytest.raises(CongestionParamError, match="CCTI_Increase=0"):
        s.apply_update(0)


def test_cc_off_sender_never_waits_but_counts_becns():
    clock = FakeClock()
    s = CcSender(1, HcaParams(), Cct.paper(), clock, enabled=False)
    s.on_cn(CnPacket(1, becns=3))
    assert s.ccti.becns == 3 and s.ccti.index() == 0
    assert all(s.after_send() == 0.0 for _ in range(10))


def test_reflector_sends_one_cn_per_c_marks():
    r = BecnReflector(ReceiverParams(becn_every=3), clock_ns=lambda: 42)
    out = [r.on_packet(5, CE if i % 2 == 0 else ECT0) for i in range(12)]
    cns = [c for c in out if c is not None]
    assert len(cns) == 2 and cns[0].flow == 5 and cns[0].marked == 3 and cns[1].marked == 6
    assert cns[0].sent_ns == 42
    assert r.on_packet(6, ECT0) is None
    assert r.summary() == {"5": {"packets": 12, "marked": 6, "becns": 2},
                           "6": {"packets": 1, "marked": 0, "becns": 0}}


def test_cn_packet_format():
    cn = CnPacket(flow=0xDEADBEEF, becns=2, marked=7, sent_ns=123456789)
    raw = cn.pack()
    assert len(raw) == 24 and raw[:4] == b"DCCN" and raw[4] == 1
    assert CnPacket.unpack(raw) == cn
    assert CnPacket.unpack(raw + b"extra") == cn
    assert CnPacket.unpack(b"XXXX" + raw[4:]) is None
    assert CnPacket.unpack(raw[:10]) is None
    assert is_ce(0b11) and is_ce(0xFF) and not is_ce(0b10) and not is_ce(0)
