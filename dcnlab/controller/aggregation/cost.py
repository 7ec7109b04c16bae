"""The papers' traffic cost model: IRS/SRS (Guo et al.), §3.1 and §5.4; M2 (Fang et al.), §3.1.

* Every sender's flow to one receiver is 1 unit (1 MB in the papers).
* A node that can aggregate (a BCube server; a P4 switch in a fat-tree) merges its incoming flows
  and its own data, ``f_1..f_s``, into one flow of size ``max f_i + delta * (sum f_i - max f_i)``
  (the aggregation ratio ``delta`` of 003 §5.4; ``delta = 0``, the papers' analysis case, gives
  1 unit whatever merges; ``delta = 1`` gives no gain). A node with a single input forwards it as is.
* A node that cannot aggregate (a BCube switch) forwards the sum of what comes in.
* The cost of a tree is the traffic summed over every link it uses. A BCube server-to-server hop
  crosses one switch, so it is 2 links, each carrying the child's flow: the hop costs ``2 * f``.
  In a fat-tree every hop is one link. At ``delta = 0`` a BCube tree with ``V`` servers costs
  ``2 (V - 1)``, as 003 §3.2 states: "the cost of an inter-stage or an intra-stage transmission is
  two due to the relay of an intermediate switch" (Figs. 2-3's costs are tests of it).
* Active links are the distinct physical links the tree uses, counted once even if a lateral hop
  makes one carry traffic both ways. A BCube hop from ``x`` through its level-``d`` switch to ``p``
  uses the links ``(x, d)`` and ``(p, d)``.
* Aggregating nodes are the non-root nodes where at least two flows meet, counting their own data
  (Guo et al., §3.1). The receiver aggregates what reaches it too, but it is not counted: it is not *in*
  the network. ``receiver_input`` is the data arriving at the receiver (003 Fig. 4(d)).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import TypeVar

from dcnlab.topos.errors import UserError

H = TypeVar("H", bound=Hashable)


def check_delta(delta: float) -> float:
    """Validate the aggregation ratio (a :class:`UserError` names the valid range)."""
    d = float(delta)
    if not 0.0 <= d <= 1.0:
        raise UserError(f"aggregation ratio delta={delta} is out of range; valid: 0 <= delta <= 1")
    return d


def merge(sizes: Sequence[float], delta: float) -> float:
    """Size of the flow that merging ``sizes`` at an aggregating node emits."""
    if not sizes:
        return 0.0
    top = max(sizes)
    return top + delta * (sum(sizes) - top)


def children_of(parent: Mapping[H, H]) -> dict[H, list[H]]:
    kids: dict[H, list[H]] = defaultdict(list)
    for c, p in parent.items():
        kids[p].append(c)
    return kids


def flows(parent: Mapping[H, H], senders: Collection[H], delta: float,
          aggregates: Mapping[H, bool] | None = None) -> dict[H, float]:
    """Output flow size of every node of a tree given as child -> parent (the root has no entry).

    ``aggregates[node]`` False makes a node forward the sum of its inputs (default: all aggregate)."""
    kids = children_of(parent)
    own = set(senders)
    out: dict[H, float] = {}
    nodes = set(parent) | set(parent.values())
    # iterative post-order: process a node once all its children are done
    pending = {v: len(kids.get(v, ())) for v in nodes}
    ready = [v for v in nodes if pending[v] == 0]
    while ready:
        v = ready.pop()
        inputs = [out[c] for c in kids.get(v, ())] + ([1.0] if v in own else [])
        agg = True if aggregates is None else aggregates.get(v, True)
        out[v] = merge(inputs, delta) if agg else float(sum(inputs))
        p = parent.get(v)
        if p is not None:
            pending[p] -= 1
            if pending[p] == 0:
                ready.append(p)
    if len(out) != len(nodes):
        raise ValueError("the parent map has a cycle")
    return out


def inputs_count(parent: Mapping[H, H], senders: Collection[H]) -> dict[H, int]:
    """Number of flows meeting at each node: its children plus its own data."""
    count: dict[H, int] = defaultdict(int)
    for p in parent.values():
        count[p] += 1
    for s in senders:
        count[s] += 1
    return dict(count)
