"""Exact minimum-cost aggregation trees by mixed-integer programming (scipy.optimize.milp / HiGHS).

The papers only approximate (Guo et al., §3.1; Fang et al., §3.1: the problem is Steiner-like and NP-hard); an
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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_array, csc_array

from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

MAX_NODES = 4096
"""Refuse larger hop graphs: the model has (senders + 1) x arcs variables."""
MAX_NONZEROS = 60_000_000
"""Build no larger model (about 1.5 GB while it is assembled, more inside HiGHS): fattree:k=22 with all
its 2,662 hosts as members would need some 140 million."""
SENDER_CHUNK = 64
"""Flow blocks are assembled this many senders at a time, with a deadline check between chunks."""


class SolverError(UserError):
    """The solver did not prove an optimum (time limit, or an infeasible instance)."""


class OutOfTime(Exception):
    """The deadline passed while the model was being built (:func:`build_model`'s ``check``)."""


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
    """``optimal`` (proven), or ``time limit`` (the best tree HiGHS had found; see ``gap``)."""
    seconds: float
    gap: float = 0.0
    """HiGHS's relative gap (best tree - bound) / best tree: 0 when proven optimal."""
    bound: float | None = None
    """The best lower bound on the optimum's cost that HiGHS had proven."""


@dataclass(frozen=True)
class Model:
    """The MILP of :func:`build_model`, ready for ``scipy.optimize.milp``."""

    cost: np.ndarray
    matrix: csc_array
    lower: np.ndarray
    upper: np.ndarray
    integrality: np.ndarray
    var_upper: np.ndarray
    tail: np.ndarray
    head: np.ndarray
    """The model's arcs (after dropping arcs that cannot be in a tree): ``x_a`` is arc ``tail[a] -> head[a]``."""

    @property
    def variables(self) -> int:
        return int(self.cost.shape[0])


def _arcs(graph: HopGraph, root: int, senders: Sequence[int], relays: np.ndarray | None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep = graph.tail != root
    if relays is not None:
        is_sender = np.zeros(graph.nodes, bool)
        is_sender[list(senders)] = True
        keep &= relays[graph.tail] | is_sender[graph.tail]
        keep &= relays[graph.head] | (graph.head == root)
    return graph.tail[keep], graph.head[keep], graph.weight[keep].astype(float)


def model_size(graph: HopGraph, root: int, senders: Sequence[int], delta: float = 0.0,
               relays: np.ndarray | None = None) -> tuple[int, int]:
    """Variables and constraint-matrix nonzeros of the model, without building it."""
    A = int(_arcs(graph, root, senders, relays)[0].shape[0])
    m, V = len(senders), graph.nodes
    variables = A + m * A + (A + 2 * V if delta > 0.0 else 0)
    nonzeros = A + 4 * m * A + ((8 * A + 4 * V) if delta > 0.0 else 0)
    return variables, nonzeros


def check_size(graph: HopGraph, root: int, senders: Sequence[int], delta: float = 0.0,
               relays: np.ndarray | None = None) -> tuple[int, int]:
    """:func:`model_size`, or :class:`UserError` (naming the bound) if the model is too large to build."""
    V = graph.nodes
    if V > MAX_NODES:
        raise UserError(f"optimal: the hop graph has {V} nodes; valid: at most {MAX_NODES} (use a smaller fabric)")
    variables, nonzeros = model_size(graph, root, senders, delta, relays)
    if nonzeros > MAX_NONZEROS:
        raise UserError(f"optimal: the model for {len(senders):,} senders would have {nonzeros:,} nonzeros "
                        f"({variables:,} variables); at most {MAX_NONZEROS:,} are built (use fewer senders)")
    return variables, nonzeros


def build_model(graph: HopGraph, root: int, senders: Sequence[int], delta: float = 0.0,
                relays: np.ndarray | None = None, check: Callable[[], None] = lambda: None) -> Model:
    """The MILP of the module doc, assembled with whole-array operations (linear in its nonzeros).

    ``check()`` is called between blocks (every :data:`SENDER_CHUNK` senders): it may raise
    :class:`OutOfTime` to abandon the build."""
    V = graph.nodes
    senders = [int(s) for s in senders]
    m = len(senders)
    tail, head, w = _arcs(graph, root, senders, relays)
    A = tail.shape[0]
    own = np.zeros(V)
    own[senders] = 1.0
    idx = np.int64

    # variable layout: x (A) | f (m*A) | [h (A) | g (V) | M (V)]
    nx, nf = A, m * A
    extra = delta > 0.0
    nvar = nx + nf + (A + 2 * V if extra else 0)
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    lo: list[np.ndarray] = []
    hi: list[np.ndarray] = []
    r = 0

    def block(b_rows: np.ndarray, b_cols: np.ndarray, b_vals: np.ndarray | float) -> None:
        rows.append(b_rows.astype(idx, copy=False))
        cols.append(b_cols.astype(idx, copy=False))
        vals.append(np.broadcast_to(np.asarray(b_vals, float), b_rows.shape))

    arcs = np.arange(A, dtype=idx)
    # every node but the root: at most one parent; a sender exactly one
    has_out = np.bincount(tail, minlength=V) > 0
    has_out[root] = False
    out_nodes = np.flatnonzero(has_out)
    row_of = np.cumsum(has_out) - 1
    block(r + row_of[tail], arcs, 1.0)
    lo.append(own[out_nodes])
    hi.append(np.ones(out_nodes.shape[0]))
    r += out_nodes.shape[0]

    # flow conservation, one unit per sender, over the nodes that arcs, senders or the root touch
    touched = np.zeros(V, bool)
    touched[tail] = touched[head] = True
    touched[senders] = touched[root] = True
    nodes = np.flatnonzero(touched)
    U = nodes.shape[0]
    local = np.full(V, -1, dtype=idx)
    local[nodes] = np.arange(U)
    lt, lh = local[tail], local[head]
    for i0 in range(0, m, SENDER_CHUNK):
        check()
        i = np.arange(i0, min(m, i0 + SENDER_CHUNK), dtype=idx)[:, None]
        f_cols = (nx + i * A + arcs).ravel()
        block((r + i * U + lt).ravel(), f_cols, 1.0)
        block((r + i * U + lh).ravel(), f_cols, -1.0)
    rhs = np.zeros(m * U)
    rhs[np.arange(m) * U + local[senders]] += 1.0
    rhs[np.arange(m) * U + local[root]] -= 1.0
    lo.append(rhs)
    hi.append(rhs)
    r += m * U

    # f^t_a <= x_a
    for i0 in range(0, m, SENDER_CHUNK):
        check()
        j = np.arange(i0 * A, min(m, i0 + SENDER_CHUNK) * A, dtype=idx)
        block(r + j, nx + j, 1.0)
        block(r + j, j % A, -1.0)
    lo.append(np.full(nf, -np.inf))
    hi.append(np.zeros(nf))
    r += nf

    cost = np.zeros(nvar)
    integrality = np.zeros(nvar)
    integrality[:nx] = 1
    upper = np.ones(nvar)
    if extra:
        check()
        hb, gb, mb = nx + nf, nx + nf + A, nx + nf + A + V
        big = float(m)
        upper[hb:] = big
        cost[hb:hb + A] = w
        # x_a <= h_a <= B x_a: traffic only on chosen arcs, at least one unit there
        two = np.arange(2 * A, dtype=idx)
        block(r + np.repeat(two, 2), np.column_stack([np.r_[hb + arcs, hb + arcs], np.r_[arcs, arcs]]).ravel(),
              np.column_stack([np.ones(2 * A), np.r_[np.full(A, -big), -np.ones(A)]]).ravel())
        lo.append(np.r_[np.full(A, -np.inf), np.zeros(A)])
        hi.append(np.r_[np.zeros(A), np.full(A, np.inf)])
        r += 2 * A
        # the single chosen out-arc carries v's output: sum_out h - g_v >= 0 (nodes with out-arcs)
        block(r + row_of[tail], hb + arcs, 1.0)
        block(r + np.arange(out_nodes.shape[0]), gb + out_nodes, -1.0)
        lo.append(np.zeros(out_nodes.shape[0]))
        hi.append(np.full(out_nodes.shape[0], np.inf))
        r += out_nodes.shape[0]
        # M_{head(a)} - h_a >= 0 for every arc
        block(r + arcs, mb + head, 1.0)
        block(r + arcs, hb + arcs, -1.0)
        lo.append(np.zeros(A))
        hi.append(np.full(A, np.inf))
        r += A
        # g_v - (1-delta) M_v - delta * sum h_in >= delta * own_v, for every node
        allv = np.arange(V, dtype=idx)
        block(r + allv, gb + allv, 1.0)
        block(r + allv, mb + allv, -(1.0 - delta))
        block(r + head, hb + arcs, -delta)
        lo.append(delta * own)
        hi.append(np.full(V, np.inf))
        r += V
        # M_v >= own_v
        block(r + allv, mb + allv, 1.0)
        lo.append(own.copy())
        hi.append(np.full(V, np.inf))
        r += V
    else:
        cost[:nx] = w
    check()
    matrix = coo_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, nvar)).tocsc()
    return Model(cost, matrix, np.concatenate(lo), np.concatenate(hi), integrality, upper, tail, head)


