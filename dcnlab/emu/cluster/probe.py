"""The all-pairs check over several machines.

:mod:`dcnlab.emu.reachability` sends and receives every probe from the dcnlab process, through a
socket made inside each host's namespace; a host on another machine has its namespace there. So
each machine runs a :class:`ProbeSide` for its own hosts (this machine in-process, the others in
their agent, :mod:`dcnlab.emu.cluster.agent`): it opens the sockets the same way
(:func:`~dcnlab.emu.reachability.open_sockets`), sends its hosts' probes, and records what its
hosts hear. :func:`probe_cluster` runs the same schedule as the one-machine check over all of them:
in step ``j`` host ``i`` probes host ``i + j`` (global host order), every machine paces its share of
the step at the fabric-wide rate (``budget_pps``), arrivals are polled until every pair is heard or
the round has settled, and missing pairs are probed again at half the rate. The result is the same
:class:`~dcnlab.emu.reachability.Reachability`.

What a machine reports is a bitmap per destination (bit ``s``: heard from host ``s``), so a round
of fat-tree k=16's million pairs costs a few kilobytes over SSH, not a list of pairs.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Protocol

from dcnlab.emu.reachability import PROBE_BUDGET_PPS, ProbeHost, Reachability, open_sockets
from dcnlab.traffic import wire

__all__ = ["ProbeSide", "ProbeSideLike", "probe_cluster"]

POLL = 0.1
"""Seconds between two status polls of every machine while a round settles."""


class ProbeSideLike(Protocol):
    def send(self, attempt: int, rate: float, missing: Mapping[int, Sequence[int]] | None) -> int: ...

    def status(self) -> tuple[int, int]: ...

    def heard(self) -> dict[int, int]: ...

    def close(self) -> None: ...


class ProbeSide:
    """One machine's hosts in the all-pairs check: their sockets, their probes, what they hear."""

    def __init__(self, hosts: Sequence[ProbeHost], names: Sequence[str], ips: Sequence[str], port: int) -> None:
        self.names, self.ips, self.port = list(names), list(ips), port
        index = {n: i for i, n in enumerate(self.names)}
        self.own = [index[h.name] for h in hosts]
        self.by_ip = {ip: i for i, ip in enumerate(self.ips)}
        self.socks = open_sockets(hosts, port)
        self.sock_of = {index[name]: s for name, s in self.socks.items()}
        self.fd_dst = {s.fileno(): index[name] for name, s in self.socks.items()}
        self._heard = {i: 0 for i in self.own}
        self._pairs = 0
        self._received = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ep = select.epoll()
        for s in self.socks.values():
            self._ep.register(s.fileno(), select.EPOLLIN)
        self._thread = threading.Thread(target=self._receive, name="probe-receive", daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set():
            for fd, _ in self._ep.poll(0.05):
                dst = self.fd_dst[fd]
                s = self.sock_of[dst]
                while True:
                    try:
                        data, (src_ip, _) = s.recvfrom(64)
                    except (BlockingIOError, OSError):
                        break
                    src = self.by_ip.get(src_ip)
                    if src is None or wire.unpack(data) is None:
                        continue
                    with self._lock:
                        self._received += 1
                        bit = 1 << src
                        if not self._heard[dst] & bit:
                            self._heard[dst] |= bit
                            self._pairs += 1

    def send(self, attempt: int, rate: float, missing: Mapping[int, Sequence[int]] | None) -> int:
        """Send this machine's probes of one round; ``missing``: source -> destinations still unheard
        (None: every pair). Paced so that the whole fabric sends ``rate`` probes per second."""
        n = len(self.names)
        payload = wire.pack(0, attempt, 0)
        todo = None if missing is None else {int(s): {int(d) for d in ds} for s, ds in missing.items()}
        sent = 0
        interval = n / rate
        next_step = time.monotonic()
        for j in range(1, n):
            for i in self.own:
                d = (i + j) % n
                if todo is None or d in todo.get(i, ()):
                    try:
                        self.sock_of[i].sendto(payload, (self.ips[d], self.port))
                        sent += 1
                    except BlockingIOError:
                        pass        # a full socket buffer is a lost probe; the next round resends it
            next_step += interval
            pause = next_step - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        return sent

    def status(self) -> tuple[int, int]:
        """(pairs heard, probes received) so far."""
        with self._lock:
            return self._pairs, self._received

    def heard(self) -> dict[int, int]:
        """Destination index -> bitmap of the source indices it heard."""
        with self._lock:
            return dict(self._heard)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._ep.close()
        for s in self.socks.values():
            s.close()


def _send(side: ProbeSideLike, attempt: int, rate: float, missing: Mapping[int, Sequence[int]] | None) -> int:
    return side.send(attempt, rate, missing)


def probe_cluster(sides: Sequence[ProbeSideLike], names: Sequence[str], deadline: float = 10.0, attempts: int = 4,
                  budget_pps: float | None = None, forwarding_nodes: int = 0, settle: float = 0.15) -> Reachability:
    """Every ordered pair of ``names`` (the global host order every side was opened with), probed by the
    sides of their machines; the schedule of :func:`dcnlab.emu.reachability.probe_all_pairs`."""
    t0 = time.monotonic()
    res = Reachability(hosts=list(names), heard={n: set() for n in names})
    n = len(names)
    if n < 2:
        return res
    rate = budget_pps or PROBE_BUDGET_PPS
    wait = settle + 0.002 * forwarding_nodes
    heard: dict[int, int] = {}
    with ThreadPoolExecutor(max_workers=len(sides)) as pool:
        for attempt in range(attempts):
            if res.complete or time.monotonic() - t0 > deadline:
                break
            if attempt == 0:
                missing: dict[int, list[int]] | None = None
            else:
                missing = {s: [d for d in range(n) if d != s and not heard.get(d, 0) >> s & 1] for s in range(n)}
                missing = {s: ds for s, ds in missing.items() if ds}
            res.probes_sent += sum(pool.map(partial(_send, attempt=attempt, rate=rate, missing=missing), sides))
            res.rounds += 1
            settle_until = time.monotonic() + wait * (attempt + 1)
            while True:
                status = list(pool.map(lambda side: side.status(), sides))
                if sum(p for p, _ in status) == res.pairs or time.monotonic() >= settle_until:
                    break
                time.sleep(POLL)
            for part in pool.map(lambda side: side.heard(), sides):
                heard.update(part)
            res.heard = {names[d]: {names[s] for s in range(n) if bits >> s & 1} for d, bits in heard.items()}
            for name in names:
                res.heard.setdefault(name, set())
            res.probes_received = sum(r for _, r in status)
            res.per_round.append(res.pairs - res.reached)
            rate /= 2
    res.probes_received = sum(r for _, r in (side.status() for side in sides))
    res.seconds = time.monotonic() - t0
    return res
