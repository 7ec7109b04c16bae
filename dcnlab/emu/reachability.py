"""All-pairs reachability: paced UDP probes from every host to every other, retried until a deadline.

The probes are sent and received by the dcnlab process itself, not by per-host agents: one UDP
socket per host, created inside the host's network namespace (a thread enters it with
``setns(2)``, makes and binds the socket, and leaves; a socket stays in the namespace it was
made in). The hosts' kernels build and take the packets, exactly as an application on the host
would, and a check needs no process per host (128 on fat-tree k=8).

One burst of n·(n−1) probes into dozens of software switches on two cores overflows BMv2's
queues, so a check that sends everything at once and gives up reports *losses* as *holes*.
Here the probes are paced so that the whole fabric sees about ``budget_pps`` per second, in
permutation steps: in step j every host i probes host i+j, so at any moment the probes form a
permutation, never an incast onto one host's port. Arrivals are read between steps and then
every ``POLL`` seconds until every pair is heard or a settle time has passed. Missing pairs are
probed again at half the rate, up to ``attempts`` rounds or ``deadline`` seconds. The result
keeps the two apart:

* ``probes_lost``: probes sent and never received (congestion loss), and
* ``unreachable``: pairs never heard in any round (a routing hole). A hole costs only
  ``attempts`` short rounds, about two seconds, and is named.

:func:`probe_list` sends an explicit list of probes instead, each from a given UDP source port
(the ATPG rules check, :mod:`dcnlab.emu.rulecheck`, picks ports that steer each probe onto the
ECMP member it must exercise). A UDP socket sends from the one port it is bound to, so each
(host, source port) gets a socket, opened in the host's namespace like the receivers; the plan
reuses ports, so that is a few sockets per host. The pacing is the same: in step j every source
sends its j-th probe (sources ordered so that a step spreads over destinations), at about
``budget_pps`` over the fabric, lost probes resent at half the rate.
"""

from __future__ import annotations

import ctypes
import os
import resource
import select
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from dcnlab.controller.runtime.netns import CLONE_NEWNET, _libc
from dcnlab.traffic import wire

PROBE_BUDGET_PPS = 6000.0
"""Probes per second for the whole fabric in the first round (see ``dcnlab bench emu``)."""
SUSTAINED_PPS = 1500.0
"""Probes per second that BMv2 forwards on two cores over about five hops (0.25 ms of CPU per packet
and hop): what :func:`deadline_for` allows a check."""
POLL = 0.03
"""Seconds between two readings of the receivers while a round settles."""
RCVBUF = 1 << 20


@dataclass
class ProbeCounters:
    """What one probing run counted, round by round."""

    rounds: int = 0
    probes_sent: int = 0
    probes_received: int = 0
    seconds: float = 0.0
    per_round: list[int] = field(default_factory=list)
    """pairs (or listed probes) still missing after each round."""

    @property
    def probes_lost(self) -> int:
        return max(0, self.probes_sent - self.probes_received)


@dataclass
class Reachability(ProbeCounters):
    hosts: list[str] = field(default_factory=list)
    heard: dict[str, set[str]] = field(default_factory=dict)
    """destination -> sources it heard from."""

    @property
    def pairs(self) -> int:
        n = len(self.hosts)
        return n * (n - 1)

    @property
    def reached(self) -> int:
        return sum(len(v) for v in self.heard.values())

    @property
    def unreachable(self) -> list[tuple[str, str]]:
        """(source, destination) pairs never heard, in host order."""
        return [(s, d) for s in self.hosts for d in self.hosts if s != d and s not in self.heard[d]]

    @property
    def complete(self) -> bool:
        return self.reached == self.pairs

    def summary(self) -> str:
        return (f"reachability: {self.reached}/{self.pairs} host pairs in {self.rounds} round(s), "
                f"{self.seconds:.2f} s; {self.probes_lost} of {self.probes_sent} probes lost and resent; "
                f"{len(self.unreachable)} pair(s) unreachable")


@dataclass(frozen=True)
class ProbeHost:
    name: str
    ip: str
    pid: int
    """A process in the host's network namespace (its Mininet shell)."""


class ProbeError(RuntimeError):
    pass


def deadline_for(probes: int) -> float:
    """A check's deadline for ``probes`` probes: 10 s, or the time BMv2 needs to forward them all
    (fat-tree k=12's 186,192 all-pairs probes need about two minutes), whichever is longer."""
    return max(10.0, probes / SUSTAINED_PPS)


