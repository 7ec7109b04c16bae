"""probe_list: explicit (source, destination, source port) probes between network namespaces (root only)."""

from __future__ import annotations

import subprocess
import uuid

import pytest
from agent_pair import in_ns, sh
from waiting import wait_until

from dcnlab.emu import netns
from dcnlab.emu.reachability import ProbeHost, probe_all_pairs, probe_list

pytestmark = pytest.mark.netns

SETTLE = 5.0
"""How long a round waits for answers where every probe is answered (a hang guard: the round ends when the
last answer arrives). The default, 0.15 s, let a late answer on a loaded machine be probed again (once in
sixty runs at load 12: ``probes_sent`` 5, not 2)."""


@pytest.fixture
def hosts():
    """a (10.0.0.1) and b (10.0.0.2) joined by a veth; c (10.0.0.3) in a namespace of its own, unreachable."""
    tag = uuid.uuid4().hex[:6]
    ns = {x: f"pl{x}{tag}" for x in "abc"}
    procs: list[subprocess.Popen] = []
    for n in ns.values():
        sh(f"ip netns add {n}")
    try:
        sh(f"ip link add pla{tag} netns {ns['a']} type veth peer name plb{tag} netns {ns['b']}")
        for x, dev, ip in (("a", f"pla{tag}", "10.0.0.1"), ("b", f"plb{tag}", "10.0.0.2")):
            in_ns(ns[x], "ip", "addr", "add", f"{ip}/8", "dev", dev)
            in_ns(ns[x], "ip", "link", "set", dev, "up")
        in_ns(ns["c"], "ip", "link", "set", "lo", "up")
        in_ns(ns["c"], "ip", "addr", "add", "10.0.0.3/8", "dev", "lo")
        out = []
        for x, ip in (("a", "10.0.0.1"), ("b", "10.0.0.2"), ("c", "10.0.0.3")):
            p = subprocess.Popen([*netns.exec_prefix(ns[x]), "sleep", "120"])
            procs.append(p)
            out.append(ProbeHost(x, ip, p.pid))
        for h in out:
            wait_until(lambda h=h: h.pid in netns.pids(ns[h.name]), f"host {h.name}'s process is in its namespace")
        yield out
    finally:
        for p in procs:
            p.kill()
            p.wait()
        for n in ns.values():
            subprocess.run(["ip", "netns", "del", n], capture_output=True, check=False)


def test_each_probe_is_heard_by_its_own_source_port(hosts):
    probes = [("a", "b", 20000), ("a", "b", 20001), ("b", "a", 20000), ("b", "a", 9999), ("a", "b", 31337)]
    r = probe_list(hosts[:2], probes, deadline=60, settle=SETTLE)
    assert r.heard == [True] * 5 and r.missing == [] and r.rounds == 1
    assert r.probes_sent == 5 and r.probes_received == 5 and r.probes_lost == 0


def test_lost_probes_are_resent_then_named(hosts):
    probes = [("a", "b", 20000), ("a", "c", 20000), ("b", "a", 20002)]
    r = probe_list(hosts, probes, deadline=5, attempts=3, settle=0.05)
    assert r.heard == [True, False, True] and r.missing == [1]
    assert r.rounds == 3 and r.probes_sent == 2 + 3 and r.per_round == [1, 1, 1]


def test_all_pairs_still_works_beside_it(hosts):
    r = probe_all_pairs(hosts[:2], deadline=60, settle=SETTLE)
    assert r.complete and r.probes_sent == 2
