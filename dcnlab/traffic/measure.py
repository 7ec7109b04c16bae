"""Measurement: bytes per link from the switches' port counters, throughput per flow over time."""

from __future__ import annotations

from dataclasses import dataclass

from dcnlab.topos.model import Fabric, Link

IN_COUNTER = "DcnIngress.port_in"
OUT_COUNTER = "DcnEgress.port_out"


@dataclass(frozen=True)
class PortCount:
    packets: int = 0
    bytes: int = 0

    def __sub__(self, other: PortCount) -> PortCount:
        return PortCount(self.packets - other.packets, self.bytes - other.bytes)


@dataclass(frozen=True)
class CounterSnapshot:
    ingress: dict[tuple[str, int], PortCount]
    egress: dict[tuple[str, int], PortCount]

    def __sub__(self, other: CounterSnapshot) -> CounterSnapshot:
        z = PortCount()
        return CounterSnapshot({k: v - other.ingress.get(k, z) for k, v in self.ingress.items()},
                               {k: v - other.egress.get(k, z) for k, v in self.egress.items()})


def snapshot(controller) -> CounterSnapshot:
    """Read both port counters of every switch (concurrently, one wildcard read each)."""
    snaps = []
    for name in (IN_COUNTER, OUT_COUNTER):
        cells = controller.read_counters(name)
        snaps.append({(sw, c.index): PortCount(c.packets, c.bytes) for sw, cs in cells.items() for c in cs})
    return CounterSnapshot(*snaps)


@dataclass(frozen=True)
class LinkLoad:
    link: Link
    a_to_b: PortCount
    b_to_a: PortCount


def _direction(fabric: Fabric, snap: CounterSnapshot, src: str, src_port: int, dst: str, dst_port: int) -> PortCount:
    """Traffic src -> dst: the receiving switch's ingress counter, else the sending switch's egress."""
    if fabric.node(dst).forwards:
        return snap.ingress.get((dst, dst_port), PortCount())
    return snap.egress.get((src, src_port), PortCount())


def link_loads(fabric: Fabric, snap: CounterSnapshot) -> list[LinkLoad]:
    return [LinkLoad(l, _direction(fabric, snap, l.a, l.a_port, l.b, l.b_port),
                     _direction(fabric, snap, l.b, l.b_port, l.a, l.a_port)) for l in fabric.links()]


def flow_series(recv: dict, flow: int) -> list[tuple[float, float]]:
    """(seconds since receiver start, Mbit/s) per time bin for ``flow`` from a ``recv_stop`` reply."""
    f = recv["flows"].get(str(flow))
    if not f:
        return []
    width = recv["bin"]
    return [(b * width, byts * 8 / width / 1e6) for b, byts in f["bins"]]
