"""A block of an aggregated drawing opened into its members (``/api/block/ID``).

A fabric above :data:`~dcnlab.view.layout.MAX_DETAILED_NODES` nodes is drawn as blocks
(:mod:`dcnlab.view.blocks`). Clicking a block asks for its detail, and only its detail: the server never
sends the whole fabric. A block of at most :data:`MAX_OPEN` members opens into them (switches, servers,
hosts, by name); a bigger one into :data:`SPLIT` sub-blocks of consecutive members (in the fabric's own
order, so a BCube group's servers split by their next address digit), each of which opens the same way:
BCube(8,5)'s 32,768 servers of a group are three clicks from one server. A sub-block's id is its
block's with ``#i`` appended (``group3/server#2#5``).

The detail holds, relative to the opened block's centre, its children's positions (a grid of members, a
row of sub-blocks), the links between children (bundled with a count between sub-blocks) and the links
to the rest of the fabric, each to a ``chain``: the peer's block, its sub-blocks down to the one it would
open into, and the peer itself when that one opens into nodes (the page draws a link to the deepest of
these it currently shows). Per tree of the source that touches the block, which of these links it
crosses and its roles there.

Choices: links to the rest are bundled per child and peer *leaf block* (the deepest sub-block, not the
peer node) unless the block opens into nodes, so a split block's detail stays a few thousand entries
(peer nodes are named for a block of members only: at most ``MAX_OPEN`` x ports of them). Rates are not
sent for opened members: a fabric drawn as blocks is far above what one machine emulates, so its view
is always a plan (model backend).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from dcnlab.topos.model import Fabric

MAX_OPEN = 512
"""Members drawn one by one when a block opens; above this, it opens into sub-blocks."""
SPLIT = 8
"""Sub-blocks of a block too big to open into its members."""
CELL = 12.0
"""Drawing units between opened members (the page draws them small; zoom in to read their names)."""


class Opener:
    """The details of ``topo``'s blocks (an aggregated topology of ``fabric``), computed on demand and kept."""

    def __init__(self, fabric: Fabric, topo: dict[str, Any]) -> None:
        self.fabric = fabric
        self.block_of: dict[str, str] = topo["_block_of"]
        self.blocks = {n["id"]: n for n in topo["nodes"]}
        self._members: dict[str, list[str]] | None = None
        self._rank: dict[str, int] = {}
        self._cache: dict[str, dict[str, Any]] = {}
        self._leaf_at: dict[str, list[tuple[str, ...]]] = {}

    def _index(self) -> dict[str, list[str]]:
        if self._members is None:        # one pass over every node, on the first opening only
            members: dict[str, list[str]] = defaultdict(list)
            for name, b in self.block_of.items():
                lst = members[b]
                self._rank[name] = len(lst)
                lst.append(name)
            self._members = dict(members)
        return self._members

    def span(self, block_id: str) -> tuple[str, int, int] | None:
        """(top block, first rank, end rank) of a block or sub-block id; None if there is none."""
        top, *path = block_id.split("#")
        if top not in self.blocks:
            return None
        lo, hi = 0, len(self._index()[top])
        steps = [str(i) for i in range(SPLIT)]
        for step in path:        # a step is one of "0".."7" as written (not "²", "03" or a thousand digits)
            if step not in steps or hi - lo <= MAX_OPEN:
                return None
            lo, hi = _child(lo, hi, int(step))
        return top, lo, hi

    def chain(self, node: str) -> list[str]:
        """The ids that hold ``node``, outermost first: its block, its sub-blocks, then itself."""
        top = self.block_of[node]
        return list(self._leaves(top)[self._rank[node]]) + [node]

    def _leaves(self, top: str) -> list[tuple[str, ...]]:
        """Per member rank of block ``top``: the ids from ``top`` down to its leaf sub-block (shared tuples)."""
        if top not in self._leaf_at:
            at: list[tuple[str, ...]] = [()] * len(self._index()[top])

            def walk(lo: int, hi: int, ids: tuple[str, ...]) -> None:
                if hi - lo <= MAX_OPEN:
                    at[lo:hi] = [ids] * (hi - lo)
                    return
                for i in range(SPLIT):
                    walk(*_child(lo, hi, i), ids + (f"{ids[-1]}#{i}",))
            walk(0, len(at), (top,))
            self._leaf_at[top] = at
        return self._leaf_at[top]

    def detail(self, block_id: str, trees: Sequence[Any] = ()) -> dict[str, Any] | None:
        """The ``/api/block/ID`` object (see the module's docstring), or None for an unknown id."""
        if block_id in self._cache:
            return self._cache[block_id]
        span = self.span(block_id)
        if span is None:
            return None
        top, lo, hi = span
        members = self._index()[top][lo:hi]
        rank, fabric = self._rank, self.fabric
        leaves = hi - lo <= MAX_OPEN
        inside = lambda n: self.block_of.get(n) == top and lo <= rank[n] < hi    # noqa: E731
        if leaves:
            child_of = {m: m for m in members}
            children = [_member(fabric.node(m)) for m in members]
        else:
            child_of = {}
            children = []
            for i in range(SPLIT):
                clo, chi = _child(lo, hi, i)
                if chi <= clo:
                    continue
                cid = f"{block_id}#{i}"
                for m in self._index()[top][clo:chi]:
                    child_of[m] = cid
                first, last = self._index()[top][clo], self._index()[top][chi - 1]
                children.append({"id": cid, "role": "block", "count": chi - clo, "label": f"#{i}",
                                 "of": self.blocks[top]["of"], "layer": self.blocks[top]["layer"],
                                 "group": self.blocks[top]["group"], "first": first, "last": last})
        _place(children, leaves)
        internal: Counter[tuple[str, str]] = Counter()
        external: Counter[tuple[str, tuple[str, ...]]] = Counter()
        link_of: dict[tuple[str, str], tuple[str, Any]] = {}     # node pair -> ("i" | "e", key)
        for m in members:
            node = fabric.node(m)
            for port in range(node.ports):
                p = fabric.peer(m, port)
                if p is None:
                    continue
                peer = p[0]
                if inside(peer):
                    if m < peer:
                        a, b = child_of[m], child_of[peer]
                        if a != b:
                            key = (a, b) if a <= b else (b, a)
                            internal[key] += 1
                            link_of[(m, peer)] = ("i", key)
                else:
                    ch = self._leaves(self.block_of[peer])[rank[peer]]
                    ekey = (child_of[m], ch + (peer,) if leaves else ch)
                    external[ekey] += 1
                    link_of[(m, peer)] = ("e", ekey)
        ikeys, ekeys = sorted(internal), sorted(external)
        links = [{"a": a, "b": b, "count": internal[(a, b)]} for a, b in ikeys]
        ext = [{"a": a, "chain": list(ch), "count": external[(a, ch)]} for a, ch in ekeys]
        inum = {k: i for i, k in enumerate(ikeys)}
        enum = {k: i for i, k in enumerate(ekeys)}
        out_trees: dict[str, Any] = {}
        for t in trees:
            li: set[int] = set()
            le: set[int] = set()
            roles: dict[str, str] = {}
            for a, b in t.pairs:
                hit = link_of.get((a, b)) or link_of.get((b, a))
                if hit is not None:
                    (li.add(inum[hit[1]]) if hit[0] == "i" else le.add(enum[hit[1]]))
            for n, r in t.roles.items():
                if n in self.block_of and inside(n) and roles.get(child_of[n]) not in ("root", "receiver"):
                    roles[child_of[n]] = r
            if li or le or roles:
                out_trees[t.id] = {"links": sorted(li), "external": sorted(le), "roles": roles}
        out = {"block": block_id, "count": hi - lo, "members": leaves, "nodes": children, "links": links,
               "external": ext, "trees": out_trees}
        self._cache[block_id] = out
        return out


def _child(lo: int, hi: int, i: int) -> tuple[int, int]:
    n = hi - lo
    return lo + i * n // SPLIT, lo + (i + 1) * n // SPLIT


def _member(node: Any) -> dict[str, Any]:
    return {"id": node.name, "role": node.role.value, "layer": node.layer}


def _place(children: list[dict[str, Any]], members: bool) -> None:
    """Offsets from the opened block's centre: members in a grid three times as wide as high (switches,
    servers and hosts of a block share a layer, so their row stays a band); sub-blocks in one row."""
    n = len(children)
    if not members:
        for i, c in enumerate(children):
            c["dx"], c["dy"] = round((i - (n - 1) / 2) * 70.0, 1), 0.0
        return
    cols = max(1, round((3 * n) ** 0.5))
    rows = -(-n // cols)
    for i, c in enumerate(children):
        r, col = divmod(i, cols)
        c["dx"] = round((col - (cols - 1) / 2) * CELL, 1)
        c["dy"] = round((r - (rows - 1) / 2) * CELL, 1)
