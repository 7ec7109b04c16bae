"""Congestion's BMv2 checks are defect checks with one rule (a figure nearer, on a log scale, to the mechanism's
than to the nearest defect's), no tolerance of their own: the same band in quick and full runs, wide enough for
BMv2's scatter on sound mechanisms (a quick run's 3-s tenant ratio of 1.271 once failed a +-25% band, a full run's
2:1 bandwidth ratio of 2.30 a +-15% one, and reproduce all exited 1), and failed by the defect each check is for."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest

from dcnlab.controller.congestion import scenarios as sc
from dcnlab.reproduce.congestion.bmv2 import checks


def test_the_band_is_the_log_midpoint_between_the_mechanism_and_the_defect():
    lo, hi = checks.defect_band(2.0, 1.0)
    assert (lo, hi) == pytest.approx((math.sqrt(2), 2 * math.sqrt(2)))
    assert checks.defect_band(1.0, 0.5) == pytest.approx((1 / math.sqrt(2), math.sqrt(2)))
    # the midpoint is where the figure is as near to one as to the other
    assert math.log(lo / 1.0) == pytest.approx(math.log(2.0 / lo))
    for bad in [(1.0, 1.0), (0.0, 1.0), (1.0, -1.0)]:
        with pytest.raises(ValueError, match="both positive and different"):
            checks.defect_band(*bad)
    assert not checks.in_band(math.nan, 1.0, 0.5) and not checks.in_band(math.inf, 2.0, 1.0)


@pytest.mark.parametrize("got", [2.30, 2.04, 1.98])         # three full BMv2 runs of a sound CCTI_Increase 1:2
def test_theorem_1_ratios_measured_on_bmv2_pass(got):
    assert checks.in_band(got, 2.0, 1.0)


@pytest.mark.parametrize("n", [2, 3])
def test_theorem_1_fails_when_ccti_increase_makes_no_difference(n):
    assert not checks.in_band(1.0, float(n), 1.0) and not checks.in_band(1.05, float(n), 1.0)
    assert checks.in_band(float(n), float(n), 1.0)


def _phase(flows: int, ratio: float) -> sc.PhaseSummary:
    base = {f.name: 0.0 for f in fields(sc.PhaseSummary)}
    base.update(label=f"{flows} tenant-2 flows", tenant2_flows=flows, tenant_ratio=ratio)
    return sc.PhaseSummary(**base)


@pytest.mark.parametrize("ratio", [0.80, 1.24, 1.271, 1.117, 1.094])    # 3-s quick windows and 24-s full ones
def test_tenant_ratios_measured_on_sound_mechanisms_pass(ratio):
    assert checks.tenant_check("cc", _phase(2, ratio), _phase(2, 1.0)).ok is True
    assert checks.tenant_check("cc", _phase(3, ratio), _phase(3, 1.0)).ok is True


def test_tenant_blind_cc_fails_the_two_and_three_flow_phases():
    assert checks.tenant_check("cc", _phase(2, 0.5), _phase(2, 1.0)).ok is False
    assert checks.tenant_check("cc", _phase(3, 1 / 3), _phase(3, 1.0)).ok is False
    assert checks.tenant_check("meter", _phase(2, 0.52), _phase(2, 1.0)).ok is False


def test_a_one_flow_phase_is_a_figure_judged_by_the_rule():
    one = checks.tenant_check("cc", _phase(1, 1.363), _phase(1, 1.03))
    assert one.ok is None and one.verdict == "deviates"     # reported, judged by the rule; the command does not fail
    assert checks.tenant_check("cc", _phase(1, 1.02), _phase(1, 1.0)).verdict == "reproduced"


def test_no_check_carries_a_tolerance_of_its_own():
    assert not [n for n in vars(checks) if "TOLERANCE" in n]


def test_a_checks_target_says_its_band_and_the_defect():
    assert checks.band_text(2.0, 1.0, "equal shares") == "2 in [1.41, 2.83] (defect: equal shares, 1)"
    two = checks.tenant_check("cc", _phase(2, 1.0), _phase(2, 1.0))
    assert two.target == "1 in [0.71, 1.41] (defect: tenant-blind CC, 0.5)"
