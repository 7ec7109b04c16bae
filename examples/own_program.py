"""Your own P4 program on your own topology: examples/programs/router.p4 on examples/router-lab.

The topology file (tutorials style) names the program and each switch's entries (s1: runtime JSON,
s2: simple_switch_CLI commands). The script sends UDP packets built with scapy from h1 to h3
(``Host.send``), captures them at h3 (``Host.pcap``), reads the register the program counts them in
(``Switch.register_read``), then inserts an ACL entry over P4Runtime (``Switch.write``) that drops
h1's UDP packets and shows that nothing arrives any more.

Run as root: ``.venv/bin/python examples/own_program.py``
"""

import time
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

import dcnlab

LAB = Path(__file__).resolve().parent / "router-lab" / "topology.json"


def send_and_capture(net: dcnlab.Network, count: int) -> list:
    """``count`` UDP packets h1 -> h3 (ports 9000.., which s1's range table counts); what h3 captured."""
    h1, h3 = net.hosts["h1"], net.hosts["h3"]
    packets = [Ether(src=h1.mac, dst="00:00:00:00:01:00") / IP(src=h1.ip, dst=h3.ip, ttl=64)
               / UDP(sport=4000, dport=9000 + i) / b"hello" for i in range(count)]
    with h3.pcap(bpf="udp") as cap:
        h1.send(packets)
        time.sleep(0.5)                  # the last packets cross two BMv2 switches
        return cap.packets()


def main() -> None:
    with dcnlab.Network(LAB) as net:
        s1 = net.switches["s1"]
        print(f"{LAB.parent.name}: switches {', '.join(net.switches)}; hosts "
              + ", ".join(f"{h.name} {h.ip}" for h in net.hosts.values()))

        got = send_and_capture(net, 5)
        print(f"h3 captured {len(got)} of 5 packets; TTL {sorted({p[IP].ttl for p in got})} "
              f"(64 minus two router hops), source MAC {got[0][Ether].src if got else '-'}")
        print(f"s1 register RIngress.port_hits[1] = {s1.register_read('RIngress.port_hits', 1)}")

        # an ACL entry on s1: drop UDP from h1 (ternary match, so it needs a priority)
        acl = dcnlab.TableEntry("RIngress.acl", {"hdr.ipv4.src": (net.hosts["h1"].ip, "255.255.255.255"),
                                                 "hdr.ipv4.proto": (17, 0xFF)}, "RIngress.drop", priority=10)
        s1.write(+acl)
        print(f"inserted an ACL entry on s1; s1 reads back {len(s1.read_table('RIngress.acl'))} entry in RIngress.acl")
        got = send_and_capture(net, 5)
        print(f"with the ACL entry h3 captured {len(got)} of 5 packets; "
              f"port_hits[1] = {s1.register_read('RIngress.port_hits', 1)}")
        s1.write(-acl)

        print(f"bytes s1 -> s2 so far: {net.link_bytes()[('s1', 's2')]} (the dropped packets never left s1)")
        ok = len(send_and_capture(net, 3)) == 3
        print("ACL removed: traffic flows again" if ok else "ACL removed, but traffic does NOT flow")


if __name__ == "__main__":
    main()
