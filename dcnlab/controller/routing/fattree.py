"""Up/down shortest paths on the k-ary fat-tree.

Choice: like Al-Fares' two-level tables, the primary uplink is
(destination's position + this switch's position) mod k/2, so destinations
spread deterministically over the uplinks; all uplinks are ECMP alternatives.
"""

from __future__ import annotations

from dcnlab.controller.routing.base import Router, Table, rotate
from dcnlab.topos.fattree import FatTree


class FatTreeRouter(Router):
    fabric: FatTree

    def table_for(self, node, dsts) -> Table:
        f = self.fabric
        h = f.half
        kind, nums = f._parse(node)
        up = list(range(h, 2 * h))
        out: Table = {}
        for d in dsts:
            dp, rest = divmod(d, h * h)
            de, dx = divmod(rest, h)
            if kind == "e":
                pod, i = nums
                out[d] = (dx,) if (dp, de) == (pod, i) else rotate(up, dx + i)
            elif kind == "a":
                pod, j = nums
                out[d] = (de,) if dp == pod else rotate(up, dx + de + j)
            else:
                out[d] = (dp,)
        return out
