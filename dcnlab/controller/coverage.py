"""The fewest probes that exercise every forwarding entry, after ATPG.

ATPG (Zeng, Kazemian, Varghese and McKeown, "Automatic Test Packet Generation", CoNEXT 2012)
reads the rules of every switch, computes which rules each possible test packet exercises, and
picks the fewest test packets that exercise every rule with a greedy minimum set cover. Here the
rules are the entries dcnlab's controller writes (:mod:`dcnlab.controller.rules`): one
``ipv4_host`` entry per (switch, destination host) and one ``ecmp_member`` entry per member of
every ECMP group. A probe is a UDP datagram (source host, destination host, UDP source port) to
the probe port; the all-pairs check sends one per ordered host pair, n·(n−1).

Decisions:

* **The data plane is modelled exactly, hash included.** A probe visits, at each switch, the
  ``ipv4_host`` entry of its destination; a ``set_ecmp(base, count)`` entry sends it to member
  ``base + crc16(srcAddr, dstAddr, protocol, srcPort, dstPort) mod count`` (``p4src/forwarding.p4``).
  :func:`bmv2_crc16` is BMv2's ``crc16`` (``bm_sim/calculations.cpp``: CRC-16/ARC, polynomial
  0x8005 reflected, initial value 0, no final XOR) over the fields bit-packed in that order (13
  bytes). The hash is the same at every hop, so the ECMP choices along a path are *correlated*
  (on a fat-tree the edge and the aggregation switch pick the same member index); paths are
  therefore enumerated, never assumed independent, and some combinations never occur.
* **Candidates by residue class.** Routes depend only on the destination, so the path of a probe
  from any host behind forwarding node S to destination d is fixed by S, d and the hash h, and
  only through ``h mod count`` at each ECMP hop. A depth-first walk splits on ``h mod count`` and
  keeps the combined class ``h ≡ r (mod m)`` (Chinese remainder theorem); each consistent leaf
  that reaches d is one candidate probe. The source host and the UDP source port are chosen
  after the cover: any host behind S except d, and a source port whose hash falls in the class.
  One always exists: for fixed addresses and ports, CRC-16 maps the 16-bit source port onto the
  16-bit hash one to one. Ports already used by that host come first, so each host needs few
  sockets.
* **Greedy set cover** (ATPG's choice; within ln(max set size)+1 of the optimum, Chvátal 1979),
  with lazy gains (a candidate's gain only shrinks, so a popped gain that is still the largest is
  taken without rescanning everything). Ties go to the candidate found first (deterministic).
* **What cannot be confirmed** is named: an entry on no delivered path of any candidate (an
  ECMP member no destination's group reaches, an entry for a destination no route brings through
  that switch) is *uncoverable*; the emulated check (:mod:`dcnlab.emu.rulecheck`) reports
  entries whose every probe was lost as *unconfirmed*.

How many probes: a probe exercises one ``ipv4_host`` entry per switch it crosses, and every
switch holds one per host, so at least switches·hosts / (path length) probes are needed; on a
k-ary fat-tree an edge switch's entry for d is crossed only by probes that start behind it, so at
least (k²/2 − 1) per destination. The count grows as hosts·switches, about k/2 times below
all-pairs (the read-back of every table, :mod:`dcnlab.controller.runtime.readback`, is what
checks every entry's content; the probes confirm that the entries forward).
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from dcnlab.controller.routing import compute_forwarding, router_for
from dcnlab.controller.rules import NodeRules, node_rules
from dcnlab.controller.runtime.entities import TableEntry
from dcnlab.topos.model import Fabric, HostInfo

log = logging.getLogger(__name__)

UDP = 17
PROBE_PORT = 9999
"""The destination port of every probe (the receivers' port, as the all-pairs check's)."""
SPORT_BASE = 20000
"""The first UDP source port tried for a probe; the next ones follow."""
MAX_HOPS = 63
"""Forwarding nodes a probe crosses at most (Linux sends TTL 64; the program drops TTL <= 1)."""


# -- BMv2's crc16 --------------------------------------------------------------------------------
def _arc_table() -> list[int]:
    out = []
    for byte in range(256):
        c = byte
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
        out.append(c)
    return out


_CRC16 = _arc_table()


def bmv2_crc16(data: bytes, crc: int = 0) -> int:
    """BMv2's ``crc16`` of ``data`` (CRC-16/ARC: reflected 0x8005, init 0, no final XOR; the
    check value of ``b"123456789"`` is 0xBB3D). ``crc``: the value after a prefix, to continue it."""
    t = _CRC16
    for b in data:
        crc = (crc >> 8) ^ t[(crc ^ b) & 0xFF]
    return crc


def _prefix(src_ip: int, dst_ip: int) -> int:
    return bmv2_crc16(src_ip.to_bytes(4, "big") + dst_ip.to_bytes(4, "big") + bytes([UDP]))


def _ports_hash(prefix: int, sport: int, dport: int) -> int:
    t = _CRC16
    crc = prefix
    for b in (sport >> 8, sport & 0xFF, dport >> 8, dport & 0xFF):
        crc = (crc >> 8) ^ t[(crc ^ b) & 0xFF]
    return crc


def ecmp_hash(src_ip: int | str, dst_ip: int | str, sport: int, dport: int = PROBE_PORT) -> int:
    """The hash ``forwarding.p4`` computes for a UDP datagram (before ``mod count``)."""
    s, d = (int(ipaddress.IPv4Address(x)) if isinstance(x, str) else x for x in (src_ip, dst_ip))
    return _ports_hash(_prefix(s, d), sport, dport)


# -- the model ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RuleRef:
    """One installed entry, named by its switch."""

    switch: str
    entry: TableEntry

    def __str__(self) -> str:
        return f"{self.switch}: {self.entry}"


@dataclass(frozen=True)
class Walk:
    """Where one probe goes: the entries it exercises, in order, and whether it arrives."""

    entries: tuple[int, ...]
    nodes: tuple[str, ...]
    delivered: bool
    reason: str = ""


class Candidate(NamedTuple):
    """Probes from a host behind ``start`` to ``dst`` whose hash is ``residue`` mod ``modulus``."""

    start: str
    dst: int
    residue: int
    modulus: int
    entries: tuple[int, ...]


@dataclass(frozen=True)
class Probe:
    src: str
    dst: str
    sport: int
    entries: tuple[int, ...]
    """Entry ids (see :attr:`ProbePlan.rules`) the probe exercises, in path order."""
    path: tuple = ()
    """The candidate it realises: (start node, destination index, residue, modulus)."""


@dataclass
class ProbePlan:
    rules: list[RuleRef]
    """Every entry, by id."""
    probes: list[Probe]
    uncoverable: list[int]
    """Entry ids on no delivered path of any probe."""
    hosts: int
    candidates: int
    seconds: float = 0.0
    dport: int = PROBE_PORT

    @property
    def all_pairs(self) -> int:
        return self.hosts * (self.hosts - 1)

    @property
    def covered(self) -> int:
        return len(self.rules) - len(self.uncoverable)

    def summary(self) -> str:
        return (f"{len(self.probes):,} probes exercise {self.covered:,} of {len(self.rules):,} entries "
                f"(all-pairs: {self.all_pairs:,} probes); {len(self.uncoverable)} entr"
                f"{'y' if len(self.uncoverable) == 1 else 'ies'} no probe can exercise; "
                f"{self.candidates:,} candidates, planned in {self.seconds:.2f} s")


def _ip_int(value: object) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    return int(ipaddress.IPv4Address(str(value)))


def _crt(r: int, m: int, i: int, c: int) -> tuple[int, int] | None:
    """The class x ≡ r (mod m), x ≡ i (mod c) as (residue, lcm), or None if there is none."""
    g = math.gcd(m, c)
    if (r - i) % g:
        return None
    lcm = m // g * c
    x = r
    while x % c != i:
        x += m
    return x % lcm, lcm


class RuleModel:
    """The entries of every switch, and the paths probes take through them."""

    def __init__(self, fabric: Fabric, rules: Mapping[str, NodeRules], hosts: Sequence[HostInfo] | None = None):
        self.fabric = fabric
        self.node_rules: dict[str, NodeRules] = dict(rules)
        self.hosts: list[HostInfo] = list(hosts) if hosts is not None else list(fabric.hosts())
        self.rules: list[RuleRef] = []
        # switch -> dst ip -> (entry id, port or -1, ecmp base, ecmp count)
        self._host: dict[str, dict[int, tuple[int, int, int, int]]] = {}
        # switch -> member index -> (entry id, port)
        self._member: dict[str, dict[int, tuple[int, int]]] = {}
        for sw, nr in rules.items():
            ht = self._host[sw] = {}
            for e in nr.hosts:
                eid = self._add(sw, e)
                p = dict(e.params)
                dst = _ip_int(dict(e.match)[_only(e.match)])
                if "base" in p:
                    ht[dst] = (eid, -1, int(p["base"]), int(p["count"]))
                elif "port" in p:
                    ht[dst] = (eid, int(p["port"]), 0, 0)
                else:           # drop: the probe ends here
                    ht[dst] = (eid, -2, 0, 0)
            mt = self._member[sw] = {}
            for e in nr.ecmp:
                eid = self._add(sw, e)
                p = dict(e.params)
                mt[int(dict(e.match)[_only(e.match)])] = (eid, int(p["port"]) if "port" in p else -2)
        self._peer: dict[tuple[str, int], str] = {}
        forwarding = set()
        for n in fabric.forwarding_nodes():
            forwarding.add(n.name)
        self._forwards = forwarding
        for link in fabric.links():
            self._peer[(link.a, link.a_port)] = link.b
            self._peer[(link.b, link.b_port)] = link.a
        self._ip = {h.name: _ip_int(h.ip) for h in self.hosts}
        self._by_name = {h.name: h for h in self.hosts}
        self._by_index = {h.index: h for h in self.hosts}
        self._behind: dict[str, list[HostInfo]] = {}
        for h in self.hosts:
            self._behind.setdefault(h.node, []).append(h)
        self._cands: list[Candidate] | None = None

    def _add(self, switch: str, entry: TableEntry) -> int:
        self.rules.append(RuleRef(switch, entry))
        return len(self.rules) - 1

    @classmethod
    def from_routes(cls, fabric: Fabric, ecmp: bool = True, hosts: Sequence[HostInfo] | None = None) -> RuleModel:
        """The model of what dcnlab's controller writes on ``fabric`` (its own routing)."""
        return cls(fabric, routed_rules(fabric, ecmp), hosts)

    # -- one probe --------------------------------------------------------------------------------
    def walk(self, src: str, dst: str, sport: int, dport: int = PROBE_PORT) -> Walk:
        """The path of one probe, as the switches forward it."""
        h = ecmp_hash(self._ip[src], self._ip[dst], sport, dport)
        node = self._by_name[src].node
        dst_ip = self._ip[dst]
        entries: list[int] = []
        nodes: list[str] = []
        for _ in range(MAX_HOPS):
            nodes.append(node)
            hit = self._host.get(node, {}).get(dst_ip)
            if hit is None:
                return Walk(tuple(entries), tuple(nodes), False, f"{node} has no entry for {dst}")
            eid, port, base, count = hit
            entries.append(eid)
            if count:
                m = self._member.get(node, {}).get(base + h % count)
                if m is None:
                    return Walk(tuple(entries), tuple(nodes), False, f"{node} has no ECMP member {base + h % count}")
                entries.append(m[0])
                port = m[1]
            nxt = self._peer.get((node, port)) if port >= 0 else None
            if nxt is None:
                return Walk(tuple(entries), tuple(nodes), False, f"{node} drops or sends to unwired port {port}")
            if nxt == dst:
                return Walk(tuple(entries), tuple(nodes), True)
            if nxt not in self._forwards:
                return Walk(tuple(entries), tuple(nodes), False, f"{node} delivers to the wrong host {nxt}")
            node = nxt
        return Walk(tuple(entries), tuple(nodes), False, "loops")

    # -- every path -------------------------------------------------------------------------------
    def branches(self, start: str, dst: HostInfo) -> list[tuple[int, int, tuple[int, ...]]]:
        """Every delivered path from ``start`` to ``dst`` as (residue, modulus, entry ids): the probes
        whose hash is ``residue`` mod ``modulus`` take it."""
        dst_ip = self._ip[dst.name]
        out: list[tuple[int, int, tuple[int, ...]]] = []
        stack: list[tuple[str, int, int, tuple[int, ...], int]] = [(start, 0, 1, (), 0)]
        while stack:
            node, r, m, ents, hops = stack.pop()
            if hops >= MAX_HOPS:
                continue
            hit = self._host.get(node, {}).get(dst_ip)
            if hit is None:
                continue
            eid, port, base, count = hit
            if count:
                members = self._member.get(node, {})
                for i in range(count - 1, -1, -1):      # popped in member order
                    cls = _crt(r, m, i, count)
                    mem = members.get(base + i)
                    if cls is None or mem is None or cls[0] >= 1 << 16:    # the hash has 16 bits
                        continue
                    nxt = self._peer.get((node, mem[1])) if mem[1] >= 0 else None
                    self._step(stack, out, dst.name, nxt, cls[0], cls[1], ents + (eid, mem[0]), hops)
            else:
                nxt = self._peer.get((node, port)) if port >= 0 else None
                self._step(stack, out, dst.name, nxt, r, m, ents + (eid,), hops)
        return out

    def _step(self, stack, out, dst: str, nxt: str | None, r: int, m: int, ents: tuple[int, ...], hops: int) -> None:
        if nxt is None:
            return
        if nxt == dst:
            out.append((r, m, ents))
        elif nxt in self._forwards:
            stack.append((nxt, r, m, ents, hops + 1))

    def candidates(self) -> list[Candidate]:
        """Every distinct path from every forwarding node with hosts to every other host."""
        out = []
        for start, srcs in self._behind.items():
            for d in self.hosts:
                if len(srcs) == 1 and srcs[0].name == d.name:
                    continue
                for r, m, ents in self.branches(start, d):
                    out.append(Candidate(start, d.index, r, m, ents))
        return out

    # -- choosing probes -------------------------------------------------------------------------
    def sport_for(self, src: str, dst: str, residue: int, modulus: int, prefer: Iterable[int] = (),
                  dport: int = PROBE_PORT) -> int:
        """A UDP source port whose hash is ``residue`` mod ``modulus`` (``prefer``'s ports first)."""
        pre = _prefix(self._ip[src], self._ip[dst])
        for sp in prefer:
            if _ports_hash(pre, sp, dport) % modulus == residue:
                return sp
        for sp in range(SPORT_BASE, 1 << 16):
            if sp != dport and _ports_hash(pre, sp, dport) % modulus == residue:
                return sp
        for sp in range(1024, SPORT_BASE):
            if sp != dport and _ports_hash(pre, sp, dport) % modulus == residue:
                return sp
        raise ValueError(f"no source port from {src} to {dst} hashes to {residue} mod {modulus}")

    def probes_for(self, chosen: Sequence[Candidate], used: dict[str, list[int]] | None = None,
                   dport: int = PROBE_PORT) -> list[Probe]:
        """A concrete probe for each candidate: the least loaded eligible source behind its start node,
        and a source port, reusing ports the source already sends from (``used``, updated)."""
        used = {} if used is None else used
        load: dict[str, int] = {h.name: len(used.get(h.name, ())) for h in self.hosts}
        out = []
        for c in chosen:
            dst = self._by_index[c.dst]
            srcs = sorted((h for h in self._behind[c.start] if h.name != dst.name), key=lambda h: load[h.name])
            pick = None
            for s in srcs:       # a port the source already has a socket for, if any hashes right
                pre = _prefix(self._ip[s.name], self._ip[dst.name])
                sp = next((p for p in used.get(s.name, ()) if _ports_hash(pre, p, dport) % c.modulus == c.residue),
                          None)
                if sp is not None:
                    pick = (s, sp)
                    break
            if pick is None:
                s = srcs[0]
                sp = self.sport_for(s.name, dst.name, c.residue, c.modulus, dport=dport)
                used.setdefault(s.name, []).append(sp)
                pick = (s, sp)
            load[pick[0].name] += 1
            out.append(Probe(pick[0].name, dst.name, pick[1], c.entries, (c.start, c.dst, c.residue, c.modulus)))
        return out

    def plan(self, dport: int = PROBE_PORT) -> ProbePlan:
        """ATPG's greedy minimum set cover over every candidate probe."""
        t0 = time.perf_counter()
        cands = self.candidates()
        chosen, uncoverable = greedy_cover(len(self.rules), [c.entries for c in cands])
        plan = ProbePlan(self.rules, self.probes_for([cands[i] for i in chosen], dport=dport), uncoverable,
                         len(self.hosts), len(cands), dport=dport)
        self._cands = cands
        plan.seconds = time.perf_counter() - t0
        log.info("%s", plan.summary())
        return plan

    def alternatives(self, suspects: Iterable[int], avoid: Iterable[int] = (), exclude: Iterable[tuple] = (),
                     used: dict[str, list[int]] | None = None, dport: int = PROBE_PORT) -> list[Probe]:
        """Probes that localise faults (ATPG §5): for each suspect entry, the candidate through it that
        crosses the fewest other suspects and ``avoid`` entries (those are likely the broken ones),
        skipping candidates in ``exclude`` (``(start, dst, residue, modulus)``, already sent)."""
        cands = self._cands if self._cands is not None else self.candidates()
        self._cands = cands
        suspects = list(dict.fromkeys(suspects))
        bad = set(suspects) | set(avoid)
        done = set(exclude)
        through: dict[int, list[int]] = {e: [] for e in suspects}
        for i, c in enumerate(cands):
            for e in c.entries:
                if e in through:
                    through[e].append(i)
        chosen: list[Candidate] = []
        covered: set[int] = set()
        for e in suspects:
            if e in covered:
                continue
            best = min((i for i in through[e] if (cands[i].start, cands[i].dst, cands[i].residue, cands[i].modulus)
                        not in done), key=lambda i: sum(x in bad for x in cands[i].entries), default=None)
            if best is None:
                continue
            c = cands[best]
            done.add((c.start, c.dst, c.residue, c.modulus))
            chosen.append(c)
            covered.add(e)
        return self.probes_for(chosen, used, dport)


