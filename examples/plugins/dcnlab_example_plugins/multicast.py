"""A multicast router: shortest-path trees, first free color, no merging."""

from __future__ import annotations

from itertools import islice

from dcnlab.multicast import Placement, TreeRouter

ROOTS_TRIED = 64
"""Root choices tried per group, least-loaded TNs first (a paper-scale fabric has 1,536)."""


class ShortestPathTrees(TreeRouter):
    """Shortest-path trees: each group at its members' lowest common ancestor, on the least-loaded TNs, in
    the first color free on every link; refused when none of 64 roots has one (no merging, unlike C-MR4LMS)."""

    def place(self, mgid, members):
        for tnid, x in islice(self.roots(members), ROOTS_TRIED):
            free = self.free_colors(members, tnid, x)
            if free:
                return Placement(tnid, x, free[0])
        return None
