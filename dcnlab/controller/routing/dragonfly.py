"""Minimal Dragonfly routing: local, global, local (at most one global hop).

Routes are unique, so there are no ECMP alternatives.  "Minimal" is Kim et al.'s
sense: the fewest *global* hops (the direct link between the two groups).  A path
through a third group (two global hops) is sometimes shorter in links; minimal
routing does not take it, as in the Dragonfly paper and BookSim's ``min``."""

from __future__ import annotations

from dcnlab.controller.routing.base import Router, Table
from dcnlab.topos.dragonfly import Dragonfly


class DragonflyRouter(Router):
    fabric: Dragonfly

    def table_for(self, node, dsts) -> Table:
        f = self.fabric
        _, (i, j) = f._parse(node)
        out: Table = {}
        for d in dsts:
            r, dx = divmod(d, f.p)
            di, dj = divmod(r, f.a)
            if di == i:
                out[d] = (dx,) if dj == j else (f.local_port(j, dj),)
            else:
                k, t = f.gateway(i, di)
                out[d] = (f.global_port(t),) if k == j else (f.local_port(j, k),)
        return out
