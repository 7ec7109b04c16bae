"""Frame templates crafted with scapy: Ether / IPv4 / UDP (checksum 0) / dcnlab header / padding.

Templates are built once, where scapy is already loaded (the experiment's process), and shipped to
host agents as bytes. The agents patch sequence numbers and timestamps into the payload, so they
never import scapy themselves and start in tens of milliseconds. A UDP checksum of 0 means "none"
in IPv4, which keeps the per-packet patch valid.
"""

from __future__ import annotations

from functools import lru_cache

from traffic import wire


@lru_cache(maxsize=4096)
def udp_frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int, size: int,
              ecn: int = 0, flow: int = 0) -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    wire.check_frame_size(size)
    if not 0 <= ecn <= 3:
        raise ValueError(f"ecn must be 0..3, got {ecn}")
    pad = b"\0" * (size - wire.MIN_FRAME)
    pkt = (Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip, tos=ecn, ttl=64)
           / UDP(sport=sport, dport=dport, chksum=0) / (wire.pack(flow, 0, 0) + pad))
    frame = bytes(pkt)
    assert len(frame) == size
    return frame
