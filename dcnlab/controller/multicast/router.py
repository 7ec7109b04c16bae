"""The interface of a multicast routing algorithm, and :class:`TreeRouter`, the base that makes a new one short.

A multicast router places groups on a fat-tree (:class:`~dcnlab.controller.multicast.hierarchy.Hierarchy`)
whose switches have a limited multicast table: ``colors`` entries per port (C in C-MR4LMS (Chen et al.)). Every planner
of dcnlab (C-MR4LMS, MR4LMS-like, OpenSM-like, the global tree) implements :class:`Router`; so does a
user's, registered in :mod:`dcnlab.controller.multicast.registry`.

In the level model a tree is fully described by its members and a choice ``(tnid, x)`` of tree network and
top switch: it is the union of the members' unique up-paths to their lowest common ancestor on that TN
(:mod:`~dcnlab.controller.multicast.hierarchy`). :class:`TreeRouter` keeps the book (members, trees, the
colors in use on every link); a subclass only says where one group goes:

.. code-block:: python

    class ShortestPathTrees(TreeRouter):
        '''One tree per group at its members' lowest common ancestor, first free color.'''
        def place(self, mgid, members):
            for tnid, x in self.roots(members):
                for color in self.free_colors(members, tnid, x):
                    return Placement(tnid, x, color)
            return None                                  # refused: no color is free on any root's tree

What any router's result must satisfy is checked by :func:`dcnlab.controller.multicast.validate.check_routing`
before it is used (a tree that is not a tree, a member not covered, a color out of the table, two trees
of one color on one link).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from dcnlab.controller.multicast.baselines import _Bulk
from dcnlab.controller.multicast.hierarchy import Hierarchy
from dcnlab.controller.multicast.tree import TreeRecord, TreeState, shape, tree_links


@runtime_checkable
class Router(Protocol):
    """What ``plan`` and the reproductions need of a multicast routing algorithm."""

    refused: dict[int, str]
    """Groups not placed, each with the reason."""

    def add_group(self, mgid: int, hosts: Iterable[int]) -> object:
        """Place group ``mgid`` (terminal indices ``hosts``)."""

    def trees(self) -> list[TreeRecord]:
        """Every tree, with the groups it carries."""

    def groups(self) -> dict[int, frozenset[int]]:
        """The groups placed, with their members."""

    def tree_id(self, mgid: int) -> int:
        """The tree that carries group ``mgid``."""


@dataclass(frozen=True)
class Placement:
    """Where one group goes: the tree on TN ``tnid`` with top switch ``x`` (the root is the members' lowest
    common ancestor on that TN), in table entry ``color``."""

    tnid: int
    x: int
    color: int


class TreeRouter(_Bulk):
    """Base of a router that places each group on a tree of its own (override :meth:`place`); the book of
    groups and refusals, and the checks of a new group, are the baselines' (:class:`.baselines._Bulk`)."""

    def __init__(self, h: Hierarchy, colors: int) -> None:
        super().__init__(h)
        self.colors = colors
        self._trees: dict[int, TreeState] = {}
        self._used: dict[int, int] = {}
        """Per link id, the colors in use there as a bit mask."""
        self._shaped: tuple[frozenset[int], list[int], list[dict[int, int]], int] | None = None

    # -- to override -----------------------------------------------------------------------------------
    def place(self, mgid: int, members: frozenset[int]) -> Placement | None:
        """Where group ``mgid`` goes, or ``None`` to refuse it."""
        raise NotImplementedError

    # -- helpers for place() -----------------------------------------------------------------------------
    def roots(self, members: Iterable[int]) -> Iterator[tuple[int, int]]:
        """Every ``(tnid, x)`` choice, the TNs that carry the fewest trees first (ties: lowest tnid, x)."""
        load: dict[int, int] = {}
        for t in self._trees.values():
            load[t.tnid] = load.get(t.tnid, 0) + 1
        for tnid in sorted(range(self.h.num_tns), key=lambda t: (load.get(t, 0), t)):
            for x in range(self.h.w):
                yield tnid, x

    def links(self, members: Iterable[int], tnid: int, x: int) -> set[int]:
        """Link ids of the tree of ``members`` on ``(tnid, x)``: terminal links and up-links to the root."""
        key = members if isinstance(members, frozenset) else frozenset(members)
        if self._shaped is None or self._shaped[0] != key:     # place() asks for many roots of one group
            self._shaped = (key, list(key), *shape(self.h, key))
        _, hosts, cnts, level = self._shaped
        return tree_links(self.h, hosts, cnts, level, tnid, x)

    def free_colors(self, members: Iterable[int], tnid: int, x: int) -> list[int]:
        """The colors free on every link of that tree, lowest first."""
        used = 0
        for lk in self.links(members, tnid, x):
            used |= self._used.get(lk, 0)
        return [c for c in range(self.colors) if not used >> c & 1]

    # -- the Router interface ----------------------------------------------------------------------------
    def add_group(self, mgid: int, hosts: Iterable[int]) -> bool:
        members = frozenset(hosts)
        self._check_new(mgid, members)
        where = self.place(mgid, members)
        if where is None:
            self.refused[mgid] = f"group {mgid}: {type(self).__name__} found no free color on any tree"
            return False
        tid = len(self._trees)
        tree = TreeState(self.h, tid, where.color, where.tnid, where.x, dict.fromkeys(members, 1), (mgid,))
        self._trees[tid] = tree
        self._members[mgid] = members
        self._tree_of[mgid] = tid
        for lk in tree.links:
            self._used[lk] = self._used.get(lk, 0) | 1 << where.color
        return True

    def trees(self) -> list[TreeRecord]:
        return [t.record() for t in self._trees.values()]
