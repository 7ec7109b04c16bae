"""Level model of the fat-trees C-MR4LMS runs on: member keys, link ids, node names and ports by label arithmetic.

C-MR4LMS (Chen et al.), Fig. 2, works on a 4-level fat tree built from midplanes: a CN holds q L0
and m L1 switches, a TN holds k L2 and w L3 switches, each L1 has p uplinks (so m·p TNs), and the p TNs
reached by L1 index j form *TN group* j.  :mod:`dcnlab.topos.midplane` implements a wiring inferred from the
paper's counts (it draws no wiring),
which gives every L0 exactly one path to any given root.  Everything the algorithms need follows from
that uniqueness: a multicast tree is the union of its members' up-paths to the root, so it is fully
described by

* the *key* of each member at each level: ``L0 = host // t``, ``CN = L0 // q``, ``CN group = CN // w``
  (CNs with equal ``cnid // w`` share one L2 per TN);
* the root level (the members' lowest common level) and the choice ``(tnid, x)`` of TN and top switch;
* ``uplink(level, key, tnid, x)``: the link id from the level-``level`` ancestor of ``key`` one level up.

**The k-ary fat-tree** (:mod:`dcnlab.topos.fattree`) maps onto the same model with three switch levels:
L0 = edge, L1 = aggregation, top = core.  A pod is a CN (q = m = k/2).  Core ``j·k/2 + u`` hangs off
aggregation ``j`` of every pod, so the p = k/2 cores above aggregation index ``j`` form TN group ``j``;
every core is a TN of its own with a single top switch (w = 1), and there is no L2 level, hence no
"same cnid/w" root rule: members in several pods are rooted at a core.  Theorem 1 holds unchanged
(m = k/2 conflict-free spanning trees per color, one per aggregation index).

Link ids are dense integers, grouped by level: terminal links first (id = host index), then L0–L1,
L1–L2 (fat-tree: aggregation–core) and, on the midplane tree, L2–L3.  :meth:`Hierarchy.link_ends`
turns an id back into ``(upper node, upper port, lower node, lower port)`` in the fabric's own names
and port numbers, which is what a data plane needs; tests check it against ``fabric.peer``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field

from dcnlab.topos.errors import UserError
from dcnlab.topos.fattree import FatTree
from dcnlab.topos.inputs import quote
from dcnlab.topos.midplane import Midplane
from dcnlab.topos.model import Fabric, Role


@dataclass(frozen=True)
class Hierarchy(ABC):
    """Label arithmetic of one fat-tree fabric, shared by every multicast algorithm here."""

    fabric: Fabric
    levels: int
    """Number of switch levels; the top level is ``levels - 1``."""
    t: int
    """Terminals per L0 switch."""
    divisors: tuple[int, ...]
    """``key[l+1] = key[l] // divisors[l]`` for the levels below the top (L0 per CN, CNs per CN group)."""
    m: int
    """L1 switches per CN = conflict-free spanning trees per color (Theorem 1)."""
    p: int
    """TNs per TN group (uplinks per L1)."""
    w: int
    """Top-level switches per TN (root candidates of the dynamic variant)."""
    num_tns: int
    num_hosts: int
    num_links: int
    link_base: tuple[int, ...] = field(repr=False)
    """First link id of each link level: terminal links, L0 uplinks, L1 uplinks, (L2 uplinks)."""
    _affine: dict[tuple[int, int, int], tuple[int, int]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def top(self) -> int:
        return self.levels - 1

    @property
    def num_switch_links(self) -> int:
        return self.num_links - self.num_hosts

    # -- member keys ----------------------------------------------------------
    def key(self, level: int, host: int) -> int:
        """The key of ``host``'s ancestors at ``level`` (< top): the same for all members iff they share them."""
        k = host // self.t
        for d in self.divisors[:level]:
            k //= d
        return k

    def tn_group(self, tnid: int) -> int:
        return tnid // self.p

    # -- links ----------------------------------------------------------------
    @abstractmethod
    def uplink(self, level: int, key: int, tnid: int, x: int) -> int:
        """Link id from the level-``level`` switch ``key`` to its parent in the tree rooted at (tnid, x)."""

    def affine(self, level: int, tnid: int, x: int) -> tuple[int, int]:
        """``(first, step)``: :meth:`uplink` of key ``k`` is ``first + k * step`` (cached)."""
        ab = self._affine.get((level, tnid, x))
        if ab is None:
            first = self.uplink(level, 0, tnid, x)
            ab = self._affine[(level, tnid, x)] = (first, self.uplink(level, 1, tnid, x) - first)
        return ab

    def uplinks(self, level: int, keys: Iterable[int], tnid: int, x: int) -> list[int]:
        """:meth:`uplink` of many keys of one level (the link id is affine in the key)."""
        first, step = self.affine(level, tnid, x)
        return [first + k * step for k in keys]

    @abstractmethod
    def link_ends(self, link: int) -> tuple[str, int, str, int]:
        """``(upper node, upper port, lower node, lower port)`` of link id ``link``."""

    def link_level(self, link: int) -> int:
        """-1 for a terminal link, else the level of the link's lower switch."""
        lvl = -1
        for base in self.link_base[1:]:
            if link >= base:
                lvl += 1
        return lvl

    # -- nodes ----------------------------------------------------------------
    @abstractmethod
    def node_name(self, level: int, key: int, tnid: int, x: int) -> str:
        """Name of the switch at ``level`` (key as in :meth:`key`; ignored at the top) of the tree (tnid, x)."""

    def host_name(self, host: int) -> str:
        return self.fabric.host_name(host)

    @abstractmethod
    def port_links(self, name: str) -> list[tuple[int, int]]:
        """``(port, link id)`` of every wired port of switch ``name``."""

    def host_index(self, name: str) -> int:
        """Host index of terminal ``name``; :class:`UserError` if the fabric has no such terminal."""
        try:
            node = self.fabric.node(name)
        except KeyError:
            raise UserError(f"unknown member {quote(name)}: {self.fabric.spec} has no such terminal "
                            f"(terminals are named like {self.fabric.host_name(0)!r})") from None
        if node.role is not Role.HOST:
            raise UserError(f"member {quote(name)} is a switch, not a terminal of {self.fabric.spec}")
        return self._host_index(node.label)

    @abstractmethod
    def _host_index(self, label: tuple[int, ...]) -> int: ...

    def top_candidates(self, tnid: int, scope: str) -> list[tuple[int, int]]:
        """Root choices ``(tnid, x)`` of the dynamic variant: the top switches of TN ``tnid`` (scope ``tn``)
        or of every TN in its TN group (scope ``group``), the formula's own TN first."""
        if scope == "tn":
            return [(tnid, x) for x in range(self.w)]
        g = self.tn_group(tnid)
        tns = [tnid] + [t for t in range(g * self.p, (g + 1) * self.p) if t != tnid]
        return [(t, x) for t in tns for x in range(self.w)]


@dataclass(frozen=True)
class MidplaneHierarchy(Hierarchy):
    q: int = 0
    k: int = 0

    @classmethod
    def build(cls, f: Midplane) -> MidplaneHierarchy:
        t, q, m, p, k, w = f.terminals, f.q, f.m, f.p, f.k, f.w
        tns = m * p
        hosts = f.cns * q * t
        b1 = hosts
        b2 = b1 + f.cns * q * m
        b3 = b2 + f.cns * m * p
        end = b3 + tns * k * w
        return cls(fabric=f, levels=4, t=t, divisors=(q, w), m=m, p=p, w=w, num_tns=tns, num_hosts=hosts,
                   num_links=end, link_base=(0, b1, b2, b3), q=q, k=k)

    def uplink(self, level: int, key: int, tnid: int, x: int) -> int:
        if level == 0:
            return self.link_base[1] + key * self.m + tnid // self.p
        if level == 1:
            return self.link_base[2] + (key * self.m + tnid // self.p) * self.p + tnid % self.p
        return self.link_base[3] + (tnid * self.k + key) * self.w + x

    def link_ends(self, link: int) -> tuple[str, int, str, int]:
        b = self.link_base
        q, m, p, w, t = self.q, self.m, self.p, self.w, self.t
        if link < b[1]:
            l0, x = divmod(link, t)
            c, i = divmod(l0, q)
            return f"l0_{c}_{i}", x, f"h{c}_{i}_{x}", 0
        if link < b[2]:
            l0, j = divmod(link - b[1], m)
            c, i = divmod(l0, q)
            return f"l1_{c}_{j}", i, f"l0_{c}_{i}", t + j
        if link < b[3]:
            cj, u = divmod(link - b[2], p)
            c, j = divmod(cj, m)
            return f"l2_{j * p + u}_{c // w}", c % w, f"l1_{c}_{j}", q + u
        tg, x = divmod(link - b[3], w)
        tn, g = divmod(tg, self.k)
        return f"l3_{tn}_{x}", g, f"l2_{tn}_{g}", w + x

    def node_name(self, level: int, key: int, tnid: int, x: int) -> str:
        if level == 0:
            return "l0_{}_{}".format(*divmod(key, self.q))
        if level == 1:
            return f"l1_{key}_{tnid // self.p}"
        if level == 2:
            return f"l2_{tnid}_{key}"
        return f"l3_{tnid}_{x}"

    def port_links(self, name: str) -> list[tuple[int, int]]:
        f: Midplane = self.fabric  # type: ignore[assignment]
        b = self.link_base
        q, m, p, w, t, k = self.q, self.m, self.p, self.w, self.t, self.k
        kind, (a, z) = name[:2], f.node(name).label
        if kind == "l0":
            l0 = a * q + z
            return [(x, l0 * t + x) for x in range(t)] + [(t + j, b[1] + l0 * m + j) for j in range(m)]
        if kind == "l1":
            return [(i, b[1] + (a * q + i) * m + z) for i in range(q)] + \
                [(q + u, b[2] + (a * m + z) * p + u) for u in range(p)]
        if kind == "l2":
            return [(r, b[2] + ((z * w + r) * m + a // p) * p + a % p) for r in range(w) if z * w + r < f.cns] + \
                [(w + x, b[3] + (a * k + z) * w + x) for x in range(w)]
        return [(g, b[3] + (a * k + g) * w + z) for g in range(k)]

    def _host_index(self, label: tuple[int, ...]) -> int:
        c, i, x = label
        return (c * self.q + i) * self.t + x


@dataclass(frozen=True)
class FatTreeHierarchy(Hierarchy):
    half: int = 0

    @classmethod
    def build(cls, f: FatTree) -> FatTreeHierarchy:
        h, k = f.half, f.k
        hosts = k * h * h
        b1 = hosts
        b2 = b1 + k * h * h
        end = b2 + k * h * h
        return cls(fabric=f, levels=3, t=h, divisors=(h,), m=h, p=h, w=1, num_tns=h * h, num_hosts=hosts,
                   num_links=end, link_base=(0, b1, b2), half=h)

    def uplink(self, level: int, key: int, tnid: int, x: int) -> int:
        h = self.half
        if level == 0:
            return self.link_base[1] + key * h + tnid // h
        return self.link_base[2] + (key * h + tnid // h) * h + tnid % h

    def link_ends(self, link: int) -> tuple[str, int, str, int]:
        b, h = self.link_base, self.half
        if link < b[1]:
            pod, rest = divmod(link, h * h)
            i, x = divmod(rest, h)
            return f"e{pod}_{i}", x, f"h{pod}_{i}_{x}", 0
        if link < b[2]:
            e, j = divmod(link - b[1], h)
            pod, i = divmod(e, h)
            return f"a{pod}_{j}", i, f"e{pod}_{i}", h + j
        pj, u = divmod(link - b[2], h)
        pod, j = divmod(pj, h)
        return f"c{j * h + u}", pod, f"a{pod}_{j}", h + u

    def node_name(self, level: int, key: int, tnid: int, x: int) -> str:
        if level == 0:
            return "e{}_{}".format(*divmod(key, self.half))
        if level == 1:
            return f"a{key}_{tnid // self.half}"
        return f"c{tnid}"

    def port_links(self, name: str) -> list[tuple[int, int]]:
        f: FatTree = self.fabric  # type: ignore[assignment]
        b, h = self.link_base, self.half
        node = f.node(name)
        if name[0] == "e":
            pod, i = node.label
            e = pod * h + i
            return [(x, e * h + x) for x in range(h)] + [(h + j, b[1] + e * h + j) for j in range(h)]
        if name[0] == "a":
            pod, j = node.label
            return [(i, b[1] + (pod * h + i) * h + j) for i in range(h)] + \
                [(h + u, b[2] + (pod * h + j) * h + u) for u in range(h)]
        jj, u = node.label
        return [(pod, b[2] + (pod * h + jj) * h + u) for pod in range(f.k)]

    def _host_index(self, label: tuple[int, ...]) -> int:
        pod, i, x = label
        return (pod * self.half + i) * self.half + x


def hierarchy_for(fabric: Fabric) -> Hierarchy:
    """The level model of ``fabric``; :class:`UserError` unless it is a midplane or k-ary fat-tree."""
    if isinstance(fabric, Midplane):
        return MidplaneHierarchy.build(fabric)
    if isinstance(fabric, FatTree):
        return FatTreeHierarchy.build(fabric)
    raise UserError(f"multicast: fabric {fabric.spec} is not a fat-tree; valid: midplane:... or fattree:k=...")
