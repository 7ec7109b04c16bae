"""Per-link counters from the switch-side interfaces' own statistics (any P4 program), and link state.

One ``ip -s -j link show`` in the run's namespace gives every interface's counters at once. On a link
between two switches, what ``a`` sent to ``b`` is ``a``'s TX on that port; on a host link, what the
host sent is the switch end's RX (the host side lives in the host's namespace). Used by
``dcnlab.Network.link_bytes`` and by the live view (:mod:`dcnlab.view`).

Link state from ``tc -j qdisc show``: a link cut with ``drop`` has ``pfifo limit 0`` as its root
qdisc (:mod:`dcnlab.emu.faults`), one cut with ``down`` an interface that is not up, a shaped one a
``tbf``/``netem``/``htb`` root (:mod:`dcnlab.emu.links`).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable, Mapping
from typing import Any

from dcnlab.emu.netns import command
from dcnlab.topos.model import Fabric, Link

Stats = dict[str, dict[str, Any]]
"""ifname -> ``{"rx": {...}, "tx": {...}, "up": bool}`` as iproute2 prints it (``stats64``)."""

SHAPING_QDISCS = ("tbf", "netem", "htb")


def parse_link_stats(text: str) -> Stats:
    """``ip -s -j link show``'s JSON -> per interface its rx/tx counters and whether it is up."""
    out: Stats = {}
    for d in json.loads(text or "[]"):
        s = d.get("stats64", d.get("stats", {}))
        out[d["ifname"]] = {"rx": s.get("rx", {}), "tx": s.get("tx", {}), "up": "UP" in d.get("flags", ["UP"])}
    return out


def interface_stats(netns: str) -> Stats:
    out = subprocess.run(command(netns, "ip", "-s", "-j", "link", "show"), capture_output=True, text=True,
                         check=True).stdout
    return parse_link_stats(out)


def intf_name(node: str, port: int) -> str:
    """How dcnlab names a node's interface: ``<node>-eth<port>`` (the one place; :func:`node_of` reads it back)."""
    return f"{node}-eth{port}"


INTERFACE = re.compile(r"^(?P<node>[A-Za-z][\w.]*)-eth\d+$")
"""An interface name as :func:`intf_name` makes it."""


def node_of(interface: str) -> str | None:
    """The node an interface named by :func:`intf_name` belongs to; None for any other name."""
    m = INTERFACE.match(interface)
    return m["node"] if m else None


def directions(fabric: Fabric, link: Link) -> list[tuple[str, str, str, str]]:
    """``(from, to, interface, "tx"|"rx")``: where each direction of ``link`` is counted."""
    out = []
    for x, xp, y, yp in ((link.a, link.a_port, link.b, link.b_port), (link.b, link.b_port, link.a, link.a_port)):
        if fabric.node(x).forwards:
            out.append((x, y, intf_name(x, xp), "tx"))
        elif fabric.node(y).forwards:
            out.append((x, y, intf_name(y, yp), "rx"))
    return out


def link_counters(fabric: Fabric, stats: Stats, what: str, links: Iterable[Link] | None = None
                  ) -> dict[tuple[str, str], int]:
    """``{(a, b): counter}`` of ``what`` (``bytes``, ``packets``, ``dropped``) sent from a to b."""
    result: dict[tuple[str, str], int] = {}
    for l in fabric.links() if links is None else links:
        for x, y, dev, side in directions(fabric, l):
            result[(x, y)] = int(stats.get(dev, {}).get(side, {}).get(what, 0))
    return result


def parse_qdiscs(text: str) -> dict[str, str]:
    """``tc -j qdisc show``'s JSON -> interface -> ``cut`` (pfifo limit 0) or ``shaped``; others left out."""
    out: dict[str, str] = {}
    for q in json.loads(text or "[]"):
        if not q.get("root"):
            continue
        dev, kind = q.get("dev", ""), q.get("kind", "")
        if kind == "pfifo" and int(q.get("options", {}).get("limit", -1)) == 0:
            out[dev] = "cut"
        elif kind in SHAPING_QDISCS:
            out[dev] = "shaped"
    return out


def qdisc_state(netns: str) -> dict[str, str]:
    out = subprocess.run(command(netns, "tc", "-j", "qdisc", "show"), capture_output=True, text=True).stdout
    return parse_qdiscs(out)


def link_state(fabric: Fabric, stats: Stats, qdiscs: Mapping[str, str], link: Link) -> str:
    """``cut``, ``shaped`` or ``up`` from the switch-side ends' qdiscs and flags."""
    ends = [intf_name(n, p) for n, p in ((link.a, link.a_port), (link.b, link.b_port)) if fabric.node(n).forwards]
    if any(qdiscs.get(e) == "cut" or (e in stats and not stats[e]["up"]) for e in ends):
        return "cut"
    return "shaped" if any(qdiscs.get(e) == "shaped" for e in ends) else "up"
