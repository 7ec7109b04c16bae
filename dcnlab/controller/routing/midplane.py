"""Up/down routing on the 4-level midplane tree.

Down paths are unique (one path from any L0 to a given root, as C-MR4LMS (Chen et al.) requires).
Up choices: m L1s at L0, p TNs at L1, w L3s at L2; the primary is the
destination index mod the number of choices (deterministic spreading), the
others are ECMP alternatives.  A packet climbs only as far as the lowest
common level: L1 within a CN, L2 within a CN group (equal cn // w), else L3.
"""

from __future__ import annotations

from dcnlab.controller.routing.base import Router, Table, rotate
from dcnlab.topos.midplane import Midplane


class MidplaneRouter(Router):
    fabric: Midplane

    def table_for(self, node, dsts) -> Table:
        f = self.fabric
        q, m, p, w, t = f.q, f.m, f.p, f.w, f.terminals
        kind, nums = f._parse(node)
        out: Table = {}
        for d in dsts:
            l0, dx = divmod(d, t)
            dc, di = divmod(l0, q)
            if kind == "l0":
                c, i = nums
                out[d] = (dx,) if (dc, di) == (c, i) else rotate(list(range(t, t + m)), d)
            elif kind == "l1":
                c, _ = nums
                out[d] = (di,) if dc == c else rotate(list(range(q, q + p)), d)
            elif kind == "l2":
                _, g = nums
                out[d] = (dc % w,) if f.group_of(dc) == g else rotate(list(range(w, 2 * w)), d)
            else:
                out[d] = (f.group_of(dc),)
        return out
