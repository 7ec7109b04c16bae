"""The 4-level midplane fat-tree of C-MR4LMS (Chen et al.), Fig. 2.

Computing midplanes (CN) hold q L0 and m L1 switches; top midplanes (TN) hold
k L2 and w L3 switches; each L1 has p uplinks, so #TN = m·p and at most k·w CNs.
The paper leaves the wiring implicit; we infer one from its counts, which
gives every L0 exactly one path up to any given root:

* ``l0_<c>_<i>``: ports 0..t-1 to terminals, port t+j to ``l1_<c>_<j>``;
* ``l1_<c>_<j>``: port i to ``l0_<c>_<i>``, port q+u to TN j·p+u (u < p);
* ``l2_<tn>_<g>``: port r to CN g·w+r (CNs with equal c // w share an L2), port w+x to ``l3_<tn>_<x>``;
* ``l3_<tn>_<x>``: port g to ``l2_<tn>_<g>``;
* terminal ``h<c>_<i>_<x>`` (index (c·q+i)·t+x) on port x of ``l0_<c>_<i>``.

Defaults are the paper's instance: m=w=16, q=k=32, p=6, 64 CNs, 16 terminals
per L0 (7,680 switches, 32,768 terminals).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dcnlab.topos.addressing import MAX_HOSTS
from dcnlab.topos.errors import SpecError, check_range
from dcnlab.topos.model import Fabric, Link, Node, Role, parse_name

PAPER_INSTANCE = {"q": 32, "m": 16, "p": 6, "k": 32, "w": 16, "cns": 64, "terminals": 16}


@dataclass(frozen=True)
class Midplane(Fabric):
    q: int = 32
    m: int = 16
    p: int = 6
    k: int = 32
    w: int = 16
    cns: int = 64
    terminals: int = 16
    kind = "midplane"

    def __post_init__(self) -> None:
        for name in ("q", "m", "p", "k", "w", "terminals"):
            check_range("midplane", name, getattr(self, name), 1)
        check_range("midplane", "cns", self.cns, 1, self.k * self.w, "each TN has k·w CN ports")
        if self.cns * self.q * self.terminals > MAX_HOSTS:
            raise SpecError(f"midplane: cns·q·terminals = {self.cns * self.q * self.terminals} exceeds the "
                            f"address plan; valid: cns·q·terminals <= {MAX_HOSTS}")

    @property
    def params(self) -> dict[str, int | str]:
        return {n: getattr(self, n) for n in ("q", "m", "p", "k", "w", "cns", "terminals")}

    @property
    def num_tns(self) -> int:
        return self.m * self.p

    def counts(self) -> dict[Role, int]:
        return {Role.SWITCH: self.cns * (self.q + self.m) + self.num_tns * (self.k + self.w),
                Role.HOST: self.cns * self.q * self.terminals}

    def num_links(self) -> int:
        c, q, m, p, k, w, t = self.cns, self.q, self.m, self.p, self.k, self.w, self.terminals
        return c * q * t + c * q * m + c * m * p + m * p * k * w

    def diameter(self) -> int:
        if self.cns > self.w:
            return 8
        if self.cns >= 2:
            return 6
        if self.q >= 2:
            return 4
        return 2 if self.terminals >= 2 else 0

    # -- structure helpers -----------------------------------------------------
    def group_of(self, cn: int) -> int:
        """The L2 index shared by CN ``cn`` (CNs with equal cn // w share one L2 per TN)."""
        return cn // self.w

    def tn_of(self, l1: int, uplink: int) -> int:
        return l1 * self.p + uplink

    # -- names -----------------------------------------------------------------
    def host_name(self, index: int) -> str:
        l0, x = divmod(index, self.terminals)
        c, i = divmod(l0, self.q)
        return f"h{c}_{i}_{x}"

    def host_attachment(self, index: int) -> tuple[str, int]:
        l0, x = divmod(index, self.terminals)
        c, i = divmod(l0, self.q)
        return f"l0_{c}_{i}", x

    def _parse(self, name: str) -> tuple[str, tuple[int, ...]]:
        if name.startswith("h"):
            return parse_name(name, {"h": (self.cns, self.q, self.terminals)})
        tns = self.num_tns
        return parse_name(name, {"l0": (self.cns, self.q), "l1": (self.cns, self.m), "l2": (tns, self.k),
                                 "l3": (tns, self.w)}, sep="_")

    @staticmethod
    def _name(kind: str, nums: tuple[int, ...]) -> str:
        return ("h" if kind == "h" else kind + "_") + "_".join(str(v) for v in nums)

    def _make(self, kind: str, nums: tuple[int, ...]) -> Node:
        ports = {"h": 1, "l0": self.terminals + self.m, "l1": self.q + self.p,
                 "l2": 2 * self.w, "l3": self.k}[kind]
        role = Role.HOST if kind == "h" else Role.SWITCH
        return Node(self._name(kind, nums), role, nums, ports, "host" if kind == "h" else kind.upper())

    def node(self, name: str) -> Node:
        return self._make(*self._parse(name))

    def nodes(self) -> Iterator[Node]:
        for tn in range(self.num_tns):
            for x in range(self.w):
                yield self._make("l3", (tn, x))
        for tn in range(self.num_tns):
            for g in range(self.k):
                yield self._make("l2", (tn, g))
        for c in range(self.cns):
            for j in range(self.m):
                yield self._make("l1", (c, j))
        for c in range(self.cns):
            for i in range(self.q):
                yield self._make("l0", (c, i))
        for idx in range(self.counts()[Role.HOST]):
            l0, x = divmod(idx, self.terminals)
            yield self._make("h", (*divmod(l0, self.q), x))

    def peer(self, name: str, port: int) -> tuple[str, int] | None:
        kind, nums = self._parse(name)
        q, m, p, w, t = self.q, self.m, self.p, self.w, self.terminals
        if kind == "h":
            c, i, x = nums
            return (f"l0_{c}_{i}", x) if port == 0 else None
        if kind == "l0":
            c, i = nums
            if 0 <= port < t:
                return f"h{c}_{i}_{port}", 0
            if t <= port < t + m:
                return f"l1_{c}_{port - t}", i
            return None
        if kind == "l1":
            c, j = nums
            if 0 <= port < q:
                return f"l0_{c}_{port}", t + j
            if q <= port < q + p:
                return f"l2_{self.tn_of(j, port - q)}_{self.group_of(c)}", c % w
            return None
        if kind == "l2":
            tn, g = nums
            if 0 <= port < w:
                cn = g * w + port
                return (f"l1_{cn}_{tn // p}", q + tn % p) if cn < self.cns else None
            if w <= port < 2 * w:
                return f"l3_{tn}_{port - w}", g
            return None
        tn, x = nums
        return (f"l2_{tn}_{port}", w + x) if 0 <= port < self.k else None

    def links(self) -> Iterator[Link]:
        q, m, p, w, t = self.q, self.m, self.p, self.w, self.terminals
        for tn in range(self.num_tns):
            for g in range(self.k):
                for x in range(w):
                    yield Link(f"l3_{tn}_{x}", g, f"l2_{tn}_{g}", w + x)
        for c in range(self.cns):
            for j in range(m):
                for u in range(p):
                    yield Link(f"l2_{self.tn_of(j, u)}_{self.group_of(c)}", c % w, f"l1_{c}_{j}", q + u)
        for c in range(self.cns):
            for j in range(m):
                for i in range(q):
                    yield Link(f"l1_{c}_{j}", i, f"l0_{c}_{i}", t + j)
        for c in range(self.cns):
            for i in range(q):
                for x in range(t):
                    yield Link(f"l0_{c}_{i}", x, f"h{c}_{i}_{x}", 0)
