"""A congestion policy: tenant-fair, but a tenant's share grows with its flows up to a cap of two."""

from __future__ import annotations

from dcnlab.controller.congestion.policy import TenantPolicy, increase_values, meter_shares

FLOW_CAP = 2


class CappedFlows(TenantPolicy):
    """Between per-flow and tenant-fair: a tenant's share ∝ weight x min(flows, 2), so opening a second flow pays,
    a third does not."""

    def _share_weights(self, bottleneck: str) -> dict[str, float]:
        return {t: self.tenants[t].weight * min(n, FLOW_CAP) for t, n in self.tenant_flows(bottleneck).items()}

    def _per_bottleneck(self) -> dict[str, dict[str, int]]:
        # a flow's rate ∝ 1 / CCTI_Increase, so CCTI_Increase ∝ flows / (the tenant's share weight)
        return {b: increase_values({t: self.tenant_flows(b)[t] / w for t, w in self._share_weights(b).items()},
                                   self.max_increase, self.tolerance)
                for b in self.bottlenecks() if self.congested is None or b in self.congested}

    def target_shares(self, bottleneck: str = "bottleneck") -> dict[str, float]:
        return meter_shares(self._share_weights(bottleneck), 1.0)
