"""All-pairs reachability with paced probes, retrying missing pairs until a deadline.

One burst of n·(n−1) probes into dozens of software switches on two cores overflows BMv2's
egress queues, so a check that sends everything at once and gives up reports *losses* as
*holes*. Here every host sends one minimal UDP probe to each destination it has not yet been
heard by, paced so that the whole fabric sees about ``PROBE_BUDGET_PPS`` probes per second.
Host i visits the destinations in the order i+1, i+2, …: at any moment the probes form a
permutation, not an incast onto one host's port;
the receivers are read every ``POLL`` seconds until every pair is heard or a settle time has
passed (so a healthy fabric costs one round trip, not a fixed wait); the missing pairs are probed again at half the
rate, up to ``attempts`` rounds or ``deadline`` seconds. The result keeps the two apart:

* ``probes_lost``: probes sent and never received (congestion loss), and
* ``unreachable``: pairs never heard in any round (a routing hole). A hole costs only
  ``attempts`` short rounds, about two seconds, and is named.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from traffic.hostctl import AgentHandle, call_all

PROBE_BUDGET_PPS = 3000.0
"""Probes per second for the whole fabric in the first round (measured: see README)."""
POLL = 0.03
"""Seconds between two readings of the receivers while a round settles."""


@dataclass
class Reachability:
    hosts: list[str]
    heard: dict[str, set[str]]
    """destination -> sources it heard from."""
    rounds: int = 0
    probes_sent: int = 0
    probes_received: int = 0
    seconds: float = 0.0
    per_round: list[int] = field(default_factory=list)
    """pairs still missing after each round."""

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
    def probes_lost(self) -> int:
        return max(0, self.probes_sent - self.probes_received)

    @property
    def complete(self) -> bool:
        return self.reached == self.pairs

    def summary(self) -> str:
        return (f"reachability: {self.reached}/{self.pairs} host pairs in {self.rounds} round(s), "
                f"{self.seconds:.2f} s; {self.probes_lost} of {self.probes_sent} probes lost and resent; "
                f"{len(self.unreachable)} pair(s) unreachable")


def probe_all_pairs(agents: Mapping[str, AgentHandle], index: Mapping[str, int], port: int = 9999,
                    deadline: float = 10.0, attempts: int = 4, rate_pps: float | None = None,
                    forwarding_nodes: int = 0, settle: float = 0.15) -> Reachability:
    """Probe every ordered pair of ``agents``' hosts; ``index`` gives each host's flow id.

    ``rate_pps`` is each sender's rate in the first round (default: the fabric budget shared by
    all hosts). ``forwarding_nodes`` lengthens the settle time on large fabrics."""
    t0 = time.monotonic()
    names = list(agents)
    by_index = {index[n]: n for n in names}
    res = Reachability(names, {n: set() for n in names})
    if len(names) < 2:
        return res
    handles = [agents[n] for n in names]
    rate = rate_pps or max(20.0, PROBE_BUDGET_PPS / len(names))
    wait = settle + 0.002 * forwarding_nodes
    call_all(handles, [{"cmd": "recv_start", "port": port}] * len(handles))
    try:
        for attempt in range(attempts):
            missing = {n: [d for d in names[i + 1:] + names[:i] if n not in res.heard[d]]
                       for i, n in enumerate(names)}
            senders = [n for n in names if missing[n]]
            if not senders or time.monotonic() - t0 > deadline:
                break
            reqs = [agents[n].probe_request([agents[d].host for d in missing[n]], port, index[n], attempt, rate)
                    for n in senders]
            call_all([agents[n] for n in senders], reqs)
            res.probes_sent += sum(len(missing[n]) for n in senders)
            res.rounds += 1
            settle_until = time.monotonic() + wait * (attempt + 1)
            while True:   # read the receivers every POLL s, until all is heard or the settle time is over
                time.sleep(max(0.0, min(POLL, settle_until - time.monotonic())))
                _collect(res, names, handles, port, by_index, "recv_peek")
                if res.complete or time.monotonic() >= settle_until:
                    break
            res.per_round.append(res.pairs - res.reached)
            rate = max(10.0, rate / 2)
    finally:
        _collect(res, names, handles, port, by_index, "recv_stop")
        res.seconds = time.monotonic() - t0
    return res


def _collect(res: Reachability, names: list[str], handles: list[AgentHandle], port: int,
             by_index: Mapping[int, str], cmd: str) -> None:
    received = 0
    for n, rep in zip(names, call_all(handles, [{"cmd": cmd, "port": port}] * len(handles))):
        for flow, st in rep["flows"].items():
            src = by_index.get(int(flow))
            if src is not None:
                res.heard[n].add(src)
                received += st["packets"]
    res.probes_received = received
