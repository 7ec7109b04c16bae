"""A software reference model of p4src/aggregation.p4 over a fabric, for tests without BMv2.

``SimFabric`` holds the ``agg_route`` entries of installed :class:`JobProgram` objects per node and
one slot array per node, and carries frames hop by hop with ``fabric.peer``: exactly the decisions
the P4 program takes (same keys, same slot rules: stale, fresh, duplicate, saturating add, free on
completion). It counts the chunk frames crossing every directed link, and hands frames that reach a
host to that host's callback. ``loss`` drops a frame on a link with that probability (seeded).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from dcnlab.controller.aggregation.dataplane import JobProgram, RouteRule
from dcnlab.topos.model import Fabric
from dcnlab.traffic.aggregation_agent import (FRAME_SIZE, HEADER, HEADER_OFFSET, MAX_VALUE, OVERFLOW, RESULT, RETX,
                                       VALUES, VALUES_OFFSET, VECTOR)

MAX_HOPS = 64


@dataclass
class Slot:
    job: int = 0
    chunk: int = 0
    bitmap: int = 0
    flags: int = 0
    values: list[int] = field(default_factory=lambda: [0] * VALUES)


class SimFabric:
    def __init__(self, fabric: Fabric, loss: float = 0.0, seed: int = 0) -> None:
        self.fabric = fabric
        self.routes: dict[str, dict[tuple[int, int, int, int], RouteRule]] = defaultdict(dict)
        self.slots: dict[tuple[str, int], Slot] = defaultdict(Slot)
        self.links: Counter[tuple[str, str]] = Counter()
        self.first: Counter[tuple[str, str]] = Counter()
        """Frames with retx = 0 only: the trees' own traffic."""
        self.outcomes: Counter[str] = Counter()
        self.hosts: dict[str, Callable[[bytes], None]] = {}
        self.loss = loss
        self.rng = random.Random(seed)
        self.attach = {h.name: (h.node, h.node_port) for h in fabric.hosts()}

    def install(self, program: JobProgram) -> None:
        for r in program.rules():
            key = (r.job, r.tree, r.result, r.in_port)
            assert key not in self.routes[r.node], f"duplicate entry {r}"
            self.routes[r.node][key] = r

    def remove(self, program: JobProgram) -> None:
        for r in program.rules():
            del self.routes[r.node][(r.job, r.tree, r.result, r.in_port)]

    def inject(self, host: str, frame: bytes) -> None:
        node, port = self.attach[host]
        self._carry(host, node, port, bytes(frame))

    def _carry(self, src: str, node: str, port: int, frame: bytes) -> None:
        for _ in range(MAX_HOPS):
            self.links[(src, node)] += 1
            if not frame[HEADER_OFFSET + 10] & RETX:
                self.first[(src, node)] += 1
            if self.loss and self.rng.random() < self.loss:
                self.outcomes["lost"] += 1
                return
            if not self.fabric.node(node).forwards:
                self.hosts[node](frame[HEADER_OFFSET:])
                return
            out = self._process(node, port, bytearray(frame))
            if out is None:
                return
            frame, out_port = out
            peer = self.fabric.peer(node, out_port)
            assert peer is not None, f"{node} port {out_port} leads nowhere"
            src, (node, port) = node, peer
        raise AssertionError("a chunk looped")

    def _process(self, node: str, port: int, frame: bytearray) -> tuple[bytes, int] | None:
        if len(frame) != FRAME_SIZE:
            self.outcomes["malformed"] += 1
            return None
        job, tree, chunk, contributor, count, flags, _ = HEADER.unpack_from(frame, HEADER_OFFSET)
        if count > VALUES:
            self.outcomes["malformed"] += 1
            return None
        rule = self.routes[node].get((job, tree, 1 if flags & RESULT else 0, port))
        if rule is None:
            raise AssertionError(f"{node}: no entry for job {job} tree {tree} result {flags >> 7} port {port}")
        if rule.slots is None:
            self.outcomes["forwarded"] += 1
            return bytes(frame), rule.port
        bit = 1 << contributor if contributor < 32 else 0
        if not rule.expected & bit:
            self.outcomes["malformed"] += 1
            return None
        s = self.slots[(node, rule.slots.base + (chunk & rule.slots.mask))]
        stale = s.job == job and chunk < s.chunk
        if stale:
            self.outcomes["stale"] += 1
            return None
        if s.job != job or chunk > s.chunk or s.bitmap == 0:
            restart = s.job == job and chunk == s.chunk and s.bitmap == 0
            s.job, s.chunk, s.bitmap, s.flags, s.values = job, chunk, 0, 2 if restart else 0, [0] * VALUES
        if s.bitmap & bit:
            self.outcomes["duplicate"] += 1
            return None
        vals = VECTOR.unpack_from(frame, VALUES_OFFSET)
        for i in range(VALUES):
            v = vals[i] if i < count else 0
            s.values[i] = min(MAX_VALUE, s.values[i] + v)
        s.flags |= bool(flags & OVERFLOW) or MAX_VALUE in s.values   # bit 0 overflow, bit 1 aggregated again
        s.bitmap |= bit
        if s.bitmap != rule.expected:
            self.outcomes["added"] += 1
            return None
        self.outcomes["emitted"] += 1
        s.bitmap = 0
        new_flags = (RESULT if rule.final else 0) | (OVERFLOW if s.flags & 1 else 0) | (RETX if s.flags & 2 else 0)
        frame[HEADER_OFFSET:] = HEADER.pack(job, tree, chunk, rule.out_id, count, new_flags, 0) + \
            VECTOR.pack(*s.values)
        return bytes(frame), rule.port
