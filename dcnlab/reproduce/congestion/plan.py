"""What ``dcnlab plan congestion`` computes: the tenant policy's per-flow ``CCTI_Increase`` and ``CCTI_Timer``,
target shares and meter rates on one bottleneck, and with ``model`` the fluid model's predicted shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcnlab.controller.congestion.params import TimerMode


def _predict(policy: Any, specs: list[tuple[str, float, int]], seconds: float, timer_mode: TimerMode,
             values: dict[str, tuple[int, int]], target: dict[str, float] | None) -> dict[str, Any]:
    """Model shares for the policy's values; flows start at their target rate (warm start) when the policy
    gives targets (meters), else at line rate."""
    from dcnlab.controller.congestion.cct import Cct
    from dcnlab.controller.congestion.fluid import FlowDef, ModelConfig, simulate
    from dcnlab.controller.congestion.params import HcaParams

    size = 4096
    cfg = ModelConfig(cct=Cct.paper(size), sample_s=min(0.05, seconds / 4))
    flows = [FlowDef(f, n, params=HcaParams(ccti_increase=values[f][0], ccti_timer=values[f][1],
                                            ccti_limit=size - 1, timer_mode=timer_mode),
                     initial_ccti=None if target is None else cfg.cct.index_for_rate(target[f] * cfg.link.rate_bps))
             for n, _, k in specs for f in (f"{n}.f{j}" for j in range(k))]
    r = simulate(flows, seconds, cfg)
    rates = r.mean_rates(seconds / 2, seconds)
    total = float(rates.sum())
    shares = {n: float(rates[[i for i, t in enumerate(r.tenants) if t == n]].sum()) / total for n, _, _ in specs}
    return {"shares": shares, "utilization": total / r.link_bps}


def plan(specs: list[tuple[str, float, int]], rate_bps: float, seconds: float, timer_mode: TimerMode,
         model: bool, policy_name: str = "tenant-fair") -> dict[str, Any]:
    """The policy ``policy_name`` (:mod:`dcnlab.controller.congestion.registry`) for tenants ``specs`` (name, weight,
    flows) on a bottleneck of ``rate_bps``: one row per tenant, with the model's share over ``seconds`` of IB time
    when ``model``. A policy's target share is its meter's fraction of the bottleneck (the built-ins' own
    ``target_shares``). The policy is driven as ``reproduce congestion`` drives it
    (:class:`~dcnlab.controller.congestion.registry.PolicyRun`: its own ``add_flow`` for each flow, every value
    checked)."""
    from dcnlab.controller.congestion import registry
    from dcnlab.controller.congestion.params import ReceiverParams, SwitchParams
    from dcnlab.controller.congestion.policy import FlowSpec, Tenant

    algo = registry.get(policy_name)
    tenants = [Tenant(n, w) for n, w, _ in specs]
    run = registry.PolicyRun(algo, tenants, {"bottleneck": rate_bps}, switch=SwitchParams(),
                             receiver=ReceiverParams(), packet_bytes=1024)
    policy = run.policy
    flows = [FlowSpec(f"{n}.f{j}", n) for n, _, k in specs for j in range(k)]
    values = {u.flow: (u.ccti_increase, u.ccti_timer) for u in run.add(flows)}   # the last update of each flow
    meters = {m.tenant: m for m in run.meters()}
    missing = [f.flow for f in flows if f.flow not in values]
    if missing:
        raise registry.PluginError(f"congestion policy {algo.name}: no CCTI_Increase for flow {missing[0]}")
    if callable(getattr(policy, "target_shares", None)) and algo.builtin:
        targets = policy.target_shares()
    else:
        targets = {t: m.rate_bps / rate_bps for t, m in meters.items()}
    count = {n: k for n, _, k in specs}
    flow_targets = ({f.flow: targets[f.tenant] / count[f.tenant] for f in flows}
                    if all(n in targets for n in count) else None)
    data: dict[str, Any] = {"rate_bps": rate_bps, "policy": algo.name, "origin": algo.origin, "tenants": []}
    predicted = _predict(policy, specs, seconds, timer_mode, values, flow_targets) if model else None
    for n, w, k in specs:
        m = meters.get(n)
        row = {"tenant": n, "weight": w, "flows": k, "ccti_increase": values[f"{n}.f0"][0],
               "ccti_timer": values[f"{n}.f0"][1], "target_share": targets.get(n, 0.0),
               "meter_bps": m.rate_bps if m else 0.0, "meter_burst_bytes": m.burst_bytes if m else 0}
        if predicted is not None:
            row["model_share"] = predicted["shares"][n]
        data["tenants"].append(row)
    if predicted is not None:
        data["model_utilization"] = predicted["utilization"]
    return data
