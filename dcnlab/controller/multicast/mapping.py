"""Static MGID → spanning-tree mapping of C-MR4LMS (Chen et al.), formulas (1)–(4).

Formula (2) survives in the text: ``spt_no = mgid mod (C·m)``.  Formulas (1) and (3) (spt_no → (color,
tnid)) and (4) (the fault-tolerant pair) are images missing from the extraction; the text constrains
them (root = first L3 switch of TN ``tnid``; roots of different colors spread over the TNs of one TN
group).  **Decision** — a reconstruction that meets every stated property:

    s     = mgid mod (C·m)
    color = s div m                # colors are contiguous MGID blocks (= MGID layers, Theorem 3)
    g     = s mod m                # TN group = the L1 index every CN uses for this tree
    tnid  = g·p + (color mod p)    # spread the colors over the p TNs of the group

Fault tolerance (formula (4)) splits the m spanning trees of each color into two halves and takes one
from each: with ``h = m div 2``, ``s = mgid mod (C·h)``, ``color = s div h``, ``g1 = s mod h`` and
``g2 = g1 + h``; ``tnid_i = g_i·p + color mod p``.  Both trees have the same color and are link-disjoint
above L0 because they use different L1 switches (and hence different TNs) everywhere.  With an odd m
the last L1 index is unused in dual mode; m = 1 cannot give two trees (:class:`UserError`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dcnlab.topos.errors import UserError


@dataclass(frozen=True)
class SptMapping:
    """MGID → (color, tnid) for one tree plane.

    ``plane`` is None for the ordinary single tree, 0 or 1 for the two trees of the fault-tolerant mode."""

    colors: int
    m: int
    p: int
    plane: int | None = None

    def __post_init__(self) -> None:
        if self.colors < 1:
            raise UserError(f"multicast: colors={self.colors} is out of range; valid: colors >= 1")
        if self.plane is not None and self.m < 2:
            raise UserError(f"multicast: dual trees need m >= 2 L1 switches per CN (here m={self.m})")

    @property
    def per_color(self) -> int:
        """Spanning trees per color available to this plane (m, or m div 2 in dual mode)."""
        return self.m if self.plane is None else self.m // 2

    @property
    def num_spts(self) -> int:
        """C·m conflict-free spanning trees (Corollary 1); C·m/2 per plane in dual mode."""
        return self.colors * self.per_color

    def spt_no(self, mgid: int) -> int:
        """Formula (2)."""
        return mgid % self.num_spts

    def color_group(self, mgid: int) -> tuple[int, int]:
        """(color, TN group g) of the spanning tree of ``mgid`` in this plane."""
        color, g = divmod(self.spt_no(mgid), self.per_color)
        if self.plane == 1:
            g += self.per_color
        return color, g

    def color_tnid(self, mgid: int) -> tuple[int, int]:
        """Formula (3) (and (4) per plane): the color and the root TN of ``mgid``'s spanning tree."""
        color, g = self.color_group(mgid)
        return color, g * self.p + color % self.p

    def mgid_for(self, color: int, index: int, round_: int = 0) -> int:
        """The ``round_``-th MGID whose spanning tree has ``color`` and TN-group slot ``index`` (< per_color)."""
        return round_ * self.num_spts + color * self.per_color + index


def dual_mappings(colors: int, m: int, p: int) -> tuple[SptMapping, SptMapping]:
    """The two planes of the fault-tolerant mode (formula (4))."""
    return SptMapping(colors, m, p, 0), SptMapping(colors, m, p, 1)