def run_model(model: Model, root: int, senders: Sequence[int], time_limit: float) -> Optimum | None:
    """Solve with HiGHS for at most ``time_limit`` s of its own clock: the proven optimum, the best tree
    found by then (status ``time limit``, with its gap), or None if it found no tree."""
    t0 = time.perf_counter()
    res = milp(model.cost, constraints=LinearConstraint(model.matrix, model.lower, model.upper),
               integrality=model.integrality, bounds=Bounds(np.zeros(model.variables), model.var_upper),
               options={"time_limit": max(time_limit, 0.001), "disp": False})
    seconds = time.perf_counter() - t0
    if res.x is None or res.status not in (0, 1):
        return None
    nx = model.tail.shape[0]
    chosen = np.flatnonzero(res.x[:nx] > 0.5)
    parent = {int(model.tail[a]): int(model.head[a]) for a in chosen}
    if res.status == 0:
        return Optimum(_prune(parent, root, senders), float(res.fun), "optimal", seconds, 0.0, float(res.fun))
    gap = getattr(res, "mip_gap", None)
    bound = getattr(res, "mip_dual_bound", None)
    return Optimum(_prune(parent, root, senders), float(res.fun), "time limit", seconds,
                   float(gap) if gap is not None and np.isfinite(gap) else float("nan"),
                   float(bound) if bound is not None and np.isfinite(bound) else None)


def solve(graph: HopGraph, root: int, senders: Sequence[int], delta: float = 0.0,
          relays: np.ndarray | None = None, time_limit: float = 300.0) -> Optimum:
    """Minimum-cost tree towards ``root`` spanning ``senders`` (see the module doc), proven optimal
    within HiGHS's ``time_limit``, else :class:`SolverError`. The CLI's deadline-bounded variant,
    which reports the best tree found, is :func:`dcnlab.controller.aggregation.optimal_run.solve_by`."""
    senders = list(senders)
    check_size(graph, root, senders, delta, relays)
    model = build_model(graph, root, senders, delta, relays)
    opt = run_model(model, root, senders, time_limit)
    if opt is None or opt.status != "optimal":
        raise SolverError(f"optimal: HiGHS stopped without a proven optimum within {time_limit:g} s; "
                          f"try fewer senders or a smaller fabric")
    log.debug("optimal: %d nodes, %d arcs, %d senders, %.2f s", graph.nodes, model.tail.shape[0], len(senders),
              opt.seconds)
    return opt


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
