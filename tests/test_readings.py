"""Readings of the deviating headlines: the variants run, stay sane, and the defaults are today's."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dcnlab.controller.aggregation import engine
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.ratio_readings import READINGS as DELTA_READINGS
from dcnlab.controller.aggregation.ratio_readings import saving, srs_subgraph, srs_traffic
from dcnlab.controller.aggregation.shuffle import no_aggregation_cost, shuffle_costs
from dcnlab.controller.aggregation.steiner_readings import READINGS, SteinerReading, check_reading, steiner_costs
from dcnlab.controller.multicast.baselines import MR4LMSLike
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.planning import make_planner
from dcnlab.results.readings import Reading, format_table
from dcnlab.reproduce.aggregation.model import average
from dcnlab.topos import parse_spec


def _shuffle(n: int, k: int, m: int, seed: int) -> tuple[LabelSpace, np.ndarray, np.ndarray]:
    space = LabelSpace(n, k)
    pick = np.random.default_rng(seed).choice(space.N, 2 * m, replace=False)
    return space, pick[m:], pick[:m]


@pytest.mark.parametrize("n,k,m", [(4, 2, 8), (6, 3, 20), (8, 2, 30)])
def test_default_steiner_reading_is_todays_kmb(n, k, m):
    """Reading (a) builds exactly the engine's KMB trees: same servers per tree, same traffic."""
    space, s, r = _shuffle(n, k, m, 3)
    c = steiner_costs(space, s, r, "kmb")
    nodes = engine.kmb_costs(space, r, s)
    assert np.array_equal(c.servers, nodes)
    assert np.allclose(c.traffic, 2.0 * (nodes - 1))


def test_every_steiner_reading_runs_and_is_sane():
    space, s, r = _shuffle(6, 3, 20, 5)
    none = no_aggregation_cost(space, s, r)
    kmb = steiner_costs(space, s, r, "kmb", detail=True)
    for name in READINGS:
        c = steiner_costs(space, s, r, name, seed=1, detail=True)
        sv = 1 - c.traffic.sum() / none
        assert -2.0 < sv < 1.0, (name, sv)
        assert c.links and c.links > 0 and c.aggregator_servers is not None
        assert np.all(c.servers >= s.shape[0] + 1)          # every sender and the receiver are in each tree
    # the same trees with aggregation taken away from the Steiner servers never cost less
    assert np.all(steiner_costs(space, s, r, "kmb-member-agg").traffic >= kmb.traffic - 1e-9)
    # at delta = 0, with every server aggregating, the server-and-switch graph charges 2 per server
    sw = steiner_costs(space, s, r, "kmb-switch-graph")
    assert np.allclose(sw.traffic, 2.0 * (sw.servers - 1))
    # a bundle forwarded as one flow never costs less than the same flows merged one by one
    assert steiner_costs(space, s, r, "kmb-member-agg-bundled").traffic.sum() >= \
        steiner_costs(space, s, r, "kmb-member-agg").traffic.sum() - 1e-9


def test_steiner_reading_options_are_checked():
    with pytest.raises(ValueError, match="graph"):
        check_reading(SteinerReading("x", "", graph="torus"))
    with pytest.raises(ValueError, match="overlay"):
        check_reading(SteinerReading("x", "", paths="overlay", members="shuffle"))


def test_delta_readings_match_the_model_and_stay_sane():
    space, s, r = _shuffle(4, 3, 12, 2)
    sub = srs_subgraph(space, s, r)
    depth = sub.forest.depth()
    rows = sub.forest.node.shape[0]
    c = shuffle_costs(space, s, r, (0.0, 0.4, 1.0), ("srs", "none"))
    for i, d in enumerate((0.0, 0.4, 1.0)):
        assert srs_traffic(sub, np.full(rows, d), depth) == pytest.approx(c.traffic["srs"][i])
    rng = np.random.default_rng(0)
    values = {name: saving(sub, name, rng, depth=depth) for name in DELTA_READINGS}
    at0 = 1 - c.traffic["srs"][0] / c.traffic["none"][0]
    for name, v in values.items():
        assert -1.0 < v <= at0 + 1e-9, name                 # no reading beats full aggregation
    assert values["once-per-tree"] <= values["curve-mean"] + 1e-9   # a straight line lies above the convex curve


