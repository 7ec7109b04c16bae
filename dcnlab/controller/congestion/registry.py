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

from dcnlab.controller.congestion.policy import FlowSpec, FlowUpdate, MeterRate, TenantPolicy, meter_shares
from dcnlab.controller.registry import Algorithm, PluginError, Registry, at_most, callable_check, plugin_code

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
    with plugin_code(f"congestion policy {a.name}: making it failed", a.builtin):
        kwargs = {k: v for k, v in kwargs.items() if k not in OPTIONAL or a.builtin or _takes(a.obj, k)}
        policy = a.obj(tenants, **kwargs)
        missing = [m for m in ("add_flow", "remove_flow", "meter_rates") if not callable(getattr(policy, m, None))]
    if missing:
        raise PluginError(f"congestion policy {a.name}: it lacks {', '.join(missing)}; the interface: {INTERFACE}")
    return policy


def _batches(policy: Any) -> bool:
    """Whether ``add_flows(flows)`` is the same as ``add_flow`` for each flow: the policy's two methods are
    :class:`TenantPolicy`'s own (its ``add_flow`` is ``add_flows([flow])`` and the values depend on the flows
    only), whatever else it overrides. A policy with its own ``add_flow`` (or ``add_flows``) gets ``add_flow``."""
    cls = type(policy)
    return (getattr(cls, "add_flow", None) is TenantPolicy.add_flow
            and getattr(cls, "add_flows", None) is TenantPolicy.add_flows)


class PolicyRun:
    """A policy as ``plan congestion`` and ``reproduce congestion`` both drive it, one code path: made by
    :func:`make_policy`, told of flows arriving (:meth:`add`) and leaving (:meth:`remove`) through its own
    ``add_flow`` and ``remove_flow`` (``add_flows`` only where it is the same: :func:`_batches`), its meters read
    (:meth:`meters`); every call runs inside :func:`~dcnlab.controller.registry.plugin_code` and every result is
    checked (:func:`check_updates`, :func:`check_meters`), so whatever goes wrong is one :class:`PluginError`
    naming the policy."""

    def __init__(self, algo: str | Algorithm, tenants: Sequence[Any], rates: Mapping[str, float],
                 **kwargs: Any) -> None:
        self.algo = algo if isinstance(algo, Algorithm) else get(algo)
        self.tenants = [t.name for t in tenants]
        self.rates = dict(rates)
        self.policy = make_policy(self.algo, tenants, bottleneck_rates=self.rates, **kwargs)
        self.active: set[str] = set()
        self._what = f"congestion policy {self.algo.name}"

    def add(self, flows: Sequence[FlowSpec]) -> list[FlowUpdate]:
        """``flows`` arrive (in order); the checked updates of each arrival, in order."""
        out: list[FlowUpdate] = []
        with plugin_code(self._what, self.algo.builtin):
            if _batches(self.policy):
                self.active.update(f.flow for f in flows)
                return check_updates(self.algo.name, self.policy.add_flows(list(flows)), self.active)
            for f in flows:
                self.active.add(f.flow)
                out += check_updates(self.algo.name, self.policy.add_flow(f), self.active)
        return out

    def remove(self, flow: str) -> list[FlowUpdate]:
        """``flow`` leaves; the checked updates."""
        with plugin_code(self._what, self.algo.builtin):
            self.active.discard(flow)
            return check_updates(self.algo.name, self.policy.remove_flow(flow), self.active)

    def meters(self) -> list[MeterRate]:
        """The policy's meters now, checked."""
        with plugin_code(self._what, self.algo.builtin):
            return check_meters(self.algo.name, self.policy.meter_rates(), self.tenants, self.rates)


def check_updates(name: str, updates: Iterable[Any], flows: Iterable[str]) -> list[FlowUpdate]:
    """``updates`` as a list (read no further than one update per active flow: an endless generator is refused),
    or one :class:`PluginError` naming the policy and the first bad update."""
    known = flows if isinstance(flows, (set, frozenset)) else set(flows)
    out = at_most(updates, len(known), f"congestion policy {name}: the updates it returned",
                  f"at most one FlowUpdate per active flow ({len(known):,})")
    for u in out:
        if not isinstance(u, FlowUpdate):
            raise PluginError(f"congestion policy {name}: returned a {type(u).__name__}; valid: FlowUpdate")
        if not isinstance(u.flow, str) or u.flow not in known:
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
    out = at_most(meters, len(known) * max(len(rates), 1), f"congestion policy {name}: meter_rates()",
                  "at most one MeterRate per tenant and bottleneck")
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


__all__ = ["INTERFACE", "REGISTRY", "PerFlowPolicy", "PolicyRun", "check_meters", "check_updates", "get",
           "make_policy"]
