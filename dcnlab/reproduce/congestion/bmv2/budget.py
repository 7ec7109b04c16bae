"""Offered against delivered, flow by flow: did a flow that got little of the bottleneck go unsent (its
sender starved of CPU) or was it sent and dropped (BMv2's egress FIFO)?

Every sender bins what it sent, how late its packets left after they were due and its longest gap between
two packets (:mod:`dcnlab.traffic.congestion_agent`, "Send timing"); the receiver bins what arrived, by the
kernel's arrival time. Over one window, per flow (:func:`flow_budgets`):

* ``due_pps``: what its host's NIC lets it send without CC, the NIC's rate over the host's flows active in the
  whole window (A and B of (a) share one NIC: half each);
* ``offered_pps``: what its sender sent; ``delivered_pps``: what arrived;
* ``fifo_share``: its share of the delivered packets over its share of the offered ones. A FIFO that shares by
  offered load gives 1 to every flow; a tail-drop FIFO fed by periodic senders locks onto their phases and
  gives some flows far less (plans.py, "Parking lot in (a)");
* ``late_ms_per_s`` and ``max_gap_ms``: how late the sender's packets left after they were due (ms per s of the
  window; a sender on time stays within the sleep's overshoot, about a tenth of a ms per packet) and its
  longest silence.

The cause (:func:`cause`) of a flow's share: ``sender`` when its sender offered less than
:data:`SENDER_SHORT` of what was due (the machine did not run its thread: the send timestamps say so, whatever
the queue did), else ``queue`` when its FIFO share is under :data:`FIFO_STARVED` (sent in full, dropped at
BMv2's queue), else ``served``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from dcnlab.controller.congestion import scenarios as sc

SENDER_SHORT = 0.9
"""A sender that sent less than this fraction of what its NIC let it send was starved of CPU."""
FIFO_STARVED = 0.5
"""A flow that got less than this fraction of its offered share of the delivered packets was starved by the
queue (tail drop), not by its sender."""
CAUSES = ("served", "sender", "queue")


@dataclass(frozen=True)
class FlowBudget:
    """One flow over one window (module docstring): packets/s due, offered and delivered, and why."""

    flow: str
    host: int
    due_pps: float
    offered_pps: float
    delivered_pps: float
    fifo_share: float
    late_ms_per_s: float
    max_gap_ms: float
    cause: str

    def row(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) and math.isfinite(v) else v) for k, v in asdict(self).items()}


def cause(offered_pps: float, due_pps: float, fifo_share: float) -> str:
    """``sender``, ``queue`` or ``served`` (module docstring)."""
    if due_pps > 0 and offered_pps < SENDER_SHORT * due_pps:
        return "sender"
    if fifo_share < FIFO_STARVED:
        return "queue"
    return "served"


def _in(rows: Any, b0: int, b1: int) -> list[list[Any]]:
    return [r for r in rows or () if b0 <= r[0] < b1]


def flow_budgets(plan: sc.Scenario, senders: Mapping[str, Mapping[str, Any]],
                 receivers: Mapping[str, Mapping[str, Any]], window: tuple[float, float], bin_s: float,
                 nic_pps: float) -> dict[str, FlowBudget]:
    """Every flow of ``plan`` over ``window`` (emulated s from the run's epoch), from the agents' replies:
    ``senders`` by flow name (``congestion.flow_stop``), ``receivers`` by port (``congestion.recv_stop``, flows by
    the flow's id, its 1-based place in ``plan.flows``); routes from ``plan.meta["routes"]`` (sender slot, port)."""
    t0, t1 = window
    span = t1 - t0
    if not span > 0:
        raise ValueError(f"window {window} is empty")
    b0, b1 = round(t0 / bin_s), round(t1 / bin_s)
    routes = plan.meta["routes"]
    active = {f.name for f in plan.flows if f.start_s <= t0 and f.stop_s >= t1}
    per_host: dict[int, int] = {}
    for name in active:
        per_host[routes[name][0]] = per_host.get(routes[name][0], 0) + 1
    offered, delivered, late, gap = {}, {}, {}, {}
    for i, f in enumerate(plan.flows):
        sbins = _in((senders.get(f.name) or {}).get("bins"), b0, b1)
        offered[f.name] = sum(r[1] for r in sbins) / span
        late[f.name] = sum(r[4] for r in sbins if len(r) > 4) / span
        gap[f.name] = max((r[5] for r in sbins if len(r) > 5), default=math.nan)
        rec = (receivers.get(str(routes[f.name][1])) or {}).get("flows", {}).get(str(i + 1)) or {}
        delivered[f.name] = sum(r[1] for r in _in(rec.get("bins"), b0, b1)) / span
    tot_off = sum(offered[name] for name in active)
    tot_del = sum(delivered[name] for name in active)
    out = {}
    for f in plan.flows:
        host = routes[f.name][0]
        due = nic_pps / per_host[host] if f.name in active else 0.0
        share = ((delivered[f.name] / tot_del) / (offered[f.name] / tot_off)
                 if tot_del > 0 and offered[f.name] > 0 and tot_off > 0 else math.nan)
        why = cause(offered[f.name], due, share) if f.name in active else "served"
        out[f.name] = FlowBudget(f.name, host, due, offered[f.name], delivered[f.name], share, late[f.name],
                                 gap[f.name], why)
    return out


def starved(budgets: Mapping[str, FlowBudget], cause_: str) -> list[str]:
    """The flows whose cause is ``cause_`` (``sender`` or ``queue``)."""
    if cause_ not in CAUSES:
        raise ValueError(f"cause {cause_!r}; valid: {', '.join(CAUSES)}")
    return [name for name, b in budgets.items() if b.cause == cause_]


def describe(budgets: Mapping[str, FlowBudget]) -> str:
    """One line: each flow's offered -> delivered packets/s and its cause where it is not ``served``."""
    return "; ".join(f"{n} {b.offered_pps:.0f}->{b.delivered_pps:.0f}" + ("" if b.cause == "served" else f" ({b.cause})")
                     for n, b in budgets.items() if b.due_pps > 0)
