"""Tenant policy: CCTI_Increase ∝ flows/weight per bottleneck, updates on arrival/departure, meters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcnlab.controller.congestion.params import CongestionParamError, SwitchParams
from dcnlab.controller.congestion.policy import (
    FlowSpec,
    FlowUpdate,
    Tenant,
    TenantPolicy,
    increase_values,
    meter_shares,
)


def test_paper_schedule_gives_1_2_3_and_back():
    """IB CC partitioning (Zhang et al.), §5: tenant 1 keeps 1; tenant 2's flows get its flow count; pushes only
    on change."""
    p = TenantPolicy([Tenant("t1"), Tenant("t2")])
    assert p.add_flow(FlowSpec("C->A", "t1")) == [FlowUpdate("C->A", 1, 150, None)]
    assert p.add_flow(FlowSpec("D->B", "t2")) == [FlowUpdate("D->B", 1, 150, None)]
    ups = p.add_flow(FlowSpec("E->B", "t2"))
    assert sorted(ups, key=lambda u: u.flow) == [FlowUpdate("D->B", 2, 150, (1, 150)),
                                                 FlowUpdate("E->B", 2, 150, None)]
    p.add_flow(FlowSpec("F->B", "t2"))
    assert p.increases() == {"C->A": 1, "D->B": 3, "E->B": 3, "F->B": 3}
    ups = p.remove_flow("F->B")
    assert {u.flow: u.ccti_increase for u in ups} == {"D->B": 2, "E->B": 2}
    p.remove_flow("E->B")
    assert p.increases() == {"C->A": 1, "D->B": 1}
    assert p.target_shares() == {"t1": 0.5, "t2": 0.5}


def test_weights_and_flow_counts():
    p = TenantPolicy([Tenant("gold", 4), Tenant("silver", 2), Tenant("bronze", 1)])
    for t, k in (("gold", 2), ("silver", 2), ("bronze", 1)):
        for j in range(k):
            p.add_flow(FlowSpec(f"{t}{j}", t))
    inc = p.increases()
    # loads n/w: gold 0.5, silver 1, bronze 1 -> 1 : 2 : 2
    assert (inc["gold0"], inc["silver0"], inc["bronze0"]) == (1, 2, 2)
    flow_share = p.target_flow_shares()
    assert flow_share["gold0"] == pytest.approx(4 / 7 / 2) and flow_share["bronze0"] == pytest.approx(1 / 7)
    assert sum(flow_share.values()) == pytest.approx(1.0)


def test_increase_values_rounding_and_clamp():
    assert increase_values({"a": 1, "b": 2, "c": 3}) == {"a": 1, "b": 2, "c": 3}
    assert increase_values({"a": 1.0, "b": 1.5}) == {"a": 2, "b": 3}
    v = increase_values({"a": 1.0, "b": 1.0 / 0.7})       # ratio 1.4286 -> 7:10
    assert v == {"a": 7, "b": 10}
    assert increase_values({"a": 1, "b": 1000}) == {"a": 1, "b": 255}
    assert increase_values({}) == {}
    with pytest.raises(CongestionParamError, match="load of a"):
        increase_values({"a": 0.0})


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdefgh"), st.tuples(st.integers(1, 40), st.sampled_from([1, 2, 3, 4, 8])),
                       min_size=1, max_size=8))
def test_increase_values_are_proportional_to_load(spec):
    loads = {t: n / w for t, (n, w) in spec.items()}
    vals = increase_values(loads)
    assert min(vals.values()) >= 1 and max(vals.values()) <= 255
    lo = min(loads, key=loads.get)
    if max(loads.values()) / loads[lo] <= 255 / 2:
        for t in loads:
            exact = loads[t] / loads[lo] * vals[lo]
            assert abs(vals[t] / exact - 1) <= 0.34  # rounding of the smallest scale that fits
        assert min(vals.values()) == vals[lo]


def test_errors_name_the_problem():
    with pytest.raises(CongestionParamError, match="weight=0"):
        Tenant("x", 0)
    p = TenantPolicy([Tenant("t1")])
    with pytest.raises(CongestionParamError, match="unknown tenant 't9'; valid: t1"):
        p.add_flow(FlowSpec("f", "t9"))
    p.add_flow(FlowSpec("f", "t1"))
    with pytest.raises(CongestionParamError, match="already active"):
        p.add_flow(FlowSpec("f", "t1"))
    with pytest.raises(CongestionParamError, match="not active"):
        p.remove_flow("g")
    with pytest.raises(CongestionParamError, match="listed twice"):
        TenantPolicy([Tenant("a"), Tenant("a")])
    with pytest.raises(CongestionParamError, match="load_target"):
        TenantPolicy([Tenant("a")], load_target=0)


def test_several_bottlenecks_take_the_largest_congested_value():
    p = TenantPolicy([Tenant("a"), Tenant("b")])
    p.add_flow(FlowSpec("a1", "a", ("L1", "L2")))
    p.add_flow(FlowSpec("b1", "b", ("L1",)))
    p.add_flow(FlowSpec("b2", "b", ("L1",)))
    p.add_flow(FlowSpec("a2", "a", ("L2",)))
    p.add_flow(FlowSpec("a3", "a", ("L2",)))
    p.add_flow(FlowSpec("b3", "b", ("L2",)))
    # L1: a has 1 flow, b 2 -> a:1 b:2; L2: a has 3 flows, b 1 -> a:3 b:1
    assert p.increase("a1") == 3
    ups = p.set_congested(["L1"])
    assert {u.flow: u.ccti_increase for u in ups}["a1"] == 1
    assert p.increase("b1") == 2 and p.increase("a2") == 1  # a2 crosses no congested bottleneck
    p.set_congested(None)
    assert p.increase("a1") == 3


def test_meter_rates_split_the_link_by_weight_among_active_tenants():
    p = TenantPolicy([Tenant("t1", 1), Tenant("t2", 3), Tenant("idle", 5)], bottleneck_rates={"bottleneck": 8e9})
    p.add_flow(FlowSpec("x", "t1"))
    for j in range(4):
        p.add_flow(FlowSpec(f"y{j}", "t2"))
    meters = {m.tenant: m for m in p.meter_rates()}
    assert set(meters) == {"t1", "t2"}
    assert meters["t1"].rate_bps == pytest.approx(2e9) and meters["t2"].rate_bps == pytest.approx(6e9)
    assert (meters["t1"].index, meters["t2"].index) == (0, 1)
    assert meters["t2"].burst_bytes == int(6e9 * 1e-3 / 8)
    assert meter_shares({"a": 1, "b": 1}, 10.0) == {"a": 5.0, "b": 5.0}


def test_timer_stays_default_for_few_flows_and_grows_for_many():
    """Our steady-state estimate (from IB CC partitioning (Zhang et al.), Theorem 1 and eq. (2)): the sum of
    equilibrium rates C*l/(alpha*Inc*T) must stay below load_target * B."""
    sw = SwitchParams(marking_rate=7)
    few = TenantPolicy([Tenant("a"), Tenant("b")], bottleneck_rates={"bottleneck": 8e9}, switch=sw)
    few.add_flow(FlowSpec("a0", "a"))
    few.add_flow(FlowSpec("b0", "b"))
    assert few.timers() == {"a0": 150, "b0": 150}
    assert few.equilibrium_rate_bps(1, 150) == pytest.approx(8 * 8192 / 153.6e-6)

    many = TenantPolicy([Tenant(f"t{i}") for i in range(40)], bottleneck_rates={"bottleneck": 8e9}, switch=sw)
    for i in range(200):
        many.add_flow(FlowSpec(f"f{i}", f"t{i % 40}"))
    timers = set(many.timers().values())
    assert len(timers) == 1
    t = timers.pop()
    assert t > 150
    total = sum(many.equilibrium_rate_bps(many.increase(f), t) for f in many.flows)
    assert total <= 0.5 * 8e9 * 1.001
    assert total > 0.5 * 8e9 * 0.99
