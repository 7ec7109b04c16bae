"""PTF tests of examples/programs/router.p4: forwarding, drops, the longest prefix winning, a multicast group.

Run them with ``sudo dcnlab ptf examples/ptf-router`` (or ``... --ports 4``: they use ports 0-3). dcnlab passes
the test parameters ``grpcaddr``, ``device_id``, ``p4info`` and ``config``; each test (dcnlab's
:class:`~dcnlab.emu.ptf_base.P4RuntimeTest`) opens a P4Runtime session from them, ``self.sw``, which pushes the
pipeline (so every test starts from empty tables), writes its entries, and checks what comes out of which port
with PTF's ``verify_packets`` (there, and nowhere else) and ``verify_no_other_packets``.
"""

import ptf.testutils as tu

from dcnlab.controller.runtime.entities import MulticastGroup, TableEntry
from dcnlab.emu.ptf_base import P4RuntimeTest

ROUTER_MAC = "00:00:00:00:01:00"
HOST_MAC = "02:00:00:00:00:01"


class RouterTest(P4RuntimeTest):
    @staticmethod
    def route(prefix, length, port, next_mac):
        return +TableEntry("RIngress.routes", {"hdr.ipv4.dst": (prefix, length)}, "RIngress.forward",
                           {"dst_mac": next_mac, "src_mac": ROUTER_MAC, "port": port})

    @staticmethod
    def sent(dst, ttl=64):
        return tu.simple_udp_packet(eth_dst=ROUTER_MAC, eth_src=HOST_MAC, ip_src="10.0.1.1", ip_dst=dst, ip_ttl=ttl)

    @staticmethod
    def routed(dst, next_mac, ttl=63):
        return tu.simple_udp_packet(eth_dst=next_mac, eth_src=ROUTER_MAC, ip_src="10.0.1.1", ip_dst=dst, ip_ttl=ttl)


class Forward(RouterTest):
    """A routed packet leaves by the route's port only, its MACs rewritten and its TTL one less."""

    def runTest(self):
        self.sw.write(self.route("10.0.2.0", 24, 2, "08:00:00:00:02:22"))
        tu.send_packet(self, 1, self.sent("10.0.2.7"))
        tu.verify_packets(self, self.routed("10.0.2.7", "08:00:00:00:02:22"), [2])


class Drop(RouterTest):
    """No route: dropped (the table's default action). Not IPv4: dropped even with a route for its addresses."""

    def runTest(self):
        tu.send_packet(self, 1, self.sent("10.0.2.7"))
        tu.verify_no_other_packets(self)
        self.sw.write(self.route("10.0.0.0", 8, 3, "08:00:00:00:03:33"))
        tu.send_packet(self, 1, tu.simple_arp_packet(eth_src=HOST_MAC, ip_snd="10.0.1.1", ip_tgt="10.0.1.254"))
        tu.verify_no_other_packets(self)


class LpmTieBreak(RouterTest):
    """Overlapping /16, /24 and /32 routes: each destination takes its longest matching prefix."""

    def runTest(self):
        self.sw.write(self.route("10.0.0.0", 16, 1, "08:00:00:00:01:11"),
                      self.route("10.0.1.0", 24, 2, "08:00:00:00:02:22"),
                      self.route("10.0.1.9", 32, 3, "08:00:00:00:03:33"))
        for dst, port, mac in (("10.0.1.9", 3, "08:00:00:00:03:33"), ("10.0.1.8", 2, "08:00:00:00:02:22"),
                               ("10.0.9.9", 1, "08:00:00:00:01:11")):
            tu.send_packet(self, 0, self.sent(dst))
            tu.verify_packets(self, self.routed(dst, mac), [port])


class Multicast(RouterTest):
    """A group's route floods through the PRE: one unchanged copy out of every member but the ingress port."""

    def runTest(self):
        self.sw.write(+MulticastGroup(5, [(1, 1), (2, 1), (3, 1)]),
                      +TableEntry("RIngress.routes", {"hdr.ipv4.dst": ("224.1.2.3", 32)}, "RIngress.flood",
                                  {"group": 5}))
        pkt = self.sent("224.1.2.3")
        tu.send_packet(self, 1, pkt)
        tu.verify_packets(self, pkt, [2, 3])
