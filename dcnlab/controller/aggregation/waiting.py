"""Shuffle+reduce waiting time of an incast, in a link-bound model (M2 (Fang et al.), abstract and Tables 1-2).

The abstract states that with M2-based trees the "shuffle and reduce waiting time" is about 2/3
shorter than without in-network aggregation across network sizes (Table 1: BCube(6,k), k = 2..6,
120 senders) and about 3/4 shorter across sender counts (Table 2: 1000, 1500, 2000 and 3000 senders
on BCube(4,8)). The tables' values are missing from the text we have (§5.2-5.3), so only these two
fractions can be compared.

**The model** (a choice; the paper gives none). In the regime 000 and dcnlab's BMv2 experiment are
in, links and not CPUs limit a job: every sender's map output is the same size (one *unit*, 000's
"1 MB after local combining"), an aggregating server emits one unit for all it receives (aggregation
ratio 0, as in 000's traffic figures), and the job ends when the most loaded directed link has carried
its units. So the waiting time is ``busiest-link units x unit time`` (pipelining makes the other links'
transfers overlap with it), and the fraction saved is ``1 - busiest(M2) / busiest(none)``. On BCube a
server-level hop ``u -> p`` that corrects digit ``d`` crosses two links, ``u -> sw`` and ``sw -> p``
through p's level-``d`` switch; ``sw -> p`` carries one unit per child of ``p`` behind that switch,
so several children of one parent on one level share a link (at most ``n - 1``).

*No aggregation* sends every sender's unit along its primary BCubeRouting path (digits corrected from
the highest to the lowest, :mod:`dcnlab.controller.routing.bcube`), so most flows reach the receiver
through its level-0 link; :func:`none_busiest` can also spread them evenly over the receiver's ``k+1``
links (``spread=True``), the best any ECMP could do, as a second reading.

A second reading, *reduce-bound* (:func:`receiver_bound`), times the job by the data arriving at the
receiver (the reducer's input, 000 Fig. 5(e)), as when the reduce task's CPU and not the network is
the bottleneck.

Measured against BMv2 (``dcnlab reproduce aggregation --emulate``, links shaped to 0.25 Mbit/s):
the same busiest-link rule predicts the emulated completion times (``JobResult.model_completion_s``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dcnlab.controller.aggregation.forest import Forest
from dcnlab.controller.aggregation.labels import LabelSpace

__all__ = ["busiest_link", "none_busiest", "receiver_bound", "link_seconds", "unit_seconds"]


def busiest_link(forest: Forest) -> np.ndarray:
    """Units on the most loaded directed link of every tree (aggregation ratio 0: one unit per hop).

    A hop ``u -> p`` loads ``u``'s link to its switch with one unit and the switch's link to ``p``
    with one unit more per sibling behind the same switch, so the busiest link of a tree is the
    largest number of children that one server has on one switch level (at least 1)."""
    hop = np.flatnonzero(forest.parent >= 0)
    out = np.ones(forest.trees, dtype=np.int64)
    if hop.size == 0:
        return out
    space = forest.space
    dim = space.differing_dim(forest.node[hop], forest.node[forest.parent[hop]])
    key = forest.parent[hop].astype(np.int64) * space.K + dim
    keys, counts = np.unique(key, return_counts=True)
    trees = forest.tree[keys // space.K]
    np.maximum.at(out, trees, counts)
    return out


def none_busiest(space: LabelSpace, receiver: int, senders: np.ndarray, spread: bool = False) -> int:
    """Units on the most loaded directed link when every sender unicasts its unit to ``receiver``.

    Paths correct digits from the highest to the lowest (BCubeRouting's primary path). Each hop from
    ``x`` correcting digit ``d`` loads ``x -> sw`` and ``sw -> x'``, where ``sw`` is the level-``d``
    switch of ``x`` (its label without digit ``d``). With ``spread`` the receiver's ``k+1`` input links
    share the units evenly instead (the best case of any multipath routing)."""
    senders = np.asarray(senders, dtype=np.int64)
    if senders.size == 0:
        return 0
    if spread:
        return int(-(-senders.size // space.K))
    rel = space.digits(space.relabel(senders, receiver))        # receiver = label 0
    links = []          # each directed link as (server, digit, 0 up / 1 down), one int per unit it carries
    cur = rel.copy()
    for d in range(space.K - 1, -1, -1):
        moving = np.flatnonzero(cur[:, d] != 0)
        if moving.size == 0:
            continue
        before = space.undigits(cur[moving])
        cur[moving, d] = 0
        after = space.undigits(cur[moving])
        links += [(before * space.K + d) * 2, (after * space.K + d) * 2 + 1]
    return int(np.unique(np.concatenate(links), return_counts=True)[1].max()) if links else 0


def receiver_bound(receiver_input: float, ports: int = 1) -> float:
    """The reduce-bound reading: units the receiver takes in (000 Fig. 5(e)), over its ``ports``."""
    return receiver_input / max(ports, 1)


def unit_seconds(chunks: int, frame_bytes: int, bw_mbps: float) -> float:
    """Seconds one unit (``chunks`` frames of ``frame_bytes``) takes on a link of ``bw_mbps``."""
    return chunks * frame_bytes * 8 / (bw_mbps * 1e6)


def link_seconds(link_units: Mapping[Any, int], chunks: int, frame_bytes: int, bw_mbps: float) -> float:
    """The job's completion in the link-bound model: the busiest directed link's units x unit time."""
    return max(link_units.values(), default=0) * unit_seconds(chunks, frame_bytes, bw_mbps)
