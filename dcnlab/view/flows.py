"""Tenants' flows under congestion control as the page draws them (``/api/flows``).

A :class:`ViewFlow` is one flow of a tenant: its sender and receiver, its path over the fabric (node
names), its current rate and the CC state that sets it (the CCTI its sender paces at, and its tenant's
meter rate in meter mode). :func:`resolve_flows` turns them into drawn link ids (with the direction the
flow crosses each link), a colour index per tenant, and per tenant its rate and share of the bottleneck.

:func:`plan_flows` lays ``dcnlab plan congestion``'s tenants onto a fabric as the BMv2 experiment does
(:mod:`dcnlab.reproduce.congestion.bmv2.testbed`): host 0 is the receiver and its attachment link the
bottleneck, the senders are hosts 1, 2, ... in turn (a host sends several flows when there are more flows
than hosts). Choices where the plan says nothing (no paper gives a picture):

* a flow's rate is its tenant's share (the model's when ``--model`` ran, else the policy's target)
  split evenly over the tenant's flows, times the bottleneck rate;
* its CCTI is the CCT index whose pacing rate is at or below that rate (the paper's CCT, 4096 entries,
  1024-byte packets in aggregates of 4, as the model uses), so it is what the sender settles at;
* its path is a shortest path (networkx, fewest links) from sender to receiver: the experiment runs
  without ECMP, and on its fabrics (one or two switches) the shortest path is the only one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dcnlab.view.layout import link_index

PALETTE = 8
MAX_DRAWN_FLOWS = 256
"""Flows sent to the page (a 100,000-flow plan draws its first 256; its tenants' rates count every flow)."""
"""Tenant colours on the page (``t0``..``t7``); a ninth tenant takes the first colour again."""


@dataclass(frozen=True)
class ViewFlow:
    id: str
    tenant: str
    path: tuple[str, ...]
    """Node names from the sender to the receiver."""
    rate_bps: float
    ccti: int | None = None
    ccti_increase: int | None = None
    meter_bps: float | None = None
    """The tenant's meter rate (meter mode), None without a meter."""


@dataclass(frozen=True)
class ViewTenant:
    name: str
    weight: float = 1.0
    target_share: float | None = None
    meter_bps: float | None = None


def resolve_flows(flows: Sequence[ViewFlow], tenants: Sequence[ViewTenant], topo: dict[str, Any],
                  bottleneck: tuple[str, str] | None = None, bottleneck_bps: float | None = None,
                  note: str = "", sent: bool = False) -> dict[str, Any]:
    """The ``/api/flows`` object: per flow its drawn links ``[[id, forward], ...]`` (``forward``: it crosses
    the link from the link's ``a`` to its ``b``), rate and CC state; per tenant its colour, flows, rate and
    share of the bottleneck (rate / ``bottleneck_bps``; ``sent``: the rates are what the senders send, not
    what crosses the bottleneck, and the page says "sends"). On an aggregated drawing a flow's links are the
    bundles its hops fall in (hops inside one block are left out)."""
    block_of: dict[str, str] | None = topo.get("_block_of")
    ends = {l["id"]: (l["a"], l["b"]) for l in topo["links"]}
    if block_of is None:
        index = link_index(topo)
    else:
        index = {frozenset((l["a"], l["b"])): l["id"] for l in topo["links"]}

    def drawn(a: str, b: str) -> list[Any] | None:
        if block_of is not None:
            a, b = block_of.get(a, a), block_of.get(b, b)
            if a == b:
                return None
        i = index.get(frozenset((a, b)))
        return None if i is None else [i, ends[i][0] == a]

    names = [t.name for t in tenants] + sorted({f.tenant for f in flows} - {t.name for t in tenants})
    by_name = {t.name: t for t in tenants}
    out_flows, missing = [], []
    for f in flows[:MAX_DRAWN_FLOWS]:
        links = []
        for a, b in zip(f.path, f.path[1:]):
            d = drawn(a, b)
            if d is None:
                if block_of is None:
                    missing.append([a, b])
                continue
            links.append(d)
        out_flows.append({"id": f.id, "tenant": f.tenant, "colour": names.index(f.tenant) % PALETTE,
                          "src": f.path[0], "dst": f.path[-1], "links": links, "rate_bps": round(f.rate_bps, 1),
                          "ccti": f.ccti, "ccti_increase": f.ccti_increase, "meter_bps": f.meter_bps})
    out_tenants = []
    for i, n in enumerate(names):
        mine = [f for f in flows if f.tenant == n]
        rate = sum(f.rate_bps for f in mine)
        t = by_name.get(n, ViewTenant(n))
        out_tenants.append({"name": n, "colour": i % PALETTE, "flows": len(mine), "weight": t.weight,
                            "rate_bps": round(rate, 1),
                            "share": round(rate / bottleneck_bps, 4) if bottleneck_bps else None,
                            "target_share": t.target_share, "meter_bps": t.meter_bps})
    if len(flows) > MAX_DRAWN_FLOWS:
        note = (note + "; " if note else "") + f"the first {MAX_DRAWN_FLOWS} of {len(flows):,} flows drawn"
    neck = drawn(*bottleneck) if bottleneck is not None else None
    return {"flows": out_flows, "tenants": out_tenants, "missing": missing, "note": note, "sent": sent,
            "bottleneck": {"link": neck[0] if neck else None, "nodes": list(bottleneck) if bottleneck else None,
                           "rate_bps": bottleneck_bps}}


def shortest_path(fabric: Any, a: str, b: str) -> tuple[str, ...]:
    """Fewest links from ``a`` to ``b`` (breadth first over the fabric's ports)."""
    prev: dict[str, str | None] = {a: None}
    frontier = [a]
    while frontier and b not in prev:
        nxt = []
        for n in frontier:
            for port in range(fabric.node(n).ports):
                p = fabric.peer(n, port)
                if p is not None and p[0] not in prev:
                    prev[p[0]] = n
                    nxt.append(p[0])
        frontier = nxt
    if b not in prev:
        raise ValueError(f"no path from {a} to {b}")
    path, cur = [], b
    while cur is not None:
        path.append(cur)
        cur = prev[cur]
    return tuple(reversed(path))


def plan_flows(fabric: Any, data: dict[str, Any]) -> tuple[list[ViewFlow], list[ViewTenant], tuple[str, str], float]:
    """``dcnlab plan congestion``'s result (its ``--json`` object) as flows on ``fabric``: (flows, tenants,
    bottleneck link as a node pair, bottleneck rate in bit/s). See the module's docstring for the choices."""
    from dcnlab.controller.congestion.cct import Cct

    rate = float(data["rate_bps"])
    hosts = fabric.num_hosts()
    if hosts < 2:
        raise ValueError(f"{fabric.spec} has {hosts} host(s); a receiver and a sender are needed")
    receiver = fabric.host_name(0)
    switch = fabric.host_attachment(0)[0]
    cct = Cct.paper(4096)
    paths: dict[str, tuple[str, ...]] = {}
    flows, tenants, slot = [], [], 0
    for row in data["tenants"]:
        share = row.get("model_share", row["target_share"])
        per_flow = share * rate / row["flows"]
        tenants.append(ViewTenant(row["tenant"], row["weight"], row["target_share"], row.get("meter_bps")))
        for j in range(row["flows"]):
            sender = fabric.host_name(1 + slot % (hosts - 1))
            slot += 1
            if sender not in paths:
                paths[sender] = shortest_path(fabric, sender, receiver)
            flows.append(ViewFlow(f"{row['tenant']}.f{j}", row["tenant"], paths[sender], per_flow,
                                  cct.index_for_rate(per_flow, line_rate_bps=rate), row["ccti_increase"],
                                  row.get("meter_bps")))
    return flows, tenants, (switch, receiver), rate


PUBLISHED = "view-flows.json"
"""The file in a run directory where an experiment publishes its flows (``dcnlab view RUN_DIR`` reads it)."""


def published_flows(doc: dict[str, Any], fabric: Any, counts: dict[tuple[str, str], tuple[int, int]] | None,
                    before: dict[tuple[str, str], tuple[int, int]] | None, dt: float) -> dict[str, Any]:
    """The flows a running experiment published (:data:`PUBLISHED`: ``{"flows": [{"id", "tenant", "src",
    "dst", "ccti_increase"}], "tenants": [{"name", "meter_bps"}], "bottleneck": [switch, receiver],
    "bottleneck_bps"}``) with their current rates: a flow's rate is what its sender's host link carries
    towards the fabric (the interfaces' counters) over the flows that host sends, in bit/s of the
    emulated frames. Choice: the experiment's agents measure per flow only at the end of a run, so the
    live rate is the host link's, exact when a host sends one flow (the experiment's four senders do)."""
    per_host: dict[str, int] = {}
    for f in doc.get("flows", []):
        per_host[f["src"]] = per_host.get(f["src"], 0) + 1
    flows = []
    for f in doc.get("flows", []):
        rate = 0.0
        if counts is not None and before is not None and dt > 0:
            sw = fabric.peer(f["src"], 0)[0]          # the host's one link, at its switch's end
            now, old = counts.get((f["src"], sw), (0, 0)), before.get((f["src"], sw), (0, 0))
            rate = max(now[0] - old[0], 0) * 8 / dt / per_host[f["src"]]
        path = shortest_path(fabric, f["src"], f["dst"])
        flows.append(ViewFlow(str(f["id"]), str(f["tenant"]), path, rate, f.get("ccti"), f.get("ccti_increase"),
                              f.get("meter_bps")))
    tenants = [ViewTenant(str(t["name"]), float(t.get("weight", 1.0)), t.get("target_share"), t.get("meter_bps"))
               for t in doc.get("tenants", [])]
    neck = doc.get("bottleneck")
    note = str(doc.get("note", ""))[:200]
    note = (note + "; " if note else "") + "rates: what each sender sends (its host link), before a meter or the queue"
    return {"flows": flows, "tenants": tenants, "bottleneck": tuple(neck) if neck else None,
            "bottleneck_bps": doc.get("bottleneck_bps"), "note": note, "sent": True}

