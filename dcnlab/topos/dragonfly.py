"""Dragonfly(p,a,h): g = a·h+1 groups of a routers, each group a complete graph,
p hosts per router and exactly one global link between every pair of groups.

Global-link arrangements of Dragonfly CISTs (Bian et al.), §2.2, in *corrected* forms (the
printed set formulas contradict the paper's own examples; these reproduce every one of them):

* relative: router k of group i links to router a-1-k of groups
  (i + h·k + t) mod g, t = 1..h.
* absolute: group i's global ports q = 0..ah-1 go to groups 0..g-1 in increasing
  order skipping i (q if q < i else q+1); router k owns ports kh..kh+h-1.
  Equivalently the link between groups x < y joins router ⌊(y-1)/h⌋ of x to router ⌊x/h⌋ of y.
* circulant (h even): router k of group i links to router k of groups (i ± δ) mod g,
  δ = k·h/2+1 … (k+1)·h/2.

Ports of router ``s<i>_<j>``: 0..p-1 hosts ``h<i>_<j>_<x>``; p+l local links
(l = j' if j' < j else j'-1 for router j'); p+a-1+t the t-th global link (t from 0,
in the order listed above: relative by t, absolute by q, circulant +δ then -δ by rising δ).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dcnlab.topos.addressing import MAX_HOSTS
from dcnlab.topos.errors import SpecError, check_range
from dcnlab.topos.model import Fabric, Link, Node, Role, parse_name

ARRANGEMENTS = ("relative", "absolute", "circulant")


@dataclass(frozen=True)
class Dragonfly(Fabric):
    p: int = 1
    a: int = 4
    h: int = 2
    arrangement: str = "relative"
    kind = "dragonfly"

    def __post_init__(self) -> None:
        check_range("dragonfly", "p", self.p, 0)
        check_range("dragonfly", "a", self.a, 1)
        check_range("dragonfly", "h", self.h, 1)
        if self.arrangement not in ARRANGEMENTS:
            raise SpecError(f"dragonfly: parameter arrangement={self.arrangement!r} is invalid; "
                            f"valid: {', '.join(ARRANGEMENTS)}")
        if self.arrangement == "circulant" and self.h % 2:
            raise SpecError(f"dragonfly: arrangement=circulant needs an even h, got h={self.h}; "
                            f"valid: h = 2, 4, 6, ...")
        if self.p * self.num_routers > MAX_HOSTS:
            raise SpecError(f"dragonfly: p·a·g = {self.p * self.num_routers} hosts exceeds the address plan; "
                            f"valid: p·a·(a·h+1) <= {MAX_HOSTS}")

    @property
    def params(self) -> dict[str, int | str]:
        return {"p": self.p, "a": self.a, "h": self.h, "arrangement": self.arrangement}

    @property
    def g(self) -> int:
        return self.a * self.h + 1

    @property
    def num_routers(self) -> int:
        return self.a * self.g

    def counts(self) -> dict[Role, int]:
        c = {Role.SWITCH: self.num_routers}
        if self.p:
            c[Role.HOST] = self.p * self.num_routers
        return c

    def num_links(self) -> int:
        g, a = self.g, self.a
        return g * a * (a - 1) // 2 + g * (g - 1) // 2 + self.p * self.num_routers

    def router_diameter(self) -> int:
        return 3 if self.a >= 2 else 1

    def diameter(self) -> int | None:
        if not self.p:
            return None
        return self.router_diameter() + 2

    # -- global links ------------------------------------------------------------
    def global_peer(self, i: int, k: int, t: int) -> tuple[int, int, int]:
        """Far end (group, router, global-port index) of global port ``t`` of router k in group i."""
        h, g = self.h, self.g
        if self.arrangement == "relative":
            delta = h * k + t + 1
            y = (i + delta) % g
            back = g - delta
            far = (back - 1) // h
            return y, far, back - 1 - far * h
        if self.arrangement == "absolute":
            q = k * h + t
            y = q if q < i else q + 1
            q_back = i if i < y else i - 1
            return y, q_back // h, q_back % h
        half = h // 2
        delta = k * half + 1 + t // 2
        sign = 1 if t % 2 == 0 else -1
        y = (i + sign * delta) % g
        return y, k, 2 * (delta - k * half - 1) + (1 if sign == 1 else 0)

    def gateway(self, x: int, y: int) -> tuple[int, int]:
        """(router in group x, its global-port index) of the unique link from group x to group y."""
        if x == y:
            raise ValueError("a group has no global link to itself")
        h, g = self.h, self.g
        if self.arrangement == "relative":
            delta = (y - x) % g
            k = (delta - 1) // h
            return k, delta - 1 - k * h
        if self.arrangement == "absolute":
            q = y if y < x else y - 1
            return q // h, q % h
        half = h // 2
        d = (y - x) % g
        delta, plus = (d, True) if d <= self.a * half else (g - d, False)
        k = (delta - 1) // half
        return k, 2 * (delta - k * half - 1) + (0 if plus else 1)

    # -- ports -------------------------------------------------------------------
    def local_port(self, j: int, other: int) -> int:
        return self.p + (other if other < j else other - 1)

    def local_peer_of_port(self, j: int, port: int) -> int:
        l = port - self.p
        return l if l < j else l + 1

    def global_port(self, t: int) -> int:
        return self.p + self.a - 1 + t

    # -- names -------------------------------------------------------------------
    def router_name(self, i: int, j: int) -> str:
        return f"s{i}_{j}"

    def host_name(self, index: int) -> str:
        r, x = divmod(index, self.p)
        i, j = divmod(r, self.a)
        return f"h{i}_{j}_{x}"

    def host_attachment(self, index: int) -> tuple[str, int]:
        r, x = divmod(index, self.p)
        return self.router_name(*divmod(r, self.a)), x

    def _parse(self, name: str) -> tuple[str, tuple[int, ...]]:
        return parse_name(name, {"s": (self.g, self.a), "h": (self.g, self.a, self.p)})

    @property
    def router_ports(self) -> int:
        return self.p + self.a - 1 + self.h

    def node(self, name: str) -> Node:
        kind, nums = self._parse(name)
        if kind == "h":
            return Node(name, Role.HOST, nums, 1, "host")
        return Node(name, Role.SWITCH, nums, self.router_ports, "router")

    def nodes(self) -> Iterator[Node]:
        for i in range(self.g):
            for j in range(self.a):
                yield Node(self.router_name(i, j), Role.SWITCH, (i, j), self.router_ports, "router")
        for idx in range(self.p * self.num_routers):
            r, x = divmod(idx, self.p)
            i, j = divmod(r, self.a)
            yield Node(f"h{i}_{j}_{x}", Role.HOST, (i, j, x), 1, "host")

    def peer(self, name: str, port: int) -> tuple[str, int] | None:
        kind, nums = self._parse(name)
        if kind == "h":
            i, j, x = nums
            return (self.router_name(i, j), x) if port == 0 else None
        i, j = nums
        p, a = self.p, self.a
        if 0 <= port < p:
            return f"h{i}_{j}_{port}", 0
        if p <= port < p + a - 1:
            other = self.local_peer_of_port(j, port)
            return self.router_name(i, other), self.local_port(other, j)
        t = port - (p + a - 1)
        if 0 <= t < self.h:
            y, far, t_far = self.global_peer(i, j, t)
            return self.router_name(y, far), self.global_port(t_far)
        return None

    def links(self) -> Iterator[Link]:
        g, a = self.g, self.a
        for i in range(g):
            for j in range(a):
                for other in range(j + 1, a):
                    yield Link(self.router_name(i, j), self.local_port(j, other),
                               self.router_name(i, other), self.local_port(other, j))
        for x in range(g):
            for y in range(x + 1, g):
                kx, tx = self.gateway(x, y)
                ky, ty = self.gateway(y, x)
                yield Link(self.router_name(x, kx), self.global_port(tx), self.router_name(y, ky), self.global_port(ty))
        for idx in range(self.p * self.num_routers):
            r, x = divmod(idx, self.p)
            i, j = divmod(r, a)
            yield Link(self.router_name(i, j), x, f"h{i}_{j}_{x}", 0)
