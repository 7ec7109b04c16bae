"""Exact minimum-cost aggregation trees by mixed-integer programming (scipy.optimize.milp / HiGHS).

The papers only approximate (003 §1.3, 000 §1.3: the problem is Steiner-like and NP-hard); an
exact optimum on small fabrics tells how far each heuristic is from the best tree.

The model is over a *hop graph*: nodes that may be tree nodes (BCube servers; fat-tree switches and
hosts) and arcs between them, each with a weight in links (2 for a BCube server hop through a
switch, 1 for a fat-tree link). Arc ``u -> v`` chosen means ``v`` is ``u``'s parent.

* ``x_a`` (binary): arc chosen. Each node has at most one parent; a sender exactly one; the receiver
  none. Only aggregation-capable nodes may relay (``relays``): a fat-tree host never forwards.
* Connectivity: one unit of flow per sender from the sender to the receiver, on chosen arcs only
  (multi-commodity flow, ``f^t_a <= x_a``). It is the strongest compact formulation, and HiGHS solves
  every BCube with at most 64 servers (BCube(4,2), BCube(8,1), BCube(2,5), ...) in seconds.
* ``delta = 0``: every hop carries 1 unit, so the objective is the weighted number of arcs.
* ``delta > 0``: ``h_a`` is the traffic on arc ``a``, allowed only on chosen arcs
  (``x_a <= h_a <= B x_a``, ``B`` = number of senders). A node's output ``g_v`` leaves on its one
  chosen out-arc (``sum_out h >= g_v``), and ``g_v >= (1 - delta) M_v + delta S_v`` where ``S_v`` is the
  sum of ``v``'s inputs (own unit plus ``h`` of its incoming arcs) and ``M_v`` is at least every input.
  Minimising ``sum w_a h_a`` makes each bound tight, so the objective is the exact cost; ``max`` is
  convex, which is why a minimisation can express it with linear inequalities. This relaxation is
  much weaker than the ``delta = 0`` one: expect seconds on BCube(4,1), not on 64 servers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_array

from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

MAX_NODES = 4096
"""Refuse larger hop graphs: the model has (senders + 1) x arcs variables."""


class SolverError(UserError):
    """The solver did not prove an optimum (time limit, or an infeasible instance)."""


@dataclass(frozen=True)
class HopGraph:
    """Nodes 0..V-1, directed arcs (both directions of every hop) with their weight in links."""

    nodes: int
    tail: np.ndarray
    head: np.ndarray
    weight: np.ndarray


@dataclass(frozen=True)
class Optimum:
    parent: dict[int, int]
    cost: float
    status: str
    seconds: float


def solve(graph: HopGraph, root: int, senders: Sequence[int], delta: float = 0.0,
          relays: np.ndarray | None = None, time_limit: float = 300.0) -> Optimum:
    """Minimum-cost tree towards ``root`` spanning ``senders`` (see the module doc)."""
    import time

    V, A = graph.nodes, graph.tail.shape[0]
    if V > MAX_NODES:
        raise UserError(f"optimal: the hop graph has {V} nodes; valid: at most {MAX_NODES} (use a smaller fabric)")
    senders = list(senders)
    m = len(senders)
    keep = graph.tail != root
    if relays is not None:
        is_sender = np.zeros(V, bool)
        is_sender[senders] = True
        keep &= relays[graph.tail] | is_sender[graph.tail]
        keep &= relays[graph.head] | (graph.head == root)
    tail, head, w = graph.tail[keep], graph.head[keep], graph.weight[keep].astype(float)
    A = tail.shape[0]
    own = np.zeros(V)
    own[senders] = 1.0

    # variable layout: x (A) | f (m*A) | [h (A) | g (V) | M (V)]
    nx, nf = A, m * A
    extra = delta > 0.0
    nvar = nx + nf + (A + 2 * V if extra else 0)
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0

    def add(row_cols: np.ndarray, row_vals: np.ndarray, lb: float, ub: float) -> None:
        nonlocal r
        rows.append(np.full(row_cols.shape[0], r))
        cols.append(row_cols)
        vals.append(row_vals)
        lo.append(lb)
        hi.append(ub)
        r += 1

    arcs = np.arange(A)
    out_of = [arcs[tail == v] for v in range(V)]
    into = [arcs[head == v] for v in range(V)]
    for v in range(V):
        if v == root or out_of[v].shape[0] == 0:
            continue
        need = 1.0 if own[v] else 0.0
        add(out_of[v], np.ones(out_of[v].shape[0]), need, 1.0)
    for i, s in enumerate(senders):
        base = nx + i * A
        for v in range(V):
            c = np.concatenate([out_of[v], into[v]]) + base
            val = np.concatenate([np.ones(out_of[v].shape[0]), -np.ones(into[v].shape[0])])
            rhs = (1.0 if v == s else 0.0) - (1.0 if v == root else 0.0)
            if c.shape[0] or rhs:
                add(c, val, rhs, rhs)
    # f^t_a <= x_a, as one block
    f_rows = np.arange(nf) + r
    blk_rows = np.concatenate([f_rows, f_rows])
    blk_cols = np.concatenate([nx + np.arange(nf), np.tile(arcs, m)])
    blk_vals = np.concatenate([np.ones(nf), -np.ones(nf)])
    rows.append(blk_rows)
    cols.append(blk_cols)
    vals.append(blk_vals)
    lo.extend([-np.inf] * nf)
    hi.extend([0.0] * nf)
    r += nf

    cost = np.zeros(nvar)
    integrality = np.zeros(nvar)
    integrality[:nx] = 1
    upper = np.ones(nvar)
    if extra:
        hb, gb, mb = nx + nf, nx + nf + A, nx + nf + A + V
        big = float(m)
        upper[hb:] = big
        cost[hb:hb + A] = w
        for a in range(A):  # x_a <= h_a <= B x_a: traffic only on chosen arcs, at least one unit there
            add(np.array([hb + a, a]), np.array([1.0, -big]), -np.inf, 0.0)
            add(np.array([hb + a, a]), np.array([1.0, -1.0]), 0.0, np.inf)
        for v in range(V):
            ins, outs = into[v], out_of[v]
            if outs.shape[0]:  # the single chosen out-arc carries v's output: sum_out h >= g_v
                add(np.concatenate([hb + outs, [gb + v]]), np.concatenate([np.ones(outs.shape[0]), [-1.0]]),
                    0.0, np.inf)
            for a in ins:  # M_v >= h_a
                add(np.array([mb + v, hb + a]), np.array([1.0, -1.0]), 0.0, np.inf)
            # g_v - (1-delta) M_v - delta * sum h_in >= delta * own ; M_v >= own
            c = np.concatenate([[gb + v, mb + v], hb + ins])
            val = np.concatenate([[1.0, -(1.0 - delta)], -delta * np.ones(ins.shape[0])])
            add(c, val, delta * own[v], np.inf)
            add(np.array([mb + v]), np.array([1.0]), own[v], np.inf)
    else:
        cost[:nx] = w
    matrix = coo_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, nvar)).tocsr()
    t0 = time.perf_counter()
    res = milp(cost, constraints=LinearConstraint(matrix, np.array(lo), np.array(hi)), integrality=integrality,
               bounds=Bounds(np.zeros(nvar), upper), options={"time_limit": time_limit, "disp": False})
    seconds = time.perf_counter() - t0
    if res.status != 0 or res.x is None:
        raise SolverError(f"optimal: HiGHS stopped without a proven optimum ({res.message}); "
                          f"try fewer senders or a smaller fabric")
    chosen = np.flatnonzero(res.x[:nx] > 0.5)
    parent = {int(tail[a]): int(head[a]) for a in chosen}
    log.debug("optimal: %d nodes, %d arcs, %d senders, %.2f s", V, A, m, seconds)
    return Optimum(_prune(parent, root, senders), float(res.fun), "optimal", seconds)


def _prune(parent: dict[int, int], root: int, senders: Sequence[int]) -> dict[int, int]:
    """Keep only arcs on sender -> root paths (zero-cost leftovers cannot occur, but be safe)."""
    keep: dict[int, int] = {}
    for s in senders:
        v = s
        while v != root and v not in keep:
            keep[v] = parent[v]
            v = parent[v]
    return keep


def bcube_hop_graph(n: int, k: int) -> HopGraph:
    """Servers of BCube(n,k) and their one-hop neighbours; each hop is 2 links."""
    N = n ** (k + 1)
    pw = n ** np.arange(k + 1)
    v = np.arange(N)
    tails, heads = [], []
    for d in range(k + 1):
        dig = (v // pw[d]) % n
        for delta_digit in range(1, n):
            tails.append(v)
            heads.append(v + (((dig + delta_digit) % n) - dig) * pw[d])
    tail, head = np.concatenate(tails), np.concatenate(heads)
    return HopGraph(N, tail, head, np.full(tail.shape[0], 2.0))
