"""IB congestion-control parameters, the CCT and the time scale (IB CC partitioning (Zhang et al.), §4.1,
Table 1, §5)."""

from __future__ import annotations

import math

import pytest

from dcnlab.controller.congestion.cct import Cct, TimeScale, aggregate_rate, ib_entry, paper_cct_us
from dcnlab.controller.congestion.params import (
    CongestionParamError,
    HcaParams,
    PacerParams,
    ReceiverParams,
    SwitchParams,
    threshold_depth,
)
from dcnlab.topos.errors import UserError


@pytest.mark.parametrize("kwargs, field, rng", [
    ({"ccti_increase": 0}, "CCTI_Increase=0", "1..255"),
    ({"ccti_increase": 256}, "CCTI_Increase=256", "1..255"),
    ({"ccti_timer": 0}, "CCTI_Timer=0", "1..65535"),
    ({"ccti_timer": 65536}, "CCTI_Timer=65536", "1..65535"),
    ({"ccti_min": 256, "ccti_limit": 1000}, "CCTI_Min=256", "0..255"),
    ({"ccti_min": -1}, "CCTI_Min=-1", "0..255"),
    ({"ccti_limit": 16320}, "CCTI_Limit=16320", "0..16319"),
    ({"ccti_min": 10, "ccti_limit": 5}, "CCTI_Min=10", "CCTI_Limit=5"),
    ({"timer_mode": "sometimes"}, "timer_mode='sometimes'", "reset, free"),
    ({"ccti_increase": 1.5}, "CCTI_Increase=1.5", "integer"),
])
def test_hca_params_name_field_and_range(kwargs, field, rng):
    with pytest.raises(CongestionParamError) as e:
        HcaParams(**kwargs)
    assert field in str(e.value) and rng in str(e.value)
    assert isinstance(e.value, UserError)


@pytest.mark.parametrize("cls, kwargs, field, rng", [
    (SwitchParams, {"threshold": 16}, "Threshold=16", "0..15"),
    (SwitchParams, {"threshold": -1}, "Threshold=-1", "0..15"),
    (SwitchParams, {"marking_rate": 65536}, "Marking_Rate=65536", "0..65535"),
    (SwitchParams, {"packet_size": 256}, "Packet_Size=256", "0..255"),
    (SwitchParams, {"marking_mode": "often"}, "marking_mode='often'", "nth, random"),
    (ReceiverParams, {"becn_every": 0}, "C=0", "1..65535"),
    (PacerParams, {"aggregate": 0}, "aggregate=0", "1..64"),
    (PacerParams, {"packet_bytes": 10}, "packet_bytes=10", "64..65535"),
])
def test_other_params_name_field_and_range(cls, kwargs, field, rng):
    with pytest.raises(CongestionParamError) as e:
        cls(**kwargs)
    assert field in str(e.value) and rng in str(e.value)


def test_defaults_follow_table1_and_the_spec():
    p = HcaParams()
    assert (p.ccti_increase, p.ccti_timer, p.ccti_min, p.timer_mode) == (1, 150, 0, "reset")
    assert p.timer_s == pytest.approx(153.6e-6)
    assert PacerParams().aggregate == 4
    p.check_cct(1024)
    with pytest.raises(CongestionParamError, match=r"CCTI_Limit=1023 .*0\.\.511 \(the CCT has 512 entries\)"):
        p.check_cct(512)


def test_threshold_levels_map_linearly_and_zero_is_off():
    assert threshold_depth(0) == 0
    assert threshold_depth(15) == 8 and threshold_depth(12) == 32 and threshold_depth(1) == 120
    depths = [threshold_depth(level) for level in range(1, 16)]
    assert all(a - b == 8 for a, b in zip(depths, depths[1:]))
    assert not SwitchParams(threshold=0).enabled and SwitchParams().enabled
    assert SwitchParams(threshold=15, threshold_step=4).threshold_packets == 4
    assert SwitchParams(marking_rate=7).mark_probability == 1 / 8
    assert SwitchParams(marking_rate=0).mark_probability == 1.0


def test_paper_cct_values():
    assert paper_cct_us(0) == 0
    assert paper_cct_us(127) == pytest.approx(20.1, abs=0.05)          # 106^2 reading
    assert paper_cct_us(127, 1062) == pytest.approx(212.6, abs=0.05)   # literal reading
    cct = Cct.paper()
    assert len(cct) == 1024
    assert cct.delay(106) == pytest.approx(14e-6)
    assert cct.rate(0) == 8e9                                          # CCT[0] = 0: line rate
    # Algorithm 2: one aggregate of 4 x 1024 B per IRD
    assert cct.rate(106) == pytest.approx(4 * 1024 * 8 / 14e-6)
    assert aggregate_rate(20.48e-6, 1024, 4, 10e9) == pytest.approx(1.6e9)


@pytest.mark.parametrize("denominator", [11236, 1062])
def test_cct_satisfies_the_convexity_property_of_section_4_2(denominator):
    cct = Cct.paper(512, denominator)
    assert cct.is_convex()
    rates = [4 * 1024 * 8 / d for d in cct.delays[1:]]
    for a, b, x in [(1, 50, 3), (10, 200, 7), (100, 400, 20)]:
        assert rates[a - 1] - rates[a - 1 + x] > rates[b - 1] - rates[b - 1 + x]


def test_cct_must_be_ascending_and_in_size():
    with pytest.raises(CongestionParamError, match="CCT entry 2"):
        Cct.from_us([0, 2, 1])
    with pytest.raises(CongestionParamError, match=r"CCT size=16321 .*1\.\.16320"):
        Cct.paper(16321)
    assert not Cct.from_us([0, 1, 1.5, 1.6, 3]).is_convex()
    with pytest.raises(CongestionParamError, match=r"CCTI=1024 .*0\.\.1023"):
        Cct.paper().delay(1024)


def test_index_for_rate_is_the_first_entry_at_or_below():
    cct = Cct.paper()
    for rate in (7e9, 3.4e9, 1.1e9, 1e8):
        i = cct.index_for_rate(rate)
        assert cct.rate(i) <= rate < cct.rate(i - 1)
    assert cct.index_for_rate(1.0) == len(cct) - 1


def test_time_scale_maps_ib_onto_a_bmv2_bottleneck():
    s = TimeScale.for_link(10_000)
    assert s.factor == pytest.approx(8e9 / 8192 / 10_000)              # 97.66
    assert s.timer_s(150) == pytest.approx(153.6e-6 * s.factor)         # ~15 ms
    scaled = Cct.paper(128).scaled(s)
    assert scaled.delays[127] == pytest.approx(paper_cct_us(127) * 1e-6 * s.factor)
    # packets per IRD are unchanged: the emulated rate limit is the IB one divided by the factor
    assert scaled.rate(100, line_rate_bps=8e9 / s.factor) == pytest.approx(Cct.paper(128).rate(100) / s.factor)
    assert s.rate(8e9) == pytest.approx(10_000 * 8192)
    with pytest.raises(CongestionParamError, match="emulated_pps"):
        TimeScale.for_link(0)
    with pytest.raises(CongestionParamError, match="factor"):
        TimeScale(math.nan)


def test_ib_entry_encoding():
    pt = 1.024e-6
    shift, mult = ib_entry(20.48e-6, pt)
    assert (pt / (1 << shift)) * mult == pytest.approx(20.48e-6)
    assert ib_entry(0.0, pt) == (3, 0)
    assert 0 <= mult <= 0x3FFF and 0 <= shift <= 3
    with pytest.raises(CongestionParamError, match="too long"):
        ib_entry(1.0, pt)