def routed_rules(fabric: Fabric, ecmp: bool = True) -> dict[str, NodeRules]:
    """Every switch's entries as dcnlab's controller computes them (:func:`~dcnlab.controller.rules.node_rules`)."""
    return {n: node_rules(t, ecmp) for n, t in compute_forwarding(router_for(fabric))}


def _only(match) -> str:
    (name, _), = match
    return name


def greedy_cover(universe: int, sets: Sequence[Sequence[int]]) -> tuple[list[int], list[int]]:
    """Greedy minimum set cover of elements ``0..universe-1``: the indexes of the chosen ``sets``
    (in the order taken) and the elements no set contains.

    Gains are kept exact: an element covered lowers the gain of every set that holds it (an
    inverted index), and sets wait in one bucket per gain (gains are small integers: entries per
    path), so each step takes a set of the highest gain in O(1). Ties go to the lowest index at
    first, then to the set whose gain changed last (deterministic)."""
    members = [tuple(set(s)) for s in sets]         # a path may cross one entry twice
    gain = [len(m) for m in members]
    holders: list[list[int]] = [[] for _ in range(universe)]
    for i, m in enumerate(members):
        for e in m:
            holders[e].append(i)
    top = max(gain, default=0)
    buckets: list[list[int]] = [[] for _ in range(top + 1)]
    for i in range(len(members) - 1, -1, -1):       # popped from the end: lowest index first
        if gain[i]:
            buckets[gain[i]].append(i)
    covered = bytearray(universe)
    chosen: list[int] = []
    g = top
    while g > 0:
        b = buckets[g]
        if not b:
            g -= 1
            continue
        i = b.pop()
        if gain[i] != g:            # stale: it waits in the bucket of its current gain too
            continue
        chosen.append(i)
        gain[i] = 0
        for e in members[i]:
            if covered[e]:
                continue
            covered[e] = 1
            for j in holders[e]:
                if gain[j] > 0:
                    gain[j] -= 1
                    if gain[j]:
                        buckets[gain[j]].append(j)
    return chosen, [e for e in range(universe) if not holders[e]]


@dataclass
class CoverCheck:
    """What a plan covers, checked independently of how it was made (tests, ``dcnlab bench``)."""

    exercised: set[int] = field(default_factory=set)
    undelivered: list[Probe] = field(default_factory=list)

    @classmethod
    def of(cls, model: RuleModel, plan: ProbePlan) -> CoverCheck:
        out = cls()
        for p in plan.probes:
            w = model.walk(p.src, p.dst, p.sport, plan.dport)
            if not w.delivered or w.entries != p.entries:
                out.undelivered.append(p)
            out.exercised.update(w.entries)
        return out