def _strict_instance():
    h = hierarchy_for(parse_spec("midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=4"))
    rng = random.Random(7)
    groups = [rng.sample(range(h.num_hosts), 6) for _ in range(40)]
    return h, groups


def test_strict_mr4lms_keeps_fewer_groups():
    h, groups = _strict_instance()
    kept = {}
    for merge, scope in (("any-color", "link"), ("same-color", "switch")):
        pl = MR4LMSLike(h, 2, merge=merge, scope=scope)
        for i, g in enumerate(groups):
            pl.add_group(i, g)
        kept[scope] = len(pl.trees())
        assert sorted(pl.groups()) == list(range(len(groups)))          # every group is routed
        for t in pl.trees():                                            # merged trees hold their members
            assert all(pl.tree_id(g) == t.tid for g in t.groups)
    assert kept["switch"] < kept["link"]
    assert kept["switch"] == 2          # one tree per color, the paper's "32 of 1,000" with C = 32
    assert isinstance(make_planner(h, "mr4lms-strict", 2), MR4LMSLike)


def test_strict_switch_scope_never_shares_a_switch_in_one_color():
    h, groups = _strict_instance()
    pl = MR4LMSLike(h, 3, scope="switch")
    for i, g in enumerate(groups):
        pl.add_group(i, g)
    seen: dict[tuple[str, int], int] = {}
    for tid, sws in pl._sw_of.items():
        color = pl._trees[tid].color
        for sw in sws:
            assert seen.setdefault((sw, color), tid) == tid


def test_reading_rule_and_table():
    rs = [Reading("h-pct", "a", "x" * 300, 31.7, 28.76, "%", default=True, setting="s" * 200, seconds=3.0),
          Reading("h-pct", "b", "", 25.0, 28.76, "%"),
          Reading("h-ratio", "c", "ratio reading", 0.55, 0.608, "ratio"),
          Reading("h-count", "d", "", 32.0, 32.0, "count"),
          Reading("h-count", "e", "", 523.0, 32.0, "count")]
    assert [r.holds for r in rs] == [True, False, True, True, False]
    text = format_table(rs)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "a *" in text and "±3 points" in text and "exact" in text
    assert "== h-pct (" + "s" * 80 in text.replace("\n   ", "")      # the setting is wrapped, never cut
    with pytest.raises(ValueError):
        Reading("h", "x", "", 1.0, 1.0, "MB")


def test_sweep_averages():
    pts, curve = (50, 100), (40.0, 60.0)
    assert average(pts, curve, (60.0, 160.0), (100.0, 400.0), "plain") == pytest.approx(50.0)
    assert average(pts, curve, (60.0, 160.0), (100.0, 400.0), "by-members") == pytest.approx(40 / 3 + 40)
    assert average(pts, curve, (60.0, 160.0), (100.0, 400.0), "by-traffic") == pytest.approx(56.0)


def test_000_readings_of_one_sweep():
    from dcnlab.reproduce.aggregation.readings_000 import _task, _values

    t = _task(4, 2, 12, (0, 4, 12, 0))
    assert t["none"] >= t["irs-nointra"] >= t["irs"] - 1e-9 > 0 and t["m2"] > 0 and t["unicast"] > 0
    mean = {100: {"m2": 80.0, "irs": 100.0, "irs-nointra": 100.0, "unicast": 120.0, "none": 200.0},
            1000: {"m2": 700.0, "irs": 1000.0, "irs-nointra": 1000.0, "unicast": 1000.0, "none": 2000.0}}
    v = {k: x for k, (x, _) in _values(mean, (1000,)).items()}
    assert v["mean-of-points"] == pytest.approx(25.0)
    assert v["pooled"] == pytest.approx(100 * (1 - 780 / 1100))
    assert v["columns"] == pytest.approx(30.0)
    assert v["points-of-saving"] == pytest.approx(100 * (0.1 + 0.15) / 2)


