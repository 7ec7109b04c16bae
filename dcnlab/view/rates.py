"""Per-link rates (``/api/rates``) from two samples of the interfaces' own counters.

A :class:`Sample` holds, per direction ``(a, b)`` of every link, the bytes and packets sent so far
(:func:`dcnlab.emu.counters.link_counters`), the interfaces' drops, and each link's state. :func:`rates`
turns two samples into bytes/s and packets/s each way, per drawn link (a bundle on an aggregated
drawing sums its links). A counter that went backwards (a restarted switch) counts as 0.

:class:`Sampler` takes a sample about once a second in a thread of its own, so a request never waits
for ``ip``; the page reads the latest rates.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

Counts = dict[tuple[str, str], tuple[int, int]]
"""``(a, b)`` -> (bytes, packets) sent from a to b so far."""


@dataclass(frozen=True)
class Sample:
    t: float
    counts: Counts
    state: dict[tuple[str, str], str] = field(default_factory=dict)
    """``(a, b)`` of a link (its fabric order) -> ``cut`` or ``shaped``; absent: up."""
    drops: dict[tuple[str, str], int] = field(default_factory=dict)


def sample_netns(fabric: Any, netns: str, links: list[Any]) -> Sample:
    """One sample of a running fabric: one ``ip -s -j link`` and one ``tc -j qdisc`` in its namespace."""
    from dcnlab.emu import counters as c
    t = time.monotonic()
    stats = c.interface_stats(netns)
    qd = c.qdisc_state(netns)
    b = c.link_counters(fabric, stats, "bytes", links)
    p = c.link_counters(fabric, stats, "packets", links)
    d = c.link_counters(fabric, stats, "dropped", links)
    state = {}
    for l in links:
        s = c.link_state(fabric, stats, qd, l)
        if s != "up":
            state[(l.a, l.b)] = s
    return Sample(t, {k: (b[k], p[k]) for k in b}, state, d)


def rates(topo: dict[str, Any], before: Sample | None, after: Sample) -> dict[str, Any]:
    """``{"dt", "links": {id: [B/s a->b, B/s b->a, pkt/s a->b, pkt/s b->a]}, "state": {id: "cut"|"shaped"},
    "max": highest B/s}`` for the drawn links of ``topo`` (only links with traffic or a state are listed)."""
    block_of: dict[str, str] | None = topo.get("_block_of")
    ids = {(l["a"], l["b"]): l["id"] for l in topo["links"]}

    def drawn(a: str, b: str) -> tuple[int, bool] | None:
        if block_of is not None:
            a, b = block_of.get(a, a), block_of.get(b, b)
        i = ids.get((a, b))
        if i is not None:
            return i, False
        i = ids.get((b, a))
        return (i, True) if i is not None else None

    out: dict[int, list[float]] = {}
    dt = after.t - before.t if before is not None else 0.0
    if before is not None and dt > 0:
        for (a, b), (nb, npk) in after.counts.items():
            ob, op = before.counts.get((a, b), (nb, npk))
            where = drawn(a, b)
            if where is None:
                continue
            i, flip = where
            r = out.setdefault(i, [0.0, 0.0, 0.0, 0.0])
            r[1 if flip else 0] += max(nb - ob, 0) / dt
            r[3 if flip else 2] += max(npk - op, 0) / dt
    state: dict[int, str] = {}
    for (a, b), s in after.state.items():
        where = drawn(a, b)
        if where is not None and state.get(where[0]) != "cut":
            state[where[0]] = s
    busy = {i: [round(x, 1) for x in r] for i, r in out.items() if any(r)}
    return {"dt": round(dt, 3), "links": {str(i): r for i, r in busy.items()},
            "state": {str(i): s for i, s in state.items()},
            "max": max((max(r[0], r[1]) for r in busy.values()), default=0.0),
            "nodes": node_rates(before, after, dt) if block_of is None else {}}


def node_rates(before: Sample | None, after: Sample, dt: float) -> dict[str, list[float]]:
    """Per node with traffic: ``[packets/s in, packets/s out]`` over its links. A switch whose out falls
    short of its in dropped (or consumed) the difference, whatever its program counts; a multicast
    switch's out exceeds its in by its copies."""
    if before is None or dt <= 0:
        return {}
    io: dict[str, list[float]] = {}
    for (a, b), (_, npk) in after.counts.items():
        d = max(npk - before.counts.get((a, b), (0, npk))[1], 0) / dt
        if d:
            io.setdefault(b, [0.0, 0.0])[0] += d
            io.setdefault(a, [0.0, 0.0])[1] += d
    return {n: [round(x, 1) for x in v] for n, v in io.items()}


def link_detail(sample: Sample | None, previous: Sample | None, a: str, b: str) -> dict[str, Any]:
    """Counters of the link a--b in both directions (``/api/link/A/B``)."""
    if sample is None:
        return {"error": "no sample yet"}
    out: dict[str, Any] = {"link": [a, b], "state": sample.state.get((a, b), sample.state.get((b, a), "up"))}
    dt = sample.t - previous.t if previous is not None else 0.0
    for x, y in ((a, b), (b, a)):
        nb, npk = sample.counts.get((x, y), (0, 0))
        ob, op = previous.counts.get((x, y), (nb, npk)) if previous is not None else (nb, npk)
        out[f"{x}->{y}"] = {"bytes": nb, "packets": npk, "dropped": sample.drops.get((x, y), 0),
                            "bytes_per_s": round(max(nb - ob, 0) / dt, 1) if dt > 0 else None,
                            "packets_per_s": round(max(npk - op, 0) / dt, 1) if dt > 0 else None}
    return out


T = TypeVar("T")


class Sampler(Generic[T]):
    """``take()`` every ``interval`` seconds in a daemon thread; ``latest()`` is (previous, last)."""

    def __init__(self, take: Callable[[], T], interval: float = 1.0) -> None:
        self.take, self.interval = take, interval
        self._lock = threading.Lock()
        self._prev: T | None = None
        self._last: T | None = None
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="view-sampler", daemon=True)

    def start(self) -> Sampler[T]:
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                s = self.take()
                with self._lock:
                    self._prev, self._last, self.error = self._last, s, None
            except Exception as e:     # noqa: BLE001 - the namespace may be gone; say so on the page
                self.error = f"{type(e).__name__}: {e}"[:300]
                log.debug("view sample failed: %s", e)
            self._stop.wait(self.interval)

    def latest(self) -> tuple[T | None, T | None]:
        with self._lock:
            return self._prev, self._last

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
