"""The exact optimum under a deadline: the whole attempt, model building included, ends by then.

``--time-limit`` bounds the plan, not only HiGHS's own clock. Building the model for fattree:k=22
with 300 senders (3.3 million variables) and handing it to HiGHS took far longer than a 10-s limit:
scipy's wrapper converts the model variable by variable, and HiGHS's setup and presolve of such a
model do not look at the clock. None of that can be interrupted in-process, so :func:`solve_by` runs
the attempt in a forked child: the child builds the model (checking the deadline between blocks)
and gives HiGHS the time that is left, and the parent waits for its answer only until the deadline,
then ends the child. What comes back is the best tree HiGHS found, with its gap, or why there is
none (the caller then falls back to a heuristic tree).
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dcnlab.controller.aggregation import optimal


class Deadline:
    """A point on the monotonic clock, ``seconds`` after it was made (or after ``start``)."""

    def __init__(self, seconds: float, start: float | None = None) -> None:
        self.seconds = float(seconds)
        self.end = (time.monotonic() if start is None else start) + self.seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def share(self, parts: int) -> Deadline:
        """A deadline for the next of ``parts`` equal shares of the time left (at least this one's end
        when only one part is left)."""
        left = max(self.remaining(), 0.0)
        return Deadline(left / max(parts, 1))


@dataclass(frozen=True)
class Attempt:
    """What the solver gave within the deadline: a tree (possibly not proven optimal) or ``why`` not."""

    optimum: optimal.Optimum | None
    why: str = ""
    variables: int = 0


SOLVER_SHARE = 0.75
"""HiGHS's own time limit, as a share of the time left once the model is built: HiGHS looks at its clock
only now and then (on a loaded 2-core machine a 3-s limit ended after 6.6 s), and a child still running
at the deadline is ended with whatever it had found."""
HANDBACK_PER_BUILD = 3.0
"""Time kept for scipy to hand the solution back, as a multiple of the time the model took to build (both
are linear in its size; scipy's per-variable conversions are the slower)."""


def _child(conn, graph: optimal.HopGraph, root: int, senders: list[int], delta: float,
           relays: np.ndarray | None, end: float) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is the parent's: it ends this child, quietly

    def check() -> None:
        if time.monotonic() >= end:
            raise optimal.OutOfTime

    try:
        t0 = time.monotonic()
        variables, _ = optimal.model_size(graph, root, senders, delta, relays)
        conn.send(("stage", f"building the model ({variables:,} variables)"))
        try:
            model = optimal.build_model(graph, root, senders, delta, relays, check)
        except optimal.OutOfTime:
            conn.send(("result", Attempt(None, f"the model ({variables:,} variables) was not built by then",
                                         variables)))
            return
        built = time.monotonic() - t0
        budget = SOLVER_SHARE * (end - time.monotonic() - 0.05 - HANDBACK_PER_BUILD * built)
        if budget <= 0:
            conn.send(("result", Attempt(None, f"no time was left to solve the model ({variables:,} variables, "
                                               f"built in {built:.1f} s)", variables)))
            return
        conn.send(("stage", f"solving the model ({variables:,} variables) for {budget:.1f} s"))
        opt = optimal.run_model(model, root, senders, budget)
        why = "" if opt is not None else f"HiGHS found no tree in {budget:.1f} s ({variables:,} variables)"
        conn.send(("result", Attempt(opt, why, variables)))
    except Exception as exc:             # e.g. MemoryError: reported, the parent falls back
        conn.send(("result", Attempt(None, f"the solver failed ({type(exc).__name__})")))
    finally:
        conn.close()


def solve_by(graph: optimal.HopGraph, root: int, senders: Sequence[int], delta: float,
             relays: np.ndarray | None, end: float) -> Attempt:
    """Run :func:`optimal.build_model` and :func:`optimal.run_model` in a child that is ended at the
    monotonic time ``end`` at the latest. Size errors (:func:`optimal.check_size`) are raised here."""
    senders = [int(s) for s in senders]
    optimal.check_size(graph, root, senders, delta, relays)
    if end - time.monotonic() <= 0:
        return Attempt(None, "the time limit had passed before this tree")
    ctx = multiprocessing.get_context("fork")
    for stream in (sys.stdout, sys.stderr):     # a forked child must not inherit unwritten output
        stream.flush()
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(send, graph, root, senders, delta, relays, end), daemon=True)
    child.start()
    send.close()
    stage = "starting the solver"
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0 or not recv.poll(left):
                return Attempt(None, f"the limit came while {stage}")
            try:
                kind, payload = recv.recv()
            except EOFError:
                return Attempt(None, f"the solver process ended unexpectedly while {stage}")
            if kind == "stage":
                stage = payload
            else:
                return payload
    finally:
        recv.close()
        if child.is_alive():
            child.kill()
        child.join()