def test_002_becn_window_readings():
    from dcnlab.reproduce.congestion import readings as ib_cc_002

    rs = ib_cc_002.readings(True, 1)
    counts = {(r.headline, r.reading): r.value for r in rs}
    for n in (1, 2, 3):
        per100 = counts[(f"002-becn-{n}flows", "per-100ms/reset")]
        assert 20 < per100 < 5000
        assert counts[(f"002-becn-{n}flows", "per-1s/reset")] == pytest.approx(10 * per100)
    ratio2 = counts[("002-becn-ratio-2", "settled/reset")]
    assert 0.3 < ratio2 < 0.8                      # fewer BECNs when the flow's share halves
    assert sum(r.default for r in rs) == len({r.headline for r in rs}) == 11   # one default per headline


def test_a_reading_states_its_true_unit_and_the_kind_of_its_tolerance():
    """Mb/s and seconds were once shown as 'ratio' (the unit named the tolerance rule)."""
    rs = [Reading("002-cct-20.48us", "aggregate-4", "", 1600.0, 100.0, "Mb/s", kind="ratio"),
          Reading("002-recovery-1st", "90%/reset", "", 0.0123, 2.0, "s", kind="ratio"),
          Reading("001-mr4lms-random-1000", "mr4lms", "", 523.0, 32.0, "groups", kind="count"),
          Reading("h", "c", "", 0.55, 0.608, "ratio")]
    assert [r.kind for r in rs] == ["ratio", "ratio", "count", "ratio"]
    assert [r.tolerance for r in rs] == ["±10%", "±10%", "exact", "±10%"]
    rows = {line.split()[0]: line.split() for line in format_table(rs).splitlines()
            if line.split() and line.split()[0] in ("aggregate-4", "90%/reset", "mr4lms")}
    assert rows["aggregate-4"][3] == "Mb/s" and rows["90%/reset"][3] == "s" and rows["mr4lms"][3] == "groups"
    with pytest.raises(ValueError, match="needs a kind"):
        Reading("h", "x", "", 1.0, 1.0, "Mb/s")
    with pytest.raises(ValueError, match="kind 'trend'"):
        Reading("h", "x", "", 1.0, 1.0, "s", kind="trend")


def test_002_readings_units():
    """Every 002 block in its unit: the CCT limit in Mb/s, recovery in seconds, their ratio a ratio, BECNs."""
    from dcnlab.reproduce.congestion import readings as m

    cct = m._cct_readings()
    assert cct and {r.unit for r in cct} == {"Mb/s"} and {r.kind for r in cct} == {"ratio"}
    assert all("10 ms simulated" in r.setting for r in cct)
    got = {f: [0.012, 0.02] for f in m.RECOVERY_FRACTIONS}
    recs = {mode: {"seconds": 1.0, "sample_s": 1e-3, "phase_s": 0.2, "recovery": got} for mode in m.TIMER_MODES}
    units = {(r.headline, r.unit) for r in m._recovery_readings(recs)}
    assert units == {("002-recovery-1st", "s"), ("002-recovery-2nd", "s"), ("002-recovery-ratio", "ratio")}
    assert all("phases of 0.2 s sampled every 1 ms" in r.setting for r in m._recovery_readings(recs))


def test_001_block_is_named_for_the_groups_that_ran(monkeypatch):
    """The quick run once measured random:300 under the title 001-mr4lms-random-1000."""
    from dcnlab.reproduce.multicast import readings as m

    monkeypatch.setattr(m, "SPEC", "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=4")
    monkeypatch.setattr(m, "COLORS", 8)
    monkeypatch.setattr(m, "QUICK_PATTERN", "random:30:seed=1:ppn=4")
    rs = m.readings(True, 1)
    assert {r.headline for r in rs} == {"001-mr4lms-random-30"}
    assert {r.unit for r in rs} == {"groups"}
    text = format_table(rs).replace("\n   ", " ")
    assert "== 001-mr4lms-random-30 (random:30:seed=1:ppn=4 on midplane:q=2" in text
    assert "30 groups, not the paper's 1,000" in text
    mr = next(r for r in rs if r.reading == "mr4lms")
    assert mr.default and mr.value <= 30
