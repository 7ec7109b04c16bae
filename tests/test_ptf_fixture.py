"""The ``ptf_switch`` fixture of dcnlab.testing: data-plane tests of examples/programs/router.p4 written in pytest,
on one BMv2 with PTF's dataplane (the same four behaviours as examples/ptf-router's PTF tests)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.all import ARP, IP, UDP, Ether

from dcnlab.controller.runtime.entities import MulticastGroup, TableEntry
from dcnlab.emu import netns
from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.rundir import all_runs

pytestmark = [pytest.mark.bmv2, pytest.mark.p4c, pytest.mark.netns]

ROUTER = Path(__file__).resolve().parent.parent / "examples" / "programs" / "router.p4"
RMAC, HMAC = "00:00:00:00:01:00", "02:00:00:00:00:01"


def route(prefix: str, length: int, port: int, mac: str):
    return +TableEntry("RIngress.routes", {"hdr.ipv4.dst": (prefix, length)}, "RIngress.forward",
                       {"dst_mac": mac, "src_mac": RMAC, "port": port})


def udp(dst: str, ttl: int = 64, eth_dst: str = RMAC, eth_src: str = HMAC):
    return Ether(dst=eth_dst, src=eth_src) / IP(src="10.0.1.1", dst=dst, ttl=ttl) / UDP(sport=1234, dport=80) / (
        b"x" * 20)


def test_forward_drop_lpm_and_multicast(ptf_switch):
    sw = ptf_switch(ROUTER, ports=4)
    sw.send(1, udp("10.0.2.7"))
    sw.expect_nothing()                                        # no route: the default action drops
    sw.write(route("10.0.0.0", 16, 1, "08:00:00:00:01:11"), route("10.0.1.0", 24, 2, "08:00:00:00:02:22"),
             route("10.0.1.9", 32, 3, "08:00:00:00:03:33"))
    for dst, port, mac in (("10.0.1.9", 3, "08:00:00:00:03:33"), ("10.0.1.8", 2, "08:00:00:00:02:22"),
                           ("10.0.9.9", 1, "08:00:00:00:01:11")):
        sw.send(0, udp(dst))
        sw.expect(udp(dst, 63, mac, RMAC), [port])             # the longest prefix, rewritten, TTL one less
    sw.send(0, Ether(dst="ff:ff:ff:ff:ff:ff", src=HMAC) / ARP(psrc="10.0.1.1", pdst="10.0.1.9"))
    sw.expect_nothing()                                        # not IPv4: dropped
    sw.write(+MulticastGroup(5, [(1, 1), (2, 1), (3, 1)]),
             +TableEntry("RIngress.routes", {"hdr.ipv4.dst": ("224.1.2.3", 32)}, "RIngress.flood", {"group": 5}))
    sw.send(1, udp("224.1.2.3"))
    sw.expect(udp("224.1.2.3"), [2, 3])                        # every member but the ingress port
    assert len(sw.p4rt.read_table("RIngress.routes")) == 4


def test_a_wrong_expectation_fails_and_teardown_leaves_nothing(ptf_switch):
    sw = ptf_switch(ROUTER, ports=2, negative_timeout=0.2)
    sw.write(route("10.0.2.0", 24, 1, "08:00:00:00:02:22"))
    sw.send(0, udp("10.0.2.7"))
    with pytest.raises(AssertionError, match="Expected packet was not received on device 0, port 0"):
        sw.expect(udp("10.0.2.7", 63, "08:00:00:00:02:22", RMAC), [0])
    ns = sw.bench.netns
    sw.stop()
    assert not netns.exists(ns) and leftovers() == [] and len(all_runs()) == 1
