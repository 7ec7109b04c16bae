"""The congestion policies: dcnlab's own and a user's, in one registry (:mod:`dcnlab.controller.registry`).

A policy is what the controller does with congestion control when tenants share a bottleneck: which
``CCTI_Increase`` and ``CCTI_Timer`` every flow's sender gets (CC mode), or which rate every tenant's meter
gets (meter mode), recomputed at every flow arrival and departure (IB CC partitioning (Zhang et al.), §5).

**Interface.** A policy is a callable ``make(tenants, *, bottleneck_rates, switch, receiver, packet_bytes)``
returning an object with ``add_flow(FlowSpec) -> [FlowUpdate]``, ``remove_flow(name) -> [FlowUpdate]`` and
``meter_rates() -> [MeterRate]`` (:mod:`~dcnlab.controller.congestion.policy`; subclassing
:class:`~dcnlab.controller.congestion.policy.TenantPolicy` and overriding ``_per_bottleneck`` or
``target_shares`` is the short way). A user's policies are found by the entry point group
``dcnlab.congestion`` or by ``--policy package.module:name``. ``make`` also gets ``base_timer`` (the senders'
``CCTI_Timer`` before any push) when it takes it (:data:`OPTIONAL`). Every update is checked before it is used
(:func:`check_updates`, :func:`check_meters`): IB field ranges (``CCTI_Increase`` 1..255, ``CCTI_Timer``
1..65535), known flows and tenants, meters above zero and within the bottleneck.

**Built-ins:** ``tenant-fair`` (the paper's: per-flow ``CCTI_Increase`` ∝ the tenant's flows / weight, so
every tenant gets its weighted share however many flows it opens) and ``per-flow`` (plain CC: every flow
alike, so a tenant's share grows with its flows; the baseline the paper improves on).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dcnlab.controller.congestion.policy import FlowUpdate, MeterRate, TenantPolicy, meter_shares
from dcnlab.controller.registry import Algorithm, PluginError, Registry, callable_check

INTERFACE = ("make(tenants, *, bottleneck_rates, switch, receiver, packet_bytes) -> a policy with "
             "add_flow(FlowSpec), remove_flow(name) -> [FlowUpdate] and meter_rates() -> [MeterRate]")
REGISTRY = Registry("congestion", INTERFACE, callable_check)


class PerFlowPolicy(TenantPolicy):
    """Plain CC: every flow the same CCTI_Increase (1), meters in proportion to each tenant's flows."""

    def _per_bottleneck(self) -> dict[str, dict[str, int]]:
        return {b: dict.fromkeys(self.tenant_flows(b), 1) for b in self.bottlenecks()
                if self.congested is None or b in self.congested}

    def target_shares(self, bottleneck: str = "bottleneck") -> dict[str, float]:
        counts = self.tenant_flows(bottleneck)
        return meter_shares({t: float(n) for t, n in counts.items()}, 1.0)


REGISTRY.add("tenant-fair", TenantPolicy, "the paper's tenant-fair partition: CCTI_Increase per flow ∝ the "
             "tenant's flows / weight (Zhang et al., §5)")
REGISTRY.add("per-flow", PerFlowPolicy, "plain CC: every flow alike, a tenant's share grows with its flows")


def get(name: str, what: str = "--policy") -> Algorithm:
    return REGISTRY.get(name, what)


OPTIONAL = ("base_timer",)
"""Keywords ``make`` gets only when it takes them (or ``**kwargs``): ``base_timer`` is the senders' CCTI_Timer
before any push (the BMv2 experiment's 20 or 30; the model's flows start at 150)."""


def _takes(obj: Any, name: str) -> bool:
    import inspect

    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)


def make_policy(algo: str | Algorithm, tenants: Sequence[Any], **kwargs: Any) -> Any:
    a = algo if isinstance(algo, Algorithm) else get(algo)
    kwargs = {k: v for k, v in kwargs.items() if k not in OPTIONAL or a.builtin or _takes(a.obj, k)}
    try:
        policy = a.obj(tenants, **kwargs)
    except Exception as e:
        if a.builtin:
            raise
        raise PluginError(f"congestion policy {a.name}: making it failed: {type(e).__name__}: {e}") from None
    missing = [m for m in ("add_flow", "remove_flow", "meter_rates") if not callable(getattr(policy, m, None))]
    if missing:
        raise PluginError(f"congestion policy {a.name}: it lacks {', '.join(missing)}; the interface: {INTERFACE}")
    return policy


def check_updates(name: str, updates: Iterable[Any], flows: Iterable[str]) -> list[FlowUpdate]:
    """``updates`` as a list, or one :class:`PluginError` naming the policy and the first bad update."""
    known = set(flows)
    out = list(updates)
    for u in out:
        if not isinstance(u, FlowUpdate):
            raise PluginError(f"congestion policy {name}: returned a {type(u).__name__}; valid: FlowUpdate")
        if u.flow not in known:
            raise PluginError(f"congestion policy {name}: an update for flow {u.flow!r}, which is not active")
        for field, value, hi in (("CCTI_Increase", u.ccti_increase, 255), ("CCTI_Timer", u.ccti_timer, 65535)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
                raise PluginError(f"congestion policy {name}: flow {u.flow}: {field}={value!r}; valid: 1..{hi} "
                                  "(the IB field)")
    return out


def check_meters(name: str, meters: Iterable[Any], tenants: Iterable[str],
                 rates: Mapping[str, float]) -> list[MeterRate]:
    """``meters`` as a list, or one :class:`PluginError`: unknown tenant, rate <= 0, or a bottleneck's meters
    adding up to more than its rate."""
    known = set(tenants)
    out = list(meters)
    total: dict[str, float] = {}
    for m in out:
        if not isinstance(m, MeterRate):
            raise PluginError(f"congestion policy {name}: returned a {type(m).__name__}; valid: MeterRate")
        if m.tenant not in known:
            raise PluginError(f"congestion policy {name}: a meter for tenant {m.tenant!r}; valid: "
                              f"{', '.join(sorted(known))}")
        if not m.rate_bps > 0:
            raise PluginError(f"congestion policy {name}: tenant {m.tenant}'s meter rate {m.rate_bps!r}; valid: > 0")
        total[m.bottleneck] = total.get(m.bottleneck, 0.0) + m.rate_bps
    for b, t in total.items():
        if b in rates and t > rates[b] * (1 + 1e-9):
            raise PluginError(f"congestion policy {name}: meters at {b} add up to {t:.4g} bit/s, more than its "
                              f"{rates[b]:.4g} bit/s")
    return out


__all__ = ["INTERFACE", "PerFlowPolicy", "REGISTRY", "check_meters", "check_updates", "get", "make_policy"]
