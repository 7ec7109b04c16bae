"""BCubeRouting and BuildPathSet (Guo et al., SIGCOMM'09) on server labels.

Choice: the default digit-correction permutation is k, k-1, …, 0 (highest differing
digit first), as BCubeRouting with the identity permutation.  Every other differing
digit is listed as an ECMP alternative: each hop corrects one digit, so any
order is shortest (2 × Hamming distance links).  A level-l switch delivers to the
server whose digit l equals the destination's digit l.
"""

from __future__ import annotations

from dcnlab.controller.routing.base import Router, Table
from dcnlab.topos.bcube import BCube


class BCubeRouter(Router):
    fabric: BCube

    def __init__(self, fabric: BCube) -> None:
        super().__init__(fabric)

    def _server_ports(self, i: int, d: int) -> tuple[int, ...]:
        f = self.fabric
        if i == d:
            return (f.k + 1,)
        return tuple(j for j in range(f.k, -1, -1) if f.digit(i, j) != f.digit(d, j))

    def table_for(self, node, dsts) -> Table:
        f = self.fabric
        kind, idx = node[0], int(node[1:])
        if kind == "v":
            return {d: self._server_ports(idx, d) for d in dsts}
        level = idx // f.switches_per_level
        return {d: (f.digit(d, level),) for d in dsts}

    # -- server-level paths -----------------------------------------------------
    def dc_routing(self, a: int, b: int, perm: list[int]) -> list[int]:
        """Servers visited correcting digits of ``a`` towards ``b`` in the order ``perm``."""
        f, path, cur = self.fabric, [a], a
        for j in perm:
            if f.digit(cur, j) != f.digit(b, j):
                cur = f.with_digit(cur, j, f.digit(b, j))
                path.append(cur)
        return path

    def path(self, a: int, b: int) -> list[int]:
        return self.dc_routing(a, b, list(range(self.fabric.k, -1, -1)))

    def parallel_paths(self, a: int, b: int) -> list[list[int]]:
        """BuildPathSet: k+1 server paths from a to b that share no intermediate server or switch.

        Path i starts by correcting dimension i and continues i-1, …, 0, k, …, i+1.
        Where a and b agree on digit i, the path detours through the neighbour of a
        in dimension i (digit i + 1 mod n) and restores digit i last (AltDCRouting)."""
        f = self.fabric
        if a == b:
            return []
        dims = f.k + 1
        paths = []
        for i in range(f.k, -1, -1):
            perm = [(i - t) % dims for t in range(dims)]
            if f.digit(a, i) != f.digit(b, i):
                paths.append(self.dc_routing(a, b, perm))
            else:
                c = f.with_digit(a, i, (f.digit(a, i) + 1) % f.n)
                paths.append([a] + self.dc_routing(c, b, perm[1:] + [i]))
        return paths

    def path_switches(self, servers: list[int]) -> list[str]:
        """The switch between each consecutive server pair of a server path."""
        f, out = self.fabric, []
        for u, v in zip(servers, servers[1:]):
            level = next(j for j in range(f.k + 1) if f.digit(u, j) != f.digit(v, j))
            out.append(f.switch_name(level, f.switch_of(u, level)))
        return out
