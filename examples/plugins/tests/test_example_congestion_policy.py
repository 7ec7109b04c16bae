"""The example congestion policy: tenant shares ∝ weight x min(flows, 2), in the policy and in the fluid model."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcnlab.controller.congestion import registry
from dcnlab.controller.congestion import scenarios as sc
from dcnlab.controller.congestion.policy import FlowSpec, Tenant

REF = str(Path(__file__).resolve().parents[1] / "dcnlab_example_plugins/congestion.py") + ":CappedFlows"
"""By file, so that the test runs whether or not the package is installed (installed: also
``dcnlab_example_plugins.congestion:CappedFlows``)."""


def test_capped_flows_shares_and_increases():
    p = registry.make_policy(REF, [Tenant("a"), Tenant("b", 2.0)], bottleneck_rates={"bottleneck": 8e9})
    for name, tenant in (("a1", "a"), ("b1", "b"), ("b2", "b"), ("b3", "b")):
        registry.check_updates(REF, p.add_flow(FlowSpec(name, tenant)), p.flows)
    assert p.target_shares() == pytest.approx({"a": 0.2, "b": 0.8})     # 1 x 1 : 2 x min(3, 2)
    assert p.increases() == {"a1": 4, "b1": 3, "b2": 3, "b3": 3}         # a: 1/4 ; b: 3 x 1/3 = 1 -> 0.2 : 0.8
    meters = registry.check_meters(REF, p.meter_rates(), ["a", "b"], {"bottleneck": 8e9})
    assert {m.tenant: m.rate_bps for m in meters} == pytest.approx({"a": 1.6e9, "b": 6.4e9})


def test_capped_flows_in_the_model_tenant_experiment():
    s = sc.tenant_fair(phase_s=0.2, mode="cc", policy=REF)
    phases = sc.summarize_tenants(s, s.run())
    by = {p.tenant2_flows: p.tenant_ratio for p in phases}
    assert by[1] == pytest.approx(1, abs=0.15)        # one flow each: equal
    assert by[2] == pytest.approx(0.5, abs=0.1)       # tenant 2's second flow doubles its share
    assert by[3] == pytest.approx(0.5, abs=0.1)       # the third does not