def open_sockets(hosts: Sequence[ProbeHost], port: int) -> dict[str, socket.socket]:
    """One non-blocking UDP socket per host, bound to ``port`` inside the host's namespace."""
    socks = _open_bound([(h, [port]) for h in hosts])
    return {name: s for (name, _), s in socks.items()}


def _open_bound(wanted: Sequence[tuple[ProbeHost, Sequence[int]]]) -> dict[tuple[str, int], socket.socket]:
    """Non-blocking UDP sockets bound to each host's ``ports``, each made inside its host's namespace."""
    out: dict[tuple[str, int], socket.socket] = {}
    errors: list[str] = []

    def make() -> None:
        for h, ports in wanted:
            fd = os.open(f"/proc/{h.pid}/ns/net", os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    errors.append(f"{h.name}: setns: {os.strerror(ctypes.get_errno())}")
                    return
            finally:
                os.close(fd)
            for port in ports:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
                    s.bind(("0.0.0.0", port))
                except OSError as e:
                    s.close()
                    errors.append(f"{h.name}: UDP port {port}: {e.strerror}")
                    return
                s.setblocking(False)
                out[(h.name, port)] = s

    t = threading.Thread(target=make, name="probe-sockets")   # this thread alone changes namespace
    t.start()
    t.join()
    if errors or len(out) != sum(len(p) for _, p in wanted):
        for s in out.values():
            s.close()
        raise ProbeError("; ".join(errors) or "could not open a probe socket in every host")
    return out


def probe_all_pairs(hosts: Sequence[ProbeHost], port: int = 9999, deadline: float = 10.0, attempts: int = 4,
                    budget_pps: float | None = None, forwarding_nodes: int = 0,
                    settle: float = 0.15) -> Reachability:
    """Probe every ordered pair of ``hosts``. ``budget_pps``: probes per second over the whole fabric in
    the first round; ``forwarding_nodes`` lengthens the settle time on large fabrics."""
    t0 = time.monotonic()
    names = [h.name for h in hosts]
    res = Reachability(hosts=names, heard={n: set() for n in names})
    if len(hosts) < 2:
        return res
    by_ip = {h.ip: h.name for h in hosts}
    ips = [h.ip for h in hosts]
    socks = open_sockets(hosts, port)
    fd_host = {s.fileno(): n for n, s in socks.items()}
    ep = select.epoll()
    for s in socks.values():
        ep.register(s.fileno(), select.EPOLLIN)
    rate = budget_pps or PROBE_BUDGET_PPS
    wait = settle + 0.002 * forwarding_nodes
    n = len(hosts)

    def drain(timeout: float = 0.0) -> None:
        for fd, _ in ep.poll(timeout):
            s, dst = socks[fd_host[fd]], fd_host[fd]
            while True:
                try:
                    data, (src_ip, _) = s.recvfrom(64)
                except BlockingIOError:
                    break
                src = by_ip.get(src_ip)
                if src is not None and wire.unpack(data) is not None:
                    res.heard[dst].add(src)
                    res.probes_received += 1

    try:
        for attempt in range(attempts):
            if res.complete or time.monotonic() - t0 > deadline:
                break
            payload = wire.pack(0, attempt, 0)
            interval = n / rate
            next_step = time.monotonic()
            for j in range(1, n):                     # step j: host i probes host i + j
                for i, src in enumerate(names):
                    d = (i + j) % n
                    if src not in res.heard[names[d]]:
                        socks[src].sendto(payload, (ips[d], port))
                        res.probes_sent += 1
                next_step += interval
                drain(max(0.0, next_step - time.monotonic()))
                while time.monotonic() < next_step:
                    drain(max(0.0, next_step - time.monotonic()))
            res.rounds += 1
            settle_until = time.monotonic() + wait * (attempt + 1)
            while not res.complete and time.monotonic() < settle_until:
                drain(min(POLL, max(0.0, settle_until - time.monotonic())))
            res.per_round.append(res.pairs - res.reached)
            rate /= 2
    finally:
        drain()
        ep.close()
        for s in socks.values():
            s.close()
        res.seconds = time.monotonic() - t0
    return res


@dataclass
class ProbeResult(ProbeCounters):
    """What :func:`probe_list` heard: ``heard[i]`` for probe ``i`` of the list."""

    probes: int = 0
    heard: list[bool] = field(default_factory=list)

    @property
    def reached(self) -> int:
        return sum(self.heard)

    @property
    def missing(self) -> list[int]:
        return [i for i, h in enumerate(self.heard) if not h]


def _fd_room(needed: int) -> None:
    """Raise this process's soft limit of open files (up to the hard limit) to hold ``needed`` more."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = len(os.listdir("/proc/self/fd"))
    want = in_use + needed + 64
    if want <= soft:
        return
    if hard != resource.RLIM_INFINITY and want > hard:
        raise ProbeError(f"{needed} probe sockets need {want} open files, above this process's hard limit "
                         f"{hard} (ulimit -Hn)")
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def probe_list(hosts: Sequence[ProbeHost], probes: Sequence[tuple[str, str, int]], port: int = 9999,
               deadline: float = 10.0, attempts: int = 4, budget_pps: float | None = None,
               forwarding_nodes: int = 0, settle: float = 0.15) -> ProbeResult:
    """Send each probe ``(source host, destination host, UDP source port)`` to ``port``; resend the
    missing ones (half the rate each round) up to ``attempts`` rounds or ``deadline`` seconds."""
    t0 = time.monotonic()
    res = ProbeResult(probes=len(probes), heard=[False] * len(probes))
    if not probes:
        return res
    by_name = {h.name: h for h in hosts}
    by_ip = {h.ip: h.name for h in hosts}
    index = {h.name: i for i, h in enumerate(hosts)}
    key: dict[tuple[str, int, str], int] = {}
    ports: dict[str, list[int]] = {}
    for i, (src, dst, sport) in enumerate(probes):
        key[(src, sport, dst)] = i
        if sport != port and sport not in ports.setdefault(src, []):
            ports[src].append(sport)
    n = len(hosts)
    per_src: dict[str, list[int]] = {}
    for i, (src, _, _) in enumerate(probes):
        per_src.setdefault(src, []).append(i)
    for src, lst in per_src.items():   # step j: sources spread over destinations (i + j, as all-pairs)
        lst.sort(key=lambda i: ((index[probes[i][1]] - index[src]) % n, i))
    _fd_room(n + sum(len(p) for p in ports.values()))
    recv = open_sockets(hosts, port)
    try:
        send = _open_bound([(by_name[s], p) for s, p in ports.items()])
    except BaseException:
        for s in recv.values():
            s.close()
        raise
    fd_host = {s.fileno(): name for name, s in recv.items()}
    ep = select.epoll()
    for s in recv.values():
        ep.register(s.fileno(), select.EPOLLIN)
    rate = budget_pps or PROBE_BUDGET_PPS
    wait = settle + 0.002 * forwarding_nodes
    steps = max(len(v) for v in per_src.values())

    def drain(timeout: float = 0.0) -> None:
        for fd, _ in ep.poll(timeout):
            s, dst = recv[fd_host[fd]], fd_host[fd]
            while True:
                try:
                    data, (src_ip, sport) = s.recvfrom(64)
                except BlockingIOError:
                    break
                src = by_ip.get(src_ip)
                i = key.get((src, sport, dst)) if src is not None else None
                if i is not None and wire.unpack(data) is not None:
                    res.heard[i] = True
                    res.probes_received += 1

    try:
        for attempt in range(attempts):
            if all(res.heard) or time.monotonic() - t0 > deadline:
                break
            next_step = time.monotonic()
            for j in range(steps):
                sent = 0
                for src, lst in per_src.items():
                    if j < len(lst) and not res.heard[lst[j]]:
                        _, dst, sport = probes[lst[j]]
                        sock = recv[src] if sport == port else send[(src, sport)]
                        sock.sendto(wire.pack(lst[j], attempt, 0), (by_name[dst].ip, port))
                        sent += 1
                res.probes_sent += sent
                next_step += sent / rate
                drain(max(0.0, next_step - time.monotonic()))
                while time.monotonic() < next_step:
                    drain(max(0.0, next_step - time.monotonic()))
            res.rounds += 1
            settle_until = time.monotonic() + wait * (attempt + 1)
            while not all(res.heard) and time.monotonic() < settle_until:
                drain(min(POLL, max(0.0, settle_until - time.monotonic())))
            res.per_round.append(res.probes - res.reached)
            rate /= 2
    finally:
        drain()
        ep.close()
        for s in list(recv.values()) + list(send.values()):
            s.close()
        res.seconds = time.monotonic() - t0
    return res
