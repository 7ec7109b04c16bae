"""Send IPv4/UDP datagrams inside tunnel frames (etherType 0x1212, examples/programs/tunnel.p4) out of
this host's eth0. The switches forward them on the tunnel's dst_id alone, so

    mininet> h1 /path/to/dcnlab/.venv/bin/python send.py --dst-id 2 10.0.3.3 hello

reaches h2 although the IPv4 destination is h3's. Needs scapy (dcnlab's venv has it).
"""

from __future__ import annotations

import argparse

from scapy.all import IP, UDP, Ether, Packet, ShortField, bind_layers, get_if_hwaddr, sendp

TYPE_TUNNEL = 0x1212


class Tunnel(Packet):
    name = "Tunnel"
    fields_desc = [ShortField("proto", 0x0800), ShortField("dst_id", 0)]


bind_layers(Ether, Tunnel, type=TYPE_TUNNEL)
bind_layers(Tunnel, IP, proto=0x0800)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ip", help="IPv4 destination written inside the tunnel (the switches ignore it)")
    p.add_argument("message")
    p.add_argument("--dst-id", type=int, required=True, help="the tunnel's destination id (0..65535)")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--iface", default="eth0")
    a = p.parse_args()
    frame = (Ether(src=get_if_hwaddr(a.iface), dst="ff:ff:ff:ff:ff:ff") / Tunnel(dst_id=a.dst_id)
             / IP(dst=a.ip) / UDP(sport=4321, dport=4321) / a.message.encode())
    sendp(frame, iface=a.iface, count=a.count, verbose=False)
    print(f"sent {a.count} tunnel frame(s) to dst_id {a.dst_id} ({a.ip}) on {a.iface}")


if __name__ == "__main__":
    main()
