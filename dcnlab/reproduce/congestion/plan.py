"""What ``dcnlab plan congestion`` computes: the tenant policy's per-flow ``CCTI_Increase`` and ``CCTI_Timer``,
target shares and meter rates on one bottleneck, and with ``model`` the fluid model's predicted shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcnlab.controller.congestion.params import TimerMode


def _predict(policy: Any, specs: list[tuple[str, float, int]], seconds: float,
             timer_mode: TimerMode) -> dict[str, Any]:
    """Model shares for the policy's values; flows start at their target rate (warm start)."""
    from dcnlab.controller.congestion.cct import Cct
    from dcnlab.controller.congestion.fluid import FlowDef, ModelConfig, simulate
    from dcnlab.controller.congestion.params import HcaParams

    size = 4096
    cfg = ModelConfig(cct=Cct.paper(size), sample_s=min(0.05, seconds / 4))
    target = policy.target_flow_shares()
    flows = [FlowDef(f, n, params=HcaParams(ccti_increase=policy.increase(f), ccti_timer=policy.timer(f),
                                            ccti_limit=size - 1, timer_mode=timer_mode),
                     initial_ccti=cfg.cct.index_for_rate(target[f] * cfg.link.rate_bps))
             for n, _, k in specs for f in (f"{n}.f{j}" for j in range(k))]
    r = simulate(flows, seconds, cfg)
    rates = r.mean_rates(seconds / 2, seconds)
    total = float(rates.sum())
    shares = {n: float(rates[[i for i, t in enumerate(r.tenants) if t == n]].sum()) / total for n, _, _ in specs}
    return {"shares": shares, "utilization": total / r.link_bps}


def plan(specs: list[tuple[str, float, int]], rate_bps: float, seconds: float, timer_mode: TimerMode,
         model: bool) -> dict[str, Any]:
    """The policy of tenants ``specs`` (name, weight, flows) on a bottleneck of ``rate_bps``: one row per tenant,
    with the model's share over ``seconds`` of IB time when ``model``."""
    from dcnlab.controller.congestion.policy import FlowSpec, Tenant, TenantPolicy

    policy = TenantPolicy([Tenant(n, w) for n, w, _ in specs], bottleneck_rates={"bottleneck": rate_bps})
    policy.add_flows(FlowSpec(f"{n}.f{j}", n) for n, _, k in specs for j in range(k))
    incs = policy.increases()
    targets = policy.target_shares()
    meters = {m.tenant: m for m in policy.meter_rates()}
    data: dict[str, Any] = {"rate_bps": rate_bps, "tenants": []}
    predicted = _predict(policy, specs, seconds, timer_mode) if model else None
    for n, w, k in specs:
        row = {"tenant": n, "weight": w, "flows": k, "ccti_increase": incs[f"{n}.f0"],
               "ccti_timer": policy.timer(f"{n}.f0"),
               "target_share": targets[n], "meter_bps": meters[n].rate_bps, "meter_burst_bytes": meters[n].burst_bytes}
        if predicted is not None:
            row["model_share"] = predicted["shares"][n]
        data["tenants"].append(row)
    if predicted is not None:
        data["model_utilization"] = predicted["utilization"]
    return data
